//===- GemmVector.h - Kernels written once for every vector width -*- C++ -*-===//
//
// Internal to runtime/host: the one-row product of decode and the dot
// products of the attention scores, as templates over a vector type V that
// GemmAvx512.cpp (zmm) and GemmAvx2.cpp (ymm) define and instantiate under
// their own target flags. V provides:
//
//   Reg, kLanes                      the register and its f32 lanes
//   zero(), broadcast(const float*)  splat registers
//   load<E>(const void*)             kLanes elements of type E as f32 (exact)
//   loadu(const float*)              kLanes floats
//   Mask, tailMask(n), maskLoad(m, p)  the first n (< kLanes) lanes, zeros past
//   fma(a, b, c), add(a, b)          a * b + c (fused), a + b
//   storeFirst(float*, Reg, n)       stores the first n lanes (n <= 0: none)
//   reduce(Reg)                      the sum of the lanes, in a fixed order
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_HOST_GEMMVECTOR_H
#define QEFF_RUNTIME_HOST_GEMMVECTOR_H

#include "runtime/host/Gemm.h"

#include <immintrin.h>

#include <algorithm>

namespace qeff::runtime::host::gemm::detail {

/// Rows of a packed 2-byte panel prefetched ahead by decode's one-row
/// products (4 KiB). For f16 the hardware prefetchers alone left the stream
/// short of memory speed: prefetching took decode of the 1.1B shape from
/// ~9.6 to ~10.9 tok/s on one thread and ~16.3 to ~18.5 on two (interleaved
/// runs, docs/performance.md). For f32 it was slower (6.5 -> 5.8), so not
/// there.
constexpr int kPrefetch2ByteRows = 64;

/// One row of A times NP consecutive packed panels (decode's weight
/// products), the panels' rows read in step: NP * kPanel / kLanes
/// independent FMA chains and NP streams in flight. Two panels took decode
/// of the 1.1B shape at 2 threads from ~13.4 to ~14.1 tok/s (f32) and ~21.6
/// to ~23.2 (f16) with AVX-512, interleaved runs; three or four were no
/// better. Sums restart every kKC rows of B and are added to the running
/// total in the order gemm's kKC blocks (microkernel with `accumulate`) add
/// them, so results are bitwise those of the blocked path.
template <class V, int NP, Elem E>
void gemvPanelsT(int64_t k, int64_t kKC, const float *a, const void *panels, int64_t panelElems,
                 float *c, int64_t cols) {
  constexpr int64_t es = E == Elem::F32 ? 4 : 2;
  constexpr int64_t rowBytes = PackedB::kPanel * es;
  constexpr int kV = PackedB::kPanel / V::kLanes; // vectors per panel row
  const char *base = static_cast<const char *>(panels);
  typename V::Reg tot[kV * NP];
  for (int64_t k0 = 0; k0 < k; k0 += kKC) {
    int64_t kc = std::min(kKC, k - k0);
    typename V::Reg acc[kV * NP];
    for (int j = 0; j < kV * NP; ++j)
      acc[j] = V::zero();
    const char *p[NP];
    for (int q = 0; q < NP; ++q)
      p[q] = base + (q * panelElems + k0 * PackedB::kPanel) * es;
    for (int64_t kk = 0; kk < kc; ++kk) {
      typename V::Reg av = V::broadcast(a + k0 + kk);
      for (int q = 0; q < NP; ++q) {
        const char *row = p[q] + kk * rowBytes;
        if constexpr (E != Elem::F32)
          _mm_prefetch(row + kPrefetch2ByteRows * rowBytes, _MM_HINT_T0);
        for (int v = 0; v < kV; ++v)
          acc[kV * q + v] =
              V::fma(av, V::template load<E>(row + v * V::kLanes * es), acc[kV * q + v]);
      }
    }
    for (int j = 0; j < kV * NP; ++j)
      tot[j] = k0 == 0 ? acc[j] : V::add(acc[j], tot[j]);
  }
  for (int q = 0; q < NP; ++q)
    for (int v = 0; v < kV; ++v) {
      int64_t c0 = q * PackedB::kPanel + v * V::kLanes;
      V::storeFirst(c + c0, tot[kV * q + v], cols - c0);
    }
}

/// gemv* of Gemm.h for the vector type V.
template <class V>
void gemvT(int64_t np, int64_t k, int64_t kKC, const float *a, const void *panels, Elem elem,
           float *c, int64_t cols) {
  int64_t pe = k * PackedB::kPanel;
  withElem(elem, [&](auto e) {
    constexpr Elem E = decltype(e)::value;
    if (np == 2)
      gemvPanelsT<V, 2, E>(k, kKC, a, panels, pe, c, cols);
    else
      gemvPanelsT<V, 1, E>(k, kKC, a, panels, pe, c, cols);
  });
}

/// dots* of Gemm.h for the vector type V: C[m, n] = A[m, k] x B^T, B stored
/// [n, k]; each row of B loaded once for four rows of A; sums of kLanes
/// lanes in k order, then V::reduce.
template <class V>
void dotsT(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b,
           int64_t ldb, float *c, int64_t ldc) {
  int64_t kv = k / V::kLanes * V::kLanes;
  bool hasTail = kv < k;
  typename V::Mask tail = V::tailMask(k - kv);
  for (int64_t j = 0; j < n; ++j) {
    const float *bj = b + j * ldb;
    int64_t r = 0;
    // Four rows share each load of B's row.
    for (; r + 4 <= m; r += 4) {
      const float *ar[4] = {a + r * lda, a + (r + 1) * lda, a + (r + 2) * lda, a + (r + 3) * lda};
      typename V::Reg s[4] = {V::zero(), V::zero(), V::zero(), V::zero()};
      for (int64_t p = 0; p < kv; p += V::kLanes) {
        typename V::Reg bv = V::loadu(bj + p);
        for (int i = 0; i < 4; ++i)
          s[i] = V::fma(V::loadu(ar[i] + p), bv, s[i]);
      }
      if (hasTail) {
        typename V::Reg bv = V::maskLoad(tail, bj + kv);
        for (int i = 0; i < 4; ++i)
          s[i] = V::fma(V::maskLoad(tail, ar[i] + kv), bv, s[i]);
      }
      for (int i = 0; i < 4; ++i)
        c[(r + i) * ldc + j] = V::reduce(s[i]);
    }
    for (; r < m; ++r) {
      const float *ai = a + r * lda;
      typename V::Reg s = V::zero();
      for (int64_t p = 0; p < kv; p += V::kLanes)
        s = V::fma(V::loadu(ai + p), V::loadu(bj + p), s);
      if (hasTail)
        s = V::fma(V::maskLoad(tail, ai + kv), V::maskLoad(tail, bj + kv), s);
      c[r * ldc + j] = V::reduce(s);
    }
  }
}

} // namespace qeff::runtime::host::gemm::detail

#endif // QEFF_RUNTIME_HOST_GEMMVECTOR_H
