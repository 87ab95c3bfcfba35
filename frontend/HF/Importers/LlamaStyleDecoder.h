//===- LlamaStyleDecoder.h - the pre-norm RMSNorm/SwiGLU decoder -*- C++ -*-===//
//
// Part of qeff. The decoder shape shared by Llama, Mistral and their
// relatives: embedding, N x (RMSNorm -> attention -> residual, RMSNorm ->
// gated MLP -> residual), final RMSNorm, LM head, with the Hugging Face
// `model.layers.{i}.self_attn.{q,k,v,o}_proj` / `mlp.{gate,up,down}_proj`
// weight names. Families differ only in the options below.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_HF_IMPORTERS_LLAMASTYLEDECODER_H
#define QEFF_FRONTEND_HF_IMPORTERS_LLAMASTYLEDECODER_H

#include "frontend/HF/Importers/DecoderBuilder.h"

namespace qeff::hf {

struct LlamaStyleOptions {
  /// Use config `sliding_window` (Mistral) for attention.
  bool slidingWindow = false;
};

mlir::OwningOpRef<mlir::ModuleOp>
buildLlamaStyleDecoder(DecoderBuilder &b, const LlamaStyleOptions &options);

} // namespace qeff::hf

#endif // QEFF_FRONTEND_HF_IMPORTERS_LLAMASTYLEDECODER_H
