//===- Qwen3Moe.cpp - Qwen3MoeForCausalLM -----------------------*- C++ -*-===//
//
// Part of qeff. Qwen3's attention (per-head q/k RMSNorms, no biases) with a
// sparse MoE block on layer l iff l is not in mlp_only_layers and
// (l + 1) % decoder_sparse_step == 0, a dense SwiGLU MLP of
// intermediate_size elsewhere. The sparse block: router `mlp.gate`, softmax
// top num_experts_per_tok, renormalised only with norm_topk_prob; experts
// `mlp.experts.<e>.{gate,up,down}_proj` of moe_intermediate_size; no shared
// expert (Qwen2-MoE's differs there).
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/FamilyRegistry.h"
#include "frontend/HF/Importers/LlamaStyleDecoder.h"

using namespace mlir;

namespace qeff::hf {
namespace {
FamilyDefaults qwen3MoeDefaults() {
  FamilyDefaults d = FamilyDefaults::qwen2();
  d.hiddenSize = 2048;
  d.intermediateSize = 6144;
  d.numHiddenLayers = 24;
  d.numAttentionHeads = 32;
  d.numKeyValueHeads = 4;
  return d;
}
} // namespace

Family qwen3MoeFamily() {
  return Family{
      /*name=*/"qwen3_moe",
      /*architectures=*/{"Qwen3MoeForCausalLM"},
      /*modelTypes=*/{"qwen3_moe"},
      /*defaults=*/&qwen3MoeDefaults,
      /*build=*/
      [](DecoderBuilder &b) {
        QwenMoE moe = qwenMoE(b, 128, 8, 768);
        LlamaStyleOptions options = qwen3Attention(b.config());
        options.mlp = [&](int64_t i, const std::string &p, Value x) {
          if (!moe.isSparse(i))
            return b.gatedMlp(x, p + "mlp.gate_proj", p + "mlp.up_proj",
                              p + "mlp.down_proj", /*bias=*/false);
          MoESpec layerMoe = moe.spec;
          layerMoe.prefix = p + "mlp";
          return b.moe(x, layerMoe);
        };
        return buildLlamaStyleDecoder(b, options);
      },
      /*configure=*/
      [](ModelConfig &c) -> absl::Status {
        if (auto layers = mlpOnlyLayers(*c.raw); !layers.ok())
          return layers.status();
        for (const char *field : {"decoder_sparse_step", "num_experts",
                                  "num_experts_per_tok",
                                  "moe_intermediate_size"})
          if (auto v = c.raw->getPositiveInt(field, 1); !v.ok())
            return v.status();
        if (auto v = c.raw->getBool("norm_topk_prob", false); !v.ok())
          return v.status();
        return qwen2SlidingWindow(c);
      }};
}

} // namespace qeff::hf
