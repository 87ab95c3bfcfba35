#!/usr/bin/python3
"""Writes a synthetic pre-quantized Llama checkpoint for the import benchmark.

The shapes of make-synthetic-checkpoint.py (its SHAPES and tensor list), packed
in one of the layouts qeff imports, each in its library's format (the same
layouts frontend/Quant and frontend/GGUF document and test against the
libraries' own files):

  awq      AutoAWQ GEMM: every decoder Linear as qweight I32 [in, out/8]
           (packed along out), qzeros I32 [in/g, out/8], scales F16
           [in/g, out]; quantization_config {quant_method awq, bits 4,
           group_size g, zero_point, version gemm}; the rest F16.
  gptq     GPTQModel v1 (checkpoint_format gptq): qweight I32 [in/8, out]
           (packed along in), qzeros I32 [in/g, out/8], scales F16 [in/g,
           out], g_idx I32 [in]; the rest F16.
  gguf     a llama.cpp GGUF v3 file in the Q4_K_M mix: Q4_K for most 2-D
           tensors, Q6_K for output.weight and for attn_v / ffn_down of the
           layers llama.cpp's use_more_bits picks (the first and last eighth
           of the layers and every third one between), F32 norms.

Packed codes are random bytes; scales (f16 d / dmin of each block) are set to
finite weight-like values, so the decoded weights are finite. Only the shapes
and the packing matter for the benchmark. Deterministic for a seed; memory
use is one chunk whatever the size.

    make-synthetic-quantized.py OUT --format awq|gptq|gguf
                                [--shape tinyllama-1.1b|small|tiny] [--group-size G] [--seed N]

OUT is a checkpoint directory (awq, gptq) or a .gguf file. Needs numpy.
"""

import argparse
import importlib.util
import json
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "synthetic", os.path.join(HERE, "make-synthetic-checkpoint.py"))
synthetic = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(synthetic)

CHUNK = 64 << 20  # bytes per write


def random_bytes(rng, n):
    return rng.integers(0, 256, size=n, dtype=np.uint8)


def f16_scales(rng, n):
    """n f16 bit patterns of positive values in [2^-11, 2^-9)."""
    r = rng.integers(0, 1 << 10, size=n, dtype=np.uint16)
    return (r | np.uint16(0x1000)).astype("<u2")


def is_linear(name):
    return name.endswith("_proj.weight")


# --- safetensors (AWQ, GPTQ) ---------------------------------------------------

def packed_tensors(cfg, fmt, g):
    """(name, dtype, shape, kind) of the checkpoint, kind in
    {codes, zeros, scales, gidx, f16, norm}."""
    out = []
    for name, shape in synthetic.tensors(cfg):
        if not is_linear(name):
            out.append((name, "F16", shape, "norm" if len(shape) == 1 else "f16"))
            continue
        m = name[: -len(".weight")]
        o, i = shape
        if fmt == "awq":
            out += [(m + ".qweight", "I32", (i, o // 8), "codes"),
                    (m + ".qzeros", "I32", (i // g, o // 8), "codes"),
                    (m + ".scales", "F16", (i // g, o), "scales")]
        else:
            out += [(m + ".qweight", "I32", (i // 8, o), "codes"),
                    (m + ".qzeros", "I32", (i // g, o // 8), "codes"),
                    (m + ".scales", "F16", (i // g, o), "scales"),
                    (m + ".g_idx", "I32", (i,), "gidx")]
    return out


def write_safetensors(path, entries, rng, g):
    head, _ = synthetic.safetensors_header(
        [(n, d, s, 4 if d == "I32" else 2) for n, d, s, _ in entries])
    with open(path + ".tmp", "wb") as f:
        f.write(head)
        for name, dtype, shape, kind in entries:
            n = synthetic.numel(shape)
            if kind == "norm":
                f.write(np.full(n, 0x3C00, dtype="<u2").tobytes())
            elif kind == "gidx":
                f.write((np.arange(n, dtype="<i4") // g).tobytes())
            elif kind == "scales":
                f.write(f16_scales(rng, n).tobytes())
            elif kind == "codes":
                left = n * 4
                while left:
                    k = min(left, CHUNK)
                    f.write(random_bytes(rng, k).tobytes())
                    left -= k
            else:
                left = n
                while left:
                    k = min(left, CHUNK // 2)
                    f.write(synthetic.random_chunk(rng, k, "f16").astype("<u2").tobytes())
                    left -= k
    os.replace(path + ".tmp", path)


# --- GGUF ---------------------------------------------------------------------

Q4_K, Q6_K, F32 = 12, 14, 0
BLOCK = {Q4_K: (256, 144), Q6_K: (256, 210)}


def gguf_string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def gguf_tensors(cfg):
    """(gguf name, ggml ne, type): llama.cpp's Q4_K_M choice per tensor."""
    h, i, v = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    n = cfg["num_hidden_layers"]
    kv = cfg["num_key_value_heads"] * (h // cfg["num_attention_heads"])

    def more_bits(layer):  # llama.cpp use_more_bits
        return layer < n // 8 or layer >= 7 * n // 8 or (layer - n // 8) % 3 == 2

    out = [("token_embd.weight", (h, v), Q4_K)]
    for l in range(n):
        b = f"blk.{l}."
        out += [(b + "attn_norm.weight", (h,), F32),
                (b + "attn_q.weight", (h, h), Q4_K),
                (b + "attn_k.weight", (h, kv), Q4_K),
                (b + "attn_v.weight", (h, kv), Q6_K if more_bits(l) else Q4_K),
                (b + "attn_output.weight", (h, h), Q4_K),
                (b + "ffn_norm.weight", (h,), F32),
                (b + "ffn_gate.weight", (h, i), Q4_K),
                (b + "ffn_up.weight", (h, i), Q4_K),
                (b + "ffn_down.weight", (i, h), Q6_K if more_bits(l) else Q4_K)]
    out += [("output_norm.weight", (h,), F32), ("output.weight", (h, v), Q6_K)]
    return out


def tensor_bytes(ne, t):
    n = synthetic.numel(ne)
    if t == F32:
        return 4 * n
    bs, ts = BLOCK[t]
    return n // bs * ts


def write_blocks(f, rng, ne, t):
    bs, ts = BLOCK[t]
    blocks = synthetic.numel(ne) // bs
    per = max(1, CHUNK // ts)
    left = blocks
    while left:
        k = min(left, per)
        b = random_bytes(rng, k * ts).reshape(k, ts)
        if t == Q4_K:  # d, dmin: the first two f16 of the block
            b[:, 0:4] = f16_scales(rng, 2 * k).view(np.uint8).reshape(k, 4)
        else:          # Q6_K: d is the last f16
            b[:, 208:210] = f16_scales(rng, k).view(np.uint8).reshape(k, 2)
        f.write(b.tobytes())
        left -= k


def write_gguf(path, cfg, rng):
    a = "llama"
    kvs = [("general.architecture", 8, gguf_string(a)),
           ("general.name", 8, gguf_string("synthetic")),
           (a + ".block_count", 4, struct.pack("<I", cfg["num_hidden_layers"])),
           (a + ".context_length", 4, struct.pack("<I", cfg["max_position_embeddings"])),
           (a + ".embedding_length", 4, struct.pack("<I", cfg["hidden_size"])),
           (a + ".feed_forward_length", 4, struct.pack("<I", cfg["intermediate_size"])),
           (a + ".attention.head_count", 4, struct.pack("<I", cfg["num_attention_heads"])),
           (a + ".attention.head_count_kv", 4, struct.pack("<I", cfg["num_key_value_heads"])),
           (a + ".attention.layer_norm_rms_epsilon", 6, struct.pack("<f", cfg["rms_norm_eps"])),
           (a + ".rope.freq_base", 6, struct.pack("<f", 10000.0)),
           ("general.file_type", 4, struct.pack("<I", 15))]  # MOSTLY_Q4_K_M
    ts = gguf_tensors(cfg)
    head = b"GGUF" + struct.pack("<IQQ", 3, len(ts), len(kvs))
    for key, typ, val in kvs:
        head += gguf_string(key) + struct.pack("<I", typ) + val
    offset = 0
    for name, ne, t in ts:
        head += gguf_string(name) + struct.pack("<I", len(ne))
        head += b"".join(struct.pack("<Q", d) for d in ne)
        head += struct.pack("<IQ", t, offset)
        offset += (tensor_bytes(ne, t) + 31) // 32 * 32
    head += b"\0" * ((32 - len(head) % 32) % 32)
    with open(path + ".tmp", "wb") as f:
        f.write(head)
        for name, ne, t in ts:
            n = tensor_bytes(ne, t)
            if t == F32:
                f.write(np.ones(synthetic.numel(ne), dtype="<f4").tobytes())
            else:
                write_blocks(f, rng, ne, t)
            f.write(b"\0" * ((32 - n % 32) % 32))
    os.replace(path + ".tmp", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--format", choices=["awq", "gptq", "gguf"], required=True)
    ap.add_argument("--shape", choices=sorted(synthetic.SHAPES), default="tinyllama-1.1b")
    ap.add_argument("--group-size", type=int, default=128)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    cfg = dict(synthetic.SHAPES[args.shape])
    rng = np.random.default_rng(args.seed)
    if args.format == "gguf":
        write_gguf(args.out, cfg, rng)
        print(f"wrote {args.out}", file=sys.stderr)
        return
    g = args.group_size
    os.makedirs(args.out, exist_ok=True)
    write_safetensors(os.path.join(args.out, "model.safetensors"),
                      packed_tensors(cfg, args.format, g), rng, g)
    quant = ({"quant_method": "awq", "bits": 4, "group_size": g, "zero_point": True,
              "version": "gemm", "modules_to_not_convert": None}
             if args.format == "awq" else
             {"quant_method": "gptq", "bits": 4, "group_size": g, "desc_act": False,
              "sym": True, "checkpoint_format": "gptq", "pack_dtype": "int32"})
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
              "hidden_act": "silu", "tie_word_embeddings": False,
              "torch_dtype": "float16", "rope_theta": 10000.0, "bos_token_id": 1,
              "eos_token_id": 2, "quantization_config": quant, **cfg}
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
    print(f"wrote {args.out} ({args.format}, {args.shape}, group {g})", file=sys.stderr)


if __name__ == "__main__":
    main()
