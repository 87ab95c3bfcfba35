//===- Llama.cpp - LlamaForCausalLM -----------------------------*- C++ -*-===//
//
// Part of qeff. Serves every LlamaForCausalLM checkpoint: Llama 1/2/3,
// CodeLlama, Vicuna, TinyLlama, ... Rotary (half-split pairs, rope_scaling
// linear/llama3), grouped-query attention, optional attention/MLP biases,
// SwiGLU MLP, untied LM head unless tie_word_embeddings.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/FamilyRegistry.h"
#include "frontend/HF/Importers/LlamaStyleDecoder.h"

namespace qeff::hf {

Family llamaFamily() {
  return Family{
      /*name=*/"llama",
      /*architectures=*/{"LlamaForCausalLM"},
      /*modelTypes=*/{"llama"},
      /*defaults=*/&FamilyDefaults::llama,
      /*build=*/[](DecoderBuilder &b) {
        return buildLlamaStyleDecoder(b, LlamaStyleOptions{});
      }};
}

} // namespace qeff::hf
