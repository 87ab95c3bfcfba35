//===- Phi.cpp - PhiForCausalLM ---------------------------------*- C++ -*-===//
//
// Part of qeff. Phi-1/1.5/2: `model.embed_tokens`; N x parallel blocks
// `x + attn(ln x) + mlp(ln x)` with one `input_layernorm` (LayerNorm with
// bias); `self_attn.{q,k,v}_proj` and `dense` with biases; partial rotary
// (rotate_half on the first head_dim * partial_rotary_factor features); MLP
// `fc1`/`fc2` with bias, gelu_new; `final_layernorm`; untied LM head with
// bias. Limits: qk_layernorm is not supported.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/DecoderBuilder.h"
#include "frontend/HF/Importers/FamilyRegistry.h"

using namespace mlir;

namespace qeff::hf {

Family phiFamily() {
  return Family{/*name=*/"phi",
                /*architectures=*/{"PhiForCausalLM"},
                /*modelTypes=*/{"phi"},
                /*defaults=*/&FamilyDefaults::phi,
                /*build=*/
                [](DecoderBuilder &b) {
                  const ModelConfig &c = b.config();
                  NormSpec norm{NormSpec::Layer, c.rmsNormEps};
                  Value h = b.embedding("model.embed_tokens.weight");
                  for (int64_t i = 0; i < c.numHiddenLayers; ++i) {
                    std::string p = "model.layers." + std::to_string(i) + ".";
                    AttentionSpec attn;
                    attn.q = p + "self_attn.q_proj";
                    attn.k = p + "self_attn.k_proj";
                    attn.v = p + "self_attn.v_proj";
                    attn.o = p + "self_attn.dense";
                    attn.qkvBias = attn.oBias = true;
                    attn.rotaryDim = c.rotaryDim();
                    h = b.preNormBlock(
                        h, norm, p + "input_layernorm", /*mlpNorm=*/"",
                        /*parallel=*/true,
                        [&](Value x) { return b.selfAttention(i, x, attn); },
                        [&](Value x) {
                          return b.mlp(x, p + "mlp.fc1", p + "mlp.fc2",
                                       /*bias=*/true, b.activation());
                        });
                  }
                  h = b.norm(h, "model.final_layernorm", norm);
                  return b.finish(h, "lm_head.weight", "lm_head.bias");
                },
                /*configure=*/
                [](ModelConfig &c) -> absl::Status {
                  auto qkNorm = c.raw->getBool("qk_layernorm", false);
                  if (!qkNorm.ok())
                    return qkNorm.status();
                  if (*qkNorm)
                    return c.raw->fieldError(
                        "qk_layernorm",
                        "= true (LayerNorm on q and k) is not supported yet");
                  return absl::OkStatus();
                }};
}

} // namespace qeff::hf
