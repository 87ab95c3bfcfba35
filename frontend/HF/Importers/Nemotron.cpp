//===- Nemotron.cpp - NemotronForCausalLM -----------------------*- C++ -*-===//
//
// Part of qeff. A Llama-layout decoder (GQA, explicit head_dim, biases from
// attention_bias / mlp_bias) whose norms are LayerNorm1P (LayerNorm with
// weight (1 + w) and bias, norm_eps), with partial rotate_half rotary and
// a plain MLP `down_proj(relu(up_proj x)^2)` (hidden_act relu2); untied
// lm_head.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/FamilyRegistry.h"
#include "frontend/HF/Importers/LlamaStyleDecoder.h"

using namespace mlir;

namespace qeff::hf {
namespace {
FamilyDefaults nemotronDefaults() {
  FamilyDefaults d;
  d.vocabSize = 256000;
  d.hiddenSize = 6144;
  d.intermediateSize = 24576;
  d.numHiddenLayers = 32;
  d.numAttentionHeads = 48;
  d.hiddenAct = "relu2";
  d.maxPositionEmbeddings = 4096;
  d.rmsNormEps = 1e-5;
  d.partialRotaryFactor = 0.5;
  d.tieWordEmbeddings = false;
  d.bosTokenId = 2;
  d.eosTokenIds = {3};
  d.attributeMap = {{"rms_norm_eps", "norm_eps"}};
  return d;
}
} // namespace

Family nemotronFamily() {
  return Family{/*name=*/"nemotron",
                /*architectures=*/{"NemotronForCausalLM"},
                /*modelTypes=*/{"nemotron"},
                /*defaults=*/&nemotronDefaults,
                /*build=*/[](DecoderBuilder &b) {
                  const ModelConfig &c = b.config();
                  LlamaStyleOptions options;
                  options.norm = NormSpec{NormSpec::Layer, c.rmsNormEps,
                                          /*weightOffset=*/1.0};
                  options.mlp = [&](int64_t, const std::string &p, Value x) {
                    return b.mlp(x, p + "mlp.up_proj", p + "mlp.down_proj",
                                 c.mlpBias, b.activation());
                  };
                  return buildLlamaStyleDecoder(b, options);
                }};
}

} // namespace qeff::hf
