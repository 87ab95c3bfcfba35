//===- GPTJ.cpp - GPTJForCausalLM -------------------------------*- C++ -*-===//
//
// Part of qeff. `transformer.wte`; N x parallel blocks
// `x + attn(ln_1 x) + mlp(ln_1 x)` with one LayerNorm; separate
// `attn.{q,k,v,out}_proj` without bias; rotary on the first `rotary_dim`
// features of each head in INTERLEAVED pairs (2i, 2i + 1), base 10000; MLP
// `fc_in`/`fc_out` with bias, gelu_new; `ln_f`; untied LM head with bias.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/DecoderBuilder.h"
#include "frontend/HF/Importers/FamilyRegistry.h"

using namespace mlir;

namespace qeff::hf {

Family gptjFamily() {
  return Family{/*name=*/"gptj",
                /*architectures=*/{"GPTJForCausalLM"},
                /*modelTypes=*/{"gptj"},
                /*defaults=*/&FamilyDefaults::gptj,
                /*build=*/
                [](DecoderBuilder &b) {
                  const ModelConfig &c = b.config();
                  NormSpec norm{NormSpec::Layer, c.rmsNormEps};
                  Value h = b.embedding("transformer.wte.weight");
                  for (int64_t i = 0; i < c.numHiddenLayers; ++i) {
                    std::string p = "transformer.h." + std::to_string(i) + ".";
                    AttentionSpec attn;
                    attn.q = p + "attn.q_proj";
                    attn.k = p + "attn.k_proj";
                    attn.v = p + "attn.v_proj";
                    attn.o = p + "attn.out_proj";
                    attn.rotaryStyle = mlir::qeff::RotaryStyle::interleaved;
                    attn.rotaryDim = c.rotaryDim();
                    h = b.preNormBlock(
                        h, norm, p + "ln_1", /*mlpNorm=*/"", /*parallel=*/true,
                        [&](Value x) { return b.selfAttention(i, x, attn); },
                        [&](Value x) {
                          return b.mlp(x, p + "mlp.fc_in", p + "mlp.fc_out",
                                       /*bias=*/true, b.activation());
                        });
                  }
                  h = b.norm(h, "transformer.ln_f", norm);
                  return b.finish(h, "lm_head.weight", "lm_head.bias");
                },
                /*configure=*/&gptjStyleRotary};
}

} // namespace qeff::hf
