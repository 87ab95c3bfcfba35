//===- Qwen2.cpp - Qwen2ForCausalLM -----------------------------*- C++ -*-===//
//
// Part of qeff. A Llama-style decoder whose q/k/v projections carry biases
// (o_proj does not). The sliding window applies only with
// `use_sliding_window`, to layers >= `max_window_layers`; a large rope_theta
// is common.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/FamilyRegistry.h"
#include "frontend/HF/Importers/LlamaStyleDecoder.h"

namespace qeff::hf {

absl::Status qwen2SlidingWindow(ModelConfig &c) {
  // transformers windows layers >= max_window_layers, and only with
  // use_sliding_window.
  auto use = c.raw->getBool("use_sliding_window", false);
  if (!use.ok())
    return use.status();
  auto firstWindowed = c.raw->getInt("max_window_layers", 28);
  if (!firstWindowed.ok())
    return firstWindowed.status();
  if (!*use || *firstWindowed >= c.numHiddenLayers)
    c.slidingWindow.reset();
  else if (*firstWindowed > 0 && c.slidingWindow)
    return c.raw->fieldError(
        "max_window_layers",
        "windows only some layers (" + std::to_string(*firstWindowed) +
            " of " + std::to_string(c.numHiddenLayers) +
            " unwindowed); a per-layer window is not supported");
  return absl::OkStatus();
}

Family qwen2Family() {
  return Family{
      /*name=*/"qwen2",
      /*architectures=*/{"Qwen2ForCausalLM"},
      /*modelTypes=*/{"qwen2"},
      /*defaults=*/&FamilyDefaults::qwen2,
      /*build=*/
      [](DecoderBuilder &b) {
        LlamaStyleOptions options;
        options.qkvBias = true;
        options.slidingWindow = true; // configure drops it unless enabled
        return buildLlamaStyleDecoder(b, options);
      },
      /*configure=*/&qwen2SlidingWindow};
}

} // namespace qeff::hf
