//===- VectorMath.cpp - Vectorised float loops for the host kernels -------===//

#include "runtime/host/VectorMath.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#define QEFF_HOST_AVX2 1
#include <immintrin.h>
#endif

namespace qeff::runtime::host::vec {
namespace {

// Scalar loops: the reference definitions (and the code on CPUs without AVX2).
void expScalar(const float *p, float *q, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    q[i] = std::exp(p[i]);
}
/// q[i] = c[i] ? p[i] * scale : fill from i = 0 (a vector path's tail from
/// where it stopped), folding each q[i] into mx and nan.
float maskedScaleScalar(const uint8_t *c, const float *p, float *q, int64_t n, float scale,
                        float fill, float mx, bool &nan) {
  for (int64_t i = 0; i < n; ++i) {
    q[i] = c[i] ? p[i] * scale : fill;
    mx = std::max(mx, q[i]);
    nan |= q[i] != q[i];
  }
  return mx;
}
inline float sigmoidScalar(float x) {
  return x >= 0 ? 1.f / (1.f + std::exp(-x)) : std::exp(x) / (1.f + std::exp(x));
}
void softmaxRowScalar(const float *src, float *dst, int64_t n, bool log) {
  float mx = -std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j < n; ++j)
    mx = std::max(mx, src[j]);
  float sum = 0.f;
  for (int64_t j = 0; j < n; ++j) {
    float v = std::exp(src[j] - mx);
    if (!log)
      dst[j] = v;
    sum += v;
  }
  if (log) {
    float l = std::log(sum);
    for (int64_t j = 0; j < n; ++j)
      dst[j] = src[j] - mx - l;
  } else {
    float inv = 1.f / sum;
    for (int64_t j = 0; j < n; ++j)
      dst[j] *= inv;
  }
}

#ifdef QEFF_HOST_AVX2
#define AVX2_FN __attribute__((target("avx2,fma")))

/// exp of 8 floats (Cephes expf: x = k ln2 + r, |r| <= ln2/2, degree-6
/// polynomial; 2^k applied in two halves so that k in [-126, 128] stays exact).
AVX2_FN inline __m256 exp8(__m256 x) {
  const __m256 hi = _mm256_set1_ps(88.72283935546875f);  // above: +inf
  const __m256 lo = _mm256_set1_ps(-87.33654022216797f); // below: 0
  __m256 xc = _mm256_min_ps(_mm256_max_ps(x, lo), hi);
  __m256 fx = _mm256_round_ps(_mm256_mul_ps(xc, _mm256_set1_ps(1.44269504088896341f)),
                              _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(fx, _mm256_set1_ps(0.693359375f), xc);
  r = _mm256_fnmadd_ps(fx, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 y = _mm256_set1_ps(1.9875691500e-4f);
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.3981999507e-3f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(8.3334519073e-3f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(4.1665795894e-2f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.6666665459e-1f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(5.0000001201e-1f));
  y = _mm256_fmadd_ps(y, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.f)));
  __m256i k = _mm256_cvtps_epi32(fx);
  __m256i k1 = _mm256_srai_epi32(k, 1);
  __m256i k2 = _mm256_sub_epi32(k, k1);
  const __m256i bias = _mm256_set1_epi32(127);
  __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k1, bias), 23));
  __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k2, bias), 23));
  y = _mm256_mul_ps(_mm256_mul_ps(y, s1), s2);
  y = _mm256_blendv_ps(y, _mm256_setzero_ps(), _mm256_cmp_ps(x, lo, _CMP_LT_OQ));
  y = _mm256_blendv_ps(y, _mm256_set1_ps(std::numeric_limits<float>::infinity()),
                       _mm256_cmp_ps(x, hi, _CMP_GT_OQ));
  return _mm256_blendv_ps(y, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q)); // NaN
}

AVX2_FN inline __m256 sigmoid8(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.f);
  __m256 absx = _mm256_andnot_ps(_mm256_set1_ps(-0.f), x);
  __m256 e = exp8(_mm256_sub_ps(_mm256_setzero_ps(), absx));
  __m256 den = _mm256_add_ps(one, e);
  __m256 pos = _mm256_div_ps(one, den), neg = _mm256_div_ps(e, den);
  return _mm256_blendv_ps(neg, pos, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ));
}

AVX2_FN void expAvx2(const float *p, float *q, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(q + i, exp8(_mm256_loadu_ps(p + i)));
  for (; i < n; ++i) {
    __m256 v = exp8(_mm256_set1_ps(p[i]));
    q[i] = _mm256_cvtss_f32(v);
  }
}

AVX2_FN void sigmoidAvx2(const float *p, float *q, int64_t n, bool timesX) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 x = _mm256_loadu_ps(p + i);
    __m256 s = sigmoid8(x);
    _mm256_storeu_ps(q + i, timesX ? _mm256_mul_ps(x, s) : s);
  }
  for (; i < n; ++i) {
    float s = _mm256_cvtss_f32(sigmoid8(_mm256_set1_ps(p[i])));
    q[i] = timesX ? p[i] * s : s;
  }
}

AVX2_FN inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
AVX2_FN inline float hmax(__m256 v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

AVX2_FN void softmaxRowAvx2(const float *src, float *dst, int64_t n, bool log) {
  const float ninf = -std::numeric_limits<float>::infinity();
  __m256 vmx = _mm256_set1_ps(ninf);
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    vmx = _mm256_max_ps(_mm256_loadu_ps(src + j), vmx); // NaN inputs ignored, as std::max
  float mx = hmax(vmx);
  for (; j < n; ++j)
    mx = std::max(mx, src[j]);
  __m256 m = _mm256_set1_ps(mx);
  __m256 vsum = _mm256_setzero_ps();
  float sum = 0.f;
  j = 0;
  for (; j + 8 <= n; j += 8) {
    __m256 v = exp8(_mm256_sub_ps(_mm256_loadu_ps(src + j), m));
    if (!log)
      _mm256_storeu_ps(dst + j, v);
    vsum = _mm256_add_ps(vsum, v);
  }
  for (; j < n; ++j) {
    float v = _mm256_cvtss_f32(exp8(_mm256_set1_ps(src[j] - mx)));
    if (!log)
      dst[j] = v;
    sum += v;
  }
  sum += hsum(vsum);
  if (log) {
    float l = std::log(sum);
    for (j = 0; j < n; ++j)
      dst[j] = src[j] - mx - l;
    return;
  }
  __m256 inv = _mm256_set1_ps(1.f / sum);
  j = 0;
  for (; j + 8 <= n; j += 8)
    _mm256_storeu_ps(dst + j, _mm256_mul_ps(_mm256_loadu_ps(dst + j), inv));
  float invs = 1.f / sum;
  for (; j < n; ++j)
    dst[j] *= invs;
}

AVX2_FN void clipAvx2(const float *p, float *q, int64_t n, float lo, float hi) {
  __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 x = _mm256_loadu_ps(p + i);
    __m256 r = _mm256_blendv_ps(x, vhi, _mm256_cmp_ps(x, vhi, _CMP_GT_OQ));
    r = _mm256_blendv_ps(r, vlo, _mm256_cmp_ps(x, vlo, _CMP_LT_OQ));
    _mm256_storeu_ps(q + i, r);
  }
  for (; i < n; ++i)
    q[i] = p[i] < lo ? lo : (p[i] > hi ? hi : p[i]);
}

AVX2_FN float maskedScaleAvx2(const uint8_t *c, const float *p, float *q, int64_t n, float scale,
                              float fill, bool &nan) {
  const __m256 vs = _mm256_set1_ps(scale), vf = _mm256_set1_ps(fill);
  __m256 vmx = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  __m256 vnan = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i ci = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(c + i)));
    __m256 keep = _mm256_castsi256_ps(_mm256_cmpgt_epi32(ci, _mm256_setzero_si256()));
    __m256 v = _mm256_blendv_ps(vf, _mm256_mul_ps(_mm256_loadu_ps(p + i), vs), keep);
    _mm256_storeu_ps(q + i, v);
    vmx = _mm256_max_ps(v, vmx); // a NaN v gives vmx (the second operand)
    vnan = _mm256_or_ps(vnan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  }
  nan = _mm256_movemask_ps(vnan) != 0;
  return maskedScaleScalar(c + i, p + i, q + i, n - i, scale, fill, hmax(vmx), nan);
}
#endif

bool detectSimd() {
#ifdef QEFF_HOST_AVX2
  if (std::getenv("QEFF_HOST_NO_SIMD"))
    return false;
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

} // namespace

bool simdEnabled() {
  static const bool enabled = detectSimd();
  return enabled;
}

void exp(const float *p, float *q, int64_t n) {
#ifdef QEFF_HOST_AVX2
  if (simdEnabled())
    return expAvx2(p, q, n);
#endif
  expScalar(p, q, n);
}

void sigmoid(const float *p, float *q, int64_t n) {
#ifdef QEFF_HOST_AVX2
  if (simdEnabled())
    return sigmoidAvx2(p, q, n, false);
#endif
  for (int64_t i = 0; i < n; ++i)
    q[i] = sigmoidScalar(p[i]);
}

void silu(const float *p, float *q, int64_t n) {
#ifdef QEFF_HOST_AVX2
  if (simdEnabled())
    return sigmoidAvx2(p, q, n, true);
#endif
  for (int64_t i = 0; i < n; ++i)
    q[i] = p[i] * sigmoidScalar(p[i]);
}

void softmaxRow(const float *p, float *q, int64_t n, bool log) {
#ifdef QEFF_HOST_AVX2
  if (simdEnabled())
    return softmaxRowAvx2(p, q, n, log);
#endif
  softmaxRowScalar(p, q, n, log);
}

void clip(const float *p, float *q, int64_t n, float lo, float hi) {
#ifdef QEFF_HOST_AVX2
  if (simdEnabled())
    return clipAvx2(p, q, n, lo, hi);
#endif
  for (int64_t i = 0; i < n; ++i)
    q[i] = p[i] < lo ? lo : (p[i] > hi ? hi : p[i]);
}

float maskedScale(const uint8_t *c, const float *p, float *q, int64_t n, float scale, float fill,
                  bool &nan) {
#ifdef QEFF_HOST_AVX2
  if (simdEnabled())
    return maskedScaleAvx2(c, p, q, n, scale, fill, nan);
#endif
  nan = false;
  return maskedScaleScalar(c, p, q, n, scale, fill, -std::numeric_limits<float>::infinity(), nan);
}

} // namespace qeff::runtime::host::vec
