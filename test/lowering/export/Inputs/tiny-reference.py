#!/usr/bin/env python3
"""Independent reference for Inputs/tiny.mlir, in pure Python (no numpy).

  tiny-reference.py inputs OUT.safetensors
      writes input_ids = [[3, 0, 11]] (int64)
  tiny-reference.py check CKPT_DIR OUTPUTS.safetensors [--f16-weights]
      recomputes probs, logits_f16 and proj from the checkpoint's bf16 tensors
      and compares them with the outputs ONNX Runtime wrote; exit 1 on a
      mismatch. --f16-weights rounds the weights to fp16 first, as
      --onnx-weights-dtype=f16 stores them.
"""
import json
import math
import os
import struct
import sys

IDS = [3, 0, 11]


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = data[base + begin:base + end]
        dtype = info["dtype"]
        if dtype == "BF16":
            words = struct.unpack(f"<{len(raw) // 2}H", raw)
            vals = list(struct.unpack(f"<{len(words)}f",
                                      struct.pack(f"<{len(words)}I", *[w << 16 for w in words])))
        elif dtype == "F32":
            vals = list(struct.unpack(f"<{len(raw) // 4}f", raw))
        elif dtype == "F16":
            vals = list(struct.unpack(f"<{len(raw) // 2}e", raw))
        elif dtype == "I64":
            vals = list(struct.unpack(f"<{len(raw) // 8}q", raw))
        else:
            raise SystemExit(f"unsupported dtype {dtype}")
        out[name] = (info["shape"], vals)
    return out


def write_safetensors(path, name, shape, dtype, payload):
    header = {name: {"dtype": dtype, "shape": shape,
                     "data_offsets": [0, len(payload)]}}
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + payload)


def to_f16(x):
    return struct.unpack("<e", struct.pack("<e", x))[0]


def to_f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def main():
    if sys.argv[1] == "inputs":
        write_safetensors(sys.argv[2], "input_ids", [1, len(IDS)], "I64",
                          struct.pack(f"<{len(IDS)}q", *IDS))
        return 0
    ckpt = read_safetensors(os.path.join(sys.argv[2], "model.safetensors"))
    got = read_safetensors(sys.argv[3])
    f16 = "--f16-weights" in sys.argv
    (vocab, hidden), emb = ckpt["model.embed_tokens.weight"]
    _, head = ckpt["lm_head.weight"]  # [vocab, hidden]; the graph uses its transpose
    if f16:
        emb = [to_f16(v) for v in emb]
        head = [to_f16(v) for v in head]
    probs, logits16, proj = [], [], []
    for t in IDS:
        h = emb[t * hidden:(t + 1) * hidden]
        logits = [to_f32(sum(h[k] * head[v * hidden + k] for k in range(hidden)))
                  for v in range(vocab)]
        scaled = [0.5 * x for x in logits]
        m = max(scaled)
        e = [math.exp(x - m) for x in scaled]
        s = sum(e)
        probs += [x / s for x in e]
        logits16 += [to_f16(x) for x in logits]
        mm = 0.25 * sum(h)
        proj += [mm if mm >= 0 else 0.125 * mm] * 40
    bad = 0
    for name, want, tol in (("probs", probs, 1e-6), ("logits_f16", logits16, 2e-3),
                            ("proj", proj, 1e-6)):
        shape, vals = got[name]
        if len(vals) != len(want):
            print(f"{name}: {len(vals)} values, expected {len(want)} (shape {shape})")
            bad += 1
            continue
        worst = max(abs(a - b) for a, b in zip(vals, want))
        print(f"{name}: shape {shape} max abs diff {worst:.3g}")
        if worst > tol:
            bad += 1
            print(f"{name}: MISMATCH (tolerance {tol})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
