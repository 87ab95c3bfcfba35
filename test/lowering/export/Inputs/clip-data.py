#!/usr/bin/env python3
"""Data for export-f16-clip.test and export-bf16-ort.test, in pure Python.

  clip-data.py make DIR      DIR/ckpt/model.safetensors: f32 "big.weight"
                             [2, 4] with values beyond the fp16 range;
                             DIR/x.safetensors: input x = zeros [4, 2]
  clip-data.py check FILE    FILE holds output y = x + big.weight^T after
                             --onnx-weights-dtype=f16: compare with the
                             clipped values; exit 1 on a mismatch
  clip-data.py check-bf16 FILE  the same after --onnx-weights-dtype=bf16:
                             compare with the values rounded to bf16
                             (nearest even; bf16 has f32's range, no clip)
"""
import json
import os
import struct
import sys

BIG = [100000.0, -1000000.0, 70000.0, 65504.0,
       65519.0, 1.0, -2.5, 3e38]          # [2, 4]; 5 values beyond 65504
WANT = [65504.0, 65504.0, -65504.0, 1.0,  # the [4, 2] transpose, clipped
        65504.0, -2.5, 65504.0, 65504.0]


def bf16(x):
    """x rounded to the nearest bf16 (ties to even), as a float."""
    (u,) = struct.unpack("<I", struct.pack("<f", x))
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return struct.unpack("<f", struct.pack("<I", u))[0]


def write(path, name, shape, values):
    payload = struct.pack(f"<{len(values)}f", *values)
    header = {name: {"dtype": "F32", "shape": shape,
                     "data_offsets": [0, len(payload)]}}
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + payload)


def main():
    if sys.argv[1] == "make":
        os.makedirs(os.path.join(sys.argv[2], "ckpt"), exist_ok=True)
        write(os.path.join(sys.argv[2], "ckpt", "model.safetensors"),
              "big.weight", [2, 4], BIG)
        write(os.path.join(sys.argv[2], "x.safetensors"), "x", [4, 2], [0.0] * 8)
        return 0
    with open(sys.argv[2], "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    info = json.loads(data[8:8 + n])["y"]
    begin, end = info["data_offsets"]
    got = list(struct.unpack("<8f", data[8 + n + begin:8 + n + end]))
    print("y =", got)
    if sys.argv[1] == "check-bf16":
        want = [bf16(BIG[(i % 2) * 4 + i // 2]) for i in range(8)]
        return 0 if got == want else 1
    return 0 if got == WANT else 1


if __name__ == "__main__":
    sys.exit(main())
