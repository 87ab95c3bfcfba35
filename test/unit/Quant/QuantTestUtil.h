//===- QuantTestUtil.h - helpers of the Quant/GGUF unit tests ---*- C++ -*-===//
//
// Part of qeff. Temporary checkpoint directories written with the project's
// own safetensors writer, and file readers.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_TEST_UNIT_QUANT_QUANTTESTUTIL_H
#define QEFF_TEST_UNIT_QUANT_QUANTTESTUTIL_H

#include "frontend/HF/SafeTensors.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace qeff::quant::test {

inline const std::string kData = QEFF_TEST_DATA_DIR;

inline std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

/// A fresh directory removed at the end of the test.
class TempDir {
public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "qeff-quant-XXXXXX").string();
    EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string &path() const { return path_; }
  std::string file(const std::string &name) const { return path_ + "/" + name; }
  std::string write(const std::string &name, const std::string &content) const {
    std::ofstream out(file(name), std::ios::binary);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    return file(name);
  }

private:
  std::string path_;
};

/// A tensor to write, owning its bytes.
struct OwnedTensor {
  std::string name;
  hf::DType dtype;
  std::vector<int64_t> shape;
  std::string bytes;
};

template <typename T>
OwnedTensor tensorOf(std::string name, hf::DType dtype, std::vector<int64_t> shape,
                     const std::vector<T> &values) {
  std::string bytes(reinterpret_cast<const char *>(values.data()), values.size() * sizeof(T));
  return {std::move(name), dtype, std::move(shape), std::move(bytes)};
}

inline void writeCheckpoint(const TempDir &dir, const std::vector<OwnedTensor> &tensors,
                            const std::string &configJson) {
  std::vector<hf::TensorToWrite> out;
  for (const OwnedTensor &t : tensors)
    out.push_back({t.name, t.dtype, t.shape, t.bytes.data(), t.bytes.size()});
  ASSERT_TRUE(hf::writeSafeTensors(dir.file("model.safetensors"), out).ok());
  dir.write("config.json", configJson);
}

/// A LlamaForCausalLM config.json holding `quant` as its quantization_config.
inline std::string configWithQuant(const std::string &quant) {
  return R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64,
             "quantization_config": )" + quant + "}";
}

} // namespace qeff::quant::test

#endif // QEFF_TEST_UNIT_QUANT_QUANTTESTUTIL_H
