//===- Qwen2Moe.cpp - Qwen2MoeForCausalLM -----------------------*- C++ -*-===//
//
// Part of qeff. Qwen2's attention (q/k/v biases, RMSNorm, rotate_half) with
// a sparse MoE block on layer l iff l is not in mlp_only_layers and
// (l + 1) % decoder_sparse_step == 0, a dense SwiGLU MLP elsewhere. The
// sparse block: router `mlp.gate`, softmax top num_experts_per_tok,
// renormalised only with norm_topk_prob; experts
// `mlp.experts.<e>.{gate,up,down}_proj` of moe_intermediate_size; plus a
// shared expert on every sparse layer, `mlp.shared_expert` (SwiGLU of
// shared_expert_intermediate_size) weighted per token by
// sigmoid(`mlp.shared_expert_gate` x).
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/FamilyRegistry.h"
#include "frontend/HF/Importers/LlamaStyleDecoder.h"

#include <nlohmann/json.hpp>

using namespace mlir;

namespace qeff::hf {
namespace {
FamilyDefaults qwen2MoeDefaults() {
  FamilyDefaults d = FamilyDefaults::qwen2();
  d.hiddenSize = 2048;
  d.intermediateSize = 5632;
  d.numHiddenLayers = 24;
  d.numAttentionHeads = 16;
  d.numKeyValueHeads = 16;
  return d;
}

absl::StatusOr<std::vector<int64_t>> mlpOnlyLayers(const JsonConfig &raw) {
  std::vector<int64_t> layers;
  auto it = raw.json().find("mlp_only_layers");
  if (it == raw.json().end() || it->is_null())
    return layers;
  if (!it->is_array())
    return raw.fieldError("mlp_only_layers", "must be a list of layer indices");
  for (const auto &v : *it) {
    if (!v.is_number_integer())
      return raw.fieldError("mlp_only_layers",
                            "must be a list of layer indices");
    layers.push_back(v.get<int64_t>());
  }
  return layers;
}
} // namespace

Family qwen2MoeFamily() {
  return Family{
      /*name=*/"qwen2_moe",
      /*architectures=*/{"Qwen2MoeForCausalLM"},
      /*modelTypes=*/{"qwen2_moe"},
      /*defaults=*/&qwen2MoeDefaults,
      /*build=*/
      [](DecoderBuilder &b) {
        const ModelConfig &c = b.config();
        const JsonConfig &raw = *c.raw;
        std::vector<int64_t> denseLayers =
            mlpOnlyLayers(raw).value_or(std::vector<int64_t>());
        int64_t step = raw.getPositiveInt("decoder_sparse_step", 1).value_or(1);
        MoESpec moe;
        moe.router = "gate";
        moe.gate = "gate_proj";
        moe.up = "up_proj";
        moe.down = "down_proj";
        moe.numExperts = raw.getPositiveInt("num_experts", 60).value_or(1);
        moe.topK = raw.getPositiveInt("num_experts_per_tok", 4).value_or(1);
        moe.intermediateSize =
            raw.getPositiveInt("moe_intermediate_size", 1408).value_or(1);
        moe.normalizeTopK =
            raw.getBool("norm_topk_prob", false).value_or(false);
        int64_t sharedInter =
            raw.getPositiveInt("shared_expert_intermediate_size", 5632)
                .value_or(1);
        if (moe.topK > moe.numExperts)
          b.configError("num_experts_per_tok", "must be <= num_experts");

        LlamaStyleOptions options;
        options.qkvBias = true;
        options.slidingWindow = true; // configure drops it unless enabled
        options.mlp = [&](int64_t i, const std::string &p, Value x) {
          if (llvm::is_contained(denseLayers, i) || (i + 1) % step != 0)
            return b.gatedMlp(x, p + "mlp.gate_proj", p + "mlp.up_proj",
                              p + "mlp.down_proj", /*bias=*/false);
          // The shared-expert gate and the sum are ops of the MoE block.
          DecoderBuilder::Scope scope(b, p + "mlp");
          MoESpec layerMoe = moe;
          layerMoe.prefix = p + "mlp";
          Value routed = b.moe(x, layerMoe);
          std::string s = p + "mlp.shared_expert.";
          Value shared = b.gatedMlp(x, s + "gate_proj", s + "up_proj",
                                    s + "down_proj", /*bias=*/false,
                                    sharedInter);
          Value gate = b.linear(x, p + "mlp.shared_expert_gate", 1,
                                /*bias=*/false);
          return b.add(routed, b.sigmoidGate(gate, shared));
        };
        return buildLlamaStyleDecoder(b, options);
      },
      /*configure=*/
      [](ModelConfig &c) -> absl::Status {
        if (auto layers = mlpOnlyLayers(*c.raw); !layers.ok())
          return layers.status();
        return qwen2SlidingWindow(c);
      }};
}

} // namespace qeff::hf
