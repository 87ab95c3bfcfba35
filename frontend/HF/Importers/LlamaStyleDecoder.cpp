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
  Value h = b.embedding("model.embed_tokens.weight");
  for (int64_t i = 0; i < c.numHiddenLayers; ++i) {
    std::string p = "model.layers." + std::to_string(i) + ".";
    AttentionSpec attn;
    attn.q = p + "self_attn.q_proj";
    attn.k = p + "self_attn.k_proj";
    attn.v = p + "self_attn.v_proj";
    attn.o = p + "self_attn.o_proj";
    attn.qkvBias = attn.oBias = c.attentionBias;
    attn.rotaryStyle = mlir::qeff::RotaryStyle::half;
    attn.rotaryDim = c.rotaryDim();
    if (options.slidingWindow && c.slidingWindow)
      attn.slidingWindow = *c.slidingWindow;

    Value x = b.rmsNorm(h, p + "input_layernorm.weight", c.rmsNormEps);
    h = b.add(h, b.selfAttention(i, x, attn));
    x = b.rmsNorm(h, p + "post_attention_layernorm.weight", c.rmsNormEps);
    h = b.add(h, b.gatedMlp(x, p + "mlp.gate_proj", p + "mlp.up_proj",
                            p + "mlp.down_proj", c.mlpBias));
  }
  h = b.rmsNorm(h, "model.norm.weight", c.rmsNormEps);
  return b.finish(h, c.tieWordEmbeddings ? "model.embed_tokens.weight"
                                         : "lm_head.weight");
}

} // namespace qeff::hf
