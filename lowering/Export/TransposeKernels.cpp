//===- TransposeKernels.cpp - AVX2 transposition with conversion ----------===//
//
// Part of qeff. See TransposeKernels.h. Blocks of 8 source rows x 8 source
// columns are loaded as eight 8-float rows (bf16 widened by a shift, f16 by
// F16C, f32 as is), transposed in registers, and stored as eight 8-element
// output rows (f32, or f16 by F16C after clipping to +-65504 exactly as
// f32ToF16 does: |x| > 65504 and infinities clip and count, NaN stays NaN).
// The tile is walked in 64 x 64 blocks for locality, as the scalar loop is;
// what does not fill a block of 8 goes to the scalar loop.
//
//===----------------------------------------------------------------------===//

#include "lowering/Export/TransposeKernels.h"

#include <algorithm>
#include <immintrin.h>

namespace qeff::exporter::detail {

#define QEFF_AVX2 __attribute__((target("avx2,f16c")))

namespace {

template <DType From> QEFF_AVX2 inline __m256 load8(const std::byte *p) {
  if constexpr (From == DType::F32) {
    return _mm256_loadu_ps(reinterpret_cast<const float *>(p));
  } else {
    __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
    if constexpr (From == DType::F16)
      return _mm256_cvtph_ps(h);
    else // BF16: the upper half of an f32
      return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
}

template <DType To>
QEFF_AVX2 inline void store8(std::byte *p, __m256 v, uint64_t &clipped) {
  if constexpr (To == DType::F32) {
    _mm256_storeu_ps(reinterpret_cast<float *>(p), v);
  } else {
    const __m256 limit = _mm256_set1_ps(65504.0f);
    const __m256 signMask = _mm256_set1_ps(-0.0f);
    __m256 magnitude = _mm256_andnot_ps(signMask, v);
    __m256 over = _mm256_cmp_ps(magnitude, limit, _CMP_GT_OQ); // NaN: false
    clipped += static_cast<uint64_t>(__builtin_popcount(_mm256_movemask_ps(over)));
    __m256 clippedValue = _mm256_or_ps(_mm256_and_ps(v, signMask), limit);
    v = _mm256_blendv_ps(v, clippedValue, over);
    __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i *>(p), h);
  }
}

QEFF_AVX2 inline void transpose8x8(__m256 r[8]) {
  __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  __m256 s0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
  __m256 s1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
  __m256 s2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
  __m256 s3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
  __m256 s4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
  __m256 s5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
  __m256 s6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
  __m256 s7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
  r[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
  r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
  r[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
  r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
  r[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
  r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
  r[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
  r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

constexpr size_t sizeOf(DType t) { return t == DType::F32 ? 4 : 2; }

template <DType From, DType To>
QEFF_AVX2 uint64_t tile(const std::byte *src, int64_t srcCols, int64_t r0, int64_t r1,
                        int64_t c0, int64_t c1, std::byte *dst, int64_t dstStride) {
  constexpr size_t in = sizeOf(From), out = sizeOf(To);
  constexpr int64_t kBlock = 64;
  uint64_t clipped = 0;
  // The part that fills whole 8 x 8 blocks; the rest is scalar.
  int64_t rv = r0 + (r1 - r0) / 8 * 8, cv = c0 + (c1 - c0) / 8 * 8;
  for (int64_t i0 = r0; i0 < rv; i0 += kBlock) {
    int64_t i1 = std::min(rv, i0 + kBlock);
    for (int64_t j0 = c0; j0 < cv; j0 += kBlock) {
      int64_t j1 = std::min(cv, j0 + kBlock);
      for (int64_t j = j0; j < j1; j += 8) {
        for (int64_t i = i0; i < i1; i += 8) {
          __m256 r[8];
          for (int k = 0; k < 8; ++k)
            r[k] = load8<From>(src + ((i + k) * srcCols + j) * in);
          transpose8x8(r);
          for (int k = 0; k < 8; ++k)
            store8<To>(dst + ((j + k - c0) * dstStride + (i - r0)) * out, r[k], clipped);
        }
      }
    }
  }
  // Ragged edges: columns [cv, c1) of every row, rows [rv, r1) of the rest.
  if (cv < c1)
    clipped += transposeConvertTileScalar(src, From, srcCols, r0, r1, cv, c1,
                                          dst + (cv - c0) * dstStride * out, dstStride, To);
  if (rv < r1 && c0 < cv)
    clipped += transposeConvertTileScalar(src, From, srcCols, rv, r1, c0, cv,
                                          dst + (rv - r0) * out, dstStride, To);
  return clipped;
}

template <DType From>
QEFF_AVX2 bool tileFrom(const std::byte *src, int64_t srcCols, int64_t r0, int64_t r1,
                        int64_t c0, int64_t c1, std::byte *dst, int64_t dstStride, DType to,
                        uint64_t &clipped) {
  if (to == DType::F32)
    clipped += tile<From, DType::F32>(src, srcCols, r0, r1, c0, c1, dst, dstStride);
  else if (to == DType::F16)
    clipped += tile<From, DType::F16>(src, srcCols, r0, r1, c0, c1, dst, dstStride);
  else
    return false;
  return true;
}

} // namespace

bool cpuHasTransposeKernel() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
  return has;
}

bool transposeConvertTileAVX2(const std::byte *src, DType from, int64_t srcCols,
                              int64_t rowBegin, int64_t rowEnd, int64_t colBegin,
                              int64_t colEnd, std::byte *dst, int64_t dstStride, DType to,
                              uint64_t &clipped) {
  // f16 -> f16 is a plain copy (the float round trip would quiet
  // signalling NaNs and clip infinities).
  if (from == DType::F16 && to == DType::F16)
    return false;
  switch (from) {
  case DType::BF16:
    return tileFrom<DType::BF16>(src, srcCols, rowBegin, rowEnd, colBegin, colEnd, dst,
                                 dstStride, to, clipped);
  case DType::F16:
    return tileFrom<DType::F16>(src, srcCols, rowBegin, rowEnd, colBegin, colEnd, dst,
                                dstStride, to, clipped);
  case DType::F32:
    return tileFrom<DType::F32>(src, srcCols, rowBegin, rowEnd, colBegin, colEnd, dst,
                                dstStride, to, clipped);
  default:
    return false;
  }
}

} // namespace qeff::exporter::detail
