//===- ShardIndexFuzzer.cpp - model.safetensors.index.json ----------------===//

#include "frontend/HF/Checkpoint.h"
#include "test/fuzz/FuzzUtil.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = qeff::fuzz::writeScratch(
      "model.safetensors.index.json",
      std::string_view(reinterpret_cast<const char *>(data), size));
  (void)qeff::hf::Checkpoint::openIndex(path);
  return 0;
}
