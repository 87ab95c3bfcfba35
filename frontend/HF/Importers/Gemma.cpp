//===- Gemma.cpp - GemmaForCausalLM -----------------------------*- C++ -*-===//
//
// Part of qeff. A Llama-style decoder with Gemma's differences: the
// embedding output is scaled by sqrt(hidden_size) (the tied LM head uses the
// unscaled table), RMSNorm multiplies by (1 + w), the GeGLU MLP uses
// `hidden_activation` (gelu_pytorch_tanh when absent, whatever hidden_act
// says), head_dim is explicit (heads * head_dim may differ from hidden).
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/FamilyRegistry.h"
#include "frontend/HF/Importers/LlamaStyleDecoder.h"

#include <cmath>

namespace qeff::hf {

Family gemmaFamily() {
  return Family{
      /*name=*/"gemma",
      /*architectures=*/{"GemmaForCausalLM"},
      /*modelTypes=*/{"gemma"},
      /*defaults=*/&FamilyDefaults::gemma,
      /*build=*/
      [](DecoderBuilder &b) {
        LlamaStyleOptions options;
        options.embeddingScale = std::sqrt(double(b.config().hiddenSize));
        options.normWeightOffset = 1.0;
        return buildLlamaStyleDecoder(b, options);
      },
      /*configure=*/
      [](ModelConfig &c) -> absl::Status {
        auto act = c.raw->getString("hidden_activation", "gelu_pytorch_tanh");
        if (!act.ok())
          return act.status();
        c.hiddenAct = *act;
        return absl::OkStatus();
      }};
}

} // namespace qeff::hf
