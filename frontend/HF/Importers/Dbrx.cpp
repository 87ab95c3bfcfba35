//===- Dbrx.cpp - DbrxForCausalLM -------------------------------*- C++ -*-===//
//
// Part of qeff. `transformer.wte`; N x sequential blocks
// (`norm_attn_norm.norm_1` -> attention, `norm_attn_norm.norm_2` -> MoE)
// whose LayerNorms have no bias (eps 1e-5, nn.LayerNorm's default);
// `norm_f`; untied `lm_head`. Attention: fused `attn.Wqkv` [Q | K | V]
// without bias whose whole output is clamped to [-clip_qkv, clip_qkv]
// (attn_config.clip_qkv) before the split, GQA with attn_config.kv_n_heads,
// rotate_half rotary with attn_config.rope_theta, `attn.out_proj`. MoE
// (`ffn`): router `router.layer` (softmax, top ffn_config.moe_top_k, divided
// by their L1 norm when moe_normalize_expert_weights is 1, raw when it is
// null); the experts are stored fused, `experts.mlp.{w1,v1,w2}` each
// [moe_num_experts * ffn_hidden_size, d_model], expert e reading rows
// e * ffn_hidden_size onwards (w2 applied untransposed: h_e @ w2_e).
// config.json's attn_config / ffn_config hold only the fields that differ
// from DbrxAttentionConfig / DbrxFFNConfig's defaults.
// Limits: moe_normalize_expert_weights other than 1 or null (an L_p norm
// with p != 1) is refused.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/DecoderBuilder.h"
#include "frontend/HF/Importers/FamilyRegistry.h"

#include <nlohmann/json.hpp>

using namespace mlir;

namespace qeff::hf {
namespace {
FamilyDefaults dbrxDefaults() {
  FamilyDefaults d;
  d.vocabSize = 32000;
  d.hiddenSize = 2048;
  d.intermediateSize = 3584; // DbrxFFNConfig.ffn_hidden_size
  d.numHiddenLayers = 24;
  d.numAttentionHeads = 16;
  d.numKeyValueHeads = 1; // DbrxAttentionConfig.kv_n_heads
  d.maxPositionEmbeddings = 2048;
  d.rmsNormEps = 1e-5; // nn.LayerNorm default; DBRX has no eps field
  d.tieWordEmbeddings = false;
  d.attributeMap = {{"hidden_size", "d_model"},
                    {"num_hidden_layers", "n_layers"},
                    {"num_attention_heads", "n_heads"},
                    {"max_position_embeddings", "max_seq_len"}};
  return d;
}

/// attn_config and ffn_config with DbrxAttentionConfig / DbrxFFNConfig's
/// defaults for absent fields.
struct DbrxSubConfig {
  int64_t kvHeads = 1;
  double ropeTheta = 10000.0;
  double clipQkv = 0.0; ///< 0: null
  int64_t ffnHidden = 3584, numExperts = 4, topK = 1;
  bool normalize = true; ///< moe_normalize_expert_weights 1 (null: false)
  std::string act = "silu";
};

absl::StatusOr<DbrxSubConfig> subConfig(const JsonConfig &raw) {
  DbrxSubConfig s;
  auto attn = raw.getOptionalObject("attn_config");
  if (!attn.ok())
    return attn.status();
  if (*attn) {
    const JsonConfig &a = **attn;
    auto kv = a.getPositiveInt("kv_n_heads", s.kvHeads);
    auto theta = a.getFloat("rope_theta", s.ropeTheta);
    auto clip = a.getOptionalFloat("clip_qkv");
    for (const absl::Status &st : {kv.status(), theta.status(), clip.status()})
      if (!st.ok())
        return st;
    s.kvHeads = *kv;
    s.ropeTheta = *theta;
    if (*clip && !(**clip > 0))
      return a.fieldError("clip_qkv", "must be null or positive, got " +
                                          std::to_string(**clip));
    s.clipQkv = clip->value_or(0.0);
  }
  auto ffn = raw.getOptionalObject("ffn_config");
  if (!ffn.ok())
    return ffn.status();
  if (*ffn) {
    const JsonConfig &f = **ffn;
    auto hidden = f.getPositiveInt("ffn_hidden_size", s.ffnHidden);
    auto experts = f.getPositiveInt("moe_num_experts", s.numExperts);
    auto topK = f.getPositiveInt("moe_top_k", s.topK);
    for (const absl::Status &st :
         {hidden.status(), experts.status(), topK.status()})
      if (!st.ok())
        return st;
    s.ffnHidden = *hidden;
    s.numExperts = *experts;
    s.topK = *topK;
    if (s.topK > s.numExperts)
      return f.fieldError("moe_top_k", "must be <= moe_num_experts (" +
                                           std::to_string(s.numExperts) + ")");
    // Absent: the default 1 (L1); null: no normalisation.
    auto norm = f.json().find("moe_normalize_expert_weights");
    if (norm != f.json().end() && norm->is_null()) {
      s.normalize = false;
    } else {
      auto p = f.getFloat("moe_normalize_expert_weights", 1.0);
      if (!p.ok())
        return p.status();
      if (*p != 1.0)
        return f.fieldError("moe_normalize_expert_weights",
                            "= " + std::to_string(*p) +
                                " (an L_p normalisation of the top-k weights "
                                "with p != 1) is not supported; 1 and null "
                                "are");
    }
    auto act = f.getOptionalObject("ffn_act_fn");
    if (!act.ok())
      return act.status();
    if (*act) {
      auto name = (*act)->getString("name", s.act);
      if (!name.ok())
        return name.status();
      s.act = *name;
    }
  }
  return s;
}
} // namespace

Family dbrxFamily() {
  return Family{
      /*name=*/"dbrx",
      /*architectures=*/{"DbrxForCausalLM"},
      /*modelTypes=*/{"dbrx"},
      /*defaults=*/&dbrxDefaults,
      /*build=*/
      [](DecoderBuilder &b) {
        const ModelConfig &c = b.config();
        DbrxSubConfig s = subConfig(*c.raw).value_or(DbrxSubConfig());
        NormSpec norm{NormSpec::Layer, c.rmsNormEps, 0.0, /*bias=*/false};
        MoESpec moe;
        moe.router = "router.layer";
        moe.fusedExperts = "experts.mlp";
        moe.gate = "w1";
        moe.up = "v1";
        moe.down = "w2";
        moe.numExperts = s.numExperts;
        moe.topK = s.topK;
        moe.intermediateSize = s.ffnHidden;
        moe.normalizeTopK = s.normalize;
        moe.activation = b.activationNamed(s.act, "ffn_config");
        Value h = b.embedding("transformer.wte.weight");
        for (int64_t i = 0; i < c.numHiddenLayers; ++i) {
          std::string p = "transformer.blocks." + std::to_string(i) + ".";
          AttentionSpec attn;
          attn.fused = FusedQKV{p + "norm_attn_norm.attn.Wqkv"};
          attn.o = p + "norm_attn_norm.attn.out_proj";
          attn.rotaryDim = c.headDim;
          attn.clipQkv = s.clipQkv;
          MoESpec layerMoe = moe;
          layerMoe.prefix = p + "ffn";
          h = b.preNormBlock(
              h, norm, p + "norm_attn_norm.norm_1",
              p + "norm_attn_norm.norm_2", /*parallel=*/false,
              [&](Value x) { return b.selfAttention(i, x, attn); },
              [&](Value x) { return b.moe(x, layerMoe); },
              /*layer=*/p.substr(0, p.size() - 1));
        }
        h = b.norm(h, "transformer.norm_f", norm);
        return b.finish(h, "lm_head.weight");
      },
      /*configure=*/
      [](ModelConfig &c) -> absl::Status {
        auto s = subConfig(*c.raw);
        if (!s.ok())
          return s.status();
        if (c.tieWordEmbeddings)
          return c.raw->fieldError("tie_word_embeddings",
                                   "= true is not supported by DBRX");
        if (c.numAttentionHeads % s->kvHeads != 0)
          return c.raw->fieldError(
              "attn_config", "kv_n_heads (" + std::to_string(s->kvHeads) +
                                 ") must divide n_heads (" +
                                 std::to_string(c.numAttentionHeads) + ")");
        c.numKeyValueHeads = s->kvHeads;
        c.ropeTheta = s->ropeTheta;
        c.intermediateSize = s->ffnHidden;
        c.hiddenAct = s->act;
        return absl::OkStatus();
      }};
}

} // namespace qeff::hf
