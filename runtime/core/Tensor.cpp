//===- Tensor.cpp - Host tensors of the runtime API -----------------------===//

#include "qeff/runtime/Tensor.h"

#include "support/CheckedMath.h"

#include <cstdlib>
#include <cstring>

#include <sys/mman.h>
#include <new>

namespace qeff::runtime {

std::string_view dtypeName(DType dtype) {
  switch (dtype) {
  case DType::Float32: return "float32";
  case DType::Float16: return "float16";
  case DType::Int64: return "int64";
  case DType::Int32: return "int32";
  case DType::Bool: return "bool";
  case DType::BFloat16: return "bfloat16";
  }
  return "?";
}

size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::Float32: return 4;
  case DType::Float16: return 2;
  case DType::Int64: return 8;
  case DType::Int32: return 4;
  case DType::Bool: return 1;
  case DType::BFloat16: return 2;
  }
  return 1;
}

// The one place sizes of runtime tensors are computed: a negative dim or an
// element count / byte size past kMaxTensorBytes is an error, never a wrap.
// An empty tensor (a dim 0) is held to the same bound on the product of its
// other dims, so that the kernels' strides and partial products of any
// tensor's dims fit in int64 ([0, 2^62, 4] is refused, not a zero-size
// tensor whose row stride overflows).
int64_t numElements(const Shape &shape) {
  bool empty = false;
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      throw SizeError("tensor shape " + shapeString(shape) + " has a negative dim");
    if (d == 0) {
      empty = true;
      continue;
    }
    if (!support::checkedMul(n, d, n) || n > kMaxTensorBytes)
      throw SizeError("tensor shape " + shapeString(shape) + " has too many elements "
                      "(the element count overflows)");
  }
  return empty ? 0 : n;
}

size_t byteSize(DType dtype, const Shape &shape) {
  int64_t bytes;
  if (!support::checkedMul(numElements(shape), static_cast<int64_t>(dtypeSize(dtype)), bytes) ||
      bytes > kMaxTensorBytes)
    throw SizeError("tensor " + std::string(dtypeName(dtype)) + " " + shapeString(shape) +
                    " would need more than 2^48 bytes");
  return static_cast<size_t>(bytes);
}

std::string shapeString(const Shape &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string dimsString(const std::vector<Dim> &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    s += i ? ", " : "";
    if (!dims[i].symbol.empty())
      s += dims[i].symbol;
    else if (dims[i].value >= 0)
      s += std::to_string(dims[i].value);
    else
      s += "?";
  }
  return s + "]";
}

// Branch-light conversions (after F. Giesen, "half <-> float" public domain).
uint16_t floatToHalf(float value) {
  uint32_t u;
  std::memcpy(&u, &value, 4);
  const uint32_t sign = u & 0x80000000u;
  u ^= sign;
  uint16_t out;
  if (u >= (127u + 16u) << 23) {
    out = u > (255u << 23) ? 0x7e00 : 0x7c00; // NaN stays NaN, else inf
  } else if (u < (113u << 23)) {
    // Subnormal or zero: align the 10 mantissa bits with a magic addend; the
    // FPU's round-to-nearest-even does the rounding.
    const uint32_t magicBits = ((127u - 15u) + (23u - 10u) + 1u) << 23;
    float magic, f;
    std::memcpy(&magic, &magicBits, 4);
    std::memcpy(&f, &u, 4);
    f += magic;
    std::memcpy(&u, &f, 4);
    out = static_cast<uint16_t>(u - magicBits);
  } else {
    const uint32_t mantOdd = (u >> 13) & 1;
    u += (static_cast<uint32_t>(15 - 127) << 23) + 0xfff;
    u += mantOdd;
    out = static_cast<uint16_t>(u >> 13);
  }
  return static_cast<uint16_t>(out | (sign >> 16));
}

float bfloat16ToFloat(uint16_t bits) {
  uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t floatToBFloat16(float value) {
  uint32_t u;
  std::memcpy(&u, &value, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) // NaN: keep the sign, force quiet
    return static_cast<uint16_t>((u >> 16) | 0x0040u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

float halfToFloat(uint16_t bits) {
  const uint32_t shiftedExp = 0x7c00u << 13;
  uint32_t u = (bits & 0x7fffu) << 13;
  const uint32_t exp = shiftedExp & u;
  u += (127u - 15u) << 23;
  if (exp == shiftedExp) {
    u += (128u - 16u) << 23;
  } else if (exp == 0) {
    u += 1u << 23;
    float f, magic;
    const uint32_t magicBits = 113u << 23;
    std::memcpy(&f, &u, 4);
    std::memcpy(&magic, &magicBits, 4);
    f -= magic;
    std::memcpy(&u, &f, 4);
  }
  u |= static_cast<uint32_t>(bits & 0x8000u) << 16;
  float out;
  std::memcpy(&out, &u, 4);
  return out;
}

Tensor Tensor::empty(DType dtype, Shape shape) {
  size_t bytes = runtime::byteSize(dtype, shape);
  size_t rounded = (bytes + 63) / 64 * 64;
  void *p = std::aligned_alloc(64, rounded ? rounded : 64);
  if (!p)
    throw std::bad_alloc();
  return view(dtype, std::move(shape), p, std::shared_ptr<void>(p, std::free),
              /*readOnly=*/false);
}

Tensor Tensor::zeros(DType dtype, Shape shape) {
  size_t bytes = runtime::byteSize(dtype, shape);
  if (bytes >= (size_t(1) << 20)) {
    // Big zero tensors (the KV cache of a fresh session) as anonymous pages:
    // zero by construction, page-aligned, and only the pages written later
    // ever get memory (reads of untouched pages see the shared zero page).
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED)
      return view(dtype, std::move(shape), p,
                  std::shared_ptr<void>(p, [bytes](void *q) { munmap(q, bytes); }),
                  /*readOnly=*/false);
  }
  Tensor t = empty(dtype, std::move(shape));
  std::memset(t.data_, 0, t.byteSize());
  return t;
}

/// The first min(`available`, `capacity`) bytes of `src` into `dst`. An
/// empty vector's data() may be null, and memcpy from null is undefined even
/// for 0 bytes.
static void copyValues(void *dst, const void *src, size_t available,
                       size_t capacity) {
  if (size_t bytes = std::min(available, capacity))
    std::memcpy(dst, src, bytes);
}

Tensor Tensor::fromFloat(Shape shape, const std::vector<float> &values) {
  Tensor t = empty(DType::Float32, std::move(shape));
  copyValues(t.data_, values.data(), values.size() * 4, t.byteSize());
  return t;
}

Tensor Tensor::fromHalf(Shape shape, const std::vector<float> &values) {
  Tensor t = empty(DType::Float16, std::move(shape));
  for (int64_t i = 0; i < t.numElements() && i < (int64_t)values.size(); ++i)
    t.data<uint16_t>()[i] = floatToHalf(values[i]);
  return t;
}

Tensor Tensor::fromInt64(Shape shape, const std::vector<int64_t> &values) {
  Tensor t = empty(DType::Int64, std::move(shape));
  copyValues(t.data_, values.data(), values.size() * 8, t.byteSize());
  return t;
}

Tensor Tensor::fromInt32(Shape shape, const std::vector<int32_t> &values) {
  Tensor t = empty(DType::Int32, std::move(shape));
  copyValues(t.data_, values.data(), values.size() * 4, t.byteSize());
  return t;
}

Tensor Tensor::fromBool(Shape shape, const std::vector<bool> &values) {
  Tensor t = empty(DType::Bool, std::move(shape));
  for (int64_t i = 0; i < t.numElements() && i < (int64_t)values.size(); ++i)
    t.data<uint8_t>()[i] = values[i] ? 1 : 0;
  return t;
}

Tensor Tensor::view(DType dtype, Shape shape, void *data,
                    std::shared_ptr<void> owner, bool readOnly) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.data_ = data;
  t.owner_ = std::move(owner);
  t.readOnly_ = readOnly;
  return t;
}

Tensor Tensor::clone() const {
  Tensor t = empty(dtype_, shape_);
  if (byteSize())
    std::memcpy(t.data_, data_, byteSize());
  return t;
}

Tensor Tensor::reshaped(Shape shape) const {
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

std::vector<float> Tensor::toFloatVector() const {
  std::vector<float> out(numElements());
  for (size_t i = 0; i < out.size(); ++i) {
    switch (dtype_) {
    case DType::Float32: out[i] = data<float>()[i]; break;
    case DType::Float16: out[i] = halfToFloat(data<uint16_t>()[i]); break;
    case DType::Int64: out[i] = static_cast<float>(data<int64_t>()[i]); break;
    case DType::Int32: out[i] = static_cast<float>(data<int32_t>()[i]); break;
    case DType::Bool: out[i] = data<uint8_t>()[i] ? 1.f : 0.f; break;
    case DType::BFloat16: out[i] = bfloat16ToFloat(data<uint16_t>()[i]); break;
    }
  }
  return out;
}

std::vector<int64_t> Tensor::toInt64Vector() const {
  std::vector<int64_t> out(numElements());
  for (size_t i = 0; i < out.size(); ++i) {
    switch (dtype_) {
    case DType::Float32: out[i] = static_cast<int64_t>(data<float>()[i]); break;
    case DType::Float16:
      out[i] = static_cast<int64_t>(halfToFloat(data<uint16_t>()[i]));
      break;
    case DType::Int64: out[i] = data<int64_t>()[i]; break;
    case DType::Int32: out[i] = data<int32_t>()[i]; break;
    case DType::Bool: out[i] = data<uint8_t>()[i]; break;
    case DType::BFloat16:
      out[i] = static_cast<int64_t>(bfloat16ToFloat(data<uint16_t>()[i]));
      break;
    }
  }
  return out;
}

} // namespace qeff::runtime
