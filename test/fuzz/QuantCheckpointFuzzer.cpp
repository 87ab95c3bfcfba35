//===- QuantCheckpointFuzzer.cpp - pre-quantized checkpoints -------------===//
//
// A config.json with a quantization_config and a model.safetensors (the input
// split at "\n----\n", make-quant-seeds.py writes the seeds) opened through
// openDenseCheckpoint, then one row and one column of every decoded weight:
// the packed shapes, group sizes, group indices and scale grids are validated
// before a decoder reads a byte, so none may read out of bounds.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/JsonConfig.h"
#include "frontend/Quant/QuantCheckpoint.h"
#include "test/fuzz/FuzzUtil.h"

#include <algorithm>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto [configText, weights] = qeff::fuzz::splitTwo(data, size);
  auto config = qeff::hf::JsonConfig::parse(configText, "config.json");
  if (!config.ok())
    return 0;
  qeff::fuzz::writeScratch("model.safetensors", weights);
  auto ckpt = qeff::quant::openDenseCheckpoint(qeff::fuzz::scratchDir(), *config);
  if (!ckpt.ok())
    return 0;

  std::vector<float> buffer;
  for (const std::string &name : (*ckpt)->tensorNames()) {
    const qeff::hf::DenseSource *source = (*ckpt)->decodedSource(name);
    if (!source)
      continue;
    const std::vector<int64_t> &shape = (*ckpt)->find(name)->shape;
    int64_t rows = shape[0], cols = shape[1];
    if (rows <= 0 || cols <= 0)
      continue;
    buffer.resize(size_t(std::max(rows, cols)));
    source->decode(rows - 1, rows, 0, cols, buffer.data(), cols);
    source->decode(0, rows, cols - 1, cols, buffer.data(), 1);
    source->decodeTransposed(0, 1, 0, rows, buffer.data(), rows);
  }
  return 0;
}
