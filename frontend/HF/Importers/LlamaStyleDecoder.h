//===- LlamaStyleDecoder.h - the pre-norm RMSNorm/SwiGLU decoder -*- C++
//-*-===//
//
// Part of qeff. The decoder shape shared by Llama, Mistral and their
// relatives (Qwen2, Gemma, Phi-3, Mixtral): embedding, N x (RMSNorm ->
// attention -> residual, RMSNorm -> gated MLP or MoE -> residual), final
// RMSNorm, LM head, with the Hugging Face
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
  /// q/k/v projections have biases whatever `attention_bias` says, o_proj
  /// follows `attention_bias` (Qwen2).
  bool qkvBias = false;
  /// Non-zero: the embedding output is multiplied by it (Gemma:
  /// sqrt(hidden_size)); the tied LM head uses the unscaled table.
  double embeddingScale = 0.0;
  /// RMSNorm computes `(offset + w)` (Gemma: 1).
  double normWeightOffset = 0.0;
  /// Fused `self_attn.qkv_proj` ([Q | K | V]) and `mlp.gate_up_proj`
  /// ([gate | up]) (Phi-3).
  bool fusedProjections = false;
  /// Non-zero: the MLP is Mixtral's `block_sparse_moe` with this many
  /// experts, `moeTopK` chosen per token.
  int64_t moeExperts = 0;
  int64_t moeTopK = 0;
};

mlir::OwningOpRef<mlir::ModuleOp>
buildLlamaStyleDecoder(DecoderBuilder &b, const LlamaStyleOptions &options);

} // namespace qeff::hf

#endif // QEFF_FRONTEND_HF_IMPORTERS_LLAMASTYLEDECODER_H
