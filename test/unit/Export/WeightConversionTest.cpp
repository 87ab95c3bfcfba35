//===- WeightConversionTest.cpp - exporter dtype conversions --------------===//
//
// Part of qeff. bf16 -> f32 (exact, all 65536 inputs), f32 -> f16 (round to
// nearest even, subnormals, clipping to +-65504 with a count, NaN), f32 ->
// bf16, buffer conversion from unaligned sources, and blocked transposition.
//
//===----------------------------------------------------------------------===//

#include "lowering/Export/WeightConversion.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace qeff::exporter;

namespace {

uint32_t bitsOf(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

float floatOf(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

uint16_t toF16(float f) {
  bool clipped;
  return f32ToF16(f, clipped);
}

/// Reference f32 -> f16 via the compiler's _Float16 (round to nearest even).
uint16_t referenceF16(float f) {
  _Float16 h = static_cast<_Float16>(f);
  uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}

TEST(WeightConversion, BF16ToF32IsExactForEveryInput) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    float f = bf16ToF32(static_cast<uint16_t>(b));
    EXPECT_EQ(bitsOf(f), b << 16) << b;
  }
}

TEST(WeightConversion, F16RoundTripsThroughF32) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    float f = f16ToF32(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_EQ(h & 0x7c00u, 0x7c00u);
      EXPECT_NE(h & 0x3ffu, 0u);
      continue;
    }
    if (std::isinf(f))
      continue; // converts back clipped to +-65504 (tested below)
    bool clipped = true;
    EXPECT_EQ(f32ToF16(f, clipped), h) << h;
    EXPECT_FALSE(clipped) << h;
  }
}

TEST(WeightConversion, F16ValuesOfKnownEncodings) {
  EXPECT_EQ(f16ToF32(0x3c00), 1.0f);
  EXPECT_EQ(f16ToF32(0xc000), -2.0f);
  EXPECT_EQ(f16ToF32(0x7bff), 65504.0f);
  EXPECT_EQ(f16ToF32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(f16ToF32(0x0400), std::ldexp(1.0f, -14));
  EXPECT_EQ(bitsOf(f16ToF32(0x8000)), 0x80000000u);
  EXPECT_TRUE(std::isinf(f16ToF32(0x7c00)));
}

TEST(WeightConversion, F32ToF16RoundsToNearestEven) {
  float one = 1.0f, ulp = std::ldexp(1.0f, -10);
  EXPECT_EQ(toF16(one + ulp / 2), 0x3c00);     // tie -> even (down)
  EXPECT_EQ(toF16(one + 3 * ulp / 2), 0x3c02); // tie -> even (up)
  EXPECT_EQ(toF16(one + ulp / 2 + std::ldexp(1.0f, -20)), 0x3c01);
  EXPECT_EQ(toF16(std::ldexp(1.0f, -24)), 0x0001); // smallest subnormal
  EXPECT_EQ(toF16(std::ldexp(1.0f, -25)), 0x0000); // tie -> even (zero)
  EXPECT_EQ(toF16(3 * std::ldexp(1.0f, -25)), 0x0002);
  EXPECT_EQ(toF16(std::ldexp(1.0f, -30)), 0x0000);
  EXPECT_EQ(toF16(-0.0f), 0x8000);
  EXPECT_EQ(toF16(std::ldexp(1.0f, -14)), 0x0400); // smallest normal
  // The largest subnormal plus a bit more rounds up into the normals.
  EXPECT_EQ(toF16(std::ldexp(1023.75f, -24)), 0x0400);
  EXPECT_EQ(toF16(2048.0f + 1.0f), 0x6800); // 2049 -> 2048 (even)
  EXPECT_EQ(toF16(2048.0f + 3.0f), 0x6802); // 2051 -> 2052
}

TEST(WeightConversion, F32ToF16MatchesCompilerRounding) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 2'000'000; ++i) {
    float f = floatOf(bits(rng));
    if (std::isnan(f) || std::fabs(f) > kF16Max)
      continue;
    ASSERT_EQ(toF16(f), referenceF16(f)) << f;
  }
  // A sweep of every f32 in the fp16 range, at a stride.
  for (uint32_t b = 0; b <= 0x477fe000u; b += 97) {
    ASSERT_EQ(toF16(floatOf(b)), referenceF16(floatOf(b))) << b;
    ASSERT_EQ(toF16(floatOf(b | 0x80000000u)),
              referenceF16(floatOf(b | 0x80000000u)))
        << b;
  }
}

TEST(WeightConversion, F32ToF16ClipsToTheFp16Range) {
  struct Case {
    float in;
    uint16_t out;
    bool clipped;
  } cases[] = {
      {65504.0f, 0x7bff, false},
      {std::nextafter(65504.0f, 1e9f), 0x7bff, true},
      {65519.0f, 0x7bff, true},
      {65520.0f, 0x7bff, true}, // would round to inf
      {1e5f, 0x7bff, true},
      {-1e5f, 0xfbff, true},
      {3e38f, 0x7bff, true},
      {std::numeric_limits<float>::infinity(), 0x7bff, true},
      {-std::numeric_limits<float>::infinity(), 0xfbff, true},
      {-65504.0f, 0xfbff, false},
  };
  for (const Case &c : cases) {
    bool clipped = !c.clipped;
    EXPECT_EQ(f32ToF16(c.in, clipped), c.out) << c.in;
    EXPECT_EQ(clipped, c.clipped) << c.in;
  }
  bool clipped = true;
  uint16_t nan = f32ToF16(std::numeric_limits<float>::quiet_NaN(), clipped);
  EXPECT_FALSE(clipped);
  EXPECT_EQ(nan & 0x7c00u, 0x7c00u);
  EXPECT_NE(nan & 0x3ffu, 0u);
}

TEST(WeightConversion, F32ToBF16RoundsToNearestEven) {
  EXPECT_EQ(f32ToBF16(1.0f), 0x3f80);
  EXPECT_EQ(f32ToBF16(floatOf(0x3f808000u)), 0x3f80); // tie -> even (down)
  EXPECT_EQ(f32ToBF16(floatOf(0x3f818000u)), 0x3f82); // tie -> even (up)
  EXPECT_EQ(f32ToBF16(floatOf(0x3f808001u)), 0x3f81);
  EXPECT_EQ(f32ToBF16(std::numeric_limits<float>::infinity()), 0x7f80);
  uint16_t nan = f32ToBF16(std::numeric_limits<float>::quiet_NaN());
  EXPECT_TRUE(std::isnan(bf16ToF32(nan)));
  // Signalling NaN with only low mantissa bits must not become infinity.
  EXPECT_TRUE(std::isnan(bf16ToF32(f32ToBF16(floatOf(0x7f800001u)))));
}

TEST(WeightConversion, ConvertElementsFromUnalignedSourceCountsClipping) {
  std::vector<float> values = {1.0f, -2.5f, 70000.0f, -1e6f, 65504.0f, 0.1f};
  std::vector<std::byte> src(values.size() * 4 + 1);
  std::memcpy(src.data() + 1, values.data(), values.size() * 4);
  std::vector<std::byte> dst(values.size() * 2 + 1);
  uint64_t clipped = convertElements(src.data() + 1, DType::F32, dst.data() + 1,
                                     DType::F16, values.size());
  EXPECT_EQ(clipped, 2u);
  for (size_t i = 0; i < values.size(); ++i) {
    uint16_t h;
    std::memcpy(&h, dst.data() + 1 + 2 * i, 2);
    float want = std::fabs(values[i]) > kF16Max
                     ? std::copysign(kF16Max, values[i])
                     : f16ToF32(referenceF16(values[i]));
    EXPECT_EQ(f16ToF32(h), want) << i;
  }
}

TEST(WeightConversion, ConvertElementsBF16ToF32AndF16) {
  std::vector<uint16_t> bf16 = {0x3f80, 0xc020, 0x4780 /*65536*/, 0x0000};
  std::vector<float> f32(bf16.size());
  EXPECT_EQ(convertElements(reinterpret_cast<const std::byte *>(bf16.data()),
                            DType::BF16,
                            reinterpret_cast<std::byte *>(f32.data()),
                            DType::F32, bf16.size()),
            0u);
  EXPECT_EQ(f32, (std::vector<float>{1.0f, -2.5f, 65536.0f, 0.0f}));
  std::vector<uint16_t> f16(bf16.size());
  EXPECT_EQ(convertElements(reinterpret_cast<const std::byte *>(bf16.data()),
                            DType::BF16,
                            reinterpret_cast<std::byte *>(f16.data()),
                            DType::F16, bf16.size()),
            1u); // 65536 clipped
  EXPECT_EQ(f16, (std::vector<uint16_t>{0x3c00, 0xc100, 0x7bff, 0x0000}));
}

TEST(WeightConversion, IdentityAndUnsupportedConversions) {
  EXPECT_TRUE(canConvert(DType::I64, DType::I64));
  EXPECT_TRUE(canConvert(DType::BF16, DType::F16));
  EXPECT_TRUE(canConvert(DType::F64, DType::F32));
  EXPECT_FALSE(canConvert(DType::I64, DType::F32));
  EXPECT_FALSE(canConvert(DType::F32, DType::I32));
  std::vector<int64_t> in = {1, -2, int64_t(1) << 60}, out(3);
  convertElements(reinterpret_cast<const std::byte *>(in.data()), DType::I64,
                  reinterpret_cast<std::byte *>(out.data()), DType::I64, 3);
  EXPECT_EQ(in, out);
}

template <typename T> void checkTranspose(int64_t rows, int64_t cols) {
  std::vector<T> src(rows * cols);
  for (size_t i = 0; i < src.size(); ++i)
    src[i] = static_cast<T>(i * 7 + 3);
  // Whole tensor, and in uneven blocks of output rows.
  for (int64_t block : {cols, int64_t(1), int64_t(5), int64_t(33)}) {
    std::vector<T> dst(rows * cols);
    for (int64_t j = 0; j < cols; j += block) {
      int64_t end = std::min(cols, j + block);
      transposeRows(reinterpret_cast<const std::byte *>(src.data()), sizeof(T),
                    rows, cols, j, end,
                    reinterpret_cast<std::byte *>(dst.data() + j * rows));
    }
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        ASSERT_EQ(dst[j * rows + i], src[i * cols + j])
            << "block " << block << " at " << i << "," << j;
  }
}

TEST(WeightConversion, TransposeRowsBlockwise) {
  checkTranspose<uint8_t>(37, 53);
  checkTranspose<uint16_t>(64, 40);
  checkTranspose<uint32_t>(1, 70);
  checkTranspose<uint32_t>(70, 1);
  checkTranspose<uint64_t>(65, 33);
}

// transposeConvertTile against the two-pass reference (convertElements of
// each element, written at its transposed position), for every way the
// exporter cuts a tensor: blocks of output rows and strips of source rows.
void checkTransposeConvert(DType from, DType to, int64_t rows, int64_t cols) {
  size_t inSize = qeff::hf::dtypeSize(from), outSize = qeff::hf::dtypeSize(to);
  std::mt19937 rng(rows * 131 + cols);
  std::vector<std::byte> src(rows * cols * inSize);
  // Special values among the random ones: NaN with a payload, infinities,
  // the f16 limit and just above it, f16 subnormals, signed zero.
  const float specials[] = {floatOf(0x7fc12345u), floatOf(0xff800001u),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            65504.0f, -65505.0f, 65519.0f, 1e-6f, -3e-7f, 6.1e-5f,
                            -0.0f, 0.0f};
  for (int64_t e = 0; e < rows * cols; ++e) {
    // Large magnitudes too, so that f16 outputs clip.
    float v = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng) *
              (e % 17 == 0 ? 1e6f : 3.0f);
    if (e % 7 == 3)
      v = specials[(e / 7) % std::size(specials)];
    convertElements(reinterpret_cast<const std::byte *>(&v), DType::F32,
                    src.data() + e * inSize, from, 1);
  }
  std::vector<std::byte> expected(rows * cols * outSize);
  uint64_t expectedClipped = 0;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      expectedClipped += convertElements(src.data() + (i * cols + j) * inSize,
                                         from,
                                         expected.data() + (j * rows + i) * outSize,
                                         to, 1);
  for (int64_t block : {int64_t(1), int64_t(7), int64_t(64), cols}) {
    std::vector<std::byte> dst(expected.size(), std::byte{0xAB});
    uint64_t clipped = 0;
    for (int64_t j = 0; j < cols; j += block)
      clipped += transposeConvertRows(src.data(), from, rows, cols, j,
                                      std::min(cols, j + block),
                                      dst.data() + j * rows * outSize, to);
    EXPECT_EQ(dst, expected) << "output-row blocks of " << block;
    EXPECT_EQ(clipped, expectedClipped);
  }
  for (int64_t strip : {int64_t(1), int64_t(5), int64_t(100), rows}) {
    std::vector<std::byte> dst(expected.size(), std::byte{0xAB});
    uint64_t clipped = 0;
    for (int64_t i = 0; i < rows; i += strip)
      clipped += transposeConvertTile(src.data(), from, cols, i,
                                      std::min(rows, i + strip), 0, cols,
                                      dst.data() + i * outSize, rows, to);
    EXPECT_EQ(dst, expected) << "source-row strips of " << strip;
    EXPECT_EQ(clipped, expectedClipped);
  }
}

TEST(WeightConversion, TransposeConvertByBlocksAndStrips) {
  // With the vector kernel (where the CPU has it) and without: both must
  // give the reference bits. Shapes with and without whole 8 x 8 blocks.
  bool saved = vectorTransposeEnabled();
  for (bool vector : {true, false}) {
    SCOPED_TRACE(vector ? "vector kernel allowed" : "scalar only");
    vectorTransposeEnabled() = vector && saved;
    for (DType from : {DType::BF16, DType::F16, DType::F32})
      for (DType to : {DType::F32, DType::F16}) {
        SCOPED_TRACE(std::string(qeff::hf::dtypeName(from)) + " -> " +
                     std::string(qeff::hf::dtypeName(to)));
        checkTransposeConvert(from, to, 70, 129);
        checkTransposeConvert(from, to, 64, 136);
        checkTransposeConvert(from, to, 9, 17);
      }
    checkTransposeConvert(DType::BF16, DType::F16, 1, 40);
    checkTransposeConvert(DType::F16, DType::F16, 67, 3);
    checkTransposeConvert(DType::F32, DType::F32, 130, 1);
    checkTransposeConvert(DType::F32, DType::BF16, 24, 40);
  }
  vectorTransposeEnabled() = saved;
}

} // namespace
