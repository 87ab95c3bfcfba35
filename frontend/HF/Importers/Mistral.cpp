//===- Mistral.cpp - MistralForCausalLM -------------------------*- C++ -*-===//
//
// Part of qeff. A Llama-style decoder whose attention honours the config's
// `sliding_window` (a query sees at most the last `sliding_window` keys).
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/FamilyRegistry.h"
#include "frontend/HF/Importers/LlamaStyleDecoder.h"

namespace qeff::hf {

Family mistralFamily() {
  return Family{
      /*name=*/"mistral",
      /*architectures=*/{"MistralForCausalLM"},
      /*modelTypes=*/{"mistral"},
      /*defaults=*/&FamilyDefaults::mistral,
      /*build=*/[](DecoderBuilder &b) {
        LlamaStyleOptions options;
        options.slidingWindow = true;
        return buildLlamaStyleDecoder(b, options);
      }};
}

} // namespace qeff::hf
