//===- Gemma2.cpp - Gemma2ForCausalLM ---------------------------*- C++ -*-===//
//
// Part of qeff. Gemma's decoder (embedding x sqrt(hidden), RMSNorm (1 + w),
// GeGLU from hidden_activation, explicit head_dim, tied LM head) with
// Gemma 2's additions: four norms per layer (sandwich: post_attention_ and
// post_feedforward_layernorm on the attention and MLP outputs,
// pre_feedforward_layernorm before the MLP); attention scale
// query_pre_attn_scalar^-0.5; scores soft-capped by attn_logit_softcapping
// before the mask; a sliding window on the layers with an even index and
// global attention on the others; logits soft-capped by
// final_logit_softcapping. The device keeps a full ctx_len cache for every
// layer (the window is a mask), which gives transformers' no-cache results.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/FamilyRegistry.h"
#include "frontend/HF/Importers/LlamaStyleDecoder.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace qeff::hf {
namespace {
FamilyDefaults gemma2Defaults() {
  FamilyDefaults d = FamilyDefaults::gemma();
  d.hiddenSize = 2304;
  d.intermediateSize = 9216;
  d.numHiddenLayers = 26;
  d.numAttentionHeads = 8;
  d.numKeyValueHeads = 4;
  d.slidingWindow = 4096;
  return d;
}

/// An optional positive float field (null or absent: 0, i.e. off).
double optionalCap(const ModelConfig &c, const char *field, double dflt) {
  if (!c.raw->json().contains(field))
    return dflt;
  return c.raw->getOptionalFloat(field).value_or(std::nullopt).value_or(0.0);
}
} // namespace

LlamaStyleOptions gemma2Options(DecoderBuilder &b, double finalCapDefault) {
  const ModelConfig &c = b.config();
  LlamaStyleOptions options;
  options.embeddingScale = std::sqrt(double(c.hiddenSize));
  options.normWeightOffset = 1.0;
  options.sandwichNorms = true;
  options.slidingWindow = true;
  options.windowEvenLayersOnly = true;
  double scalar = c.raw->getFloat("query_pre_attn_scalar", 256).value_or(1.0);
  options.attentionScale = 1.0 / std::sqrt(scalar);
  options.attentionSoftcap = optionalCap(c, "attn_logit_softcapping", 50.0);
  b.setLogitTransform(
      1.0, optionalCap(c, "final_logit_softcapping", finalCapDefault));
  return options;
}

absl::Status gemma2Configure(ModelConfig &c) {
  auto act = c.raw->getString("hidden_activation", "gelu_pytorch_tanh");
  if (!act.ok())
    return act.status();
  c.hiddenAct = *act;
  auto scalar = c.raw->getFloat("query_pre_attn_scalar", 256);
  if (!scalar.ok())
    return scalar.status();
  if (!(*scalar > 0))
    return c.raw->fieldError("query_pre_attn_scalar", "must be positive");
  for (const char *cap : {"attn_logit_softcapping", "final_logit_softcapping"}) {
    auto v = c.raw->getOptionalFloat(cap);
    if (!v.ok())
      return v.status();
    if (*v && !(**v > 0))
      return c.raw->fieldError(cap, "must be null or positive");
  }
  return absl::OkStatus();
}

Family gemma2Family() {
  return Family{/*name=*/"gemma2",
                /*architectures=*/{"Gemma2ForCausalLM"},
                /*modelTypes=*/{"gemma2"},
                /*defaults=*/&gemma2Defaults,
                /*build=*/
                [](DecoderBuilder &b) {
                  return buildLlamaStyleDecoder(b, gemma2Options(b, 30.0));
                },
                /*configure=*/&gemma2Configure};
}

} // namespace qeff::hf
