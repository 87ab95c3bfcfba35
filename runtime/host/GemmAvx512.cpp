//===- GemmAvx512.cpp - AVX-512 microkernels of the host GEMM -------------===//
//
// Compiled with -mavx512f -mfma -mf16c (see CMakeLists.txt) and entered only
// when the CPU has AVX-512F (Gemm.cpp checks): no code here runs at static
// initialisation.
//
// One microkernel: up to 8 rows of A times one 32-column panel of B, 16
// zmm accumulators (8 rows x 2 vectors), each A element broadcast, each B
// row loaded once per k (f16 panels widened with vcvtph2ps). Panel rows are
// `ldp` elements apart: kPanel for a packed B, B's row length for a B used in
// place. Sums in k order with FMA, in f32.
//
//===----------------------------------------------------------------------===//

#include "runtime/host/Gemm.h"

#include <immintrin.h>

#include <algorithm>

namespace qeff::runtime::host::gemm::detail {
namespace {

/// Rows of a packed f16 panel prefetched ahead by decode's one-row products
/// (gemvPanels; 4 KiB). For f16 the hardware prefetchers alone left the
/// stream short of memory speed: prefetching took decode of the 1.1B shape
/// from ~9.6 to ~10.9 tok/s on one thread and ~16.3 to ~18.5 on two
/// (interleaved runs, docs/performance.md). For f32 it was slower (6.5 ->
/// 5.8), so not there.
constexpr int kPrefetchF16Rows = 64;

/// Store masks of a panel row's two vectors for `cols` valid columns (any
/// count; <= 0 gives none).
inline void columnMasks(int64_t cols, __mmask16 &m0, __mmask16 &m1) {
  m0 = cols >= 16 ? __mmask16(0xFFFF) : cols > 0 ? __mmask16((1u << cols) - 1) : __mmask16(0);
  m1 = cols >= 32   ? __mmask16(0xFFFF)
       : cols > 16 ? __mmask16((1u << (cols - 16)) - 1)
                   : __mmask16(0);
}

template <int MR, bool F16>
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
    __m512 b0, b1;
    if constexpr (F16) {
      const uint16_t *p = static_cast<const uint16_t *>(panel) + k * ldp;
      b0 = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)));
      b1 = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(p + 16)));
    } else {
      const float *p = static_cast<const float *>(panel) + k * ldp;
      b0 = _mm512_loadu_ps(p);
      b1 = _mm512_loadu_ps(p + 16);
    }
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

template <bool F16>
void microRows(int64_t mr, int64_t kc, const float *a, int64_t lda, const void *panel,
               int64_t ldp, float *c, int64_t ldc, int64_t cols, bool accumulate) {
  switch (mr) {
  case 8: return micro<8, F16>(kc, a, lda, panel, ldp, c, ldc, cols, accumulate);
  case 7: return micro<7, F16>(kc, a, lda, panel, ldp, c, ldc, cols, accumulate);
  case 6: return micro<6, F16>(kc, a, lda, panel, ldp, c, ldc, cols, accumulate);
  case 5: return micro<5, F16>(kc, a, lda, panel, ldp, c, ldc, cols, accumulate);
  case 4: return micro<4, F16>(kc, a, lda, panel, ldp, c, ldc, cols, accumulate);
  case 3: return micro<3, F16>(kc, a, lda, panel, ldp, c, ldc, cols, accumulate);
  case 2: return micro<2, F16>(kc, a, lda, panel, ldp, c, ldc, cols, accumulate);
  default: return micro<1, F16>(kc, a, lda, panel, ldp, c, ldc, cols, accumulate);
  }
}

/// One row of A times NP consecutive packed panels (decode's weight
/// products), the panels' rows read in step: 2 * NP independent FMA chains
/// and NP streams in flight instead of one panel's two chains. Two panels
/// took decode of the 1.1B shape at 2 threads from ~13.4 to ~14.1 tok/s
/// (f32) and ~21.6 to ~23.2 (f16), interleaved runs; three or four were
/// no better. Sums restart every kKC rows of B and are added to the
/// running total in the order gemm's kKC blocks (microkernel with
/// `accumulate`) add them, so results are bitwise those of the one-panel
/// path.
template <int NP, bool F16>
void gemvPanels(int64_t k, int64_t kKC, const float *a, const void *panels, int64_t panelElems,
                float *c, int64_t cols) {
  constexpr int64_t es = F16 ? 2 : 4;
  constexpr int64_t rowBytes = PackedB::kPanel * es;
  const char *base = static_cast<const char *>(panels);
  __m512 tot[2 * NP];
  for (int64_t k0 = 0; k0 < k; k0 += kKC) {
    int64_t kc = std::min(kKC, k - k0);
    __m512 acc[2 * NP];
    for (int j = 0; j < 2 * NP; ++j)
      acc[j] = _mm512_setzero_ps();
    const char *p[NP];
    for (int q = 0; q < NP; ++q)
      p[q] = base + (q * panelElems + k0 * PackedB::kPanel) * es;
    for (int64_t kk = 0; kk < kc; ++kk) {
      __m512 av = _mm512_set1_ps(a[k0 + kk]);
      for (int q = 0; q < NP; ++q) {
        const char *row = p[q] + kk * rowBytes;
        if constexpr (F16) {
          _mm_prefetch(row + kPrefetchF16Rows * rowBytes, _MM_HINT_T0);
          __m512 b0 = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(row)));
          __m512 b1 =
              _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(row + 32)));
          acc[2 * q] = _mm512_fmadd_ps(av, b0, acc[2 * q]);
          acc[2 * q + 1] = _mm512_fmadd_ps(av, b1, acc[2 * q + 1]);
        } else {
          acc[2 * q] = _mm512_fmadd_ps(av, _mm512_loadu_ps(reinterpret_cast<const float *>(row)),
                                       acc[2 * q]);
          acc[2 * q + 1] = _mm512_fmadd_ps(
              av, _mm512_loadu_ps(reinterpret_cast<const float *>(row + 64)), acc[2 * q + 1]);
        }
      }
    }
    for (int j = 0; j < 2 * NP; ++j)
      tot[j] = k0 == 0 ? acc[j] : _mm512_add_ps(acc[j], tot[j]);
  }
  for (int q = 0; q < NP; ++q) {
    __mmask16 m0, m1;
    columnMasks(cols - q * PackedB::kPanel, m0, m1);
    _mm512_mask_storeu_ps(c + q * PackedB::kPanel, m0, tot[2 * q]);
    _mm512_mask_storeu_ps(c + q * PackedB::kPanel + 16, m1, tot[2 * q + 1]);
  }
}

} // namespace

void gemvAvx512(int64_t np, int64_t k, int64_t kKC, const float *a, const void *panels,
                Elem elem, float *c, int64_t cols) {
  int64_t pe = k * PackedB::kPanel;
  bool f16 = elem == Elem::F16;
  if (np == 2)
    return f16 ? gemvPanels<2, true>(k, kKC, a, panels, pe, c, cols)
               : gemvPanels<2, false>(k, kKC, a, panels, pe, c, cols);
  return f16 ? gemvPanels<1, true>(k, kKC, a, panels, pe, c, cols)
             : gemvPanels<1, false>(k, kKC, a, panels, pe, c, cols);
}

void dotsAvx512(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b,
                int64_t ldb, float *c, int64_t ldc) {
  int64_t kv = k / 16 * 16;
  __mmask16 tail = __mmask16((1u << (k - kv)) - 1);
  for (int64_t j = 0; j < n; ++j) {
    const float *bj = b + j * ldb;
    int64_t r = 0;
    // Four rows share each load of B's row.
    for (; r + 4 <= m; r += 4) {
      const float *a0 = a + r * lda, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda;
      __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
      for (int64_t p = 0; p < kv; p += 16) {
        __m512 bv = _mm512_loadu_ps(bj + p);
        s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a0 + p), bv, s0);
        s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a1 + p), bv, s1);
        s2 = _mm512_fmadd_ps(_mm512_loadu_ps(a2 + p), bv, s2);
        s3 = _mm512_fmadd_ps(_mm512_loadu_ps(a3 + p), bv, s3);
      }
      if (tail) {
        __m512 bv = _mm512_maskz_loadu_ps(tail, bj + kv);
        s0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, a0 + kv), bv, s0);
        s1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, a1 + kv), bv, s1);
        s2 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, a2 + kv), bv, s2);
        s3 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, a3 + kv), bv, s3);
      }
      c[r * ldc + j] = _mm512_reduce_add_ps(s0);
      c[(r + 1) * ldc + j] = _mm512_reduce_add_ps(s1);
      c[(r + 2) * ldc + j] = _mm512_reduce_add_ps(s2);
      c[(r + 3) * ldc + j] = _mm512_reduce_add_ps(s3);
    }
    for (; r < m; ++r) {
      const float *ar = a + r * lda;
      __m512 s = _mm512_setzero_ps();
      for (int64_t p = 0; p < kv; p += 16)
        s = _mm512_fmadd_ps(_mm512_loadu_ps(ar + p), _mm512_loadu_ps(bj + p), s);
      if (tail)
        s = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, ar + kv),
                            _mm512_maskz_loadu_ps(tail, bj + kv), s);
      c[r * ldc + j] = _mm512_reduce_add_ps(s);
    }
  }
}

void microAvx512(int64_t mr, int64_t kc, const float *a, int64_t lda, const void *panel,
                 int64_t ldp, Elem elem, float *c, int64_t ldc, int64_t cols, bool accumulate) {
  if (elem == Elem::F16)
    microRows<true>(mr, kc, a, lda, panel, ldp, c, ldc, cols, accumulate);
  else
    microRows<false>(mr, kc, a, lda, panel, ldp, c, ldc, cols, accumulate);
}

} // namespace qeff::runtime::host::gemm::detail
