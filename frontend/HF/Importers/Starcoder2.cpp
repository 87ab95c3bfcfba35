//===- Starcoder2.cpp - Starcoder2ForCausalLM -------------------*- C++ -*-===//
//
// Part of qeff. A Llama-layout decoder (`model.layers.<i>.self_attn.*_proj`,
// GQA, rotate_half rotary on the whole head) with LayerNorms with bias
// (norm_epsilon), biases on every projection (use_bias), and a plain MLP
// `c_proj(gelu_pytorch_tanh(c_fc x))`; LM head tied to embed_tokens.
// sliding_window is applied as a window mask (transformers' flash-attention
// semantics, the one the models were trained with; its eager path ignores
// the window).
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/FamilyRegistry.h"
#include "frontend/HF/Importers/LlamaStyleDecoder.h"

using namespace mlir;

namespace qeff::hf {
namespace {
FamilyDefaults starcoder2Defaults() {
  FamilyDefaults d;
  d.vocabSize = 49152;
  d.hiddenSize = 3072;
  d.intermediateSize = 12288;
  d.numHiddenLayers = 30;
  d.numAttentionHeads = 24;
  d.numKeyValueHeads = 2;
  d.hiddenAct = "gelu_pytorch_tanh";
  d.maxPositionEmbeddings = 4096;
  d.rmsNormEps = 1e-5;
  d.tieWordEmbeddings = true;
  d.attentionBias = d.mlpBias = true;
  d.bosTokenId = 50256;
  d.eosTokenIds = {50256};
  d.attributeMap = {{"rms_norm_eps", "norm_epsilon"},
                    {"attention_bias", "use_bias"},
                    {"mlp_bias", "use_bias"}};
  return d;
}
} // namespace

Family starcoder2Family() {
  return Family{/*name=*/"starcoder2",
                /*architectures=*/{"Starcoder2ForCausalLM"},
                /*modelTypes=*/{"starcoder2"},
                /*defaults=*/&starcoder2Defaults,
                /*build=*/
                [](DecoderBuilder &b) {
                  const ModelConfig &c = b.config();
                  LlamaStyleOptions options;
                  options.norm = NormSpec{NormSpec::Layer, c.rmsNormEps};
                  options.slidingWindow = true;
                  options.mlp = [&](int64_t, const std::string &p, Value x) {
                    return b.mlp(x, p + "mlp.c_fc", p + "mlp.c_proj",
                                 c.mlpBias, b.activation());
                  };
                  return buildLlamaStyleDecoder(b, options);
                }};
}

} // namespace qeff::hf
