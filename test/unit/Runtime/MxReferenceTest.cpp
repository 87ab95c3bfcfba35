//===- MxReferenceTest.cpp - MX fake quantization vs microxcaling ---------===//
//
// runtime/host/numerics/MxFormat against vectors made by the reference
// implementation, microsoft/microxcaling's `_quantize_mx` (test/data/mx/
// microxcaling: make-vectors.py, SOURCE.md): 43 float32 rows (binades from
// float32 subnormals to its maximum, ties and their neighbours, values just
// under a half step, block maxima just under a power of two, zeros, NaN, Inf,
// a short last block) in all six element formats under `nearest` and `even`.
//
// Every value must equal microxcaling's bit for bit, except where
// docs/numerics.md says qeff follows the OCP specification instead; each such
// difference is recognised here by its documented cause and checked for its
// documented form, and every cause must occur in the vectors:
//  - scale: microxcaling's float32 log2 rounds a block maximum a few ulps
//    under a power of two up: its shared exponent is one larger (near the
//    float32 maximum: a NaN scale for INT8, +-Inf elements for the others);
//  - half: it rounds with floor(|x| + 0.5) in float32, so an element a few
//    ulps under a half step rounds up, where qeff rounds down;
//  - zero: the sign of a zero (torch.sign(-0.0) is +0);
//  - special: a NaN or Inf makes its whole block NaN, also in FP8 where qeff
//    keeps the finite values and the element's NaN/Inf.
//
//===----------------------------------------------------------------------===//

#include "runtime/host/numerics/MxFormat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace qeff::runtime;
using namespace qeff::runtime::mx;

namespace {

float fromBits(const std::string &hex) {
  uint32_t b = uint32_t(std::stoul(hex, nullptr, 16));
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

bool sameBits(float a, float b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, 4) == 0;
}

Element elementNamed(const std::string &name) {
  for (Element e : {Element::FP8_E4M3, Element::FP8_E5M2, Element::FP6_E3M2,
                    Element::FP6_E2M3, Element::FP4_E2M1, Element::INT8})
    if (name == info(e).name)
      return e;
  ADD_FAILURE() << "unknown format " << name;
  return Element::INT8;
}

struct Counts {
  // Elements equal bit for bit, or differing by a documented cause; `scale`
  // counts blocks.
  int64_t same = 0, scale = 0, half = 0, zero = 0, special = 0;
};

/// Whether microxcaling's element `mx` is `ours` rounded up by one grid step
/// where the exact value `v` sits a little under the half step (its float32
/// `|x| + 0.5` rounds up to the next integer).
bool halfStepDeparture(const ElementInfo &f, float v, int scaleExp, float ours, float mx) {
  double a = std::ldexp(std::fabs(double(v)), -scaleExp); // exact in double
  int p = f.emin;
  if (f.ebits > 0 && a > 0) {
    int e2;
    std::frexp(a, &e2);
    p = std::max(e2 - 1, f.emin);
  }
  double steps = std::ldexp(a, f.mbits - p); // the value in grid steps, exact
  double below = std::floor(steps);
  if (!(steps - below < 0.5))
    return false;
  // microxcaling's float32 arithmetic: the scaled value is a float32 (exact:
  // powers of two) and |x| + 0.5 rounds to float32.
  float x = float(steps);
  if (double(x) != steps || std::floor(x + 0.5f) != float(below + 1))
    return false;
  double grid = std::ldexp(1.0, p - f.mbits + scaleExp);
  double up = std::min((below + 1) * std::ldexp(1.0, p - f.mbits), f.maxNormal) *
              std::ldexp(1.0, scaleExp);
  return std::fabs(double(ours)) == below * grid && std::fabs(double(mx)) == up &&
         (std::signbit(ours) == std::signbit(mx) || ours == 0); // INT8: no -0
}

} // namespace

TEST(MxReference, MicroxcalingVectors) {
  std::ifstream in(QEFF_TEST_DATA_DIR "/mx/microxcaling/vectors.txt");
  ASSERT_TRUE(in) << "missing " QEFF_TEST_DATA_DIR "/mx/microxcaling/vectors.txt";
  std::map<int, std::vector<float>> rows;
  std::map<std::string, Counts> counts; // per format and rounding
  int64_t outLines = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream s(line);
    std::string kind;
    s >> kind;
    if (kind == "in") {
      int id;
      s >> id;
      std::string hex;
      while (s >> hex)
        rows[id].push_back(fromBits(hex));
      continue;
    }
    ASSERT_EQ(kind, "out") << line.substr(0, 40);
    std::string fmt, rounding, exps, hex;
    int id;
    s >> fmt >> rounding >> id >> exps;
    Element e = elementNamed(fmt);
    const ElementInfo &f = info(e);
    MxRounding r = rounding == "even" ? MxRounding::Even : MxRounding::Nearest;
    ASSERT_TRUE(rows.count(id)) << line.substr(0, 40);
    const std::vector<float> &row = rows[id];
    std::vector<float> mx;
    while (s >> hex)
      mx.push_back(fromBits(hex));
    ASSERT_EQ(mx.size(), row.size()) << fmt << " row " << id;
    std::vector<std::string> mxExps;
    std::stringstream es(exps);
    for (std::string x; std::getline(es, x, ',');)
      mxExps.push_back(x);
    ASSERT_EQ(int64_t(mxExps.size()), (int64_t(row.size()) + kBlockSize - 1) / kBlockSize);
    ++outLines;

    std::vector<float> ours = row;
    fakeQuantizeRow(ours.data(), int64_t(ours.size()), kBlockSize, e, r);
    Counts &c = counts[fmt + " " + rounding];
    for (size_t b0 = 0; b0 < row.size(); b0 += kBlockSize) {
      size_t n = std::min<size_t>(kBlockSize, row.size() - b0);
      std::string where = fmt + " " + rounding + " row " + std::to_string(id) + " block " +
                          std::to_string(b0 / kBlockSize);
      const std::string &mxExp = mxExps[b0 / kBlockSize];
      bool nonFinite = false;
      float maxAbs = 0;
      for (size_t i = b0; i < b0 + n; ++i) {
        nonFinite |= !std::isfinite(row[i]);
        if (std::isfinite(row[i]))
          maxAbs = std::max(maxAbs, std::fabs(row[i]));
      }
      uint8_t code = blockScale(e, row.data() + b0, int64_t(n));
      if (nonFinite) {
        // microxcaling: the maximum is NaN or Inf, the scale NaN, the
        // block NaN.
        EXPECT_EQ(mxExp, "nan") << where;
        bool allNaN = true;
        for (size_t i = b0; i < b0 + n; ++i)
          allNaN &= std::isnan(mx[i]);
        EXPECT_TRUE(allNaN) << where;
        if (!f.hasNaN) { // FP6, FP4, INT8: qeff's scale is NaN too
          EXPECT_EQ(code, 0xFF) << where;
          for (size_t i = b0; i < b0 + n; ++i)
            EXPECT_TRUE(std::isnan(ours[i])) << where;
          c.same += int64_t(n);
        } else { // FP8: finite values keep their own scale in qeff
          for (size_t i = b0; i < b0 + n; ++i)
            EXPECT_EQ(std::isfinite(ours[i]), std::isfinite(row[i])) << where << " " << i;
          c.special += int64_t(n);
        }
        continue;
      }
      int ourExp = int(code) - 127;
      if (maxAbs == 0) {
        // An all-zero block: microxcaling takes log2 of 2^-126 (INT8: scale
        // 2^-126, the others clamp to 2^-127), qeff records 2^-127; the
        // elements are zeros either way.
        EXPECT_EQ(mxExp, std::to_string(std::max(-126 - f.emax, -127))) << where;
        for (size_t i = b0; i < b0 + n; ++i) {
          EXPECT_EQ(mx[i], 0.0f) << where;
          EXPECT_EQ(ours[i], 0.0f) << where;
          sameBits(ours[i], mx[i]) ? ++c.same : ++c.zero;
        }
        continue;
      }
      if (mxExp != std::to_string(ourExp)) {
        // Its float32 log2 rounded the maximum up to the next power of two.
        float pow2 = std::ldexp(1.0f, std::ilogb(maxAbs) + 1);
        bool fewUlpsUnder = std::isinf(pow2) ||
                            (std::nextafterf(maxAbs, INFINITY) == pow2 ||
                             std::nextafterf(std::nextafterf(maxAbs, INFINITY), INFINITY) ==
                                 pow2);
        EXPECT_TRUE(fewUlpsUnder) << where << ": max " << maxAbs;
        if (mxExp == "nan") {
          // INT8 near the float32 maximum: 128 is past E8M0's range.
          EXPECT_EQ(e, Element::INT8) << where;
          EXPECT_EQ(ourExp, 127) << where;
          for (size_t i = b0; i < b0 + n; ++i)
            EXPECT_TRUE(std::isnan(mx[i]) && std::isfinite(ours[i])) << where;
        } else {
          EXPECT_EQ(std::stoi(mxExp), ourExp + 1) << where;
          // The rest of the block as quantized with that scale: what qeff
          // gives when the power of two itself is in the block.
          if (std::isinf(pow2)) {
            bool overflow = false;
            for (size_t i = b0; i < b0 + n; ++i)
              overflow |= std::isinf(mx[i]) && std::isfinite(ours[i]);
            EXPECT_TRUE(overflow) << where << ": +-Inf from finite inputs";
          } else {
            std::vector<float> wide(row.begin() + b0, row.begin() + b0 + n);
            wide.push_back(pow2);
            fakeQuantizeRow(wide.data(), int64_t(wide.size()), int(wide.size()), e, r);
            for (size_t i = 0; i < n; ++i)
              EXPECT_TRUE(sameBits(wide[i], mx[b0 + i]) || (wide[i] == 0 && mx[b0 + i] == 0) ||
                          halfStepDeparture(f, row[b0 + i], ourExp + 1, wide[i], mx[b0 + i]))
                  << where << " value " << row[b0 + i] << ": " << mx[b0 + i] << " vs "
                  << wide[i];
          }
        }
        ++c.scale; // blocks
        continue;
      }
      for (size_t i = b0; i < b0 + n; ++i) {
        if (sameBits(ours[i], mx[i])) {
          ++c.same;
        } else if (ours[i] == 0 && mx[i] == 0) {
          ++c.zero;
        } else if (halfStepDeparture(f, row[i], ourExp, ours[i], mx[i])) {
          ++c.half;
        } else {
          ADD_FAILURE() << where << " value " << row[i] << " (" << i << "): microxcaling "
                        << mx[i] << ", qeff " << ours[i];
        }
      }
    }
  }
  EXPECT_EQ(outLines, 6 * 2 * int64_t(rows.size()));
  ASSERT_EQ(counts.size(), 12u);
  for (auto &[key, c] : counts) {
    SCOPED_TRACE(key);
    // Nearly every element of a block with the same scale is bit-identical;
    // each documented cause occurs.
    EXPECT_GT(c.same, (c.same + c.half + c.zero) * 95 / 100);
    EXPECT_GT(c.scale, 0);
    EXPECT_GT(c.half, 0);
    EXPECT_GT(c.zero, 0);
    EXPECT_EQ(c.special > 0, key.rfind("fp8", 0) == 0);
    std::printf("[ %s ] %lld same, %lld blocks of another scale, %lld half-step, %lld "
                "zero-sign, %lld special\n",
                key.c_str(), (long long)c.same, (long long)c.scale, (long long)c.half,
                (long long)c.zero, (long long)c.special);
  }
}
