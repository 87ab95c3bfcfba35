//===- GemmAvx512.cpp - AVX-512 microkernels of the host GEMM -------------===//
//
// Compiled with -mavx512f -mfma -mf16c (see CMakeLists.txt) and entered only
// when the CPU has AVX-512F (Gemm.cpp checks): no code here runs at static
// initialisation.
//
// Two microkernels: up to 8 rows of A times one 32-column panel of B, 16
// zmm accumulators (8 rows x 2 vectors), and up to 6 rows times two panels
// (24 accumulators; the prefill products), each A element broadcast, each B
// row loaded once per k (f16 panels widened with vcvtph2ps, bf16 by a
// 16-bit shift: both exact). Panel rows are
// `ldp` elements apart: kPanel for a packed B, B's row length for a B used in
// place. Sums in k order with FMA, in f32. The one-row product and the dot
// products are GemmVector.h's, instantiated for zmm registers.
//
//===----------------------------------------------------------------------===//

#include "runtime/host/GemmVector.h"

#include <immintrin.h>

#include <algorithm>

namespace qeff::runtime::host::gemm::detail {
namespace {

/// 16 consecutive elements of type E as f32 (exact).
template <Elem E> inline __m512 load16(const void *p) {
  if constexpr (E == Elem::F16)
    return _mm512_cvtph_ps(_mm256_loadu_si256(static_cast<const __m256i *>(p)));
  else if constexpr (E == Elem::BF16)
    return _mm512_castsi512_ps(_mm512_slli_epi32(
        _mm512_cvtepu16_epi32(_mm256_loadu_si256(static_cast<const __m256i *>(p))), 16));
  else
    return _mm512_loadu_ps(static_cast<const float *>(p));
}

/// Store masks of a panel row's two vectors for `cols` valid columns (any
/// count; <= 0 gives none).
inline void columnMasks(int64_t cols, __mmask16 &m0, __mmask16 &m1) {
  m0 = cols >= 16 ? __mmask16(0xFFFF) : cols > 0 ? __mmask16((1u << cols) - 1) : __mmask16(0);
  m1 = cols >= 32   ? __mmask16(0xFFFF)
       : cols > 16 ? __mmask16((1u << (cols - 16)) - 1)
                   : __mmask16(0);
}

template <int MR, Elem E>
void micro(int64_t kc, const float *a, int64_t lda, const void *panel, int64_t ldp, float *c,
           int64_t ldc, int64_t cols, bool accumulate) {
  static_assert(PackedB::kPanel == 32, "two zmm per panel row");
  __m512 acc0[MR], acc1[MR];
  for (int r = 0; r < MR; ++r) {
    acc0[r] = _mm512_setzero_ps();
    acc1[r] = _mm512_setzero_ps();
  }
  const float *ar[MR];
  for (int r = 0; r < MR; ++r)
    ar[r] = a + r * lda;
  for (int64_t k = 0; k < kc; ++k) {
    constexpr int64_t es = E == Elem::F32 ? 4 : 2;
    const char *p = static_cast<const char *>(panel) + k * ldp * es;
    __m512 b0 = load16<E>(p), b1 = load16<E>(p + 16 * es);
    for (int r = 0; r < MR; ++r) {
      __m512 av = _mm512_set1_ps(ar[r][k]);
      acc0[r] = _mm512_fmadd_ps(av, b0, acc0[r]);
      acc1[r] = _mm512_fmadd_ps(av, b1, acc1[r]);
    }
  }
  __mmask16 m0, m1;
  columnMasks(cols, m0, m1);
  for (int r = 0; r < MR; ++r) {
    float *cr = c + r * ldc;
    __m512 v0 = acc0[r], v1 = acc1[r];
    if (accumulate) {
      v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, cr));
      v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, cr + 16));
    }
    _mm512_mask_storeu_ps(cr, m0, v0);
    _mm512_mask_storeu_ps(cr + 16, m1, v1);
  }
}

/// Up to 6 rows of A times two panels of B (64 columns): 24 zmm
/// accumulators, four panel vectors loaded and one A element broadcast per
/// row per k: 10 loads per 24 FMAs against micro's 10 per 16, measured
/// 5-8% faster at prefill shapes on Zen 5. Each element is the same FMA
/// chain in k order as micro's, so the same bits.
template <int MR, Elem E>
void microWide(int64_t kc, const float *a, int64_t lda, const void *panel0, const void *panel1,
               int64_t ldp, float *c, int64_t ldc, int64_t cols, bool accumulate) {
  static_assert(PackedB::kPanel == 32, "two zmm per panel row");
  __m512 acc[4][MR];
#pragma clang loop unroll(full)
  for (int r = 0; r < MR; ++r)
    acc[0][r] = acc[1][r] = acc[2][r] = acc[3][r] = _mm512_setzero_ps();
  const float *ar[MR];
#pragma clang loop unroll(full)
  for (int r = 0; r < MR; ++r)
    ar[r] = a + r * lda;
  constexpr int64_t es = E == Elem::F32 ? 4 : 2;
  const char *p0 = static_cast<const char *>(panel0), *p1 = static_cast<const char *>(panel1);
  for (int64_t k = 0; k < kc; ++k) {
    const char *q0 = p0 + k * ldp * es, *q1 = p1 + k * ldp * es;
    __m512 b0 = load16<E>(q0), b1 = load16<E>(q0 + 16 * es);
    __m512 b2 = load16<E>(q1), b3 = load16<E>(q1 + 16 * es);
#pragma clang loop unroll(full)
    for (int r = 0; r < MR; ++r) {
      __m512 av = _mm512_set1_ps(ar[r][k]);
      acc[0][r] = _mm512_fmadd_ps(av, b0, acc[0][r]);
      acc[1][r] = _mm512_fmadd_ps(av, b1, acc[1][r]);
      acc[2][r] = _mm512_fmadd_ps(av, b2, acc[2][r]);
      acc[3][r] = _mm512_fmadd_ps(av, b3, acc[3][r]);
    }
  }
  __mmask16 m[4];
  columnMasks(cols, m[0], m[1]);
  columnMasks(cols - 32, m[2], m[3]);
#pragma clang loop unroll(full)
  for (int r = 0; r < MR; ++r) {
    float *cr = c + r * ldc;
    for (int v = 0; v < 4; ++v) {
      __m512 x = acc[v][r];
      if (accumulate)
        x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(m[v], cr + 16 * v));
      _mm512_mask_storeu_ps(cr + 16 * v, m[v], x);
    }
  }
}

template <Elem E>
void microWideRows(int64_t mr, int64_t kc, const float *a, int64_t lda, const void *panel0,
                   const void *panel1, int64_t ldp, float *c, int64_t ldc, int64_t cols,
                   bool accumulate) {
  switch (mr) {
  case 6: return microWide<6, E>(kc, a, lda, panel0, panel1, ldp, c, ldc, cols, accumulate);
  case 5: return microWide<5, E>(kc, a, lda, panel0, panel1, ldp, c, ldc, cols, accumulate);
  case 4: return microWide<4, E>(kc, a, lda, panel0, panel1, ldp, c, ldc, cols, accumulate);
  case 3: return microWide<3, E>(kc, a, lda, panel0, panel1, ldp, c, ldc, cols, accumulate);
  case 2: return microWide<2, E>(kc, a, lda, panel0, panel1, ldp, c, ldc, cols, accumulate);
  default: return microWide<1, E>(kc, a, lda, panel0, panel1, ldp, c, ldc, cols, accumulate);
  }
}

template <Elem E>
void microRows(int64_t mr, int64_t kc, const float *a, int64_t lda, const void *panel,
               int64_t ldp, float *c, int64_t ldc, int64_t cols, bool accumulate) {
  switch (mr) {
  case 8: return micro<8, E>(kc, a, lda, panel, ldp, c, ldc, cols, accumulate);
  case 7: return micro<7, E>(kc, a, lda, panel, ldp, c, ldc, cols, accumulate);
  case 6: return micro<6, E>(kc, a, lda, panel, ldp, c, ldc, cols, accumulate);
  case 5: return micro<5, E>(kc, a, lda, panel, ldp, c, ldc, cols, accumulate);
  case 4: return micro<4, E>(kc, a, lda, panel, ldp, c, ldc, cols, accumulate);
  case 3: return micro<3, E>(kc, a, lda, panel, ldp, c, ldc, cols, accumulate);
  case 2: return micro<2, E>(kc, a, lda, panel, ldp, c, ldc, cols, accumulate);
  default: return micro<1, E>(kc, a, lda, panel, ldp, c, ldc, cols, accumulate);
  }
}

/// The zmm vector type of GemmVector.h's kernels.
struct V512 {
  using Reg = __m512;
  using Mask = __mmask16;
  static constexpr int kLanes = 16;
  static Reg zero() { return _mm512_setzero_ps(); }
  static Reg broadcast(const float *p) { return _mm512_set1_ps(*p); }
  template <Elem E> static Reg load(const void *p) { return load16<E>(p); }
  static Reg loadu(const float *p) { return _mm512_loadu_ps(p); }
  static Mask tailMask(int64_t n) { return Mask((1u << n) - 1); }
  static Reg maskLoad(Mask m, const float *p) { return _mm512_maskz_loadu_ps(m, p); }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm512_fmadd_ps(a, b, c); }
  static Reg add(Reg a, Reg b) { return _mm512_add_ps(a, b); }
  static void storeFirst(float *c, Reg v, int64_t n) {
    __mmask16 m0, m1;
    columnMasks(n, m0, m1);
    _mm512_mask_storeu_ps(c, m0, v);
  }
  static float reduce(Reg v) { return _mm512_reduce_add_ps(v); }
};

} // namespace

void gemvAvx512(int64_t np, int64_t k, int64_t kKC, const float *a, const void *panels,
                Elem elem, float *c, int64_t cols) {
  gemvT<V512>(np, k, kKC, a, panels, elem, c, cols);
}

void dotsAvx512(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b,
                int64_t ldb, float *c, int64_t ldc) {
  dotsT<V512>(m, n, k, a, lda, b, ldb, c, ldc);
}

void microAvx512(int64_t mr, int64_t kc, const float *a, int64_t lda, const void *panel,
                 int64_t ldp, Elem elem, float *c, int64_t ldc, int64_t cols, bool accumulate) {
  withElem(elem, [&](auto e) {
    microRows<decltype(e)::value>(mr, kc, a, lda, panel, ldp, c, ldc, cols, accumulate);
  });
}

void microWideAvx512(int64_t mr, int64_t kc, const float *a, int64_t lda, const void *panel0,
                     const void *panel1, int64_t ldp, Elem elem, float *c, int64_t ldc,
                     int64_t cols, bool accumulate) {
  withElem(elem, [&](auto e) {
    microWideRows<decltype(e)::value>(mr, kc, a, lda, panel0, panel1, ldp, c, ldc, cols,
                                      accumulate);
  });
}

} // namespace qeff::runtime::host::gemm::detail
