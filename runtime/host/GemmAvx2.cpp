//===- GemmAvx2.cpp - AVX2 + FMA + F16C microkernels of the host GEMM -----===//
//
// Compiled with -mavx2 -mfma -mf16c (see CMakeLists.txt) and entered only
// when the CPU has them (Gemm.cpp checks): for CPUs without AVX-512.
//
// The contract of GemmAvx512.cpp in 8-lane ymm registers. A 32-column panel
// row is four vectors; with 16 registers, the microkernel takes the panel in
// two halves of 16 columns and the rows of A four at a time (8 accumulators,
// 2 B vectors, 1 broadcast), so each element's sum is still one FMA chain in
// k order and the results are bitwise those of the AVX-512 kernels. Blocks
// of a packed B (kKC rows: 32 KiB of f32) stay in L1/L2 across the passes.
// The one-row product and the dot products are GemmVector.h's,
// instantiated for ymm registers.
//
//===----------------------------------------------------------------------===//

#include "runtime/host/GemmVector.h"

#include <immintrin.h>

#include <algorithm>

namespace qeff::runtime::host::gemm::detail {
namespace {

/// 8 consecutive elements of type E as f32 (exact).
template <Elem E> inline __m256 load8(const void *p) {
  if constexpr (E == Elem::F16)
    return _mm256_cvtph_ps(_mm_loadu_si128(static_cast<const __m128i *>(p)));
  else if constexpr (E == Elem::BF16)
    return _mm256_castsi256_ps(
        _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(static_cast<const __m128i *>(p))),
                          16));
  else
    return _mm256_loadu_ps(static_cast<const float *>(p));
}

/// Stores the first `valid` (any count; <= 0: none) lanes of v at c, added
/// to what is there when `accumulate` (acc + c, as the AVX-512 kernel).
inline void storeLanes(float *c, __m256 v, int64_t valid, bool accumulate) {
  if (valid >= 8) {
    if (accumulate)
      v = _mm256_add_ps(v, _mm256_loadu_ps(c));
    _mm256_storeu_ps(c, v);
    return;
  }
  if (valid <= 0)
    return;
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, v);
  for (int64_t j = 0; j < valid; ++j)
    c[j] = accumulate ? lanes[j] + c[j] : lanes[j];
}

/// Up to 4 rows of A times 16 columns (half `h` of the panel).
template <int MR, Elem E>
void microHalf(int64_t kc, const float *a, int64_t lda, const void *panel, int64_t ldp, int h,
               float *c, int64_t ldc, int64_t cols, bool accumulate) {
  constexpr int64_t es = E == Elem::F32 ? 4 : 2;
  __m256 acc0[MR], acc1[MR];
  for (int r = 0; r < MR; ++r) {
    acc0[r] = _mm256_setzero_ps();
    acc1[r] = _mm256_setzero_ps();
  }
  const char *base = static_cast<const char *>(panel) + h * 16 * es;
  for (int64_t k = 0; k < kc; ++k) {
    const char *p = base + k * ldp * es;
    __m256 b0 = load8<E>(p), b1 = load8<E>(p + 8 * es);
    for (int r = 0; r < MR; ++r) {
      __m256 av = _mm256_broadcast_ss(a + r * lda + k);
      acc0[r] = _mm256_fmadd_ps(av, b0, acc0[r]);
      acc1[r] = _mm256_fmadd_ps(av, b1, acc1[r]);
    }
  }
  int64_t c0 = h * 16;
  for (int r = 0; r < MR; ++r) {
    float *cr = c + r * ldc + c0;
    storeLanes(cr, acc0[r], cols - c0, accumulate);
    storeLanes(cr + 8, acc1[r], cols - c0 - 8, accumulate);
  }
}

template <Elem E>
void microRows(int64_t mr, int64_t kc, const float *a, int64_t lda, const void *panel,
               int64_t ldp, float *c, int64_t ldc, int64_t cols, bool accumulate) {
  for (int64_t r0 = 0; r0 < mr; r0 += 4) {
    int64_t rows = std::min<int64_t>(4, mr - r0);
    const float *ar = a + r0 * lda;
    float *cr = c + r0 * ldc;
    for (int h = 0; h < 2 && h * 16 < cols; ++h) {
      switch (rows) {
      case 4: microHalf<4, E>(kc, ar, lda, panel, ldp, h, cr, ldc, cols, accumulate); break;
      case 3: microHalf<3, E>(kc, ar, lda, panel, ldp, h, cr, ldc, cols, accumulate); break;
      case 2: microHalf<2, E>(kc, ar, lda, panel, ldp, h, cr, ldc, cols, accumulate); break;
      default: microHalf<1, E>(kc, ar, lda, panel, ldp, h, cr, ldc, cols, accumulate); break;
      }
    }
  }
}

/// The ymm vector type of GemmVector.h's kernels.
struct V256 {
  using Reg = __m256;
  using Mask = __m256i;
  static constexpr int kLanes = 8;
  static Reg zero() { return _mm256_setzero_ps(); }
  static Reg broadcast(const float *p) { return _mm256_broadcast_ss(p); }
  template <Elem E> static Reg load(const void *p) { return load8<E>(p); }
  static Reg loadu(const float *p) { return _mm256_loadu_ps(p); }
  static Mask tailMask(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static Reg maskLoad(Mask m, const float *p) { return _mm256_maskload_ps(p, m); }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm256_fmadd_ps(a, b, c); }
  static Reg add(Reg a, Reg b) { return _mm256_add_ps(a, b); }
  static void storeFirst(float *c, Reg v, int64_t n) { storeLanes(c, v, n, false); }
  /// Halves, then pairs (a fixed order).
  static float reduce(Reg v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
};

} // namespace

void microAvx2(int64_t mr, int64_t kc, const float *a, int64_t lda, const void *panel,
               int64_t ldp, Elem elem, float *c, int64_t ldc, int64_t cols, bool accumulate) {
  withElem(elem, [&](auto e) {
    microRows<decltype(e)::value>(mr, kc, a, lda, panel, ldp, c, ldc, cols, accumulate);
  });
}

void gemvAvx2(int64_t np, int64_t k, int64_t kKC, const float *a, const void *panels,
              Elem elem, float *c, int64_t cols) {
  gemvT<V256>(np, k, kKC, a, panels, elem, c, cols);
}

void dotsAvx2(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b,
              int64_t ldb, float *c, int64_t ldc) {
  dotsT<V256>(m, n, k, a, lda, b, ldb, c, ldc);
}

} // namespace qeff::runtime::host::gemm::detail
