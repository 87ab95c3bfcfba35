//===- Tensor.h - Host tensors of the runtime API ---------------*- C++ -*-===//
//
// A Tensor is a dtype, a shape and a reference-counted byte buffer. Copies
// share the buffer (use clone() for a deep copy). Element data is dense,
// row-major, and at least 64-byte aligned when the runtime allocated it.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_TENSOR_H
#define QEFF_RUNTIME_TENSOR_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace qeff::runtime {

/// Element types the runtime handles. Bool is one byte per element (0 or 1).
/// BFloat16 is the upper half of a binary32 (2-byte weights of a
/// `--weights-dtype=bf16` artifact).
enum class DType : uint8_t { Float32, Float16, Int64, Int32, Bool, BFloat16 };

std::string_view dtypeName(DType dtype);
size_t dtypeSize(DType dtype);

using Shape = std::vector<int64_t>;

/// A shape whose element count or byte size is negative or overflows.
class SizeError : public std::length_error {
public:
  using std::length_error::length_error;
};

/// No runtime tensor is larger (2^48 bytes): sizes computed from untrusted
/// dims stay far from wrapping.
constexpr int64_t kMaxTensorBytes = int64_t(1) << 48;

/// Product of the dims (1 for a scalar). Throws SizeError for a negative dim
/// or a count over kMaxTensorBytes: every runtime size goes through here.
int64_t numElements(const Shape &shape);
/// numElements(shape) * dtypeSize(dtype), checked the same way.
size_t byteSize(DType dtype, const Shape &shape);
/// "[1, 32, 128]".
std::string shapeString(const Shape &shape);

/// IEEE binary16 <-> binary32 (round to nearest even, overflow to inf).
uint16_t floatToHalf(float value);
float halfToFloat(uint16_t bits);
/// `value` rounded to the nearest fp16 value, as float.
inline float roundToHalf(float value) { return halfToFloat(floatToHalf(value)); }
/// bfloat16 <-> binary32: widening is exact; narrowing rounds to nearest
/// even (NaN stays a quiet NaN of the same sign).
float bfloat16ToFloat(uint16_t bits);
uint16_t floatToBFloat16(float value);

class Tensor {
public:
  Tensor() = default;

  /// An uninitialised tensor of the runtime's allocator.
  static Tensor empty(DType dtype, Shape shape);
  /// A tensor of zeros.
  static Tensor zeros(DType dtype, Shape shape);
  /// Tensors from values (the vector's size must equal numElements(shape)).
  static Tensor fromFloat(Shape shape, const std::vector<float> &values);
  static Tensor fromHalf(Shape shape, const std::vector<float> &values);
  static Tensor fromInt64(Shape shape, const std::vector<int64_t> &values);
  static Tensor fromInt32(Shape shape, const std::vector<int32_t> &values);
  static Tensor fromBool(Shape shape, const std::vector<bool> &values);
  /// A view of memory the caller keeps alive through `owner` (may be null
  /// when the caller guarantees the lifetime). Read-only views are never
  /// written by the runtime.
  static Tensor view(DType dtype, Shape shape, void *data,
                     std::shared_ptr<void> owner, bool readOnly = true);

  bool valid() const {
    if (data_)
      return true;
    for (int64_t d : shape_)
      if (d == 0)
        return true;
    return false;
  }
  DType dtype() const { return dtype_; }
  const Shape &shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_[i < 0 ? i + rank() : i]; }
  int64_t numElements() const { return runtime::numElements(shape_); }
  size_t byteSize() const { return runtime::byteSize(dtype_, shape_); }
  bool readOnly() const { return readOnly_; }

  void *rawData() { return data_; }
  const void *rawData() const { return data_; }
  template <typename T> T *data() { return static_cast<T *>(data_); }
  template <typename T> const T *data() const {
    return static_cast<const T *>(data_);
  }

  /// Deep copy into a fresh buffer.
  Tensor clone() const;
  /// The same buffer under another shape of the same element count.
  Tensor reshaped(Shape shape) const;
  /// Values converted to float (any dtype; Float16 and BFloat16 decoded).
  std::vector<float> toFloatVector() const;
  /// Values converted to int64 (any dtype; floats truncated).
  std::vector<int64_t> toInt64Vector() const;

  /// True when this tensor is the only reference to a writable buffer (the
  /// runtime may then reuse it in place).
  bool uniquelyOwned() const { return !readOnly_ && owner_.use_count() == 1; }
  /// The shared buffer owner (identity of the storage).
  const std::shared_ptr<void> &owner() const { return owner_; }

private:
  DType dtype_ = DType::Float32;
  Shape shape_;
  void *data_ = nullptr;
  std::shared_ptr<void> owner_;
  bool readOnly_ = false;

};

/// A graph input or output as the model declares it: dims are concrete
/// (value >= 0) or named symbols (`symbol` non-empty, value -1) or unknown.
struct Dim {
  int64_t value = -1;
  std::string symbol;
};

struct TensorInfo {
  std::string name;
  DType dtype = DType::Float32;
  std::vector<Dim> dims;
  /// False when the model declares no shape (any rank accepted).
  bool hasShape = true;
};

/// "[batch_size, seq_len, 64]".
std::string dimsString(const std::vector<Dim> &dims);

} // namespace qeff::runtime

#endif // QEFF_RUNTIME_TENSOR_H
