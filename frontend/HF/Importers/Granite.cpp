//===- Granite.cpp - GraniteForCausalLM -------------------------*- C++ -*-===//
//
// Part of qeff. Llama's decoder with four scalars from the config:
// embeddings x embedding_multiplier, attention scores x attention_multiplier
// (instead of head_dim^-0.5), each residual branch x residual_multiplier
// before its add, logits / logits_scaling.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/FamilyRegistry.h"
#include "frontend/HF/Importers/LlamaStyleDecoder.h"

namespace qeff::hf {
namespace {
FamilyDefaults graniteDefaults() {
  return FamilyDefaults::llama();
}

constexpr const char *kMultipliers[] = {"embedding_multiplier",
                                        "attention_multiplier",
                                        "residual_multiplier", "logits_scaling"};

/// A multiplier field: a positive number, 1 when absent.
double multiplier(const ModelConfig &c, const char *field) {
  return c.raw->getFloat(field, 1.0).value_or(1.0);
}
} // namespace

LlamaStyleOptions graniteOptions(DecoderBuilder &b) {
  const ModelConfig &c = b.config();
  LlamaStyleOptions options;
  double embedding = multiplier(c, "embedding_multiplier");
  if (embedding != 1.0)
    options.embeddingScale = embedding;
  options.attentionScale = multiplier(c, "attention_multiplier");
  options.residualMultiplier = multiplier(c, "residual_multiplier");
  b.setLogitTransform(1.0 / multiplier(c, "logits_scaling"), 0.0);
  return options;
}

absl::Status checkGraniteMultipliers(ModelConfig &c) {
  for (const char *field : kMultipliers) {
    auto v = c.raw->getFloat(field, 1.0);
    if (!v.ok())
      return v.status();
    if (!(*v > 0))
      return c.raw->fieldError(field, "must be positive");
  }
  return absl::OkStatus();
}

Family graniteFamily() {
  return Family{/*name=*/"granite",
                /*architectures=*/{"GraniteForCausalLM"},
                /*modelTypes=*/{"granite"},
                /*defaults=*/&graniteDefaults,
                /*build=*/
                [](DecoderBuilder &b) {
                  return buildLlamaStyleDecoder(b, graniteOptions(b));
                },
                /*configure=*/&checkGraniteMultipliers};
}

} // namespace qeff::hf
