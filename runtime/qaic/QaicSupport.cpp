//===- QaicSupport.cpp - The qaic device's SDK-independent parts ----------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "runtime/qaic/QaicSupport.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

namespace qeff::runtime::qaic {

namespace {

std::optional<DType> dtypeNamed(const std::string &name) {
  if (name == "float32")
    return DType::Float32;
  if (name == "float16")
    return DType::Float16;
  if (name == "int64")
    return DType::Int64;
  if (name == "int32")
    return DType::Int32;
  if (name == "bool")
    return DType::Bool;
  return std::nullopt;
}

/// bfloat16 bits of `f`, rounded to nearest even (NaN stays NaN).
uint16_t floatToBF16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((bits >> 16) | 0x40);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return uint16_t(bits >> 16);
}

float bf16ToFloat(uint16_t b) {
  uint32_t bits = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

} // namespace

DType sessionDType(Storage storage, DType declared) {
  switch (storage) {
  case Storage::F32:
  case Storage::BF16:
    return DType::Float32;
  case Storage::F16:
    return DType::Float16;
  case Storage::I64:
    return DType::Int64;
  case Storage::I32:
    return DType::Int32;
  case Storage::Byte:
    return DType::Bool;
  case Storage::Opaque:
    return declared;
  }
  return declared;
}

Tensor allocateStorage(Storage storage, const Dims &dims) {
  Shape shape(dims.begin(), dims.end());
  // bfloat16 travels in a 2-byte tensor; its bits are converted on the way.
  DType d = storage == Storage::BF16 ? DType::Float16 : sessionDType(storage, DType::Bool);
  return Tensor::empty(d, shape);
}

Result<Tensor> toStorage(const Tensor &t, Storage storage, const std::string &name) {
  if (storage == Storage::Opaque)
    return makeError("input '" + name +
                     "' is bound to quantized storage on the QPC (the MXINT8 KV "
                     "cache): qeff cannot write it; it keeps that state on the card");
  int64_t n = t.numElements();
  if (storage == Storage::BF16) {
    if (t.dtype() != DType::Float32 && t.dtype() != DType::Float16)
      return makeError("input '" + name + "' is " + std::string(dtypeName(t.dtype())) +
                       ", the QPC binds bfloat16");
    Tensor r = Tensor::empty(DType::Float16, t.shape());
    for (int64_t i = 0; i < n; ++i) {
      float f = t.dtype() == DType::Float32 ? t.data<float>()[i]
                                            : halfToFloat(t.data<uint16_t>()[i]);
      r.data<uint16_t>()[i] = floatToBF16(f);
    }
    return r;
  }
  DType want = sessionDType(storage, t.dtype());
  if (t.dtype() == want)
    return t;
  Tensor r = Tensor::empty(want, t.shape());
  if (t.dtype() == DType::Float32 && want == DType::Float16) {
    for (int64_t i = 0; i < n; ++i)
      r.data<uint16_t>()[i] = floatToHalf(t.data<float>()[i]);
  } else if (t.dtype() == DType::Float16 && want == DType::Float32) {
    for (int64_t i = 0; i < n; ++i)
      r.data<float>()[i] = halfToFloat(t.data<uint16_t>()[i]);
  } else if (t.dtype() == DType::Int64 && want == DType::Int32) {
    for (int64_t i = 0; i < n; ++i)
      r.data<int32_t>()[i] = static_cast<int32_t>(t.data<int64_t>()[i]);
  } else if (t.dtype() == DType::Int32 && want == DType::Int64) {
    for (int64_t i = 0; i < n; ++i)
      r.data<int64_t>()[i] = t.data<int32_t>()[i];
  } else {
    return makeError("input '" + name + "' is " + std::string(dtypeName(t.dtype())) +
                     ", the QPC binds " + std::string(dtypeName(want)));
  }
  return r;
}

Tensor fromStorage(Tensor raw, Storage storage) {
  if (storage != Storage::BF16)
    return raw;
  Tensor r = Tensor::empty(DType::Float32, raw.shape());
  for (int64_t i = 0; i < raw.numElements(); ++i)
    r.data<float>()[i] = bf16ToFloat(raw.data<uint16_t>()[i]);
  return r;
}

std::string dimsText(const Dims &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

Result<std::pair<std::vector<TensorInfo>, std::vector<TensorInfo>>>
readManifest(const std::filesystem::path &path) {
  std::ifstream f(path);
  if (!f)
    return makeError("'" + path.parent_path().string() +
                     "' has no qeff-manifest.json: the qaic device runs `qeff compile` "
                     "output directories");
  std::stringstream text;
  text << f.rdbuf();
  try {
    auto json = nlohmann::json::parse(text.str());
    auto list = [&](const char *key) -> Result<std::vector<TensorInfo>> {
      if (!json.contains(key) || !json[key].is_array())
        return makeError(path.string() + ": no \"" + key + "\" list");
      std::vector<TensorInfo> infos;
      for (const auto &entry : json[key]) {
        TensorInfo info;
        info.name = entry.value("name", "");
        auto dtype = dtypeNamed(entry.value("dtype", ""));
        if (info.name.empty() || !dtype)
          return makeError(path.string() + ": an entry of \"" + key +
                           "\" has no name or an unknown dtype");
        info.dtype = *dtype;
        for (const auto &d : entry.value("shape", nlohmann::json::array())) {
          Dim dim;
          if (d.is_number_integer())
            dim.value = d.get<int64_t>();
          else if (d.is_string())
            dim.symbol = d.get<std::string>();
          info.dims.push_back(dim);
        }
        infos.push_back(std::move(info));
      }
      return infos;
    };
    auto inputs = list("inputs");
    if (!inputs)
      return makeError(inputs.error());
    auto outputs = list("outputs");
    if (!outputs)
      return makeError(outputs.error());
    return std::make_pair(std::move(*inputs), std::move(*outputs));
  } catch (const nlohmann::json::exception &e) {
    return makeError(path.string() + ": invalid JSON: " + e.what());
  }
}

} // namespace qeff::runtime::qaic
