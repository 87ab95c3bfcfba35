//===- GPTBigCode.cpp - GPTBigCodeForCausalLM (StarCoder) -------*- C++ -*-===//
//
// Part of qeff. GPT-2's block (learned positions `wpe`, LayerNorms with
// bias, gelu_pytorch_tanh MLP `c_fc`/`c_proj`, LM head tied to wte) with
// nn.Linear [out, in] weights and multi-query attention: with
// `multi_query` (the default) `attn.c_attn` is [Q (all heads) | K (1 head) |
// V (1 head)] and one KV head serves every query head; without it,
// c_attn holds (q, k, v) per head. The native fused [B, S, 2 * head_dim]
// cache becomes a [B, 1, S, head_dim] key and value cache pair (bhsd).
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/DecoderBuilder.h"
#include "frontend/HF/Importers/FamilyRegistry.h"

using namespace mlir;

namespace qeff::hf {

Family gptBigCodeFamily() {
  return Family{
      /*name=*/"gpt_bigcode",
      /*architectures=*/{"GPTBigCodeForCausalLM"},
      /*modelTypes=*/{"gpt_bigcode"},
      /*defaults=*/&FamilyDefaults::gptBigCode,
      /*build=*/
      [](DecoderBuilder &b) {
        const ModelConfig &c = b.config();
        if (!c.raw->getBool("scale_attn_weights", true).value_or(true))
          b.configError("scale_attn_weights",
                        "false (unscaled attention) is not supported");
        bool multiQuery = c.numKeyValueHeads == 1;
        NormSpec norm{NormSpec::Layer, c.rmsNormEps};
        Value h = b.add(b.embedding("transformer.wte.weight"),
                        b.positionEmbedding("transformer.wpe.weight",
                                            c.maxPositionEmbeddings));
        for (int64_t i = 0; i < c.numHiddenLayers; ++i) {
          std::string p = "transformer.h." + std::to_string(i) + ".";
          AttentionSpec attn;
          attn.fused =
              FusedQKV{p + "attn.c_attn", multiQuery ? 1 : c.numAttentionHeads};
          attn.o = p + "attn.c_proj";
          attn.qkvBias = attn.oBias = true;
          h = b.preNormBlock(
              h, norm, p + "ln_1", p + "ln_2", /*parallel=*/false,
              [&](Value x) { return b.selfAttention(i, x, attn); },
              [&](Value x) {
                return b.mlp(x, p + "mlp.c_fc", p + "mlp.c_proj",
                             /*bias=*/true, b.activation());
              });
        }
        h = b.norm(h, "transformer.ln_f", norm);
        return b.finish(h, "transformer.wte.weight");
      },
      /*configure=*/
      [](ModelConfig &c) -> absl::Status {
        auto multiQuery = c.raw->getBool("multi_query", true);
        if (!multiQuery.ok())
          return multiQuery.status();
        c.numKeyValueHeads = *multiQuery ? 1 : c.numAttentionHeads;
        return defaultInnerToFourTimesHidden(c);
      }};
}

} // namespace qeff::hf
