//===- Mpt.cpp - MptForCausalLM ---------------------------------*- C++ -*-===//
//
// Part of qeff. `transformer.wte`; N x sequential blocks (`norm_1` ->
// attention, `norm_2` -> MLP) whose LayerNorms have no bias; fused
// `attn.Wqkv` [Q | K | V] and `attn.out_proj`, no biases anywhere; no
// position embeddings but ALiBi with MPT's slopes (alibi_bias_max 8, as
// transformers hard-codes), added after the softmax scale
// (`attn_config.softmax_scale`, default 1/sqrt(head_dim)); MLP
// `ffn.up_proj` (4 * d_model, expansion_ratio is ignored as in transformers)
// -> exact gelu -> `ffn.down_proj`; `norm_f`; LM head tied to wte.
// Limits: attn_config clip_qkv and qk_ln are not supported.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/DecoderBuilder.h"
#include "frontend/HF/Importers/FamilyRegistry.h"

using namespace mlir;

namespace qeff::hf {

Family mptFamily() {
  return Family{
      /*name=*/"mpt",
      /*architectures=*/{"MptForCausalLM"},
      /*modelTypes=*/{"mpt"},
      /*defaults=*/&FamilyDefaults::mpt,
      /*build=*/
      [](DecoderBuilder &b) {
        const ModelConfig &c = b.config();
        double scale = 0.0;
        if (auto attnConfig = c.raw->getOptionalObject("attn_config");
            attnConfig.ok() && *attnConfig)
          scale = (*attnConfig)->getFloat("softmax_scale", 0.0).value_or(0.0);
        NormSpec norm{NormSpec::Layer, c.rmsNormEps, 0.0, /*bias=*/false};
        Value h = b.embedding("transformer.wte.weight");
        for (int64_t i = 0; i < c.numHiddenLayers; ++i) {
          std::string p = "transformer.blocks." + std::to_string(i) + ".";
          AttentionSpec attn;
          attn.fused = FusedQKV{p + "attn.Wqkv"};
          attn.o = p + "attn.out_proj";
          attn.scale = scale;
          attn.alibiSlopes = mptAlibiSlopes(c.numAttentionHeads);
          h = b.preNormBlock(
              h, norm, p + "norm_1", p + "norm_2", /*parallel=*/false,
              [&](Value x) { return b.selfAttention(i, x, attn); },
              [&](Value x) {
                return b.mlp(x, p + "ffn.up_proj", p + "ffn.down_proj",
                             /*bias=*/false, mlir::qeff::Activation::gelu);
              });
        }
        h = b.norm(h, "transformer.norm_f", norm);
        return b.finish(h, c.tieWordEmbeddings ? "transformer.wte.weight"
                                               : "lm_head.weight");
      },
      /*configure=*/
      [](ModelConfig &c) -> absl::Status {
        c.intermediateSize = 4 * c.hiddenSize;
        c.hiddenAct = "gelu";
        auto attnConfig = c.raw->getOptionalObject("attn_config");
        if (!attnConfig.ok())
          return attnConfig.status();
        if (*attnConfig) {
          auto clip = (*attnConfig)->getOptionalFloat("clip_qkv");
          if (!clip.ok())
            return clip.status();
          if (*clip)
            return (*attnConfig)
                ->fieldError("clip_qkv",
                             "(clamped q/k/v) is not supported yet");
          auto qkLn = (*attnConfig)->getBool("qk_ln", false);
          if (!qkLn.ok())
            return qkLn.status();
          if (*qkLn)
            return (*attnConfig)
                ->fieldError("qk_ln", "= true is not supported yet");
        }
        return absl::OkStatus();
      }};
}

} // namespace qeff::hf
