//===- Phi3.cpp - Phi3ForCausalLM -------------------------------*- C++ -*-===//
//
// Part of qeff. A Llama-style decoder with fused projections:
// `self_attn.qkv_proj` is [Q (heads) | K (kv heads) | V (kv heads)] and
// `mlp.gate_up_proj` is [gate | up]; no biases. Limits: rope_scaling
// su/longrope is not supported (ModelConfig rejects it).
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/FamilyRegistry.h"
#include "frontend/HF/Importers/LlamaStyleDecoder.h"

namespace qeff::hf {

Family phi3Family() {
  return Family{/*name=*/"phi3",
                /*architectures=*/{"Phi3ForCausalLM"},
                /*modelTypes=*/{"phi3"},
                /*defaults=*/&FamilyDefaults::phi3,
                /*build=*/[](DecoderBuilder &b) {
                  LlamaStyleOptions options;
                  options.fusedProjections = true;
                  options.slidingWindow = true;
                  return buildLlamaStyleDecoder(b, options);
                }};
}

} // namespace qeff::hf
