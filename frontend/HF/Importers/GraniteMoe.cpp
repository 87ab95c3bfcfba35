//===- GraniteMoe.cpp - GraniteMoeForCausalLM -------------------*- C++ -*-===//
//
// Part of qeff. Granite's decoder and multipliers with a sparse MoE block on
// every layer (`block_sparse_moe`): router `router.layer` (no bias), the top
// num_experts_per_tok logits softmaxed among themselves (the same as
// softmax, top k, renormalised), fused expert tensors `input_linear.weight`
// [experts, 2 * intermediate, hidden] (expert e's gate rows then its up rows)
// and `output_linear.weight` [experts, hidden, intermediate], read as row
// ranges of their leading two dimensions (no weight is copied); SwiGLU
// experts; no shared expert.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/FamilyRegistry.h"
#include "frontend/HF/Importers/LlamaStyleDecoder.h"

using namespace mlir;
using namespace mlir::qeff;

namespace qeff::hf {
namespace {
FamilyDefaults graniteMoeDefaults() { return FamilyDefaults::llama(); }
} // namespace

Family graniteMoeFamily() {
  return Family{
      /*name=*/"granitemoe",
      /*architectures=*/{"GraniteMoeForCausalLM"},
      /*modelTypes=*/{"granitemoe"},
      /*defaults=*/&graniteMoeDefaults,
      /*build=*/
      [](DecoderBuilder &b) {
        const ModelConfig &c = b.config();
        int64_t experts =
            c.raw->getPositiveInt("num_local_experts", 8).value_or(1);
        int64_t topK = c.raw->getPositiveInt("num_experts_per_tok", 2).value_or(1);
        if (topK > experts)
          b.configError("num_experts_per_tok", "must be <= num_local_experts");
        int64_t hidden = c.hiddenSize, inter = c.intermediateSize;
        LlamaStyleOptions options = graniteOptions(b);
        options.mlp = [&](int64_t, const std::string &p, Value x) {
          std::string m = p + "block_sparse_moe";
          // The router and the expert sum are ops of the MoE block.
          DecoderBuilder::Scope scope(b, m);
          Value router = b.weight(m + ".router.layer.weight", {experts, hidden});
          SmallVector<int64_t> in = {experts, 2 * inter, hidden};
          SmallVector<int64_t> out = {experts, hidden, inter};
          SmallVector<Value> weights;
          for (int64_t e = 0; e < experts; ++e) {
            std::string input = m + ".input_linear.weight";
            weights.push_back(b.weightRows(input, in, e * 2 * inter, inter));
            weights.push_back(
                b.weightRows(input, in, e * 2 * inter + inter, inter));
            weights.push_back(b.weightRows(m + ".output_linear.weight", out,
                                           e * hidden, hidden));
          }
          return b.builder().create<MoEOp>(
              b.scopeLoc(), x.getType(), x, router, /*router_bias=*/Value(),
              weights, b.builder().getI64IntegerAttr(experts),
              b.builder().getI64IntegerAttr(topK),
              b.builder().getBoolAttr(true),
              ActivationAttr::get(b.builder().getContext(), b.activation()),
              FloatAttr(), FloatAttr());
        };
        return buildLlamaStyleDecoder(b, options);
      },
      /*configure=*/
      [](ModelConfig &c) -> absl::Status {
        for (const char *field : {"num_local_experts", "num_experts_per_tok"})
          if (auto v = c.raw->getPositiveInt(field, 1); !v.ok())
            return v.status();
        return checkGraniteMultipliers(c);
      }};
}

} // namespace qeff::hf
