//===- GGUFWriter.h - GGUF images for the reader tests ----------*- C++ -*-===//
//
// Part of qeff. Builds GGUF v3 byte images (header, key/value pairs, tensor
// infos, aligned data) so the tests can make well-formed files and break
// them one field at a time.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_TEST_UNIT_QUANT_GGUFWRITER_H
#define QEFF_TEST_UNIT_QUANT_GGUFWRITER_H

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace qeff::quant::test {

class GGUFWriter {
public:
  struct Tensor {
    std::string name;
    std::vector<uint64_t> ne;
    uint32_t type;
    std::string data;
    int64_t offsetOverride = -1;
  };

  uint32_t version = 3;
  uint64_t tensorCountOverride = 0, kvCountOverride = 0;
  uint64_t alignment = 32;

  void kvString(const std::string &key, const std::string &value) {
    begin(key, 8);
    str(kv_, value);
  }
  void kvU32(const std::string &key, uint32_t value) {
    begin(key, 4);
    put(kv_, value);
  }
  void kvF32(const std::string &key, float value) {
    begin(key, 6);
    put(kv_, value);
  }
  void kvBool(const std::string &key, bool value) {
    begin(key, 7);
    put(kv_, uint8_t(value));
  }
  void kvStrings(const std::string &key, const std::vector<std::string> &values) {
    begin(key, 9);
    put(kv_, uint32_t(8));
    put(kv_, uint64_t(values.size()));
    for (const std::string &v : values)
      str(kv_, v);
  }
  void kvRaw(const std::string &bytes) {
    kv_ += bytes;
    ++kvs_;
  }
  void tensor(Tensor t) { tensors_.push_back(std::move(t)); }

  std::string build() const {
    std::string out = "GGUF";
    put(out, version);
    put(out, tensorCountOverride ? tensorCountOverride : uint64_t(tensors_.size()));
    put(out, kvCountOverride ? kvCountOverride : kvs_);
    out += kv_;
    uint64_t offset = 0;
    std::vector<uint64_t> offsets;
    for (const Tensor &t : tensors_) {
      str(out, t.name);
      put(out, uint32_t(t.ne.size()));
      for (uint64_t n : t.ne)
        put(out, n);
      put(out, t.type);
      uint64_t at = t.offsetOverride >= 0 ? uint64_t(t.offsetOverride) : offset;
      put(out, at);
      offsets.push_back(at);
      offset = (offset + t.data.size() + alignment - 1) / alignment * alignment;
    }
    out.resize((out.size() + alignment - 1) / alignment * alignment, '\0');
    size_t base = out.size();
    for (size_t i = 0; i < tensors_.size(); ++i) {
      if (out.size() < base + offsets[i] + tensors_[i].data.size())
        out.resize(base + offsets[i] + tensors_[i].data.size(), '\0');
      std::memcpy(out.data() + base + offsets[i], tensors_[i].data.data(), tensors_[i].data.size());
    }
    return out;
  }

  template <typename T> static void put(std::string &out, T value) {
    out.append(reinterpret_cast<const char *>(&value), sizeof(T));
  }
  static void str(std::string &out, const std::string &s) {
    put(out, uint64_t(s.size()));
    out += s;
  }

private:
  void begin(const std::string &key, uint32_t type) {
    str(kv_, key);
    put(kv_, type);
    ++kvs_;
  }
  std::string kv_;
  uint64_t kvs_ = 0;
  std::vector<Tensor> tensors_;
};

} // namespace qeff::quant::test

#endif // QEFF_TEST_UNIT_QUANT_GGUFWRITER_H
