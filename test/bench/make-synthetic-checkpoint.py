#!/usr/bin/python3
"""Writes a synthetic Llama-shaped Hugging Face checkpoint for the export benchmark.

The checkpoint has the exact tensor names, shapes and dtype of a real
LlamaForCausalLM (config.json + model.safetensors, or HF-style shards with
model.safetensors.index.json), filled with random but finite values. Only the
shapes matter for the benchmark: the exporter's cost is bytes moved, not the
values. Each tensor is generated and written in chunks, so memory use is a
chunk (64 MiB) whatever the model size.

    make-synthetic-checkpoint.py OUT_DIR [--shape tinyllama-1.1b|llama-2-7b|small|tiny]
                                 [--dtype bf16|f16] [--max-shard-gb N] [--seed N]

Deterministic: the same arguments give byte-identical files. Needs numpy
(Debian's python3-numpy, pulled in by python3-onnx).
"""

import argparse
import json
import os
import struct
import sys

import numpy as np

SHAPES = {
    # TinyLlama/TinyLlama-1.1B-Chat-v1.0
    "tinyllama-1.1b": dict(hidden_size=2048, intermediate_size=5632,
                           num_hidden_layers=22, num_attention_heads=32,
                           num_key_value_heads=4, vocab_size=32000,
                           max_position_embeddings=2048, rms_norm_eps=1e-5),
    # Not a published model: a Llama of ~74M parameters (147 MB in bf16) for
    # tests and for running the benchmarks at a small size.
    "small": dict(hidden_size=768, intermediate_size=2048,
                  num_hidden_layers=4, num_attention_heads=12,
                  num_key_value_heads=4, vocab_size=32000,
                  max_position_embeddings=2048, rms_norm_eps=1e-5),
    # Not a published model: ~23K parameters, for test/fuzz's artifact seeds
    # (test/fuzz/make-artifact-seed.py; a whole artifact in under 64 KB).
    "tiny": dict(hidden_size=32, intermediate_size=64,
                 num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, vocab_size=64,
                 max_position_embeddings=64, rms_norm_eps=1e-5),
    # meta-llama/Llama-2-7b-hf
    "llama-2-7b": dict(hidden_size=4096, intermediate_size=11008,
                       num_hidden_layers=32, num_attention_heads=32,
                       num_key_value_heads=32, vocab_size=32000,
                       max_position_embeddings=4096, rms_norm_eps=1e-5),
}

CHUNK_ELEMS = 32 << 20  # 64 MiB of 16-bit values per write


def tensors(cfg):
    """(name, shape) of every LlamaForCausalLM parameter, in HF's order."""
    h, i, v = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    hd = h // cfg["num_attention_heads"]
    kv = cfg["num_key_value_heads"] * hd
    out = [("model.embed_tokens.weight", (v, h))]
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}."
        out += [
            (p + "self_attn.q_proj.weight", (h, h)),
            (p + "self_attn.k_proj.weight", (kv, h)),
            (p + "self_attn.v_proj.weight", (kv, h)),
            (p + "self_attn.o_proj.weight", (h, h)),
            (p + "mlp.gate_proj.weight", (i, h)),
            (p + "mlp.up_proj.weight", (i, h)),
            (p + "mlp.down_proj.weight", (h, i)),
            (p + "input_layernorm.weight", (h,)),
            (p + "post_attention_layernorm.weight", (h,)),
        ]
    out += [("model.norm.weight", (h,)), ("lm_head.weight", (v, h))]
    return out


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def random_chunk(rng, n, dtype):
    """n random 16-bit floats, finite, magnitudes in [2^-7, 2^-3) (weight-like)."""
    r = rng.integers(0, 1 << 16, size=n, dtype=np.uint16)
    if dtype == "bf16":
        # random sign | exponent 0b011110xx (biased 120..123) | random mantissa
        return (r & np.uint16(0x81FF)) | np.uint16(0x3C00)
    # f16: random sign | exponent 0b010xx (biased 8..11) | random mantissa
    return (r & np.uint16(0x8FFF)) | np.uint16(0x2000)


def safetensors_header(entries):
    """The length prefix and JSON header of a safetensors file holding
    `entries` (name, dtype, shape, bytes per element) in order; and the size
    of its data section."""
    header, offset = {}, 0
    for name, dtype, shape, size in entries:
        nbytes = numel(shape) * size
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text, offset


def write_shard(path, entries, cfg_dtype, rng):
    st_dtype = {"bf16": "BF16", "f16": "F16"}[cfg_dtype]
    head, offset = safetensors_header([(n, st_dtype, s, 2) for n, s in entries])
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(head)
        for name, shape in entries:
            left = numel(shape)
            if name.endswith("layernorm.weight") or name == "model.norm.weight":
                # RMSNorm gains: ones, as in a freshly initialized model.
                one = {"bf16": 0x3F80, "f16": 0x3C00}[cfg_dtype]
                f.write(np.full(left, one, dtype="<u2").tobytes())
                continue
            while left:
                n = min(left, CHUNK_ELEMS)
                f.write(random_chunk(rng, n, cfg_dtype).astype("<u2").tobytes())
                left -= n
    os.replace(tmp, path)
    return offset


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--shape", choices=sorted(SHAPES), default="tinyllama-1.1b")
    ap.add_argument("--dtype", choices=["bf16", "f16"], default="bf16")
    ap.add_argument("--max-shard-gb", type=float, default=None,
                    help="shard like save_pretrained(max_shard_size=...); "
                         "default: one file up to 1.1B, 5 GB shards above")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    shape = SHAPES[args.shape]
    cfg = {
        "architectures": ["LlamaForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "hidden_act": "silu",
        "initializer_range": 0.02,
        "mlp_bias": False,
        "model_type": "llama",
        "pretraining_tp": 1,
        "rope_scaling": None,
        "rope_theta": 10000.0,
        "tie_word_embeddings": False,
        "torch_dtype": {"bf16": "bfloat16", "f16": "float16"}[args.dtype],
        "use_cache": True,
        **shape,
    }
    ts = tensors(cfg)
    total = sum(numel(s) for _, s in ts) * 2
    max_shard = args.max_shard_gb
    if max_shard is None:
        max_shard = 5.0 if total > (5 << 30) else float("inf")
    limit = max_shard * 1e9

    shards, cur, cur_bytes = [], [], 0
    for name, s in ts:
        b = numel(s) * 2
        if cur and cur_bytes + b > limit:
            shards.append(cur)
            cur, cur_bytes = [], 0
        cur.append((name, s))
        cur_bytes += b
    shards.append(cur)

    os.makedirs(args.out_dir, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    if len(shards) == 1:
        files = ["model.safetensors"]
    else:
        files = [f"model-{k + 1:05d}-of-{len(shards):05d}.safetensors"
                 for k in range(len(shards))]
    weight_map = {}
    for fname, entries in zip(files, shards):
        write_shard(os.path.join(args.out_dir, fname), entries, args.dtype, rng)
        for name, _ in entries:
            weight_map[name] = fname
        print(f"wrote {fname}", file=sys.stderr)
    if len(shards) > 1:
        index = {"metadata": {"total_size": total}, "weight_map": weight_map}
        with open(os.path.join(args.out_dir, "model.safetensors.index.json"),
                  "w") as f:
            json.dump(index, f, indent=2, sort_keys=True)
    with open(os.path.join(args.out_dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
    params = total // 2
    print(f"{args.shape}: {params} parameters, {total} bytes ({args.dtype}) "
          f"in {len(shards)} file(s) under {args.out_dir}", file=sys.stderr)


if __name__ == "__main__":
    main()
