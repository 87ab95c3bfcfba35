//===- StableLm.cpp - StableLmForCausalLM -----------------------*- C++ -*-===//
//
// Part of qeff. A Llama-layout decoder with LayerNorms (bias,
// layer_norm_eps), q/k/v biases from use_qkv_bias (o_proj none), partial
// rotate_half rotary (partial_rotary_factor), SwiGLU MLP without biases,
// untied lm_head. qk_layernorm: one LayerNorm per head (weight only)
// `self_attn.{q,k}_layernorm.norms.<h>`, before rotary.
// use_parallel_residual: `x + attn(ln x) + mlp(ln x)` with the one
// `input_layernorm`.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/FamilyRegistry.h"
#include "frontend/HF/Importers/LlamaStyleDecoder.h"

namespace qeff::hf {
namespace {
FamilyDefaults stableLmDefaults() {
  FamilyDefaults d;
  d.vocabSize = 50304;
  d.hiddenSize = 2560;
  d.intermediateSize = 6912;
  d.numHiddenLayers = 32;
  d.numAttentionHeads = 32;
  d.hiddenAct = "silu";
  d.maxPositionEmbeddings = 4096;
  d.rmsNormEps = 1e-5;
  d.partialRotaryFactor = 0.25;
  d.tieWordEmbeddings = false;
  d.bosTokenId = 0;
  d.eosTokenIds = {0};
  d.attributeMap = {{"rms_norm_eps", "layer_norm_eps"}};
  return d;
}
} // namespace

Family stableLmFamily() {
  return Family{
      /*name=*/"stablelm",
      /*architectures=*/{"StableLmForCausalLM"},
      /*modelTypes=*/{"stablelm"},
      /*defaults=*/&stableLmDefaults,
      /*build=*/
      [](DecoderBuilder &b) {
        const ModelConfig &c = b.config();
        const JsonConfig &raw = *c.raw;
        LlamaStyleOptions options;
        options.norm = NormSpec{NormSpec::Layer, c.rmsNormEps};
        options.qkvBias = raw.getBool("use_qkv_bias", false).value_or(false);
        options.parallelResidual =
            raw.getBool("use_parallel_residual", false).value_or(false);
        if (raw.getBool("qk_layernorm", false).value_or(false))
          options.qkNorm = QKNorm{QKNorm::PerHeadStacked, "q_layernorm",
                                  "k_layernorm", c.rmsNormEps, false};
        return buildLlamaStyleDecoder(b, options);
      },
      /*configure=*/
      [](ModelConfig &c) -> absl::Status {
        for (const char *flag :
             {"use_qkv_bias", "use_parallel_residual", "qk_layernorm"})
          if (auto v = c.raw->getBool(flag, false); !v.ok())
            return v.status();
        return absl::OkStatus();
      }};
}

} // namespace qeff::hf
