//===- LlamaStyleDecoder.cpp - the pre-norm RMSNorm/SwiGLU decoder --------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/LlamaStyleDecoder.h"

using namespace mlir;

namespace qeff::hf {

OwningOpRef<ModuleOp> buildLlamaStyleDecoder(DecoderBuilder &b,
                                             const LlamaStyleOptions &options) {
  const ModelConfig &c = b.config();
  NormSpec norm = options.norm.value_or(
      NormSpec{NormSpec::RMS, c.rmsNormEps, options.normWeightOffset});
  Value h = b.embedding("model.embed_tokens.weight");
  if (options.embeddingScale != 0.0)
    h = b.scale(h, options.embeddingScale);
  for (int64_t i = 0; i < c.numHiddenLayers; ++i) {
    std::string p = "model.layers." + std::to_string(i) + ".";
    AttentionSpec attn;
    if (options.fusedProjections)
      attn.fused = FusedQKV{p + "self_attn.qkv_proj"};
    attn.q = p + "self_attn.q_proj";
    attn.k = p + "self_attn.k_proj";
    attn.v = p + "self_attn.v_proj";
    attn.o = p + "self_attn.o_proj";
    attn.qkvBias = options.qkvBias || c.attentionBias;
    attn.oBias = c.attentionBias;
    attn.rotaryStyle = options.rotaryStyle;
    attn.rotaryDim = c.rotaryDim();
    if (options.slidingWindow && c.slidingWindow &&
        (!options.windowEvenLayersOnly || i % 2 == 0))
      attn.slidingWindow = *c.slidingWindow;
    attn.clipQkv = options.clipQkv;
    attn.scale = options.attentionScale;
    attn.softcap = options.attentionSoftcap;
    attn.qkNorm = options.qkNorm;
    if (attn.qkNorm.kind != QKNorm::None) {
      attn.qkNorm.q = p + "self_attn." + options.qkNorm.q;
      attn.qkNorm.k = p + "self_attn." + options.qkNorm.k;
    }

    if (options.layerAttention)
      options.layerAttention(i, attn);

    // Granite scales each branch before its residual add.
    auto branch = [&](Value x) {
      return options.residualMultiplier != 0.0
                 ? b.scale(x, options.residualMultiplier)
                 : x;
    };
    auto attention = [&](Value x) {
      return branch(b.selfAttention(i, x, attn));
    };
    auto mlp = [&](Value x) {
      if (options.mlp)
        return branch(options.mlp(i, p, x));
      if (options.moeExperts > 0)
        return branch(b.moe(x, p + "block_sparse_moe", options.moeExperts,
                            options.moeTopK));
      if (options.fusedProjections)
        return branch(b.fusedGatedMlp(x, p + "mlp.gate_up_proj",
                                      p + "mlp.down_proj", c.mlpBias));
      return branch(b.gatedMlp(x, p + "mlp.gate_proj", p + "mlp.up_proj",
                               p + "mlp.down_proj", c.mlpBias));
    };
    if (options.postBranchNorms)
      h = b.sandwichBlock(h, norm, "", p + "post_attention_layernorm", "",
                          p + "post_feedforward_layernorm", attention, mlp);
    else if (options.sandwichNorms)
      h = b.sandwichBlock(h, norm, p + "input_layernorm",
                          p + "post_attention_layernorm",
                          p + "pre_feedforward_layernorm",
                          p + "post_feedforward_layernorm", attention, mlp);
    else
      h = b.preNormBlock(h, norm, p + "input_layernorm",
                         options.parallelResidual
                             ? ""
                             : p + "post_attention_layernorm",
                         options.parallelResidual, attention, mlp);
  }
  h = b.norm(h, "model.norm", norm);
  return b.finish(h, c.tieWordEmbeddings ? "model.embed_tokens.weight"
                                         : "lm_head.weight");
}

} // namespace qeff::hf
