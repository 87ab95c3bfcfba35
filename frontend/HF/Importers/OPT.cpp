//===- OPT.cpp - OPTForCausalLM ---------------------------------*- C++ -*-===//
//
// Part of qeff. `model.decoder.embed_tokens` ([vocab, word_embed_proj_dim]),
// `project_in` (no bias) to hidden when word_embed_proj_dim differs, plus
// learned positions `embed_positions` read at position + 2 (OPT's offset;
// the table has max_position_embeddings + 2 rows); N x blocks with
// `self_attn.{q,k,v,out}_proj` and MLP `fc2(act(fc1 x))` (biases from
// enable_bias), LayerNorms `self_attn_layer_norm` and `final_layer_norm`:
// pre-LN (do_layer_norm_before, then `model.decoder.final_layer_norm`) or
// post-LN `h = ln(h + attn(h)); h = ln(h + mlp(h))` with no final norm;
// `project_out` back to word_embed_proj_dim; LM head tied to embed_tokens.
// layer_norm_elementwise_affine = false gives LayerNorms without
// parameters.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/DecoderBuilder.h"
#include "frontend/HF/Importers/FamilyRegistry.h"

using namespace mlir;

namespace qeff::hf {
namespace {
FamilyDefaults optDefaults() {
  FamilyDefaults d;
  d.vocabSize = 50272;
  d.hiddenSize = 768;
  d.intermediateSize = 3072;
  d.numHiddenLayers = 12;
  d.numAttentionHeads = 12;
  d.hiddenAct = "relu";
  d.maxPositionEmbeddings = 2048;
  d.rmsNormEps = 1e-5; // nn.LayerNorm's default; OPT has no field
  d.tieWordEmbeddings = true;
  d.rotary = false;
  d.bosTokenId = 2;
  d.eosTokenIds = {2};
  d.padTokenId = 1;
  d.attributeMap = {{"intermediate_size", "ffn_dim"},
                    {"hidden_act", "activation_function"}};
  return d;
}
} // namespace

Family optFamily() {
  return Family{
      /*name=*/"opt",
      /*architectures=*/{"OPTForCausalLM"},
      /*modelTypes=*/{"opt"},
      /*defaults=*/&optDefaults,
      /*build=*/
      [](DecoderBuilder &b) {
        const ModelConfig &c = b.config();
        const JsonConfig &raw = *c.raw;
        bool preLN = raw.getBool("do_layer_norm_before", true).value_or(true);
        bool bias = raw.getBool("enable_bias", true).value_or(true);
        bool affine = raw.getBool("layer_norm_elementwise_affine", true)
                          .value_or(true);
        bool removeFinal =
            raw.getBool("_remove_final_layer_norm", false).value_or(false);
        int64_t proj = raw.getPositiveInt("word_embed_proj_dim", c.hiddenSize)
                           .value_or(c.hiddenSize);
        NormSpec norm{affine ? NormSpec::Layer : NormSpec::NonParametric,
                      c.rmsNormEps, 0.0, bias};
        const std::string d = "model.decoder.";
        Value h = b.embedding(d + "embed_tokens.weight", proj);
        if (proj != c.hiddenSize)
          h = b.linear(h, d + "project_in", c.hiddenSize, /*bias=*/false);
        h = b.add(h, b.positionEmbedding(d + "embed_positions.weight",
                                         c.maxPositionEmbeddings + 2,
                                         /*offset=*/2));
        for (int64_t i = 0; i < c.numHiddenLayers; ++i) {
          std::string p = d + "layers." + std::to_string(i) + ".";
          AttentionSpec attn;
          attn.q = p + "self_attn.q_proj";
          attn.k = p + "self_attn.k_proj";
          attn.v = p + "self_attn.v_proj";
          attn.o = p + "self_attn.out_proj";
          attn.qkvBias = attn.oBias = bias;
          auto attention = [&](Value x) { return b.selfAttention(i, x, attn); };
          auto mlp = [&](Value x) {
            return b.mlp(x, p + "fc1", p + "fc2", bias, b.activation());
          };
          h = preLN ? b.preNormBlock(h, norm, p + "self_attn_layer_norm",
                                     p + "final_layer_norm",
                                     /*parallel=*/false, attention, mlp)
                    : b.postNormBlock(h, norm, p + "self_attn_layer_norm",
                                      p + "final_layer_norm", attention, mlp);
        }
        if (preLN && !removeFinal)
          h = b.norm(h, d + "final_layer_norm", norm);
        if (proj != c.hiddenSize)
          h = b.linear(h, d + "project_out", proj, /*bias=*/false);
        return b.finish(h, c.tieWordEmbeddings ? d + "embed_tokens.weight"
                                               : "lm_head.weight");
      },
      /*configure=*/
      [](ModelConfig &c) -> absl::Status {
        for (const char *flag :
             {"do_layer_norm_before", "enable_bias",
              "layer_norm_elementwise_affine", "_remove_final_layer_norm"})
          if (auto v = c.raw->getBool(flag, false); !v.ok())
            return v.status();
        return c.raw->getPositiveInt("word_embed_proj_dim", c.hiddenSize)
            .status();
      }};
}

} // namespace qeff::hf
