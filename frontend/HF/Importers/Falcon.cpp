//===- Falcon.cpp - FalconForCausalLM ---------------------------*- C++ -*-===//
//
// Part of qeff. One class, three decoder variants chosen by config flags:
//  * new_decoder_architecture (Falcon-40B/180B): fused `query_key_value`
//    grouped per KV head [q_0 .. q_{g-1}, k, v], `num_kv_heads` KV heads;
//    parallel block with `ln_attn` and `ln_mlp` (or one `input_layernorm`
//    when num_ln_in_parallel_attn = 1).
//  * multi_query (Falcon-7B): fused [Q (heads) | K (1) | V (1)], one KV head;
//    parallel block with one `input_layernorm` (when parallel_attn).
//  * otherwise (Falcon-RW): fused (q, k, v) per head; sequential block
//    `input_layernorm` / `post_attention_layernorm` unless parallel_attn.
// Positions: rotate_half rotary (rope_theta) or, with `alibi`, BLOOM ALiBi
// slopes added to the scores BEFORE the 1/sqrt(head_dim) scaling (folded
// into the slopes here). `bias` covers every Linear. LayerNorms with bias,
// exact gelu MLP `dense_h_to_4h`/`dense_4h_to_h`, `ln_f`, LM head tied to
// `word_embeddings`.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/DecoderBuilder.h"
#include "frontend/HF/Importers/FamilyRegistry.h"

#include <cmath>

using namespace mlir;

namespace qeff::hf {

Family falconFamily() {
  return Family{
      /*name=*/"falcon",
      /*architectures=*/{"FalconForCausalLM"},
      /*modelTypes=*/{"falcon"},
      /*defaults=*/&FamilyDefaults::falcon,
      /*build=*/
      [](DecoderBuilder &b) {
        const ModelConfig &c = b.config();
        const JsonConfig &raw = *c.raw;
        bool newArch =
            raw.getBool("new_decoder_architecture", false).value_or(false);
        bool multiQuery = raw.getBool("multi_query", true).value_or(true);
        bool parallel = raw.getBool("parallel_attn", true).value_or(true);
        bool alibi = raw.getBool("alibi", false).value_or(false);
        bool bias = raw.getBool("bias", false).value_or(false);
        int64_t lnInParallel = raw.getOptionalInt("num_ln_in_parallel_attn")
                                   .value_or(std::nullopt)
                                   .value_or(newArch ? 2 : 1);
        double scale = 1.0 / std::sqrt(double(c.headDim));

        std::string attnNorm = "input_layernorm", mlpNorm;
        if (newArch) {
          parallel = true;
          if (lnInParallel == 2) {
            attnNorm = "ln_attn";
            mlpNorm = "ln_mlp";
          }
        } else if (!parallel) {
          mlpNorm = "post_attention_layernorm";
        }
        int64_t groups = newArch      ? c.numKeyValueHeads
                         : multiQuery ? 1
                                      : c.numAttentionHeads;
        std::vector<double> slopes;
        if (alibi)
          for (double s : bloomAlibiSlopes(c.numAttentionHeads))
            slopes.push_back(s * scale);

        NormSpec norm{NormSpec::Layer, c.rmsNormEps};
        Value h = b.embedding("transformer.word_embeddings.weight");
        for (int64_t i = 0; i < c.numHiddenLayers; ++i) {
          std::string p = "transformer.h." + std::to_string(i) + ".";
          AttentionSpec attn;
          attn.fused = FusedQKV{p + "self_attention.query_key_value", groups};
          attn.o = p + "self_attention.dense";
          attn.qkvBias = attn.oBias = bias;
          attn.rotaryDim = alibi ? 0 : c.headDim;
          attn.alibiSlopes = slopes;
          h = b.preNormBlock(
              h, norm, p + attnNorm, mlpNorm.empty() ? "" : p + mlpNorm,
              parallel, [&](Value x) { return b.selfAttention(i, x, attn); },
              [&](Value x) {
                return b.mlp(x, p + "mlp.dense_h_to_4h",
                             p + "mlp.dense_4h_to_h", bias, b.activation());
              });
        }
        h = b.norm(h, "transformer.ln_f", norm);
        return b.finish(h, c.tieWordEmbeddings
                               ? "transformer.word_embeddings.weight"
                               : "lm_head.weight");
      },
      /*configure=*/
      [](ModelConfig &c) -> absl::Status {
        const JsonConfig &raw = *c.raw;
        auto newArch = raw.getBool("new_decoder_architecture", false);
        auto multiQuery = raw.getBool("multi_query", true);
        auto alibi = raw.getBool("alibi", false);
        for (const absl::Status &s :
             {newArch.status(), multiQuery.status(), alibi.status()})
          if (!s.ok())
            return s;
        if (!*newArch)
          c.numKeyValueHeads = *multiQuery ? 1 : c.numAttentionHeads;
        if (!raw.has("ffn_hidden_size"))
          c.intermediateSize = 4 * c.hiddenSize;
        if (!*alibi && c.headDim % 2 != 0)
          return raw.fieldError("num_attention_heads",
                                "gives an odd head_dim (" +
                                    std::to_string(c.headDim) +
                                    "); rotary embeddings need an even one");
        if (*alibi && *newArch)
          return raw.fieldError("alibi", "= true with new_decoder_architecture "
                                         "is not supported");
        return absl::OkStatus();
      }};
}

} // namespace qeff::hf
