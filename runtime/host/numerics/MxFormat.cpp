//===- MxFormat.cpp - OCP Microscaling (MX) v1.0 arithmetic ---------------===//
//
// Part of qeff. See MxFormat.h; docs/numerics.md for the choices.
//
//===----------------------------------------------------------------------===//

#include "runtime/host/numerics/MxFormat.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

namespace qeff::runtime::mx {

namespace {

const ElementInfo kInfos[] = {
    // name        bits e  m  bias emax emin maxNormal      inf    nan
    {"fp8_e4m3", 8, 4, 3, 7, 8, -6, 448.0, false, true},
    {"fp8_e5m2", 8, 5, 2, 15, 15, -14, 57344.0, true, true},
    {"fp6_e3m2", 6, 3, 2, 3, 4, -2, 28.0, false, false},
    {"fp6_e2m3", 6, 2, 3, 1, 2, 0, 7.5, false, false},
    {"fp4_e2m1", 4, 2, 1, 1, 2, 0, 6.0, false, false},
    {"int8", 8, 0, 6, 0, 0, 0, 127.0 / 64.0, false, false},
};

/// 2^k as a float, for k in the normal range (-126..127).
inline float pow2f(int k) {
  uint32_t bits = uint32_t(k + 127) << 23;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// floor(log2(|x|)) of a finite nonzero float, exactly (subnormals too).
inline int floorLog2(float x) {
  int e;
  std::frexp(x, &e);
  return e - 1;
}

/// The code of the magnitude `q`, which is representable in `e`'s format.
uint32_t magnitudeCode(const ElementInfo &f, double q) {
  if (f.ebits == 0)
    return uint32_t(std::lround(q * 64.0));
  if (q == 0)
    return 0;
  int p = std::max(floorLog2(float(q)), f.emin);
  auto m = uint32_t(std::lround(std::ldexp(q, f.mbits - p))); // exact
  if (p == f.emin && m < (1u << f.mbits))
    return m; // subnormal: exponent field 0
  return (uint32_t(p + f.bias) << f.mbits) | (m - (1u << f.mbits));
}

/// |v| rounded to an integer under `rounding` (v >= 0, v < 2^22).
inline float roundMagnitude(float x, MxRounding rounding) {
  // Adding and subtracting 2^23 rounds to an integer in the current
  // (nearest-even) rounding mode, exactly for 0 <= x < 2^22.
  float t = (x + 8388608.0f) - 8388608.0f;
  if (rounding == MxRounding::Nearest && x - t == 0.5f)
    t += 1.0f; // a tie went down to even: ties away from zero
  return t;
}

struct BlockScan {
  float maxFinite = 0;
  bool nan = false, inf = false;
};

inline BlockScan scan(const float *v, int64_t n, int64_t stride) {
  BlockScan s;
  for (int64_t i = 0; i < n; ++i) {
    float a = std::fabs(v[i * stride]);
    if (std::isnan(a))
      s.nan = true;
    else if (std::isinf(a))
      s.inf = true;
    else
      s.maxFinite = std::max(s.maxFinite, a);
  }
  return s;
}

/// The E8M0 code for a scanned block.
inline uint8_t scaleCode(const ElementInfo &f, const BlockScan &s) {
  // A non-finite value the element type cannot carry makes the block NaN.
  if ((s.nan && !f.hasNaN) || (s.inf && !f.hasInf && !f.hasNaN))
    return 0xFF;
  if (s.maxFinite == 0)
    return 0; // all zero: the smallest scale
  int shared = std::clamp(floorLog2(s.maxFinite) - f.emax, -127, 127);
  return uint8_t(shared + 127);
}

/// The fake-quantized value of `v` in a block of scale 2^shared (finite
/// scale). `invX` = 2^-shared, `x` = 2^shared.
inline float quantizeValue(const ElementInfo &f, float v, float invX, float x,
                           MxRounding rounding) {
  float a = std::fabs(v);
  if (!(a <= std::numeric_limits<float>::max())) {
    if (std::isnan(a) || !f.hasInf)
      return std::numeric_limits<float>::quiet_NaN(); // E4M3: no Inf code
    return v;
  }
  float y = a * invX; // exact unless y underflows, and then it rounds to 0
  uint32_t bits;
  std::memcpy(&bits, &y, 4);
  int p = std::max(int((bits >> 23) & 0xFF) - 127, f.emin);
  float q = roundMagnitude(y * pow2f(f.mbits - p), rounding) * pow2f(p - f.mbits);
  q = std::min(q, float(f.maxNormal)) * x; // exact: every result is a float
  if (f.ebits == 0 && q == 0)
    return 0.0f; // INT8 has no -0
  return std::copysign(q, v);
}

/// Quantizes `n` values `stride` apart as one block.
inline void quantizeBlock(const ElementInfo &f, float *v, int64_t n, int64_t stride,
                          MxRounding rounding) {
  uint8_t code = scaleCode(f, scan(v, n, stride));
  if (code == 0xFF) {
    for (int64_t i = 0; i < n; ++i)
      v[i * stride] = std::numeric_limits<float>::quiet_NaN();
    return;
  }
  float x = std::ldexp(1.0f, int(code) - 127);
  float invX = std::ldexp(1.0f, 127 - int(code));
  for (int64_t i = 0; i < n; ++i)
    v[i * stride] = quantizeValue(f, v[i * stride], invX, x, rounding);
}

} // namespace

const ElementInfo &info(Element e) { return kInfos[static_cast<int>(e)]; }

const char *roundingName(MxRounding rounding) {
  return rounding == MxRounding::Nearest ? "nearest" : "even";
}

double decodeElement(Element e, uint32_t code) {
  const ElementInfo &f = info(e);
  code &= (1u << f.bits) - 1;
  if (f.ebits == 0)
    return double(int8_t(uint8_t(code))) / 64.0;
  bool negative = code >> (f.bits - 1);
  uint32_t exp = (code >> f.mbits) & ((1u << f.ebits) - 1);
  uint32_t man = code & ((1u << f.mbits) - 1);
  uint32_t expAll = (1u << f.ebits) - 1;
  double value;
  if (e == Element::FP8_E4M3 && exp == expAll && man == 7)
    value = std::numeric_limits<double>::quiet_NaN();
  else if (e == Element::FP8_E5M2 && exp == expAll)
    value = man == 0 ? std::numeric_limits<double>::infinity()
                     : std::numeric_limits<double>::quiet_NaN();
  else if (exp == 0)
    value = std::ldexp(double(man), f.emin - f.mbits);
  else
    value = std::ldexp(double((1u << f.mbits) | man), int(exp) - f.bias - f.mbits);
  return negative ? -value : value;
}

double decodeScale(uint8_t code) {
  return code == 0xFF ? std::numeric_limits<double>::quiet_NaN()
                      : std::ldexp(1.0, int(code) - 127);
}

uint32_t encodeElement(Element e, double value, MxRounding rounding) {
  const ElementInfo &f = info(e);
  bool negative = std::signbit(value);
  uint32_t sign = negative && f.ebits > 0 ? 1u << (f.bits - 1) : 0;
  uint32_t expAll = (1u << f.ebits) - 1;
  if (std::isnan(value)) // formats without NaN: the block scale carries it
    return f.hasNaN ? sign | (1u << (f.bits - 1)) - 1 : 0;
  if (std::isinf(value) && f.hasInf)
    return sign | (expAll << f.mbits);
  if (std::isinf(value) && f.hasNaN)
    return sign | (1u << (f.bits - 1)) - 1;
  double a = std::min(std::fabs(value), f.maxNormal);
  double q;
  if (a == 0) {
    q = 0;
  } else {
    int p = f.emin; // INT8: the fixed step 2^-6
    if (f.ebits > 0) {
      int e2;
      std::frexp(a, &e2); // exact: the private exponent of the value
      p = std::max(e2 - 1, f.emin);
    }
    double x = std::ldexp(a, f.mbits - p);
    double r = rounding == MxRounding::Even ? std::nearbyint(x) : std::round(x);
    q = std::min(std::ldexp(r, p - f.mbits), f.maxNormal);
  }
  uint32_t mag = magnitudeCode(f, q);
  if (f.ebits == 0)
    return negative && mag ? (256u - mag) & 0xFF : mag;
  return sign | mag;
}

uint8_t blockScale(Element e, const float *values, int64_t count) {
  return scaleCode(info(e), scan(values, count, 1));
}

void encodeBlock(Element e, MxRounding rounding, const float *values, int64_t count,
                 uint8_t &scale, uint32_t *codes) {
  scale = blockScale(e, values, count);
  for (int64_t i = 0; i < count; ++i)
    codes[i] = scale == 0xFF ? 0
                             : encodeElement(e, std::ldexp(double(values[i]), 127 - int(scale)),
                                             rounding);
}

void fakeQuantizeRow(float *data, int64_t count, int blockSize, Element e,
                     MxRounding rounding) {
  const ElementInfo &f = info(e);
  for (int64_t b = 0; b < count; b += blockSize)
    quantizeBlock(f, data + b, std::min<int64_t>(blockSize, count - b), 1, rounding);
}

void fakeQuantize(float *data, int64_t outer, int64_t axisLen, int64_t inner, int blockSize,
                  Element e, MxRounding rounding, int threads) {
  const ElementInfo &f = info(e);
  int64_t blocks = (axisLen + blockSize - 1) / blockSize;
  int64_t units = outer * blocks;
  auto work = [&](int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end; ++u) {
      int64_t o = u / blocks, k0 = (u % blocks) * blockSize;
      int64_t n = std::min<int64_t>(blockSize, axisLen - k0);
      float *base = data + (o * axisLen + k0) * inner;
      if (inner == 1) {
        quantizeBlock(f, base, n, 1, rounding);
        continue;
      }
      for (int64_t i = 0; i < inner; ++i)
        quantizeBlock(f, base + i, n, inner, rounding);
    }
  };
  int t = int(std::clamp<int64_t>(threads, 1, std::max<int64_t>(1, units)));
  if (t == 1) {
    work(0, units);
    return;
  }
  std::vector<std::thread> pool;
  for (int i = 0; i < t; ++i)
    pool.emplace_back(work, units * i / t, units * (i + 1) / t);
  for (auto &th : pool)
    th.join();
}

} // namespace qeff::runtime::mx
