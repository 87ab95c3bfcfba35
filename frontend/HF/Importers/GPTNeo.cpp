//===- GPTNeo.cpp - GPTNeoForCausalLM ---------------------------*- C++ -*-===//
//
// Part of qeff. `transformer.wte` + learned positions `transformer.wpe`;
// N x GPT-2-like pre-LayerNorm blocks (`ln_1`, `ln_2`) whose attention
// (`attn.attention.{q,k,v}_proj` without bias, `out_proj` with bias) is NOT
// scaled (scores = q.k); `attention_types` expands to one type per layer:
// `global`, or `local`, a window of `window_size` keys including the query
// itself; MLP `c_proj(act(c_fc x))` (nn.Linear, with bias); `ln_f`; LM head
// tied to wte. Limits: the local window is counted in positions; transformers
// counts cache slots, which differ only for left-padded rows.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/DecoderBuilder.h"
#include "frontend/HF/Importers/FamilyRegistry.h"

#include <nlohmann/json.hpp>

using namespace mlir;

namespace qeff::hf {
namespace {
FamilyDefaults gptNeoDefaults() {
  FamilyDefaults d;
  d.vocabSize = 50257;
  d.hiddenSize = 2048;
  d.intermediateSize = 4 * 2048; // intermediate_size = null: 4 * hidden
  d.numHiddenLayers = 24;
  d.numAttentionHeads = 16;
  d.hiddenAct = "gelu_new";
  d.maxPositionEmbeddings = 2048;
  d.rmsNormEps = 1e-5;
  d.tieWordEmbeddings = true;
  d.rotary = false;
  d.bosTokenId = 50256;
  d.eosTokenIds = {50256};
  d.attributeMap = {{"num_hidden_layers", "num_layers"},
                    {"num_attention_heads", "num_heads"},
                    {"hidden_act", "activation_function"},
                    {"rms_norm_eps", "layer_norm_epsilon"}};
  return d;
}

/// GPTNeoConfig.expand_attention_types_params: [[["global", "local"], 12]]
/// -> one "global"/"local" per layer.
absl::StatusOr<std::vector<bool>> localLayers(const ModelConfig &c) {
  const JsonConfig &raw = *c.raw;
  std::vector<bool> local;
  auto bad = [&] {
    return raw.fieldError("attention_types",
                          "must be a list of [[\"global\" | \"local\", ...], "
                          "repeat] pairs");
  };
  auto it = raw.json().find("attention_types");
  if (it == raw.json().end() || it->is_null()) {
    local.assign(c.numHiddenLayers, false);
    for (int64_t i = 1; i < c.numHiddenLayers; i += 2)
      local[i] = true; // the default [[["global", "local"], n / 2]]
    return local;
  }
  if (!it->is_array())
    return bad();
  for (const auto &item : *it) {
    if (!item.is_array() || item.size() != 2 || !item[0].is_array() ||
        !item[1].is_number_integer() || item[1].get<int64_t>() < 0)
      return bad();
    for (int64_t r = 0; r < item[1].get<int64_t>(); ++r)
      for (const auto &type : item[0]) {
        if (!type.is_string() ||
            (type != "global" && type != "local"))
          return bad();
        local.push_back(type == "local");
      }
  }
  if (int64_t(local.size()) != c.numHiddenLayers)
    return raw.fieldError("attention_types",
                          "expands to " + std::to_string(local.size()) +
                              " layer types but num_layers is " +
                              std::to_string(c.numHiddenLayers));
  return local;
}
} // namespace

Family gptNeoFamily() {
  return Family{
      /*name=*/"gpt_neo",
      /*architectures=*/{"GPTNeoForCausalLM"},
      /*modelTypes=*/{"gpt_neo"},
      /*defaults=*/&gptNeoDefaults,
      /*build=*/
      [](DecoderBuilder &b) {
        const ModelConfig &c = b.config();
        std::vector<bool> local =
            localLayers(c).value_or(std::vector<bool>(c.numHiddenLayers));
        int64_t window = c.raw->getPositiveInt("window_size", 256).value_or(1);
        NormSpec norm{NormSpec::Layer, c.rmsNormEps};
        Value h = b.add(b.embedding("transformer.wte.weight"),
                        b.positionEmbedding("transformer.wpe.weight",
                                            c.maxPositionEmbeddings));
        for (int64_t i = 0; i < c.numHiddenLayers; ++i) {
          std::string p = "transformer.h." + std::to_string(i) + ".";
          AttentionSpec attn;
          attn.q = p + "attn.attention.q_proj";
          attn.k = p + "attn.attention.k_proj";
          attn.v = p + "attn.attention.v_proj";
          attn.o = p + "attn.attention.out_proj";
          attn.oBias = true;
          attn.scale = 1.0;
          attn.slidingWindow = local[i] ? window : 0;
          h = b.preNormBlock(
              h, norm, p + "ln_1", p + "ln_2", /*parallel=*/false,
              [&](Value x) { return b.selfAttention(i, x, attn); },
              [&](Value x) {
                return b.mlp(x, p + "mlp.c_fc", p + "mlp.c_proj",
                             /*bias=*/true, b.activation());
              });
        }
        h = b.norm(h, "transformer.ln_f", norm);
        return b.finish(h, c.tieWordEmbeddings ? "transformer.wte.weight"
                                               : "lm_head.weight");
      },
      /*configure=*/
      [](ModelConfig &c) -> absl::Status {
        if (!c.raw->has("intermediate_size"))
          c.intermediateSize = 4 * c.hiddenSize;
        auto window = c.raw->getPositiveInt("window_size", 256);
        if (!window.ok())
          return window.status();
        return localLayers(c).status();
      }};
}

} // namespace qeff::hf
