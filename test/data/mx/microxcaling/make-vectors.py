#!/usr/bin/env python3
# Writes vectors.txt: float32 rows MX-fake-quantized by microsoft/microxcaling
# (`mx.mx_ops._quantize_mx`, CPU path, blocks of 32 along the last axis) for
# every element format and both rounding modes. See SOURCE.md.
#
#   python3 make-vectors.py /path/to/microxcaling > vectors.txt
#
# Needs PyTorch (Debian: python3-torch) and a checkout of microxcaling; the
# test (test/unit/Runtime/MxReferenceTest.cpp) needs neither.
import math
import random
import struct
import sys

sys.path.insert(0, sys.argv[1])
import torch  # noqa: E402
from mx import mx_ops  # noqa: E402
from mx.formats import _get_format_params  # noqa: E402

FORMATS = ["fp8_e4m3", "fp8_e5m2", "fp6_e3m2", "fp6_e2m3", "fp4_e2m1", "int8"]
ROUNDINGS = ["nearest", "even"]
BLOCK = 32
F32_MAX = struct.unpack("<f", struct.pack("<I", 0x7F7FFFFF))[0]


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def bits(x):
    return "%08x" % struct.unpack("<I", struct.pack("<f", x))[0]


def next_down(x, n=1):
    """The float32 n ulps towards zero from a positive float32 x."""
    b = struct.unpack("<I", struct.pack("<f", x))[0]
    return struct.unpack("<f", struct.pack("<I", b - n))[0]


def next_up(x, n=1):
    b = struct.unpack("<I", struct.pack("<f", x))[0]
    return struct.unpack("<f", struct.pack("<I", b + n))[0]


def rows():
    rng = random.Random(29)
    out = []
    # Normal values over many binades (the float32 subnormal range too).
    for base in [-140, -128, -120, -40, -6, -1, 0, 3, 12, 40, 100, 120]:
        out.append([f32(rng.gauss(0, 1) * 2.0**(base + rng.randrange(6))) for _ in range(64)])
    # Ties: odd multiples of a half step at several scales (a tie of some
    # element grid for every format), and their float32 neighbours.
    for scale in [-8, -5, -3, -1, 0, 2]:
        row = [f32((rng.randrange(-64, 64) + 0.5) * 2.0**scale) for _ in range(64)]
        out.append(row)
        out.append([next_down(abs(v), 1 + rng.randrange(3)) * (1 if v > 0 else -1) for v in row])
        out.append([next_up(abs(v), 1 + rng.randrange(3)) * (1 if v > 0 else -1) for v in row])
    # Values a few ulps under a half step of the element grid: (k + 0.5 -
    # tiny) steps, where float32 `|x| + 0.5` rounds up.
    row = []
    for _ in range(64):
        k = rng.randrange(0, 8)
        e = rng.randrange(-4, 4)
        row.append(f32(next_down(f32((k + 0.5) * 2.0**e), 1) * rng.choice([1, -1])))
    out.append(row)
    # The largest float32 under half the smallest element step, for every
    # format: 2^-j - 1 ulp next to a maximum of 1 (E2M1: j = 4, E2M3: 6,
    # INT8: 7, E3M2: 9, E4M3: 18, E5M2: 32).
    row = [1.0] + [next_down(f32(2.0**-j)) for j in range(3, 34)]
    out.append(row + [-v for v in row])
    # Block maxima a few ulps below a power of two (a float32 log2 rounds
    # them up), the other values random below them.
    for e in [-100, -2, 0, 1, 7, 60]:
        row = []
        for blk in range(2):
            m = next_down(f32(2.0**e), 1 + blk)
            vals = [f32(rng.uniform(-1, 1) * m) for _ in range(BLOCK - 1)] + [m]
            rng.shuffle(vals)
            row += vals
        out.append(row)
    # Near the float32 maximum.
    row = [F32_MAX, -F32_MAX, next_down(F32_MAX, 5), f32(2.0**127), f32(1.5 * 2.0**127)]
    row += [f32(rng.gauss(0, 1) * 2.0**120) for _ in range(27)]
    row += [f32(rng.gauss(0, 1) * 2.0**126) for _ in range(31)] + [f32(2.0**126)]
    out.append(row)
    # Zeros, signed zeros, values rounding to zero next to a large one.
    out.append([0.0] * 32 + [0.0, -0.0, 4.0, -1e-9, 1e-9, -0.0] + [0.0] * 26)
    # NaN and Inf in blocks of their own.
    nan, inf = float("nan"), float("inf")
    out.append([1.0, nan, -3.0] + [0.25] * 29 + [1.0, inf, -inf, 3.0] + [0.5] * 28)
    out.append([-inf] + [2.0] * 31 + [1.0, 2.0] * 16)
    # A row that ends in a short block (microxcaling pads it with zeros).
    out.append([f32(rng.gauss(0, 1)) for _ in range(48)])
    return out


def shared_exponents(row_t, fmt):
    """microxcaling's shared exponent of each block, as _quantize_mx takes it."""
    _, _, emax, _, _ = _get_format_params(fmt)
    blocks, axes, _, _ = mx_ops._reshape_to_blocks(row_t.clone(), [-1], BLOCK)
    s = mx_ops._shared_exponents(blocks, method="max", axes=[a + 1 for a in axes], ebits=0)
    s = s - emax
    s[s > 127] = float("NaN")
    s[s < -127] = -127
    return [("nan" if math.isnan(x) else str(int(x))) for x in s.flatten().tolist()]


def main():
    print("# microsoft/microxcaling _quantize_mx on float32 rows, blocks of 32 along")
    print("# the row (see SOURCE.md). 'in ROW V...' gives a row's float32 bits;")
    print("# 'out FORMAT ROUNDING ROW S,S,... V...' the quantized row and each")
    print("# block's shared exponent (E8M0 exponent, 'nan' for the NaN scale).")
    data = rows()
    for i, row in enumerate(data):
        print("in %d %s" % (i, " ".join(bits(v) for v in row)))
    for fmt in FORMATS:
        for rounding in ROUNDINGS:
            for i, row in enumerate(data):
                t = torch.tensor(row, dtype=torch.float32)
                q = mx_ops._quantize_mx(t.clone(), 8, fmt, shared_exp_method="max", axes=[-1],
                                        block_size=BLOCK, round=rounding)
                print("out %s %s %d %s %s" % (fmt, rounding, i, ",".join(shared_exponents(t, fmt)),
                                              " ".join(bits(v) for v in q.tolist())))


if __name__ == "__main__":
    main()
