#!/usr/bin/env python3
"""Writes a synthetic Llama-shaped f32 checkpoint for the runtime benchmark, fast.

Pure Python (no numpy). test/tools/make-checkpoint.py draws every value with
random.uniform, which takes minutes for ~160M parameters; here one block of
random f32 values (uniform in [-0.05, 0.05)) is drawn once and every tensor is
written as a window of that block repeated, starting at a per-tensor offset.
Only shapes matter to the benchmark; the values are finite and weight-like.
RMSNorm gains are 1.0 (a fresh model). Deterministic for a given --seed.

  runtime-make-checkpoint.py OUT_DIR [--hidden 768] [--heads 12] [--kv-heads 12]
      [--layers 12] [--intermediate 3072] [--vocab 32000] [--seed 1]
"""
import argparse
import json
import os
import random
import struct

BLOCK = (1 << 20) + 7  # values in the random block (odd size: windows differ)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--hidden", type=int, default=768)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--kv-heads", type=int, default=12)
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--intermediate", type=int, default=3072)
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()

    hd = a.hidden // a.heads
    shapes = [("model.embed_tokens.weight", [a.vocab, a.hidden])]
    for i in range(a.layers):
        l = f"model.layers.{i}."
        shapes += [
            (l + "input_layernorm.weight", [a.hidden]),
            (l + "self_attn.q_proj.weight", [a.heads * hd, a.hidden]),
            (l + "self_attn.k_proj.weight", [a.kv_heads * hd, a.hidden]),
            (l + "self_attn.v_proj.weight", [a.kv_heads * hd, a.hidden]),
            (l + "self_attn.o_proj.weight", [a.hidden, a.heads * hd]),
            (l + "post_attention_layernorm.weight", [a.hidden]),
            (l + "mlp.gate_proj.weight", [a.intermediate, a.hidden]),
            (l + "mlp.up_proj.weight", [a.intermediate, a.hidden]),
            (l + "mlp.down_proj.weight", [a.hidden, a.intermediate]),
        ]
    shapes.append(("model.norm.weight", [a.hidden]))
    shapes.append(("lm_head.weight", [a.vocab, a.hidden]))

    rng = random.Random(a.seed)
    block = struct.pack(f"<{BLOCK}f", *[rng.uniform(-0.05, 0.05) for _ in range(BLOCK)])
    block2 = block + block  # any window of up to BLOCK values is a slice
    one = struct.pack("<f", 1.0)

    header, offset, sizes = {}, 0, []
    for name, shape in shapes:
        n = 1
        for d in shape:
            n *= d
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [offset, offset + 4 * n]}
        offset += 4 * n
        sizes.append(n)
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)

    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "model.safetensors")
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for (name, _), n in zip(shapes, sizes):
            if name.endswith("norm.weight"):
                f.write(one * n)
                continue
            start = rng.randrange(BLOCK)
            while n:
                k = min(n, BLOCK)
                f.write(block2[4 * start:4 * (start + k)])
                n -= k
                start = (start + k) % BLOCK
    os.replace(path + ".tmp", path)

    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": a.hidden,
        "intermediate_size": a.intermediate,
        "num_attention_heads": a.heads,
        "num_key_value_heads": a.kv_heads,
        "num_hidden_layers": a.layers,
        "vocab_size": a.vocab,
        "max_position_embeddings": 2048,
        "rms_norm_eps": 1e-5,
        "rope_theta": 10000.0,
        "hidden_act": "silu",
        "tie_word_embeddings": False,
        "torch_dtype": "float32",
    }
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)


if __name__ == "__main__":
    main()
