#!/usr/bin/env python3
"""GPT-OSS MXFP4 fixtures: packs a golden's expert weights as released gpt-oss
checkpoints store them, and restates transformers' dequantizer (numpy only).

  mxfp4-pack.py pack GOLDEN_DIR OUT_DIR
      OUT_DIR/config.json (+ quantization_config {quant_method: mxfp4,
      modules_to_not_convert}), model.safetensors (every
      `mlp.experts.{gate_up,down}_proj` as `<p>_blocks` U8 [E, R, G, 16] and
      `<p>_scales` U8 [E, R, G]; the rest copied), generation_config.json, and
      dequantized.sha256.json: the digests of `dequantize()` of the packed
      bytes (test/tools/quant-digests.py format).
  mxfp4-pack.py twin FIXTURE_DIR OUT_DIR
      The dequantized-weights twin: the same model with every packed pair
      replaced by `dequantize()` of it as F32, no quantization_config.

The storage layout and the dequantizer follow transformers'
src/transformers/integrations/mxfp4.py (huggingface/transformers, the
version with `Mxfp4GptOssExperts` and `convert_moe_packed_tensors`):

  Mxfp4GptOssExperts.__init__:
    gate_up_proj_blocks  [num_experts, 2 * intermediate_size, hidden_size // 32, 16] uint8
    gate_up_proj_scales  [num_experts, 2 * intermediate_size, hidden_size // 32] uint8
    down_proj_blocks     [num_experts, hidden_size, intermediate_size // 32, 16] uint8
    down_proj_scales     [num_experts, hidden_size, intermediate_size // 32] uint8
  so the packed rows are the *output* features of the unquantized
  `gate_up_proj` [E, hidden, 2 * intermediate] / `down_proj` [E, intermediate,
  hidden] (applied as x @ W): the dequantizer's final transpose(1, 2) turns
  [E, R, K] back into [E, K, R].

How a block's codes are chosen (`pack`) is ours: the shared exponent is
floor(log2(max |x|)) - 2 (OCP MX: emax of E2M1 is 2), each value rounds to
the nearest FP4 value of x / 2^e (ties to the even code), clipped to +-6. Any
choice works for the tests: they compare qeff's decoding of the packed bytes
with `dequantize()` of the same bytes.
"""
import hashlib
import json
import os
import shutil
import struct
import sys

import numpy as np

# transformers integrations/mxfp4.py: `FP4_VALUES = [+0.0, +0.5, ..., -6.0]`.
FP4_VALUES = [+0.0, +0.5, +1.0, +1.5, +2.0, +3.0, +4.0, +6.0,
              -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]

EXPERT_PROJECTIONS = ("mlp.experts.gate_up_proj", "mlp.experts.down_proj")


def dequantize(blocks, scales):
    """convert_moe_packed_tensors(blocks, scales), line by line, in float32.

    transformers decodes into dtype=torch.bfloat16 by default; every value is
    an FP4 value times a power of two, exact in bf16 and f32 alike.
    """
    # `scales = scales.to(torch.int32) - 127`
    scales = scales.astype(np.int32) - 127
    # `assert blocks.shape[:-1] == scales.shape`
    assert blocks.shape[:-1] == scales.shape, (blocks.shape, scales.shape)
    # `lut = torch.tensor(FP4_VALUES, dtype=dtype, device=blocks.device)`
    lut = np.array(FP4_VALUES, dtype=np.float32)
    # `*prefix_shape, G, B = blocks.shape`; `rows_total = math.prod(prefix_shape) * G`
    *prefix_shape, G, B = blocks.shape
    rows_total = int(np.prod(prefix_shape)) * G
    # `blocks = blocks.reshape(rows_total, B)`; `scales = scales.reshape(rows_total, 1)`
    blocks = blocks.reshape(rows_total, B)
    scales = scales.reshape(rows_total, 1)
    # `out = torch.empty(rows_total, B * 2, dtype=dtype, ...)`
    out = np.empty((rows_total, B * 2), dtype=np.float32)
    # `idx_lo = (blk & 0x0F)`; `idx_hi = (blk >> 4)`
    idx_lo = (blocks & 0x0F).astype(np.int64)
    idx_hi = (blocks >> 4).astype(np.int64)
    # `sub[:, 0::2] = lut[idx_lo]`; `sub[:, 1::2] = lut[idx_hi]`
    out[:, 0::2] = lut[idx_lo]
    out[:, 1::2] = lut[idx_hi]
    # `torch.ldexp(sub, exp, out=sub)`: sub * 2.0 ** exp
    out = out * np.ldexp(np.float32(1.0), scales).astype(np.float32)
    # `out = out.reshape(*prefix_shape, G, B * 2).view(*prefix_shape, G * B * 2)`
    out = out.reshape(*prefix_shape, G, B * 2).reshape(*prefix_shape, G * B * 2)
    # `return out.transpose(1, 2).contiguous()`
    return np.ascontiguousarray(np.swapaxes(out, 1, 2))


def quantize(w):
    """[E, K, R] float32 (x @ W layout) -> blocks [E, R, K // 32, 16], scales [E, R, K // 32]."""
    e, k, r = w.shape
    assert k % 32 == 0, "the packed dimension must be a multiple of 32"
    x = np.swapaxes(w, 1, 2).reshape(e, r, k // 32, 32).astype(np.float64)
    amax = np.abs(x).max(axis=-1)
    exp = np.where(amax > 0, np.floor(np.log2(np.where(amax > 0, amax, 1.0))) - 2, -127)
    exp = np.clip(exp, -127, 127).astype(np.int32)
    scaled = x / np.ldexp(1.0, exp)[..., None]
    magnitudes = np.array(FP4_VALUES[:8])
    # Nearest magnitude, ties to the even code (the lower index of a tie).
    dist = np.abs(np.abs(scaled)[..., None] - magnitudes)
    code = dist.argmin(axis=-1)
    code = np.where(np.signbit(scaled) & (code > 0), code + 8, code).astype(np.uint8)
    blocks = (code[..., 0::2] | (code[..., 1::2] << 4)).astype(np.uint8)
    scales = (exp + 127).astype(np.uint8)
    return blocks, scales


DTYPES = {"F32": np.float32, "U8": np.uint8, "I64": np.int64, "BF16": None}


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        out[name] = np.frombuffer(data[8 + n + b:8 + n + end],
                                  dtype=DTYPES[e["dtype"]]).reshape(e["shape"])
    return out


def write_safetensors(path, tensors):
    names = {np.dtype(np.float32): "F32", np.dtype(np.uint8): "U8"}
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        x = np.ascontiguousarray(tensors[name])
        raw = x.astype(x.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": names[x.dtype], "shape": list(x.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * ((8 - len(head) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(head)) + head + b"".join(blobs))


def pack(golden, out):
    os.makedirs(out, exist_ok=True)
    config = json.load(open(os.path.join(golden, "config.json")))
    weights = read_safetensors(os.path.join(golden, "model.safetensors"))
    packed, digests = {}, {}
    for name, w in weights.items():
        if name.endswith(EXPERT_PROJECTIONS):
            blocks, scales = quantize(w.astype(np.float32))
            packed[name + "_blocks"] = blocks
            packed[name + "_scales"] = scales
            ref = dequantize(blocks, scales)
            assert ref.shape == w.shape
            digests[name] = {"shape": list(ref.shape),
                             "sha256": hashlib.sha256(ref.astype("<f4").tobytes()).hexdigest()}
        else:
            packed[name] = w
    # As the released gpt-oss config.json lists them.
    config["quantization_config"] = {
        "quant_method": "mxfp4",
        "modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router",
                                   "model.embed_tokens", "lm_head"]}
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")
    write_safetensors(os.path.join(out, "model.safetensors"), packed)
    shutil.copy(os.path.join(golden, "generation_config.json"), out)
    with open(os.path.join(out, "dequantized.sha256.json"), "w") as f:
        json.dump(digests, f, indent=1, sort_keys=True)
        f.write("\n")


def twin(fixture, out):
    os.makedirs(out, exist_ok=True)
    config = json.load(open(os.path.join(fixture, "config.json")))
    config.pop("quantization_config")
    weights = read_safetensors(os.path.join(fixture, "model.safetensors"))
    dense = {}
    for name, w in weights.items():
        if name.endswith("_scales"):
            continue
        if name.endswith("_blocks"):
            base = name[:-len("_blocks")]
            dense[base] = dequantize(w, weights[base + "_scales"])
        else:
            dense[name] = w
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")
    write_safetensors(os.path.join(out, "model.safetensors"), dense)
    shutil.copy(os.path.join(fixture, "generation_config.json"), out)


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("pack", "twin"):
        sys.exit(__doc__)
    (pack if sys.argv[1] == "pack" else twin)(sys.argv[2], sys.argv[3])
