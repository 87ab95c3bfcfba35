#!/usr/bin/python3
"""Writes the seed corpus of QuantCheckpointFuzzer: one small quantized
Linear per packed layout, each input a config.json, "\\n----\\n" and a
model.safetensors (test/fuzz/QuantCheckpointFuzzer.cpp).

    make-quant-seeds.py OUT_DIR      (test/fuzz/corpus/QuantCheckpointFuzzer)

Codes and scales are small deterministic patterns: the seeds only have to
open (every layout valid), the fuzzer mutates them. Standard library only.
"""

import json
import os
import struct
import sys

M = "model.layers.0.mlp.up_proj"


def safetensors(tensors):
    """tensors: [(name, dtype, shape, bytes)] -> the file's bytes."""
    header, offset, blobs = {}, 0, []
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        blobs.append(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def i32(values):
    return struct.pack("<%di" % len(values), *[v - (1 << 32) if v >= 1 << 31 else v for v in values])


def f16(values):
    return struct.pack("<%de" % len(values), *values)


def f32(values):
    return struct.pack("<%df" % len(values), *values)


def pack4(nibbles):
    """8 nibbles per int32 word, nibble k in bits 4k."""
    return [sum((nibbles[w * 8 + k] & 15) << (4 * k) for k in range(8)) for w in range(len(nibbles) // 8)]


def config(quant):
    return {"architectures": ["LlamaForCausalLM"], "hidden_size": 32, "quantization_config": quant}


def seeds():
    out, inp, g = 16, 32, 16
    groups = inp // g
    codes = [(3 * i + 5) % 16 for i in range(out * inp)]
    scales = [0.0625 * (1 + i % 4) for i in range(groups * out)]
    # AWQ GEMM: qweight [in, out/8], qzeros [in/g, out/8], scales [in/g, out].
    yield "awq-gemm-g16", config({"quant_method": "awq", "bits": 4, "group_size": g, "zero_point": True,
                                  "version": "gemm", "modules_to_not_convert": ["lm_head"]}), [
        (M + ".qweight", "I32", [inp, out // 8], i32(pack4(codes))),
        (M + ".qzeros", "I32", [groups, out // 8], i32(pack4([8] * (groups * out)))),
        (M + ".scales", "F16", [groups, out], f16(scales))]
    # GPTQ v1 with desc_act: qweight [in/8, out], g_idx [in].
    yield "gptq-v1-desc_act", config({"quant_method": "gptq", "bits": 4, "group_size": g, "desc_act": True,
                                      "sym": True, "checkpoint_format": "gptq"}), [
        (M + ".qweight", "I32", [inp // 8, out], i32(pack4(codes))),
        (M + ".qzeros", "I32", [groups, out // 8], i32(pack4([7] * (groups * out)))),
        (M + ".scales", "F16", [groups, out], f16(scales)),
        (M + ".g_idx", "I32", [inp], i32([(i * 5) % groups for i in range(inp)]))]
    # GPTQ 8 bits, one group (group_size -1), gptq_v2.
    yield "gptq-v2-8bit-whole", config({"quant_method": "gptq", "bits": 8, "group_size": -1,
                                        "checkpoint_format": "gptq_v2"}), [
        (M + ".qweight", "I32", [inp // 4, out], i32([0x80808080 + i for i in range(inp // 4 * out)])),
        (M + ".qzeros", "I32", [1, out // 4], i32([0x80808080] * (out // 4))),
        (M + ".scales", "F16", [1, out], f16(scales[:out]))]
    # compressed-tensors pack-quantized, asymmetric groups, packed zero points.
    yield "ct-pack-quantized-asym", config({
        "quant_method": "compressed-tensors", "format": "pack-quantized",
        "quantization_status": "compressed", "ignore": ["lm_head", "re:.*gate_proj$"],
        "config_groups": {"group_0": {"targets": ["Linear"], "weights": {
            "num_bits": 4, "type": "int", "symmetric": False, "strategy": "group", "group_size": g}}}}), [
        (M + ".weight_packed", "I32", [out, inp // 8], i32(pack4(codes))),
        (M + ".weight_scale", "F16", [out, groups], f16(scales)),
        (M + ".weight_zero_point", "I32", [out // 8, groups], i32(pack4([8 + i % 3 for i in range(out * groups)]))),
        (M + ".weight_shape", "I64", [2], struct.pack("<2q", out, inp))]
    # compressed-tensors int-quantized per channel (I8 weights).
    yield "ct-int-quantized-channel", config({
        "quant_method": "compressed-tensors", "format": "int-quantized",
        "config_groups": {"g": {"targets": ["re:.*up_proj$"], "weights": {
            "num_bits": 8, "type": "int", "symmetric": True, "strategy": "channel"}}}}), [
        (M + ".weight", "I8", [out, inp], bytes((c * 17) & 0xFF for c in codes)),
        (M + ".weight_scale", "F32", [out, 1], f32(scales[:out]))]
    # compressed-tensors float-quantized with block scales.
    yield "ct-fp8-block", config({
        "quant_method": "compressed-tensors", "format": "float-quantized",
        "config_groups": {"g": {"targets": ["Linear"], "weights": {
            "num_bits": 8, "type": "float", "strategy": "block", "block_structure": [8, 16]}}}}), [
        (M + ".weight", "F8_E4M3", [out, inp], bytes(0x30 + c for c in codes)),
        (M + ".weight_scale", "BF16", [2, 2], struct.pack("<4H", 0x3F80, 0x3F00, 0x3E80, 0x4000))]
    # quant_method fp8, DeepSeek-style weight_scale_inv over partial blocks.
    yield "fp8-block-scale_inv", config({"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [12, 12],
                                         "activation_scheme": "dynamic"}), [
        (M + ".weight", "F8_E4M3", [out, inp], bytes(0x38 + (c & 7) for c in codes)),
        (M + ".weight_scale_inv", "F32", [2, 3], f32([1, 0.5, 0.25, 2, 4, 0.125]))]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    os.makedirs(sys.argv[1], exist_ok=True)
    for name, cfg, tensors in seeds():
        with open(os.path.join(sys.argv[1], name), "wb") as f:
            f.write(json.dumps(cfg, indent=1).encode() + b"\n----\n" + safetensors(tensors))


if __name__ == "__main__":
    main()
