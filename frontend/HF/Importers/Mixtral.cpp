//===- Mixtral.cpp - MixtralForCausalLM -------------------------*- C++ -*-===//
//
// Part of qeff. Llama-style attention (with Mistral's optional sliding
// window) and a sparse mixture of SwiGLU experts instead of the MLP:
// `block_sparse_moe.gate` routes each token (softmax, top
// `num_experts_per_tok`, renormalised) over `num_local_experts` experts
// `experts.{e}.{w1,w3,w2}`. `qeff.moe` lowers densely (every expert on every
// token, weighted by the routing, zero outside the top k): fixed shapes.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/FamilyRegistry.h"
#include "frontend/HF/Importers/LlamaStyleDecoder.h"

namespace qeff::hf {

Family mixtralFamily() {
  return Family{
      /*name=*/"mixtral",
      /*architectures=*/{"MixtralForCausalLM"},
      /*modelTypes=*/{"mixtral"},
      /*defaults=*/&FamilyDefaults::mixtral,
      /*build=*/[](DecoderBuilder &b) {
        const JsonConfig &raw = *b.config().raw;
        LlamaStyleOptions options;
        options.slidingWindow = true;
        options.moeExperts =
            raw.getPositiveInt("num_local_experts", 8).value_or(0);
        options.moeTopK =
            raw.getPositiveInt("num_experts_per_tok", 2).value_or(0);
        if (options.moeExperts == 0)
          b.configError("num_local_experts", "must be a positive integer");
        if (options.moeTopK == 0 || options.moeTopK > options.moeExperts)
          b.configError("num_experts_per_tok",
                        "must be a positive integer <= num_local_experts");
        return buildLlamaStyleDecoder(b, options);
      }};
}

} // namespace qeff::hf
