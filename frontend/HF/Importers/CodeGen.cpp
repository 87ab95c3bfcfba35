//===- CodeGen.cpp - CodeGenForCausalLM -------------------------*- C++ -*-===//
//
// Part of qeff. GPT-J's parallel block (one `ln_1`, interleaved partial
// rotary on `rotary_dim`, fc_in/fc_out MLP with bias, gelu_new, untied LM
// head with bias) with one fused `attn.qkv_proj` (no bias): its output is cut
// in mp_num = 4 chunks (hard-coded in transformers), each chunk holding
// (Q, V, K) -- V before K -- of heads / 4 heads; heads are numbered
// chunk-major.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/DecoderBuilder.h"
#include "frontend/HF/Importers/FamilyRegistry.h"

using namespace mlir;

namespace qeff::hf {

Family codegenFamily() {
  return Family{/*name=*/"codegen",
                /*architectures=*/{"CodeGenForCausalLM"},
                /*modelTypes=*/{"codegen"},
                /*defaults=*/&FamilyDefaults::codegen,
                /*build=*/
                [](DecoderBuilder &b) {
                  const ModelConfig &c = b.config();
                  constexpr int64_t mpNum = 4;
                  NormSpec norm{NormSpec::Layer, c.rmsNormEps};
                  Value h = b.embedding("transformer.wte.weight");
                  for (int64_t i = 0; i < c.numHiddenLayers; ++i) {
                    std::string p = "transformer.h." + std::to_string(i) + ".";
                    AttentionSpec attn;
                    attn.fused = FusedQKV{p + "attn.qkv_proj", mpNum, "qvk"};
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
