//===- WeightConversion.cpp - Element conversions for the exporter --------===//
//
// Part of qeff. See WeightConversion.h.
//
//===----------------------------------------------------------------------===//

#include "lowering/Export/WeightConversion.h"

#include "lowering/Export/TransposeKernels.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace qeff::exporter {

namespace {

uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

float bitsFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

template <typename T> T load(const std::byte *p) {
  T value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

template <typename T> void store(std::byte *p, T value) {
  std::memcpy(p, &value, sizeof value);
}

bool isFloat(DType dtype) {
  return dtype == DType::F64 || dtype == DType::F32 || dtype == DType::F16 ||
         dtype == DType::BF16;
}

// Loaders read one element as float (f64 is narrowed: the only f64 -> f64
// conversion is the identity, handled by memcpy).
struct LoadF32 {
  static constexpr size_t size = 4;
  float operator()(const std::byte *p) const { return load<float>(p); }
};
struct LoadF16 {
  static constexpr size_t size = 2;
  float operator()(const std::byte *p) const {
    return f16ToF32(load<uint16_t>(p));
  }
};
struct LoadBF16 {
  static constexpr size_t size = 2;
  float operator()(const std::byte *p) const {
    return bf16ToF32(load<uint16_t>(p));
  }
};
struct LoadF64 {
  static constexpr size_t size = 8;
  float operator()(const std::byte *p) const {
    return static_cast<float>(load<double>(p));
  }
};

struct StoreF32 {
  static constexpr size_t size = 4;
  void operator()(std::byte *p, float v, uint64_t &) const { store(p, v); }
};
struct StoreF16 {
  static constexpr size_t size = 2;
  void operator()(std::byte *p, float v, uint64_t &clipped) const {
    bool c = false;
    store(p, f32ToF16(v, c));
    clipped += c;
  }
};
struct StoreBF16 {
  static constexpr size_t size = 2;
  void operator()(std::byte *p, float v, uint64_t &) const {
    store(p, f32ToBF16(v));
  }
};
struct StoreF64 {
  static constexpr size_t size = 8;
  void operator()(std::byte *p, float v, uint64_t &) const {
    store(p, static_cast<double>(v));
  }
};

template <typename Load, typename Store>
uint64_t convertLoop(const std::byte *src, std::byte *dst, size_t count) {
  uint64_t clipped = 0;
  Load ld;
  Store st;
  for (size_t i = 0; i < count; ++i)
    st(dst + i * Store::size, ld(src + i * Load::size), clipped);
  return clipped;
}

/// Calls fn(Load{}, Store{}) with the loader of `from` and the storer of
/// `to` (both float dtypes), returning its clipped count.
template <typename Load, typename Fn>
uint64_t withStore(Load load, DType to, Fn &&fn) {
  switch (to) {
  case DType::F32:
    return fn(load, StoreF32{});
  case DType::F16:
    return fn(load, StoreF16{});
  case DType::BF16:
    return fn(load, StoreBF16{});
  case DType::F64:
    return fn(load, StoreF64{});
  default:
    assert(false && "not a float dtype");
    return 0;
  }
}

template <typename Fn>
uint64_t withLoadStore(DType from, DType to, Fn &&fn) {
  switch (from) {
  case DType::F32:
    return withStore(LoadF32{}, to, fn);
  case DType::F16:
    return withStore(LoadF16{}, to, fn);
  case DType::BF16:
    return withStore(LoadBF16{}, to, fn);
  case DType::F64:
    return withStore(LoadF64{}, to, fn);
  default:
    assert(false && "not a float dtype");
    return 0;
  }
}

template <size_t N>
void transposeTileN(const std::byte *src, int64_t srcCols, int64_t r0,
                    int64_t r1, int64_t c0, int64_t c1, std::byte *dst,
                    int64_t dstStride) {
  // Tiles of kTile x kTile elements keep both the reads (along source rows)
  // and the writes (along output rows) within a few cache lines.
  constexpr int64_t kTile = 32;
  for (int64_t i0 = r0; i0 < r1; i0 += kTile) {
    int64_t i1 = std::min(r1, i0 + kTile);
    for (int64_t j0 = c0; j0 < c1; j0 += kTile) {
      int64_t j1 = std::min(c1, j0 + kTile);
      for (int64_t i = i0; i < i1; ++i)
        for (int64_t j = j0; j < j1; ++j)
          std::memcpy(dst + ((j - c0) * dstStride + (i - r0)) * N,
                      src + (i * srcCols + j) * N, N);
    }
  }
}

template <typename Load, typename Store>
uint64_t transposeConvertLoop(const std::byte *src, int64_t srcCols,
                              int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                              std::byte *dst, int64_t dstStride) {
  // Tiles of kTile x kTile elements; the inner loop runs along an output row
  // (contiguous stores, source reads strided by a row but within the tile's
  // few cache lines per source row).
  constexpr int64_t kTile = 64;
  uint64_t clipped = 0;
  Load ld;
  Store st;
  const size_t srcStride = static_cast<size_t>(srcCols) * Load::size;
  for (int64_t i0 = r0; i0 < r1; i0 += kTile) {
    int64_t i1 = std::min(r1, i0 + kTile);
    for (int64_t j0 = c0; j0 < c1; j0 += kTile) {
      int64_t j1 = std::min(c1, j0 + kTile);
      for (int64_t j = j0; j < j1; ++j) {
        std::byte *d = dst + ((j - c0) * dstStride + (i0 - r0)) * Store::size;
        const std::byte *s = src + (i0 * srcCols + j) * Load::size;
        for (int64_t i = i0; i < i1; ++i, d += Store::size, s += srcStride)
          st(d, ld(s), clipped);
      }
    }
  }
  return clipped;
}

void transposeTile(const std::byte *src, size_t elemSize, int64_t srcCols,
                   int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                   std::byte *dst, int64_t dstStride) {
  switch (elemSize) {
  case 1:
    return transposeTileN<1>(src, srcCols, r0, r1, c0, c1, dst, dstStride);
  case 2:
    return transposeTileN<2>(src, srcCols, r0, r1, c0, c1, dst, dstStride);
  case 4:
    return transposeTileN<4>(src, srcCols, r0, r1, c0, c1, dst, dstStride);
  case 8:
    return transposeTileN<8>(src, srcCols, r0, r1, c0, c1, dst, dstStride);
  default:
    assert(false && "unsupported element size");
  }
}

} // namespace

float bf16ToF32(uint16_t bits) {
  return bitsFloat(static_cast<uint32_t>(bits) << 16);
}

uint16_t f32ToBF16(float value) {
  uint32_t x = floatBits(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) // NaN: keep the sign, force quiet
    return static_cast<uint16_t>((x >> 16) | 0x0040u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

float f16ToF32(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in f32.
    float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return bitsFloat(floatBits(magnitude) | sign);
  }
  if (exponent == 31)
    return bitsFloat(sign | 0x7f800000u | (mantissa << 13));
  return bitsFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t f32ToF16(float value, bool &clipped) {
  uint32_t x = floatBits(value);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t ax = x & 0x7fffffffu;
  clipped = false;
  if (ax > 0x7f800000u) // NaN: quiet, keep the top mantissa bits
    return sign | 0x7e00u | static_cast<uint16_t>((ax >> 13) & 0x3ffu);
  if (ax > 0x477fe000u) { // |value| > 65504, infinities included
    clipped = true;
    return sign | 0x7bffu;
  }
  if (ax >= 0x38800000u) {
    // Normal in f16: rebias the exponent (127 -> 15) and round the 13
    // dropped mantissa bits to nearest even. Cannot overflow: ax <= 65504.
    uint32_t h = (ax - 0x38000000u + 0xfffu + ((ax >> 13) & 1u)) >> 13;
    return sign | static_cast<uint16_t>(h);
  }
  // Subnormal or zero in f16: adding 0.5 makes the FPU round the value to a
  // multiple of 2^-24 (the f16 subnormal step) with round-to-nearest-even;
  // the low mantissa bits are then the f16 encoding (0x400 = smallest normal).
  float magnitude = bitsFloat(ax) + 0.5f;
  return sign | static_cast<uint16_t>(floatBits(magnitude) - 0x3f000000u);
}

bool canConvert(DType from, DType to) {
  return from == to || (isFloat(from) && isFloat(to));
}

uint64_t convertElements(const std::byte *src, DType from, std::byte *dst,
                         DType to, size_t count) {
  assert(canConvert(from, to) && "unsupported conversion");
  if (from == to) {
    std::memcpy(dst, src, count * hf::dtypeSize(from));
    return 0;
  }
  return withLoadStore(from, to, [&](auto load, auto store) {
    return convertLoop<decltype(load), decltype(store)>(src, dst, count);
  });
}

void transposeRows(const std::byte *src, size_t elemSize, int64_t rows,
                   int64_t cols, int64_t rowBegin, int64_t rowEnd,
                   std::byte *dst) {
  transposeTile(src, elemSize, cols, 0, rows, rowBegin, rowEnd, dst, rows);
}

bool &vectorTransposeEnabled() {
  static bool enabled = detail::cpuHasTransposeKernel();
  return enabled;
}

uint64_t transposeConvertTile(const std::byte *src, DType from,
                              int64_t srcCols, int64_t rowBegin,
                              int64_t rowEnd, int64_t colBegin, int64_t colEnd,
                              std::byte *dst, int64_t dstStride, DType to) {
  uint64_t clipped = 0;
  if (vectorTransposeEnabled() && detail::cpuHasTransposeKernel() &&
      detail::transposeConvertTileAVX2(src, from, srcCols, rowBegin, rowEnd,
                                       colBegin, colEnd, dst, dstStride, to,
                                       clipped))
    return clipped;
  return detail::transposeConvertTileScalar(src, from, srcCols, rowBegin,
                                            rowEnd, colBegin, colEnd, dst,
                                            dstStride, to);
}

uint64_t detail::transposeConvertTileScalar(const std::byte *src, DType from,
                                            int64_t srcCols, int64_t rowBegin,
                                            int64_t rowEnd, int64_t colBegin,
                                            int64_t colEnd, std::byte *dst,
                                            int64_t dstStride, DType to) {
  assert(canConvert(from, to) && "unsupported conversion");
  if (from == to) {
    transposeTile(src, hf::dtypeSize(from), srcCols, rowBegin, rowEnd,
                  colBegin, colEnd, dst, dstStride);
    return 0;
  }
  return withLoadStore(from, to, [&](auto load, auto store) {
    return transposeConvertLoop<decltype(load), decltype(store)>(
        src, srcCols, rowBegin, rowEnd, colBegin, colEnd, dst, dstStride);
  });
}

uint64_t transposeConvertRows(const std::byte *src, DType from, int64_t rows,
                              int64_t cols, int64_t rowBegin, int64_t rowEnd,
                              std::byte *dst, DType to) {
  return transposeConvertTile(src, from, cols, 0, rows, rowBegin, rowEnd, dst,
                              rows, to);
}

} // namespace qeff::exporter
