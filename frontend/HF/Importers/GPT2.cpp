//===- GPT2.cpp - GPT2LMHeadModel -------------------------------*- C++ -*-===//
//
// Part of qeff. `transformer.wte` + learned absolute positions
// `transformer.wpe`; N x pre-LayerNorm blocks (`ln_1` -> attention, `ln_2`
// -> MLP); `ln_f`; LM head tied to wte. Every projection is a Conv1D, whose
// weight is stored [in, out] (weight_layout in_out), with a bias:
// `attn.c_attn` fused [Q | K | V], `attn.c_proj`, `mlp.c_fc`, `mlp.c_proj`.
// MLP `activation_function` (gelu_new). Limits: reorder_and_upcast_attn only
// changes fp16 numerics and is ignored.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/DecoderBuilder.h"
#include "frontend/HF/Importers/FamilyRegistry.h"

#include <cmath>

using namespace mlir;

namespace qeff::hf {

Family gpt2Family() {
  return Family{
      /*name=*/"gpt2",
      /*architectures=*/{"GPT2LMHeadModel"},
      /*modelTypes=*/{"gpt2"},
      /*defaults=*/&FamilyDefaults::gpt2,
      /*build=*/
      [](DecoderBuilder &b) {
        const ModelConfig &c = b.config();
        auto inConv1D = mlir::qeff::WeightLayout::in_out;
        bool byLayer = c.raw->getBool("scale_attn_by_inverse_layer_idx", false)
                           .value_or(false);
        if (!c.raw->getBool("scale_attn_weights", true).value_or(true))
          b.configError("scale_attn_weights",
                        "false (unscaled attention) is not supported");
        NormSpec norm{NormSpec::Layer, c.rmsNormEps};
        Value h = b.add(b.embedding("transformer.wte.weight"),
                        b.positionEmbedding("transformer.wpe.weight",
                                            c.maxPositionEmbeddings));
        for (int64_t i = 0; i < c.numHiddenLayers; ++i) {
          std::string p = "transformer.h." + std::to_string(i) + ".";
          AttentionSpec attn;
          attn.fused = FusedQKV{p + "attn.c_attn"};
          attn.o = p + "attn.c_proj";
          attn.qkvBias = attn.oBias = true;
          attn.layout = inConv1D;
          attn.scale = 1.0 / std::sqrt(double(c.headDim)) /
                       (byLayer ? double(i + 1) : 1.0);
          h = b.preNormBlock(
              h, norm, p + "ln_1", p + "ln_2", /*parallel=*/false,
              [&](Value x) { return b.selfAttention(i, x, attn); },
              [&](Value x) {
                return b.mlp(x, p + "mlp.c_fc", p + "mlp.c_proj",
                             /*bias=*/true, b.activation(), inConv1D);
              });
        }
        h = b.norm(h, "transformer.ln_f", norm);
        return b.finish(h, "transformer.wte.weight");
      },
      /*configure=*/&defaultInnerToFourTimesHidden};
}

} // namespace qeff::hf
