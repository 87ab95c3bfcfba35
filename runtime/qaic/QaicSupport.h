//===- QaicSupport.h - The qaic device's SDK-independent parts --*- C++ -*-===//
//
// What runtime/qaic/QaicDevice.cpp needs that does not touch the Platform
// SDK: the declared inputs and outputs of qeff-manifest.json, the host-side
// element types of QPC buffers and the conversions between them and the
// Session's tensors.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_QAIC_QAICSUPPORT_H
#define QEFF_RUNTIME_QAIC_QAICSUPPORT_H

#include "qeff/runtime/Result.h"
#include "qeff/runtime/Session.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace qeff::runtime::qaic {

using Dims = std::vector<uint32_t>;

/// What a QPC buffer holds, as far as the host is concerned.
enum class Storage {
  F32,    ///< float32
  F16,    ///< float16
  BF16,   ///< bfloat16: the Session sees float32, converted here
  I64,    ///< int64
  I32,    ///< int32 (also 32-bit quantized: the same bytes)
  Byte,   ///< int8 or uint8: the Session's bool
  Opaque, ///< quantized or complex storage qeff neither feeds nor reads
          ///< (the MXINT8 KV cache): allowed for retained state only
};

/// The dtype the Session sees for `storage` (Opaque: `declared`).
DType sessionDType(Storage storage, DType declared);

/// `t` as the bytes of `storage` (float32 <-> float16/bfloat16, int64 <->
/// int32), sharing its buffer when no conversion is needed; an error naming
/// `name` when the types do not convert. A bfloat16 result is a Float16
/// tensor holding bfloat16 bits (the host only passes its bytes on).
Result<Tensor> toStorage(const Tensor &t, Storage storage, const std::string &name);
/// A buffer the card filled in `storage`, as the Session's dtype.
Tensor fromStorage(Tensor raw, Storage storage);
/// An empty host buffer for `storage` of `dims` elements.
Tensor allocateStorage(Storage storage, const Dims &dims);

/// "[1, 2, 3]".
std::string dimsText(const Dims &dims);

/// Declared inputs and outputs of `path` (qeff-manifest.json).
Result<std::pair<std::vector<TensorInfo>, std::vector<TensorInfo>>>
readManifest(const std::filesystem::path &path);

} // namespace qeff::runtime::qaic

#endif // QEFF_RUNTIME_QAIC_QAICSUPPORT_H
