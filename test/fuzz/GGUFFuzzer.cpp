//===- GGUFFuzzer.cpp - GGUF files: reader, model mapping, dequantization -===//
//
// A GGUF image through GGUFFile::parse (header, metadata, tensor infos,
// offsets), its tokenizer into tokenizer.json, then the whole file through
// openGGUFModel (architecture -> config, tensor names, types) and one row and
// one column of every tensor decoded: every byte a decoder reads was
// validated by the reader, so none may read out of bounds.

#include "frontend/GGUF/GGUFFile.h"
#include "frontend/GGUF/GGUFModel.h"
#include "frontend/GGUF/GGUFTokenizer.h"
#include "test/fuzz/FuzzUtil.h"

#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto file = qeff::gguf::GGUFFile::parse(reinterpret_cast<const std::byte *>(data), size,
                                          "fuzz.gguf");
  if (!file.ok())
    return 0;
  if ((*file)->find("tokenizer.ggml.model"))
    (void)qeff::gguf::ggufTokenizerFiles(**file);
  std::string path = qeff::fuzz::writeScratch(
      "model.gguf", std::string_view(reinterpret_cast<const char *>(data), size));
  auto model = qeff::gguf::openGGUFModel(path);
  if (!model.ok())
    return 0;
  const qeff::hf::Checkpoint &ckpt = *model->checkpoint;
  std::vector<float> buffer;
  for (const std::string &name : ckpt.tensorNames()) {
    const qeff::hf::DenseSource *source = ckpt.decodedSource(name);
    if (!source)
      continue;
    const std::vector<int64_t> &shape = ckpt.find(name)->shape;
    int64_t rows = shape.size() >= 2 ? shape[0] : 1;
    int64_t cols = ckpt.find(name)->numElements() / rows;
    buffer.resize(size_t(std::max(rows, cols)));
    source->decode(rows - 1, rows, 0, cols, buffer.data(), cols);
    source->decode(0, rows, cols - 1, cols, buffer.data(), 1);
  }
  return 0;
}
