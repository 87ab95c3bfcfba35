//===- MxFormatTest.cpp - OCP MX element tables, rounding, blocks ---------===//
//
// Exhaustive checks of runtime/host/numerics/MxFormat against the OCP
// Microscaling Formats v1.0 definitions: every code of every element type
// and of E8M0 decodes to the spec value (and, for the float types, to LLVM's
// independent APFloat semantics Float6E2M3FN, Float6E3M2FN, Float4E2M1FN,
// Float8E4M3FN, Float8E5M2); E2M3 also against its published value table;
// every representable value round-trips; midpoints go to the documented
// neighbour; special, huge, zero and subnormal blocks; and the fast fake
// quantization equals decode(encode(...)) everywhere.
//
//===----------------------------------------------------------------------===//

#include "runtime/host/numerics/MxFormat.h"

#include "llvm/ADT/APFloat.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace qeff::runtime;
using namespace qeff::runtime::mx;

namespace {

const Element kFloatTypes[] = {Element::FP8_E4M3, Element::FP8_E5M2, Element::FP6_E3M2,
                               Element::FP6_E2M3, Element::FP4_E2M1};
const Element kAllTypes[] = {Element::FP8_E4M3, Element::FP8_E5M2, Element::FP6_E3M2,
                             Element::FP6_E2M3, Element::FP4_E2M1, Element::INT8};
const MxRounding kRoundings[] = {MxRounding::Nearest, MxRounding::Even};

const llvm::fltSemantics &semanticsOf(Element e) {
  switch (e) {
  case Element::FP8_E4M3:
    return llvm::APFloat::Float8E4M3FN();
  case Element::FP8_E5M2:
    return llvm::APFloat::Float8E5M2();
  case Element::FP6_E3M2:
    return llvm::APFloat::Float6E3M2FN();
  case Element::FP6_E2M3:
    return llvm::APFloat::Float6E2M3FN();
  default:
    return llvm::APFloat::Float4E2M1FN();
  }
}

/// LLVM's value of a code (NaN as NaN).
double llvmValue(Element e, uint32_t code) {
  llvm::APFloat f(semanticsOf(e), llvm::APInt(info(e).bits, code));
  if (f.isNaN())
    return std::numeric_limits<double>::quiet_NaN();
  bool lost = false;
  f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &lost);
  return f.convertToDouble();
}

bool sameValue(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

/// The finite codes of a type, in increasing order of value, positive only.
std::vector<uint32_t> positiveFiniteCodes(Element e) {
  std::vector<uint32_t> codes;
  uint32_t half = 1u << (info(e).bits - 1);
  for (uint32_t c = 0; c < (e == Element::INT8 ? 128u : half); ++c)
    if (std::isfinite(decodeElement(e, c)))
      codes.push_back(c);
  return codes; // sign-magnitude and two's complement both grow with the code
}

} // namespace

TEST(MxFormat, EveryFloatCodeDecodesAsSpecAndLLVM) {
  for (Element e : kFloatTypes) {
    const ElementInfo &f = info(e);
    for (uint32_t code = 0; code < (1u << f.bits); ++code) {
      double ours = decodeElement(e, code);
      EXPECT_TRUE(sameValue(ours, llvmValue(e, code)))
          << f.name << " code " << code << ": " << ours << " vs LLVM " << llvmValue(e, code);
      // The spec's definition, written out: (-1)^S 2^(E-bias) (1 + M/2^m),
      // subnormal 2^(1-bias) (M/2^m) when E = 0.
      uint32_t s = code >> (f.bits - 1), E = (code >> f.mbits) & ((1u << f.ebits) - 1),
               M = code & ((1u << f.mbits) - 1);
      double spec = E == 0 ? std::ldexp(M / double(1u << f.mbits), 1 - f.bias)
                           : std::ldexp(1 + M / double(1u << f.mbits), int(E) - f.bias);
      if (s)
        spec = -spec;
      bool special = (e == Element::FP8_E4M3 && E == 15 && M == 7) ||
                     (e == Element::FP8_E5M2 && E == 31);
      if (!special)
        EXPECT_TRUE(sameValue(ours, spec)) << f.name << " code " << code;
    }
  }
}

TEST(MxFormat, SpecLimits) {
  struct Limits {
    Element e;
    double maxNormal, minNormal, minSubnormal;
  } limits[] = {{Element::FP8_E4M3, 448, 0x1p-6, 0x1p-9},
                {Element::FP8_E5M2, 57344, 0x1p-14, 0x1p-16},
                {Element::FP6_E3M2, 28, 0.25, 0.0625},
                {Element::FP6_E2M3, 7.5, 1.0, 0.125},
                {Element::FP4_E2M1, 6, 1.0, 0.5}};
  for (const Limits &l : limits) {
    std::vector<uint32_t> codes = positiveFiniteCodes(l.e);
    EXPECT_EQ(decodeElement(l.e, codes.back()), l.maxNormal) << info(l.e).name;
    EXPECT_EQ(info(l.e).maxNormal, l.maxNormal);
    EXPECT_EQ(decodeElement(l.e, 1), l.minSubnormal) << info(l.e).name;
    EXPECT_EQ(decodeElement(l.e, 1u << info(l.e).mbits), l.minNormal) << info(l.e).name;
  }
  // E4M3: S.1111.111 is NaN, no Inf; E5M2: S.11111.00 is Inf, .01-.11 NaN.
  EXPECT_TRUE(std::isnan(decodeElement(Element::FP8_E4M3, 0x7F)));
  EXPECT_TRUE(std::isnan(decodeElement(Element::FP8_E4M3, 0xFF)));
  EXPECT_EQ(decodeElement(Element::FP8_E5M2, 0x7C), INFINITY);
  EXPECT_EQ(decodeElement(Element::FP8_E5M2, 0xFC), -INFINITY);
  for (uint32_t c : {0x7Du, 0x7Eu, 0x7Fu, 0xFDu})
    EXPECT_TRUE(std::isnan(decodeElement(Element::FP8_E5M2, c)));
}

TEST(MxFormat, E2M3PublishedTable) {
  // The 32 non-negative FP6 E2M3 values (OCP MX v1.0 section 5.3.2: bias 1,
  // no Inf/NaN; the same list as ml_dtypes' float6_e2m3fn and gfloat's
  // ocp_e2m3 value table), code 0x00 to 0x1F.
  const double table[32] = {0,   0.125, 0.25, 0.375, 0.5,  0.625, 0.75, 0.875,
                            1,   1.125, 1.25, 1.375, 1.5,  1.625, 1.75, 1.875,
                            2,   2.25,  2.5,  2.75,  3,    3.25,  3.5,  3.75,
                            4,   4.5,   5,    5.5,   6,    6.5,   7,    7.5};
  for (uint32_t c = 0; c < 32; ++c) {
    EXPECT_EQ(decodeElement(Element::FP6_E2M3, c), table[c]) << c;
    EXPECT_TRUE(sameValue(decodeElement(Element::FP6_E2M3, c | 0x20), -table[c])) << c;
  }
}

TEST(MxFormat, Int8AndE8M0Codes) {
  for (uint32_t c = 0; c < 256; ++c) {
    EXPECT_EQ(decodeElement(Element::INT8, c), double(int8_t(uint8_t(c))) / 64) << c;
    if (c == 0xFF)
      EXPECT_TRUE(std::isnan(decodeScale(uint8_t(c))));
    else
      EXPECT_EQ(decodeScale(uint8_t(c)), std::ldexp(1.0, int(c) - 127)) << c;
  }
  EXPECT_EQ(decodeElement(Element::INT8, 0x7F), 127.0 / 64);
  EXPECT_EQ(decodeElement(Element::INT8, 0x80), -2.0);
  EXPECT_EQ(decodeScale(0), 0x1p-127);
  EXPECT_EQ(decodeScale(254), 0x1p127);
}

TEST(MxFormat, EveryRepresentableValueRoundTrips) {
  for (Element e : kAllTypes)
    for (MxRounding r : kRoundings)
      for (uint32_t code = 0; code < (1u << info(e).bits); ++code) {
        double v = decodeElement(e, code);
        if (std::isnan(v))
          continue;
        if (e == Element::INT8 && code == 0x80) {
          // -2.0 is never produced: conversion saturates symmetrically.
          EXPECT_EQ(encodeElement(e, v, r), 0x81u);
          continue;
        }
        EXPECT_EQ(encodeElement(e, v, r), code) << info(e).name << " " << v;
      }
  // -0.0 keeps its sign in the float types; INT8 has no -0.
  EXPECT_EQ(encodeElement(Element::FP6_E2M3, -0.0, MxRounding::Even), 0x20u);
  EXPECT_EQ(encodeElement(Element::INT8, -0.0, MxRounding::Even), 0u);
  EXPECT_EQ(encodeElement(Element::FP6_E2M3, -0.01, MxRounding::Even), 0x20u);
}

TEST(MxFormat, MidpointsGoToTheDocumentedNeighbour) {
  for (Element e : kAllTypes) {
    std::vector<uint32_t> codes = positiveFiniteCodes(e);
    for (size_t i = 0; i + 1 < codes.size(); ++i) {
      double a = decodeElement(e, codes[i]), b = decodeElement(e, codes[i + 1]);
      double mid = (a + b) / 2; // exact in double
      for (double sign : {1.0, -1.0}) {
        uint32_t lo = encodeElement(e, sign * a, MxRounding::Even);
        uint32_t hi = encodeElement(e, sign * b, MxRounding::Even);
        // nearest: ties away from zero; even: the even code.
        EXPECT_EQ(encodeElement(e, sign * mid, MxRounding::Nearest), hi)
            << info(e).name << " " << sign * mid;
        EXPECT_EQ(encodeElement(e, sign * mid, MxRounding::Even),
                  (codes[i] & 1) == 0 ? lo : hi)
            << info(e).name << " " << sign * mid;
        // Just under and over the tie, both modes agree.
        for (MxRounding r : kRoundings) {
          EXPECT_EQ(encodeElement(e, sign * std::nextafter(mid, 0.0), r), lo);
          EXPECT_EQ(encodeElement(e, sign * std::nextafter(mid, 1e9), r), hi);
          // The float32 neighbours of the tie too (a float input).
          float fm = float(mid);
          ASSERT_EQ(double(fm), mid);
          EXPECT_EQ(encodeElement(e, sign * double(std::nextafterf(fm, 0.0f)), r), lo);
        }
      }
    }
    // Past max normal: saturation.
    double top = info(e).maxNormal;
    for (MxRounding r : kRoundings) {
      EXPECT_EQ(decodeElement(e, encodeElement(e, top * 1.2, r)), top);
      EXPECT_EQ(decodeElement(e, encodeElement(e, -top * 100, r)), -top);
    }
  }
}

TEST(MxFormat, BlockScaleIsExact) {
  // floor(log2(max)) - emax, from the float's bits: a maximum a few ulps
  // below a power of two keeps the lower exponent (a float32 log2 rounds it
  // up, the microxcaling difference).
  for (Element e : kAllTypes) {
    int emax = info(e).emax;
    float below = std::nextafterf(2.0f, 0.0f);
    EXPECT_EQ(blockScale(e, &below, 1), 127 - emax) << info(e).name;
    float two = 2.0f;
    EXPECT_EQ(blockScale(e, &two, 1), 128 - emax) << info(e).name;
    // Near the float maximum: a finite scale (2^127 for INT8) and finite
    // values, where microxcaling gives a NaN scale (INT8) or +-Inf.
    std::vector<float> huge = {FLT_MAX, -FLT_MAX, 1.0f};
    EXPECT_EQ(blockScale(e, huge.data(), 3), 127 + 127 - emax) << info(e).name;
    for (MxRounding r : kRoundings) {
      std::vector<float> q = huge;
      fakeQuantizeRow(q.data(), 3, kBlockSize, e, r);
      EXPECT_TRUE(std::isfinite(q[0]) && std::isfinite(q[1])) << info(e).name;
      EXPECT_EQ(q[0], float(info(e).maxNormal * std::ldexp(1.0, 127 - emax)));
      EXPECT_EQ(q[1], -q[0]);
    }
  }
  // A value just under a half step rounds down in both modes (E2M3, scale
  // 1: the half step between 4 and 4.5 is 4.25).
  for (MxRounding r : kRoundings) {
    std::vector<float> v = {7.0f, std::nextafterf(4.25f, 0.0f), 4.25f, std::nextafterf(0.0625f, 0)};
    fakeQuantizeRow(v.data(), 4, kBlockSize, Element::FP6_E2M3, r);
    EXPECT_EQ(v[1], 4.0f);
    EXPECT_EQ(v[2], r == MxRounding::Nearest ? 4.5f : 4.0f);
    EXPECT_EQ(v[3], 0.0f); // under half the smallest subnormal
  }
}

TEST(MxFormat, SpecialZeroAndSubnormalBlocks) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = INFINITY;
  for (MxRounding r : kRoundings) {
    // NaN, or Inf in a type without Inf/NaN: the scale is NaN and so is
    // every element.
    for (Element e : {Element::FP6_E2M3, Element::FP6_E3M2, Element::FP4_E2M1, Element::INT8})
      for (float special : {nan, inf, -inf}) {
        std::vector<float> v = {1.0f, special, -3.0f};
        EXPECT_EQ(blockScale(e, v.data(), 3), 0xFF);
        fakeQuantizeRow(v.data(), 3, kBlockSize, e, r);
        for (float x : v)
          EXPECT_TRUE(std::isnan(x)) << info(e).name;
      }
    // FP8: NaN stays an element NaN, E5M2 keeps +-Inf, E4M3 (no Inf)
    // makes it NaN; the others use the finite values' scale.
    std::vector<float> v = {1.0f, nan, inf, -inf, 3.0f};
    std::vector<float> e5 = v, e4 = v;
    EXPECT_EQ(blockScale(Element::FP8_E5M2, v.data(), 5), 127 + 1 - 15);
    fakeQuantizeRow(e5.data(), 5, kBlockSize, Element::FP8_E5M2, r);
    fakeQuantizeRow(e4.data(), 5, kBlockSize, Element::FP8_E4M3, r);
    EXPECT_EQ(e5[0], 1.0f);
    EXPECT_TRUE(std::isnan(e5[1]));
    EXPECT_EQ(e5[2], inf);
    EXPECT_EQ(e5[3], -inf);
    EXPECT_EQ(e5[4], 3.0f);
    EXPECT_TRUE(std::isnan(e4[1]) && std::isnan(e4[2]) && std::isnan(e4[3]));
    EXPECT_EQ(e4[0], 1.0f);
    EXPECT_EQ(e4[4], 3.0f);
    // All zeros: the smallest scale, zeros with their signs (INT8: +0).
    for (Element e : kAllTypes) {
      std::vector<float> z = {0.0f, -0.0f};
      EXPECT_EQ(blockScale(e, z.data(), 2), 0);
      fakeQuantizeRow(z.data(), 2, kBlockSize, e, r);
      EXPECT_TRUE(z[0] == 0 && !std::signbit(z[0]));
      EXPECT_EQ(std::signbit(z[1]), e != Element::INT8) << info(e).name;
    }
    // float32 subnormals: the scale clamps at 2^-127 and the values stay
    // on the element grid below it (E2M3: multiples of 2^-130).
    std::vector<float> sub = {1e-39f, -3e-40f, 7e-45f};
    EXPECT_EQ(blockScale(Element::FP6_E2M3, sub.data(), 3), 0);
    std::vector<float> q = sub;
    fakeQuantizeRow(q.data(), 3, kBlockSize, Element::FP6_E2M3, r);
    for (size_t i = 0; i < q.size(); ++i) {
      double steps = std::ldexp(double(q[i]), 130);
      EXPECT_EQ(steps, std::round(steps));
      EXPECT_LE(std::fabs(double(q[i]) - sub[i]), std::ldexp(1.0, -131) + 1e-60);
    }
  }
}

TEST(MxFormat, FakeQuantizeIsDecodeOfEncode) {
  std::mt19937 rng(29);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> exps(-140, 20);
  for (Element e : kAllTypes)
    for (MxRounding r : kRoundings)
      for (int trial = 0; trial < 40; ++trial) {
        // [outer, axis, inner] blocks along the middle axis; values over many
        // binades, zeros and exact ties.
        int64_t outer = 2, axis = 70, inner = trial % 3 == 0 ? 1 : 5;
        std::vector<float> data(outer * axis * inner);
        int base = exps(rng);
        for (float &x : data) {
          x = std::ldexp(normal(rng), base + int(rng() % 12));
          if (rng() % 17 == 0)
            x = 0;
          if (rng() % 13 == 0)
            x = std::ldexp(float(int(rng() % 64)) + 0.5f, base - 3); // ties
        }
        std::vector<float> fast = data;
        int blockSize = trial % 2 ? kBlockSize : 16;
        fakeQuantize(fast.data(), outer, axis, inner, blockSize, e, r, 1 + trial % 2);
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t i = 0; i < inner; ++i)
            for (int64_t k0 = 0; k0 < axis; k0 += blockSize) {
              int64_t n = std::min<int64_t>(blockSize, axis - k0);
              std::vector<float> block(n);
              for (int64_t k = 0; k < n; ++k)
                block[k] = data[(o * axis + k0 + k) * inner + i];
              uint8_t scale;
              std::vector<uint32_t> codes(n);
              encodeBlock(e, r, block.data(), n, scale, codes.data());
              for (int64_t k = 0; k < n; ++k) {
                double want = decodeScale(scale) * decodeElement(e, codes[k]);
                float got = fast[(o * axis + k0 + k) * inner + i];
                ASSERT_TRUE(sameValue(double(got), want) ||
                            (want == 0 && got == 0 && e == Element::INT8))
                    << info(e).name << " " << roundingName(r) << " value " << block[k]
                    << " -> " << got << " vs " << want;
              }
            }
      }
}

TEST(MxFormat, RepresentableBlocksAreFixedPoints) {
  // A block of every finite value of a type at scale 1 (its max normal sets
  // the scale) comes back unchanged, and quantizing twice changes nothing.
  for (Element e : kAllTypes)
    for (MxRounding r : kRoundings) {
      std::vector<float> values;
      for (uint32_t c = 0; c < (1u << info(e).bits); ++c) {
        double v = decodeElement(e, c);
        if (std::isfinite(v) && !(e == Element::INT8 && c == 0x80))
          values.push_back(float(v));
      }
      for (size_t b = 0; b < values.size(); b += kBlockSize - 1) {
        std::vector<float> block = {float(info(e).maxNormal)};
        for (size_t i = b; i < std::min(values.size(), b + kBlockSize - 1); ++i)
          block.push_back(values[i]);
        std::vector<float> q = block;
        fakeQuantizeRow(q.data(), int64_t(q.size()), kBlockSize, e, r);
        for (size_t i = 0; i < q.size(); ++i)
          EXPECT_TRUE(sameValue(q[i], block[i]) || (block[i] == 0 && q[i] == 0))
              << info(e).name << " " << block[i];
      }
      std::mt19937 rng(7);
      std::vector<float> once(96);
      for (float &x : once)
        x = std::ldexp(float(rng() % 1000) - 500.0f, -8);
      fakeQuantizeRow(once.data(), 96, kBlockSize, e, r);
      std::vector<float> twice = once;
      fakeQuantizeRow(twice.data(), 96, kBlockSize, e, r);
      EXPECT_EQ(once, twice) << info(e).name;
    }
}
