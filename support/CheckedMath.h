//===- CheckedMath.h - Overflow-checked size arithmetic ---------*- C++ -*-===//
//
// Part of qeff. Every size computed from untrusted numbers (tensor dims,
// specialization values, file offsets) goes through these: they report
// overflow instead of wrapping.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_SUPPORT_CHECKEDMATH_H
#define QEFF_SUPPORT_CHECKEDMATH_H

#include <cstdint>

namespace qeff::support {

/// a * b into `out`; false on overflow (out is then unspecified).
template <typename T> inline bool checkedMul(T a, T b, T &out) {
  return !__builtin_mul_overflow(a, b, &out);
}
/// a + b into `out`; false on overflow.
template <typename T> inline bool checkedAdd(T a, T b, T &out) {
  return !__builtin_add_overflow(a, b, &out);
}

/// The product of `n` non-negative dims into `out`; false when a dim is
/// negative or the product exceeds `limit`.
template <typename It>
inline bool checkedProduct(It begin, It end, int64_t limit, int64_t &out) {
  int64_t n = 1;
  for (It it = begin; it != end; ++it) {
    int64_t d = static_cast<int64_t>(*it);
    if (d < 0 || !checkedMul(n, d, n) || n > limit)
      return false;
  }
  out = n;
  return true;
}

} // namespace qeff::support

#endif // QEFF_SUPPORT_CHECKEDMATH_H
