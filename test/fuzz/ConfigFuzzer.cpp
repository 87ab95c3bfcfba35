//===- ConfigFuzzer.cpp - config.json -> ModelConfig, generation_config ---===//

#include "frontend/HF/GenerationConfig.h"
#include "frontend/HF/JsonConfig.h"
#include "frontend/HF/ModelConfig.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  auto json = qeff::hf::JsonConfig::parse(text, "config.json");
  if (!json.ok())
    return 0;
  (void)qeff::hf::architectureOf(*json);
  (void)qeff::hf::ModelConfig::fromJson(*json, qeff::hf::FamilyDefaults{});
  (void)qeff::hf::GenerationConfig::fromJson(*json);
  return 0;
}
