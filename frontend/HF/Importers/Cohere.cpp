//===- Cohere.cpp - CohereForCausalLM ---------------------------*- C++ -*-===//
//
// Part of qeff. Command-R: a Llama-layout decoder with parallel blocks
// `x + attn(ln x) + mlp(ln x)` around the one `input_layernorm`, a
// LayerNorm without bias (layer_norm_eps); interleaved rotary (pairs
// (2i, 2i + 1)) on the whole head; use_qk_norm: LayerNorms with one weight
// row per head, `self_attn.{q,k}_norm.weight` [heads, head_dim], before
// rotary; SwiGLU MLP; logits = lm_head(norm x) * logit_scale; LM head tied
// to embed_tokens.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/FamilyRegistry.h"
#include "frontend/HF/Importers/LlamaStyleDecoder.h"

namespace qeff::hf {
namespace {
FamilyDefaults cohereDefaults() {
  FamilyDefaults d;
  d.vocabSize = 256000;
  d.hiddenSize = 8192;
  d.intermediateSize = 22528;
  d.numHiddenLayers = 40;
  d.numAttentionHeads = 64;
  d.hiddenAct = "silu";
  d.maxPositionEmbeddings = 8192;
  d.rmsNormEps = 1e-5;
  d.tieWordEmbeddings = true;
  d.bosTokenId = 5;
  d.eosTokenIds = {255001};
  d.padTokenId = 0;
  d.attributeMap = {{"rms_norm_eps", "layer_norm_eps"}};
  return d;
}
} // namespace

Family cohereFamily() {
  return Family{
      /*name=*/"cohere",
      /*architectures=*/{"CohereForCausalLM"},
      /*modelTypes=*/{"cohere"},
      /*defaults=*/&cohereDefaults,
      /*build=*/
      [](DecoderBuilder &b) {
        const ModelConfig &c = b.config();
        LlamaStyleOptions options;
        options.norm = NormSpec{NormSpec::Layer, c.rmsNormEps, 0.0,
                                /*bias=*/false};
        options.parallelResidual = true;
        options.rotaryStyle = mlir::qeff::RotaryStyle::interleaved;
        if (c.raw->getBool("use_qk_norm", false).value_or(false))
          options.qkNorm = QKNorm{QKNorm::PerHead, "q_norm", "k_norm",
                                  c.rmsNormEps, false};
        b.setLogitTransform(
            c.raw->getFloat("logit_scale", 0.0625).value_or(1.0), 0.0);
        return buildLlamaStyleDecoder(b, options);
      },
      /*configure=*/
      [](ModelConfig &c) -> absl::Status {
        auto scale = c.raw->getFloat("logit_scale", 0.0625);
        if (!scale.ok())
          return scale.status();
        return c.raw->getBool("use_qk_norm", false).status();
      }};
}

} // namespace qeff::hf
