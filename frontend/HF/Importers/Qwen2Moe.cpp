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

} // namespace

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

bool QwenMoE::isSparse(int64_t layer) const {
  return !llvm::is_contained(denseLayers, layer) && (layer + 1) % step == 0;
}

QwenMoE qwenMoE(DecoderBuilder &b, int64_t numExperts, int64_t topK,
                int64_t intermediate) {
  const JsonConfig &raw = *b.config().raw;
  QwenMoE m;
  m.denseLayers = mlpOnlyLayers(raw).value_or(std::vector<int64_t>());
  m.step = raw.getPositiveInt("decoder_sparse_step", 1).value_or(1);
  m.spec.router = "gate";
  m.spec.gate = "gate_proj";
  m.spec.up = "up_proj";
  m.spec.down = "down_proj";
  m.spec.numExperts = raw.getPositiveInt("num_experts", numExperts).value_or(1);
  m.spec.topK = raw.getPositiveInt("num_experts_per_tok", topK).value_or(1);
  m.spec.intermediateSize =
      raw.getPositiveInt("moe_intermediate_size", intermediate).value_or(1);
  m.spec.normalizeTopK = raw.getBool("norm_topk_prob", false).value_or(false);
  if (m.spec.topK > m.spec.numExperts)
    b.configError("num_experts_per_tok", "must be <= num_experts");
  return m;
}

Family qwen2MoeFamily() {
  return Family{
      /*name=*/"qwen2_moe",
      /*architectures=*/{"Qwen2MoeForCausalLM"},
      /*modelTypes=*/{"qwen2_moe"},
      /*defaults=*/&qwen2MoeDefaults,
      /*build=*/
      [](DecoderBuilder &b) {
        const ModelConfig &c = b.config();
        QwenMoE moe = qwenMoE(b, 60, 4, 1408);
        int64_t sharedInter =
            c.raw->getPositiveInt("shared_expert_intermediate_size", 5632)
                .value_or(1);

        LlamaStyleOptions options;
        options.qkvBias = true;
        options.slidingWindow = true; // configure drops it unless enabled
        options.mlp = [&](int64_t i, const std::string &p, Value x) {
          if (!moe.isSparse(i))
            return b.gatedMlp(x, p + "mlp.gate_proj", p + "mlp.up_proj",
                              p + "mlp.down_proj", /*bias=*/false);
          // The shared-expert gate and the sum are ops of the MoE block.
          DecoderBuilder::Scope scope(b, p + "mlp");
          MoESpec layerMoe = moe.spec;
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
