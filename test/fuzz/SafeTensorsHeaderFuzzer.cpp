//===- SafeTensorsHeaderFuzzer.cpp - safetensors header + tensor table ----===//
//
// The JSON header of a safetensors file against a data section whose size is
// taken from the input's first 8 bytes, then a whole file through
// SafeTensorsFile::open (length prefix, mapping, tensor table).

#include "frontend/HF/SafeTensors.h"
#include "test/fuzz/FuzzUtil.h"

#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint64_t dataSize = 0;
  if (size >= 8)
    std::memcpy(&dataSize, data, 8);
  std::string_view header(reinterpret_cast<const char *>(data), size);
  if (size >= 8)
    header.remove_prefix(8);
  std::vector<qeff::hf::TensorInfo> tensors;
  std::map<std::string, std::string> metadata;
  (void)qeff::hf::parseSafeTensorsHeader(header, dataSize % (uint64_t(1) << 32), "fuzz",
                                         tensors, metadata);
  std::string path = qeff::fuzz::writeScratch(
      "model.safetensors", std::string_view(reinterpret_cast<const char *>(data), size));
  if (auto file = qeff::hf::SafeTensorsFile::open(path); file.ok())
    for (const auto &t : (*file)->tensors())
      (void)(*file)->view(t);
  return 0;
}
