//===- VectorMath.h - Vectorised float loops for the host kernels -*- C++ -*-===//
//
// The hot float loops of the host device (exp, sigmoid, softmax rows, clip),
// compiled for AVX2+FMA and chosen at run time when the CPU has them, with
// portable scalar loops otherwise. The build targets baseline x86-64, so these
// are the only AVX2 code paths.
//
// Accuracy: the vector exp is a Cephes-style degree-6 polynomial after a
// ln 2 range reduction, within 2 ulp of std::exp over the float range (inputs
// below -87.3 give 0 instead of a denormal; +inf and NaN propagate).
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_HOST_VECTORMATH_H
#define QEFF_RUNTIME_HOST_VECTORMATH_H

#include <cstdint>

namespace qeff::runtime::host::vec {

/// True when the AVX2+FMA paths are in use (CPU support and not disabled by
/// QEFF_HOST_NO_SIMD).
bool simdEnabled();

/// q[i] = exp(p[i]).
void exp(const float *p, float *q, int64_t n);
/// q[i] = 1 / (1 + exp(-p[i])) (computed from exp(-|p[i]|), no overflow).
void sigmoid(const float *p, float *q, int64_t n);
/// q[i] = p[i] * sigmoid(p[i]).
void silu(const float *p, float *q, int64_t n);
/// One softmax (or log-softmax) over a contiguous row of n values.
void softmaxRow(const float *p, float *q, int64_t n, bool log);
/// q[i] = clamp(p[i], lo, hi), NaN passed through.
void clip(const float *p, float *q, int64_t n, float lo, float hi);
/// q[i] = c[i] ? p[i] * scale : fill (q may be p; p is read at every i,
/// its values used only where c[i] != 0). Returns the largest q[i] that is
/// not NaN (-inf when none) and sets `nan` when some q[i] is NaN.
float maskedScale(const uint8_t *c, const float *p, float *q, int64_t n, float scale, float fill,
                  bool &nan);

/// One past the last i < n with c[i] != 0; 0 when there is none (a mask
/// row's last kept position, eight bytes at a time).
inline int64_t keptEnd(const uint8_t *c, int64_t n) {
  int64_t i = n;
  for (; i >= 8; i -= 8) {
    uint64_t w;
    __builtin_memcpy(&w, c + i - 8, 8);
    if (w)
      break;
  }
  while (i > 0 && !c[i - 1])
    --i;
  return i;
}

} // namespace qeff::runtime::host::vec

#endif // QEFF_RUNTIME_HOST_VECTORMATH_H
