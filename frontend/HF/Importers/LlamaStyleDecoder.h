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

#include <functional>

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

  /// Set: the norms (input, post-attention, final) are this instead of
  /// RMSNorm with `normWeightOffset` (LayerNorm: StableLM, Cohere, Nemotron,
  /// Starcoder2; non-parametric: OLMo).
  std::optional<NormSpec> norm;
  /// `h + attn(n(h)) + mlp(n(h))` with the one `input_layernorm` (StableLM
  /// with use_parallel_residual, Cohere).
  bool parallelResidual = false;
  /// Gemma 2's four norms: post_attention_layernorm after the attention,
  /// pre_/post_feedforward_layernorm around the MLP.
  bool sandwichNorms = false;
  /// Per-head q/k norms (`qkNorm.q` / `.k` name the modules inside
  /// `self_attn`, e.g. "q_layernorm").
  QKNorm qkNorm;
  double clipQkv = 0.0;
  mlir::qeff::RotaryStyle rotaryStyle = mlir::qeff::RotaryStyle::half;
  /// Non-zero: attention scale instead of 1/sqrt(head_dim) (Gemma 2).
  double attentionScale = 0.0;
  double attentionSoftcap = 0.0;
  /// With `slidingWindow`: only layers with an even index are windowed,
  /// the others attend globally (Gemma 2).
  bool windowEvenLayersOnly = false;
  /// Non-zero: each residual branch (attention, MLP) is multiplied by it
  /// before it is added (Granite's residual_multiplier).
  double residualMultiplier = 0.0;
  /// OLMo 2: no pre-norms; `post_attention_layernorm` and
  /// `post_feedforward_layernorm` normalise the branch outputs.
  bool postBranchNorms = false;
  /// Set: adjusts layer `layer`'s attention after the options above filled
  /// it in (Gemma 3's per-layer window and rotary base).
  std::function<void(int64_t layer, AttentionSpec &spec)> layerAttention;
  /// Set: the MLP of layer `layer` (module prefix "model.layers.<i>.")
  /// instead of the gated `mlp.{gate,up,down}_proj` (Starcoder2's c_fc/c_proj,
  /// Nemotron's up/down, Qwen2-MoE's experts).
  std::function<mlir::Value(int64_t layer, const std::string &prefix,
                            mlir::Value x)>
      mlp;
};

mlir::OwningOpRef<mlir::ModuleOp>
buildLlamaStyleDecoder(DecoderBuilder &b, const LlamaStyleOptions &options);

/// Gemma 2's options (Gemma2.cpp), the base of Gemma 3's; sets the final
/// logit soft-cap on `b` (`final_logit_softcapping`, `finalCapDefault` when
/// absent).
LlamaStyleOptions gemma2Options(DecoderBuilder &b, double finalCapDefault);
/// Qwen2-MoE's and Qwen3-MoE's sparse blocks (Qwen2Moe.cpp): the MoE of
/// layer l when l is not in mlp_only_layers and (l + 1) %
/// decoder_sparse_step == 0; router `mlp.gate`, experts
/// `mlp.experts.<e>.{gate,up,down}_proj` of moe_intermediate_size,
/// renormalised with norm_topk_prob. Defaults per family.
struct QwenMoE {
  MoESpec spec;
  std::vector<int64_t> denseLayers;
  int64_t step = 1;
  bool isSparse(int64_t layer) const;
};
QwenMoE qwenMoE(DecoderBuilder &b, int64_t numExperts, int64_t topK,
                int64_t intermediate);
/// Qwen3's attention options (Qwen3.cpp), shared with Qwen3-MoE.
LlamaStyleOptions qwen3Attention(const ModelConfig &config);
/// Per layer, whether config `layer_types` says sliding_attention (else
/// full_attention; Gemma3.cpp, shared with GPT-OSS); `fallback` when the
/// field is absent or null. Refuses a list of the wrong length or an
/// unknown type at the field.
absl::StatusOr<std::vector<bool>>
slidingLayerTypes(const ModelConfig &c, std::vector<bool> fallback);
/// Granite's multipliers (Granite.cpp), shared with GraniteMoe; sets the
/// logit scale on `b`.
LlamaStyleOptions graniteOptions(DecoderBuilder &b);

} // namespace qeff::hf

#endif // QEFF_FRONTEND_HF_IMPORTERS_LLAMASTYLEDECODER_H
