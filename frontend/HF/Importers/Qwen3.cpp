//===- Qwen3.cpp - Qwen3ForCausalLM -----------------------------*- C++ -*-===//
//
// Part of qeff. Qwen2's decoder without the q/k/v biases (attention_bias,
// false by default, sets all four) and with per-head q/k RMSNorms
// (`self_attn.q_norm` / `k_norm`, one `[head_dim]` weight shared by the
// heads) after the head split and before rotary; an explicit head_dim.
// The sliding window follows Qwen2's use_sliding_window / max_window_layers.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/FamilyRegistry.h"
#include "frontend/HF/Importers/LlamaStyleDecoder.h"

namespace qeff::hf {
namespace {
FamilyDefaults qwen3Defaults() {
  FamilyDefaults d = FamilyDefaults::qwen2();
  d.intermediateSize = 22016;
  d.numKeyValueHeads = 32;
  return d;
}
} // namespace

/// Qwen3's attention: per-head q/k RMSNorm, no forced q/k/v bias.
LlamaStyleOptions qwen3Attention(const ModelConfig &c) {
  LlamaStyleOptions options;
  options.slidingWindow = true; // configure drops it unless enabled
  options.qkNorm.kind = QKNorm::SharedRMS;
  options.qkNorm.q = "q_norm";
  options.qkNorm.k = "k_norm";
  options.qkNorm.eps = c.rmsNormEps;
  return options;
}

Family qwen3Family() {
  return Family{
      /*name=*/"qwen3",
      /*architectures=*/{"Qwen3ForCausalLM"},
      /*modelTypes=*/{"qwen3"},
      /*defaults=*/&qwen3Defaults,
      /*build=*/
      [](DecoderBuilder &b) {
        return buildLlamaStyleDecoder(b, qwen3Attention(b.config()));
      },
      /*configure=*/&qwen2SlidingWindow};
}

} // namespace qeff::hf
