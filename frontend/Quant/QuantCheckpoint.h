//===- QuantCheckpoint.h - quantized checkpoints as dense views -*- C++ -*-===//
//
// Part of qeff. Turns the packed tensors of a pre-quantized Hugging Face
// checkpoint into the dense weights the importer expects: every quantized
// Linear `<m>` (its qweight/qzeros/scales/g_idx, weight_packed/weight_scale/
// weight_zero_point/weight_shape/weight_g_idx, or F8 weight + weight_scale /
// weight_scale_inv) becomes one decoded f32 tensor `<m>.weight` of
// `[out, in]` in the Checkpoint view, its parts leave the view, and the
// activation / KV-cache scales (input_scale, k_scale, ...) are dropped: the
// model runs with float activations. Every shape, dtype, group size and
// index is checked here, so decoding cannot fail or read out of bounds.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_QUANT_QUANTCHECKPOINT_H
#define QEFF_FRONTEND_QUANT_QUANTCHECKPOINT_H

#include "frontend/HF/Checkpoint.h"
#include "frontend/HF/JsonConfig.h"
#include "frontend/Quant/QuantConfig.h"

#include <memory>
#include <string>

namespace qeff::quant {

/// Replaces the packed Linears of `checkpoint` by decoded weights per
/// `scheme`. Errors name the tensor (and the config field) at fault.
absl::Status dequantizeCheckpoint(hf::Checkpoint &checkpoint,
                                  const QuantScheme &scheme);

/// The weights of the checkpoint directory `dir` (or a .safetensors / index
/// path) as the importer sees them: decoded per `config`'s
/// quantization_config when it has one. A checkpoint holding packed
/// quantized tensors without a quantization_config is refused by name.
absl::StatusOr<std::unique_ptr<hf::Checkpoint>>
openDenseCheckpoint(const std::string &dir, const hf::JsonConfig &config);

} // namespace qeff::quant

#endif // QEFF_FRONTEND_QUANT_QUANTCHECKPOINT_H
