#!/usr/bin/env python3
"""Writes a small random Hugging Face checkpoint of a Llama-style class.

Pure Python (no numpy, no torch), so that lit tests can make checkpoints of any
size and shape on a fresh machine. Weight names and config fields follow
transformers' LlamaForCausalLM / MistralForCausalLM.

  make-checkpoint.py OUT_DIR [--class LlamaForCausalLM] [--hidden 48] [--heads 6]
      [--kv-heads 2] [--layers 3] [--intermediate 96] [--vocab 100]
      [--dtype f32|f16|bf16] [--tie] [--shards N] [--rope-scaling linear|llama3]
      [--sliding-window W] [--seed S] [--model-type llama] [--drop TENSOR]
      [--max-positions N] [--fill random|tiled]

--fill random (default) draws every value with random.uniform; --fill tiled
(f32 only) draws one block of values and writes each tensor as a window of it
repeated, norm gains 1.0: seconds instead of minutes for ~100M-parameter
benchmark models, whose values only need to be finite and weight-like. Tensors
are streamed to the file one at a time.
"""
import argparse
import json
import os
import random
import struct


def encode(values, dtype):
    if dtype == "f32":
        return struct.pack(f"<{len(values)}f", *values)
    if dtype == "f16":
        return struct.pack(f"<{len(values)}e", *values)
    if dtype == "bf16":
        raw = struct.pack(f"<{len(values)}f", *values)
        words = struct.unpack(f"<{len(values)}I", raw)
        return struct.pack(f"<{len(values)}H", *[(w >> 16) & 0xFFFF for w in words])
    raise ValueError(dtype)


TILE = (1 << 20) + 7  # values in the tiled block (odd size: windows differ)


def write_safetensors(path, tensors, dtype):
    """tensors: list of (name, shape, blob) in write order, where blob(n) gives
    the n values' bytes; streamed tensor by tensor, then renamed into place."""
    header, offset = {}, 0
    size = {"f32": 4, "f16": 2, "bf16": 2}[dtype]
    st_dtype = {"f32": "F32", "f16": "F16", "bf16": "BF16"}[dtype]
    for name, shape, _ in tensors:
        n = numel(shape)
        header[name] = {"dtype": st_dtype, "shape": shape,
                        "data_offsets": [offset, offset + size * n]}
        offset += size * n
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for _, shape, blob in tensors:
            f.write(blob(numel(shape)))
    os.replace(path + ".tmp", path)


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def llama_shapes(a):
    """The tensors of a LlamaForCausalLM / MistralForCausalLM checkpoint."""
    head_dim = a.hidden // a.heads
    shapes = [("model.embed_tokens.weight", [a.vocab, a.hidden])]
    for i in range(a.layers):
        l = f"model.layers.{i}."
        shapes += [
            (l + "input_layernorm.weight", [a.hidden]),
            (l + "self_attn.q_proj.weight", [a.heads * head_dim, a.hidden]),
            (l + "self_attn.k_proj.weight", [a.kv_heads * head_dim, a.hidden]),
            (l + "self_attn.v_proj.weight", [a.kv_heads * head_dim, a.hidden]),
            (l + "self_attn.o_proj.weight", [a.hidden, a.heads * head_dim]),
            (l + "post_attention_layernorm.weight", [a.hidden]),
            (l + "mlp.gate_proj.weight", [a.intermediate, a.hidden]),
            (l + "mlp.up_proj.weight", [a.intermediate, a.hidden]),
            (l + "mlp.down_proj.weight", [a.hidden, a.intermediate]),
        ]
    shapes.append(("model.norm.weight", [a.hidden]))
    if not a.tie:
        shapes.append(("lm_head.weight", [a.vocab, a.hidden]))
    return shapes


def is_norm(name):
    return name.endswith("layernorm.weight") or name == "model.norm.weight"


def random_blobs(rng, dtype):
    """blob(name) for --fill random: uniform in [-0.1, 0.1), norms 1 + that."""
    def blob(name):
        def values(n):
            v = [rng.uniform(-0.1, 0.1) for _ in range(n)]
            return encode([1.0 + x for x in v] if is_norm(name) else v, dtype)
        return values
    return blob


def tiled_blobs(rng):
    """blob(name) for --fill tiled (f32): windows of one random block."""
    block = struct.pack(f"<{TILE}f", *[rng.uniform(-0.05, 0.05) for _ in range(TILE)])
    block2 = block + block  # any window of up to TILE values is one slice
    one = struct.pack("<f", 1.0)

    def blob(name):
        def values(n):
            if is_norm(name):
                return one * n
            out, start = [], rng.randrange(TILE)
            while n:
                k = min(n, TILE)
                out.append(block2[4 * start:4 * (start + k)])
                n -= k
                start = (start + k) % TILE
            return b"".join(out)
        return values
    return blob


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--class", dest="cls", default="LlamaForCausalLM")
    p.add_argument("--model-type", default=None)
    p.add_argument("--hidden", type=int, default=48)
    p.add_argument("--heads", type=int, default=6)
    p.add_argument("--kv-heads", type=int, default=2)
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--intermediate", type=int, default=96)
    p.add_argument("--vocab", type=int, default=100)
    p.add_argument("--dtype", default="f32", choices=["f32", "f16", "bf16"])
    p.add_argument("--tie", action="store_true")
    p.add_argument("--shards", type=int, default=1)
    p.add_argument("--rope-scaling", choices=["linear", "llama3"])
    p.add_argument("--sliding-window", type=int)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--drop", action="append", default=[])
    p.add_argument("--max-positions", type=int, default=128)
    p.add_argument("--fill", choices=["random", "tiled"], default="random")
    a = p.parse_args()

    if a.fill == "tiled" and a.dtype != "f32":
        p.error("--fill tiled writes f32 only")
    rng = random.Random(a.seed)
    blob = tiled_blobs(rng) if a.fill == "tiled" else random_blobs(rng, a.dtype)
    tensors = [(name, shape, blob(name)) for name, shape in llama_shapes(a)
               if name not in a.drop]

    os.makedirs(a.out, exist_ok=True)
    if a.shards == 1:
        write_safetensors(os.path.join(a.out, "model.safetensors"), tensors, a.dtype)
    else:
        per = (len(tensors) + a.shards - 1) // a.shards
        weight_map = {}
        for s in range(a.shards):
            name = f"model-{s + 1:05d}-of-{a.shards:05d}.safetensors"
            part = tensors[s * per:(s + 1) * per]
            write_safetensors(os.path.join(a.out, name), part, a.dtype)
            for t in part:
                weight_map[t[0]] = name
        with open(os.path.join(a.out, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {}, "weight_map": dict(sorted(weight_map.items()))},
                      f, indent=2)

    config = {
        "architectures": [a.cls],
        "model_type": a.model_type or ("mistral" if a.cls.startswith("Mistral") else "llama"),
        "hidden_size": a.hidden,
        "intermediate_size": a.intermediate,
        "num_attention_heads": a.heads,
        "num_key_value_heads": a.kv_heads,
        "num_hidden_layers": a.layers,
        "vocab_size": a.vocab,
        "max_position_embeddings": a.max_positions,
        "rms_norm_eps": 1e-5,
        "rope_theta": 500000.0,
        "tie_word_embeddings": a.tie,
        "torch_dtype": {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}[a.dtype],
    }
    if a.rope_scaling == "linear":
        config["rope_scaling"] = {"type": "linear", "factor": 2.0}
    elif a.rope_scaling == "llama3":
        config["rope_scaling"] = {"rope_type": "llama3", "factor": 8.0,
                                  "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                  "original_max_position_embeddings": 64}
    if a.sliding_window:
        config["sliding_window"] = a.sliding_window
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)


if __name__ == "__main__":
    main()
