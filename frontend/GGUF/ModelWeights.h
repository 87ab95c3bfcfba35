//===- ModelWeights.h - the weights of any checkpoint path ------*- C++ -*-===//
//
// Part of qeff. One entry for "the dense weights of this model path",
// whatever it is: a Hugging Face directory (bf16/f32, or pre-quantized and
// decoded per its quantization_config: frontend/Quant), a .safetensors file
// or index, or a GGUF file (frontend/GGUF). The importer and the exporter
// (when it opens a checkpoint itself) both go through it, so they see the
// same tensors.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_GGUF_MODELWEIGHTS_H
#define QEFF_FRONTEND_GGUF_MODELWEIGHTS_H

#include "frontend/HF/Checkpoint.h"

#include <memory>
#include <string>

namespace qeff::gguf {

absl::StatusOr<std::unique_ptr<hf::Checkpoint>>
openModelWeights(const std::string &path);

} // namespace qeff::gguf

#endif // QEFF_FRONTEND_GGUF_MODELWEIGHTS_H
