//===- Mxfp4.h - GPT-OSS MXFP4 expert tensors as dense sources --*- C++ -*-===//
//
// Part of qeff. quant_method "mxfp4" (released gpt-oss checkpoints): every
// `<p>_blocks` U8 [E, R, G, 16] (two FP4 E2M1 codes a byte, low nibble
// first, 32 values a block) with `<p>_scales` U8 [E, R, G] (E8M0, bias 127)
// becomes one decoded f32 tensor `<p>` of [E, G * 32, R], as transformers'
// integrations/mxfp4.py convert_moe_packed_tensors builds it: value
// FP4_VALUES[code] * 2^(scale - 127) at [e, r, 32 g + j], then
// transpose(1, 2). For GPT-OSS that is gate_up_proj [E, hidden,
// 2 * intermediate] and down_proj [E, intermediate, hidden], the layout the
// unquantized model stores.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_QUANT_MXFP4_H
#define QEFF_FRONTEND_QUANT_MXFP4_H

#include "frontend/HF/Checkpoint.h"
#include "frontend/Quant/QuantConfig.h"

namespace qeff::quant {

/// transformers' FP4_VALUES (E2M1, index = the 4-bit code).
inline constexpr float kFp4Values[16] = {+0.0f, +0.5f, +1.0f, +1.5f,
                                         +2.0f, +3.0f, +4.0f, +6.0f,
                                         -0.0f, -0.5f, -1.0f, -1.5f,
                                         -2.0f, -3.0f, -4.0f, -6.0f};

/// Replaces every `_blocks` / `_scales` pair of `checkpoint` by its decoded
/// tensor. Errors name the tensor at fault.
absl::Status dequantizeMxfp4(hf::Checkpoint &checkpoint,
                             const QuantScheme &scheme);

} // namespace qeff::quant

#endif // QEFF_FRONTEND_QUANT_MXFP4_H
