//===- Persimmon.cpp - PersimmonForCausalLM ---------------------*- C++ -*-===//
//
// Part of qeff. `model.embed_tokens`; N x sequential blocks with LayerNorms
// (bias) `input_layernorm` / `post_attention_layernorm`; the fused
// `self_attn.query_key_value` (bias) laid out per head [q_h | k_h | v_h];
// qk_layernorm: one LayerNorm (weight and bias) over head_dim shared by all
// heads, `self_attn.{q,k}_layernorm`, before rotary; partial rotate_half
// rotary; `self_attn.dense` (bias); MLP `dense_4h_to_h(relu(dense_h_to_4h
// x)^2)` with biases; `final_layernorm`; untied lm_head without bias.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/DecoderBuilder.h"
#include "frontend/HF/Importers/FamilyRegistry.h"

using namespace mlir;

namespace qeff::hf {
namespace {
FamilyDefaults persimmonDefaults() {
  FamilyDefaults d;
  d.vocabSize = 262144;
  d.hiddenSize = 4096;
  d.intermediateSize = 16384;
  d.numHiddenLayers = 36;
  d.numAttentionHeads = 64;
  d.hiddenAct = "relu2";
  d.maxPositionEmbeddings = 16384;
  d.rmsNormEps = 1e-5;
  d.ropeTheta = 25000.0;
  d.partialRotaryFactor = 0.5;
  d.tieWordEmbeddings = false;
  d.bosTokenId = 1;
  d.eosTokenIds = {2};
  d.attributeMap = {{"rms_norm_eps", "layer_norm_eps"}};
  return d;
}
} // namespace

Family persimmonFamily() {
  return Family{
      /*name=*/"persimmon",
      /*architectures=*/{"PersimmonForCausalLM"},
      /*modelTypes=*/{"persimmon"},
      /*defaults=*/&persimmonDefaults,
      /*build=*/
      [](DecoderBuilder &b) {
        const ModelConfig &c = b.config();
        bool qkLayerNorm =
            c.raw->getBool("qk_layernorm", true).value_or(true);
        NormSpec norm{NormSpec::Layer, c.rmsNormEps};
        Value h = b.embedding("model.embed_tokens.weight");
        for (int64_t i = 0; i < c.numHiddenLayers; ++i) {
          std::string p = "model.layers." + std::to_string(i) + ".";
          AttentionSpec attn;
          attn.fused = FusedQKV{p + "self_attn.query_key_value",
                                c.numAttentionHeads};
          attn.o = p + "self_attn.dense";
          attn.qkvBias = attn.oBias = true;
          attn.rotaryDim = c.rotaryDim();
          if (qkLayerNorm)
            attn.qkNorm = QKNorm{QKNorm::Shared, p + "self_attn.q_layernorm",
                                 p + "self_attn.k_layernorm", c.rmsNormEps,
                                 /*bias=*/true};
          h = b.preNormBlock(
              h, norm, p + "input_layernorm", p + "post_attention_layernorm",
              /*parallel=*/false,
              [&](Value x) { return b.selfAttention(i, x, attn); },
              [&](Value x) {
                return b.mlp(x, p + "mlp.dense_h_to_4h",
                             p + "mlp.dense_4h_to_h", /*bias=*/true,
                             b.activation());
              });
        }
        h = b.norm(h, "model.final_layernorm", norm);
        return b.finish(h, c.tieWordEmbeddings ? "model.embed_tokens.weight"
                                               : "lm_head.weight");
      },
      /*configure=*/
      [](ModelConfig &c) -> absl::Status {
        if (c.numKeyValueHeads != c.numAttentionHeads)
          return c.raw->fieldError("num_key_value_heads",
                                   "must equal num_attention_heads "
                                   "(Persimmon has no grouped-query "
                                   "attention)");
        return c.raw->getBool("qk_layernorm", true).status();
      }};
}

} // namespace qeff::hf
