//===- Olmo.cpp - OlmoForCausalLM -------------------------------*- C++ -*-===//
//
// Part of qeff. A Llama-layout decoder whose norms are non-parametric
// LayerNorms (no weight, no bias, eps 1e-5 whatever the config says; no
// norm tensors in the checkpoint), with clip_qkv: q, k and v clamped to
// [-clip_qkv, clip_qkv] right after their projections. Biases from
// attention_bias; SwiGLU MLP; rotate_half rotary.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/FamilyRegistry.h"
#include "frontend/HF/Importers/LlamaStyleDecoder.h"

namespace qeff::hf {
namespace {
FamilyDefaults olmoDefaults() {
  FamilyDefaults d = FamilyDefaults::llama();
  d.vocabSize = 50304;
  d.tieWordEmbeddings = true;
  d.bosTokenId.reset();
  d.eosTokenIds = {50279};
  d.padTokenId = 1;
  return d;
}
} // namespace

Family olmoFamily() {
  return Family{
      /*name=*/"olmo",
      /*architectures=*/{"OlmoForCausalLM"},
      /*modelTypes=*/{"olmo"},
      /*defaults=*/&olmoDefaults,
      /*build=*/
      [](DecoderBuilder &b) {
        LlamaStyleOptions options;
        // OlmoLayerNorm: F.layer_norm(x, eps=1e-5), no parameters.
        options.norm = NormSpec{NormSpec::NonParametric, 1e-5};
        options.clipQkv = b.config()
                              .raw->getOptionalFloat("clip_qkv")
                              .value_or(std::nullopt)
                              .value_or(0.0);
        return buildLlamaStyleDecoder(b, options);
      },
      /*configure=*/
      [](ModelConfig &c) -> absl::Status {
        auto clip = c.raw->getOptionalFloat("clip_qkv");
        if (!clip.ok())
          return clip.status();
        if (*clip && !(**clip > 0))
          return c.raw->fieldError("clip_qkv",
                                   "must be null or positive, got " +
                                       std::to_string(**clip));
        return absl::OkStatus();
      }};
}

} // namespace qeff::hf
