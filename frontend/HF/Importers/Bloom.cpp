//===- Bloom.cpp - BloomForCausalLM -----------------------------*- C++ -*-===//
//
// Part of qeff. `transformer.word_embeddings` followed by
// `word_embeddings_layernorm`; no position embeddings: ALiBi with BLOOM's
// slopes added to the scaled scores (`alibi + q.k / sqrt(head_dim)`: the
// bias is not scaled); N x sequential blocks with LayerNorms (bias)
// `input_layernorm` / `post_attention_layernorm`, the fused
// `self_attention.query_key_value` (bias) laid out per head
// [q_h | k_h | v_h], `self_attention.dense`, MLP `dense_4h_to_h(gelu_tanh(
// dense_h_to_4h x))` (4 x hidden) with biases; `ln_f`; LM head tied to
// word_embeddings. transformers keeps BLOOM's cache as keys
// [batch * heads, head_dim, seq] and values [batch * heads, seq, head_dim];
// qeff's past/present tensors use the [batch, heads, seq, head_dim] layout
// of every family (the manifest's hf_cache_layout records the HF one).
// Limits: apply_residual_connection_post_layernorm = true is not supported.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/DecoderBuilder.h"
#include "frontend/HF/Importers/FamilyRegistry.h"

using namespace mlir;

namespace qeff::hf {
namespace {
FamilyDefaults bloomDefaults() {
  FamilyDefaults d;
  d.vocabSize = 250880;
  d.hiddenSize = 64;
  d.intermediateSize = 4 * 64; // always 4 * hidden (configure)
  d.numHiddenLayers = 2;
  d.numAttentionHeads = 8;
  d.hiddenAct = "gelu_pytorch_tanh"; // BloomGelu (Bloom has no field)
  d.maxPositionEmbeddings = 2048;    // no limit with ALiBi; the ctx_len bound
  d.rmsNormEps = 1e-5;
  d.tieWordEmbeddings = true;
  d.rotary = false;
  d.bosTokenId = 1;
  d.eosTokenIds = {2};
  d.attributeMap = {{"num_hidden_layers", "n_layer"},
                    {"num_attention_heads", "n_head"},
                    {"rms_norm_eps", "layer_norm_epsilon"}};
  return d;
}
} // namespace

Family bloomFamily() {
  return Family{
      /*name=*/"bloom",
      /*architectures=*/{"BloomForCausalLM"},
      /*modelTypes=*/{"bloom"},
      /*defaults=*/&bloomDefaults,
      /*build=*/
      [](DecoderBuilder &b) {
        const ModelConfig &c = b.config();
        b.setHFCacheLayout("[batch * num_heads, head_dim, seq]",
                           "[batch * num_heads, seq, head_dim]");
        NormSpec norm{NormSpec::Layer, c.rmsNormEps};
        Value h = b.norm(b.embedding("transformer.word_embeddings.weight"),
                         "transformer.word_embeddings_layernorm", norm);
        std::vector<double> slopes = bloomAlibiSlopes(c.numAttentionHeads);
        for (int64_t i = 0; i < c.numHiddenLayers; ++i) {
          std::string p = "transformer.h." + std::to_string(i) + ".";
          AttentionSpec attn;
          attn.fused = FusedQKV{p + "self_attention.query_key_value",
                                c.numAttentionHeads};
          attn.o = p + "self_attention.dense";
          attn.qkvBias = attn.oBias = true;
          attn.alibiSlopes = slopes;
          h = b.preNormBlock(
              h, norm, p + "input_layernorm", p + "post_attention_layernorm",
              /*parallel=*/false,
              [&](Value x) { return b.selfAttention(i, x, attn); },
              [&](Value x) {
                return b.mlp(x, p + "mlp.dense_h_to_4h",
                             p + "mlp.dense_4h_to_h", /*bias=*/true,
                             b.activation());
              });
        }
        h = b.norm(h, "transformer.ln_f", norm);
        return b.finish(h, c.tieWordEmbeddings
                               ? "transformer.word_embeddings.weight"
                               : "lm_head.weight");
      },
      /*configure=*/
      [](ModelConfig &c) -> absl::Status {
        c.intermediateSize = 4 * c.hiddenSize;
        auto post = c.raw->getBool("apply_residual_connection_post_layernorm",
                                   false);
        if (!post.ok())
          return post.status();
        if (*post)
          return c.raw->fieldError(
              "apply_residual_connection_post_layernorm",
              "= true (residual taken after the LayerNorm) is not supported");
        return absl::OkStatus();
      }};
}

} // namespace qeff::hf
