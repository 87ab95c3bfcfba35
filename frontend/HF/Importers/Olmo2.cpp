//===- Olmo2.cpp - Olmo2ForCausalLM -----------------------------*- C++ -*-===//
//
// Part of qeff. Llama's layout without pre-norms: RMSNorms on the branch
// outputs, `h = x + post_attention_layernorm(attn(x))`, then
// `h + post_feedforward_layernorm(mlp(h))`; q/k RMSNorms (`self_attn.q_norm`
// / `k_norm`) over the whole q and k projections, before the head split and
// rotary; final `model.norm`.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/FamilyRegistry.h"
#include "frontend/HF/Importers/LlamaStyleDecoder.h"

namespace qeff::hf {
namespace {
FamilyDefaults olmo2Defaults() {
  FamilyDefaults d = FamilyDefaults::llama();
  d.vocabSize = 50304;
  d.maxPositionEmbeddings = 2048;
  d.rmsNormEps = 1e-5;
  d.bosTokenId.reset();
  d.padTokenId = 1;
  d.eosTokenIds = {50279};
  return d;
}
} // namespace

Family olmo2Family() {
  return Family{/*name=*/"olmo2",
                /*architectures=*/{"Olmo2ForCausalLM"},
                /*modelTypes=*/{"olmo2"},
                /*defaults=*/&olmo2Defaults,
                /*build=*/[](DecoderBuilder &b) {
                  LlamaStyleOptions options;
                  options.postBranchNorms = true;
                  options.qkNorm.kind = QKNorm::WholeRMS;
                  options.qkNorm.q = "q_norm";
                  options.qkNorm.k = "k_norm";
                  options.qkNorm.eps = b.config().rmsNormEps;
                  return buildLlamaStyleDecoder(b, options);
                }};
}

} // namespace qeff::hf
