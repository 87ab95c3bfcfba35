//===- GptOss.cpp - GptOssForCausalLM ---------------------------*- C++ -*-===//
//
// Part of qeff. The pre-norm RMSNorm decoder with GPT-OSS's parts: q/k/v/o
// projections with biases and an explicit head_dim; attention sinks
// (`self_attn.sinks`, one logit per head joining the softmax: the sinks
// operand of qeff.attention); `layer_types` (default: even layers
// sliding_attention) with the window `sliding_window` on sliding layers; an
// MoE on every layer: router `mlp.router` with a bias, softmax over the top
// num_experts_per_tok logits, fused expert tensors `mlp.experts.gate_up_proj`
// [experts, hidden, 2 * intermediate] (gate and up interleaved columns) and
// `down_proj` [experts, intermediate, hidden] applied as `x @ W + b`, and the
// clamped SwiGLU `(clamp(up, -7, 7) + 1) * g * sigmoid(1.702 g)`,
// g = min(gate, 7) (constants of transformers' code, not of config.json).
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/FamilyRegistry.h"
#include "frontend/HF/Importers/LlamaStyleDecoder.h"

#include <nlohmann/json.hpp>

using namespace mlir;
using namespace mlir::qeff;

namespace qeff::hf {
namespace {
// transformers' GptOssExperts hard-codes both.
constexpr double kSwigluAlpha = 1.702, kSwigluLimit = 7.0;

FamilyDefaults gptOssDefaults() {
  FamilyDefaults d = FamilyDefaults::llama();
  d.vocabSize = 201088;
  d.hiddenSize = 2880;
  d.intermediateSize = 2880;
  d.numHiddenLayers = 36;
  d.numAttentionHeads = 64;
  d.numKeyValueHeads = 8;
  d.maxPositionEmbeddings = 131072;
  d.rmsNormEps = 1e-5;
  d.ropeTheta = 150000.0;
  d.slidingWindow = 128;
  d.attentionBias = true;
  d.tieWordEmbeddings = false;
  // GptOssConfig exists since transformers 4.55, which reads yarn's
  // original context and `truncate` (released: 4096, false).
  d.yarnReadsOriginalContext = true;
  return d;
}

std::vector<bool> evenLayersSliding(const ModelConfig &c) {
  std::vector<bool> sliding;
  for (int64_t i = 0; i < c.numHiddenLayers; ++i)
    sliding.push_back(i % 2 == 0);
  return sliding;
}
} // namespace

Family gptOssFamily() {
  return Family{
      /*name=*/"gpt_oss",
      /*architectures=*/{"GptOssForCausalLM"},
      /*modelTypes=*/{"gpt_oss"},
      /*defaults=*/&gptOssDefaults,
      /*build=*/
      [](DecoderBuilder &b) {
        const ModelConfig &c = b.config();
        std::vector<bool> sliding =
            slidingLayerTypes(c, evenLayersSliding(c))
                .value_or(std::vector<bool>());
        int64_t experts =
            c.raw->getPositiveInt("num_local_experts", 128).value_or(1);
        int64_t topK = c.raw->getPositiveInt("num_experts_per_tok", 4).value_or(1);
        int64_t hidden = c.hiddenSize, inter = c.intermediateSize;
        LlamaStyleOptions options;
        options.layerAttention = [&](int64_t i, AttentionSpec &attn) {
          attn.sinks = "model.layers." + std::to_string(i) + ".self_attn.sinks";
          if (i < int64_t(sliding.size()) && sliding[i])
            attn.slidingWindow = c.slidingWindow.value_or(0);
        };
        options.mlp = [&](int64_t, const std::string &p, Value x) {
          std::string m = p + "mlp";
          // The router and the expert sum are ops of the MoE block.
          DecoderBuilder::Scope scope(b, m);
          Value router = b.weight(m + ".router.weight", {experts, hidden});
          Value routerBias = b.weight(m + ".router.bias", {experts});
          std::string fused = m + ".experts.";
          SmallVector<int64_t> gateUp = {experts, hidden, 2 * inter};
          SmallVector<int64_t> down = {experts, inter, hidden};
          SmallVector<Value> weights;
          for (int64_t e = 0; e < experts; ++e) {
            // Stored [in, out] (applied as x @ W): read transposed into the
            // [out, in] form of the MoE operands.
            weights.push_back(b.weightRows(fused + "gate_up_proj", gateUp,
                                           e * hidden, hidden, true));
            weights.push_back(b.weightRows(fused + "gate_up_proj_bias",
                                           {experts, 2 * inter}, e, 1));
            weights.push_back(b.weightRows(fused + "down_proj", down, e * inter,
                                           inter, true));
            weights.push_back(b.weightRows(fused + "down_proj_bias",
                                           {experts, hidden}, e, 1));
          }
          OpBuilder &ob = b.builder();
          return ob.create<MoEOp>(
              b.scopeLoc(), x.getType(), x, router, routerBias, weights,
              ob.getI64IntegerAttr(experts), ob.getI64IntegerAttr(topK),
              ob.getBoolAttr(true),
              ActivationAttr::get(ob.getContext(), Activation::silu),
              ob.getF64FloatAttr(kSwigluLimit), ob.getF64FloatAttr(kSwigluAlpha));
        };
        return buildLlamaStyleDecoder(b, options);
      },
      /*configure=*/
      [](ModelConfig &c) -> absl::Status {
        const JsonConfig &raw = *c.raw;
        for (const char *field : {"num_local_experts", "num_experts_per_tok"})
          if (auto v = raw.getPositiveInt(field, 1); !v.ok())
            return v.status();
        if (*raw.getPositiveInt("num_experts_per_tok", 4) >
            *raw.getPositiveInt("num_local_experts", 128))
          return raw.fieldError("num_experts_per_tok",
                                "must be <= num_local_experts");
        // Released GPT-OSS checkpoints store the experts in MXFP4
        // (`*_blocks` / `*_scales`), decoded by frontend/Quant/Mxfp4.cpp;
        // the other methods' layouts are not checked for this class.
        if (auto q = raw.json().find("quantization_config");
            q != raw.json().end() && !q->is_null()) {
          auto method = q->find("quant_method");
          if (!q->is_object() || method == q->end() ||
              *method != nlohmann::json("mxfp4"))
            return raw.fieldError("quantization_config",
                                  "is not supported for GptOssForCausalLM "
                                  "unless its quant_method is 'mxfp4'");
        }
        // The released models use yarn; the other kinds are not checked
        // against transformers for this class.
        if (c.ropeScaling.type != RopeScalingType::None &&
            c.ropeScaling.type != RopeScalingType::Yarn)
          return raw.fieldError("rope_scaling",
                                std::string("of type '") +
                                    c.ropeScaling.name() +
                                    "' is not supported for "
                                    "GptOssForCausalLM (null or yarn)");
        if (auto limit = raw.getFloat("swiglu_limit", kSwigluLimit);
            !limit.ok() || *limit != kSwigluLimit)
          return raw.fieldError("swiglu_limit",
                                "must be 7.0: transformers' GPT-OSS experts "
                                "clamp at 7 whatever the config says");
        auto sliding = slidingLayerTypes(c, evenLayersSliding(c));
        if (!sliding.ok())
          return sliding.status();
        if (!c.slidingWindow && llvm::is_contained(*sliding, true))
          return raw.fieldError("sliding_window",
                                "is null, but layer_types has "
                                "sliding_attention layers");
        return absl::OkStatus();
      }};
}

} // namespace qeff::hf
