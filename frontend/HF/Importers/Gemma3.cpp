//===- Gemma3.cpp - Gemma3ForCausalLM (text) --------------------*- C++ -*-===//
//
// Part of qeff. Gemma 2's decoder (embedding x sqrt(hidden), (1 + w)
// RMSNorms, four norms per layer, GeGLU from hidden_activation, scale
// query_pre_attn_scalar^-0.5, final_logit_softcapping) with Gemma 3's
// changes: per-head q/k RMSNorms `self_attn.q_norm` / `k_norm` ((1 + w), one
// `[head_dim]` weight shared by the heads) before rotary; `layer_types`
// (else every `_sliding_window_pattern`-th layer global) choosing per layer
// between sliding_attention (window `sliding_window`, rotary base
// `rope_local_base_freq`, no rope_scaling) and full_attention (causal,
// `rope_theta` with rope_scaling). transformers' Gemma 3 does not apply
// attn_logit_softcapping, so neither does qeff.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/FamilyRegistry.h"
#include "frontend/HF/Importers/LlamaStyleDecoder.h"

#include <nlohmann/json.hpp>

namespace qeff::hf {
namespace {
FamilyDefaults gemma3Defaults() {
  FamilyDefaults d = FamilyDefaults::gemma();
  d.vocabSize = 262208;
  d.hiddenSize = 2304;
  d.intermediateSize = 9216;
  d.numHiddenLayers = 26;
  d.numAttentionHeads = 8;
  d.numKeyValueHeads = 4;
  d.maxPositionEmbeddings = 131072;
  d.ropeTheta = 1e6;
  d.slidingWindow = 4096;
  return d;
}

/// Whether each layer is a sliding_attention one: `layer_types`, else every
/// layer but each `_sliding_window_pattern`-th (default 6).
absl::StatusOr<std::vector<bool>> slidingLayers(const ModelConfig &c) {
  auto pattern = c.raw->getPositiveInt("_sliding_window_pattern", 6);
  if (!pattern.ok())
    return pattern.status();
  std::vector<bool> fallback;
  for (int64_t i = 0; i < c.numHiddenLayers; ++i)
    fallback.push_back((i + 1) % *pattern != 0);
  return slidingLayerTypes(c, std::move(fallback));
}
} // namespace

absl::StatusOr<std::vector<bool>>
slidingLayerTypes(const ModelConfig &c, std::vector<bool> fallback) {
  const JsonConfig &raw = *c.raw;
  auto it = raw.json().find("layer_types");
  if (it == raw.json().end() || it->is_null())
    return fallback;
  if (!it->is_array() || int64_t(it->size()) != c.numHiddenLayers)
    return raw.fieldError("layer_types",
                          "must list one type per layer (num_hidden_layers)");
  std::vector<bool> sliding;
  for (const auto &t : *it) {
    std::string type = t.is_string() ? t.get<std::string>() : "";
    if (type != "sliding_attention" && type != "full_attention")
      return raw.fieldError("layer_types",
                            "entries must be 'sliding_attention' or "
                            "'full_attention'");
    sliding.push_back(type == "sliding_attention");
  }
  return sliding;
}

Family gemma3Family() {
  return Family{
      /*name=*/"gemma3",
      /*architectures=*/{"Gemma3ForCausalLM"},
      /*modelTypes=*/{"gemma3_text"},
      /*defaults=*/&gemma3Defaults,
      /*build=*/
      [](DecoderBuilder &b) {
        const ModelConfig &c = b.config();
        std::vector<bool> sliding =
            slidingLayers(c).value_or(std::vector<bool>());
        double localBase =
            c.raw->getFloat("rope_local_base_freq", 10000.0).value_or(1e4);
        // Gemma3TextConfig: no final soft-cap by default, and
        // transformers' Gemma 3 never soft-caps the scores.
        LlamaStyleOptions options = gemma2Options(b, 0.0);
        options.attentionSoftcap = 0.0;
        options.slidingWindow = false; // per layer below
        options.qkNorm.kind = QKNorm::SharedRMS;
        options.qkNorm.q = "q_norm";
        options.qkNorm.k = "k_norm";
        options.qkNorm.eps = c.rmsNormEps;
        options.qkNorm.weightOffset = 1.0;
        options.layerAttention = [&](int64_t i, AttentionSpec &attn) {
          if (i >= int64_t(sliding.size()) || !sliding[i])
            return;
          attn.slidingWindow = c.slidingWindow.value_or(0);
          attn.ropeTheta = localBase;
          attn.unscaledRotary = true;
        };
        return buildLlamaStyleDecoder(b, options);
      },
      /*configure=*/
      [](ModelConfig &c) -> absl::Status {
        if (absl::Status status = gemma2Configure(c); !status.ok())
          return status;
        auto base = c.raw->getFloat("rope_local_base_freq", 10000.0);
        if (!base.ok())
          return base.status();
        if (!(*base > 1))
          return c.raw->fieldError("rope_local_base_freq",
                                   "must be greater than 1");
        auto sliding = slidingLayers(c);
        if (!sliding.ok())
          return sliding.status();
        if (!c.slidingWindow && llvm::is_contained(*sliding, true))
          return c.raw->fieldError("sliding_window",
                                   "is null, but layer_types has "
                                   "sliding_attention layers");
        return absl::OkStatus();
      }};
}

} // namespace qeff::hf
