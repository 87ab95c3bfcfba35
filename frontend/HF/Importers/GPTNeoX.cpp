//===- GPTNeoX.cpp - GPTNeoXForCausalLM -------------------------*- C++ -*-===//
//
// Part of qeff. Pythia and GPT-NeoX: `gpt_neox.embed_in`; N x blocks with
// LayerNorms (bias) `input_layernorm` and `post_attention_layernorm`, which
// use_parallel_residual (default) applies to the same input:
// `x + attn(ln1 x) + mlp(ln2 x)`, else sequentially; the fused
// `attention.query_key_value` is laid out per head [q_h | k_h | v_h]; partial
// rotate_half rotary on the first head_dim * rotary_pct features (base
// rotary_emb_base); `attention.dense`; gelu MLP `dense_h_to_4h` /
// `dense_4h_to_h`, all with biases (attention ones from attention_bias);
// `final_layer_norm`; untied `embed_out`.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/DecoderBuilder.h"
#include "frontend/HF/Importers/FamilyRegistry.h"

using namespace mlir;

namespace qeff::hf {
namespace {
FamilyDefaults gptNeoXDefaults() {
  FamilyDefaults d;
  d.vocabSize = 50432;
  d.hiddenSize = 6144;
  d.intermediateSize = 24576;
  d.numHiddenLayers = 44;
  d.numAttentionHeads = 64;
  d.hiddenAct = "gelu";
  d.maxPositionEmbeddings = 2048;
  d.rmsNormEps = 1e-5;
  d.partialRotaryFactor = 0.25;
  d.tieWordEmbeddings = false;
  d.attentionBias = true;
  d.bosTokenId = 0;
  d.eosTokenIds = {2};
  d.attributeMap = {{"partial_rotary_factor", "rotary_pct"},
                    {"rope_theta", "rotary_emb_base"},
                    {"rms_norm_eps", "layer_norm_eps"}};
  return d;
}
} // namespace

Family gptNeoXFamily() {
  return Family{
      /*name=*/"gpt_neox",
      /*architectures=*/{"GPTNeoXForCausalLM"},
      /*modelTypes=*/{"gpt_neox"},
      /*defaults=*/&gptNeoXDefaults,
      /*build=*/
      [](DecoderBuilder &b) {
        const ModelConfig &c = b.config();
        bool parallel =
            c.raw->getBool("use_parallel_residual", true).value_or(true);
        NormSpec norm{NormSpec::Layer, c.rmsNormEps};
        Value h = b.embedding("gpt_neox.embed_in.weight");
        for (int64_t i = 0; i < c.numHiddenLayers; ++i) {
          std::string p = "gpt_neox.layers." + std::to_string(i) + ".";
          AttentionSpec attn;
          attn.fused = FusedQKV{p + "attention.query_key_value",
                                c.numAttentionHeads};
          attn.o = p + "attention.dense";
          attn.qkvBias = attn.oBias = c.attentionBias;
          attn.rotaryDim = c.rotaryDim();
          h = b.preNormBlock(
              h, norm, p + "input_layernorm", p + "post_attention_layernorm",
              parallel, [&](Value x) { return b.selfAttention(i, x, attn); },
              [&](Value x) {
                return b.mlp(x, p + "mlp.dense_h_to_4h",
                             p + "mlp.dense_4h_to_h", /*bias=*/true,
                             b.activation());
              });
        }
        h = b.norm(h, "gpt_neox.final_layer_norm", norm);
        return b.finish(h, c.tieWordEmbeddings ? "gpt_neox.embed_in.weight"
                                               : "embed_out.weight");
      },
      /*configure=*/
      [](ModelConfig &c) -> absl::Status {
        auto parallel = c.raw->getBool("use_parallel_residual", true);
        return parallel.status();
      }};
}

} // namespace qeff::hf
