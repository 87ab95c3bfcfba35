//===- DecodersTest.cpp - dequantizers against the libraries' vectors -----===//
//
// Part of qeff. test/data/quant/unit holds small vectors made by the
// libraries' own functions (its README and SOURCE.md): AutoAWQ's pack order,
// GPTQModel's v1/v2 zero points, compressed-tensors' pack_to_int32, the OCP
// E4M3 table, and gguf-py quantize/dequantize blocks. Each decoder must give
// exactly the library's values.
//
//===----------------------------------------------------------------------===//

#include "QuantTestUtil.h"

#include "frontend/GGUF/GGMLTypes.h"
#include "frontend/Quant/Decoders.h"
#include "frontend/Quant/Fp8.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>

using namespace qeff;
using namespace qeff::quant;
using namespace qeff::quant::test;
using nlohmann::json;

namespace {

json unitVectors() { return json::parse(readFile(kData + "/quant/unit/unit_vectors.json")); }

uint32_t hex(const json &v) { return uint32_t(std::stoul(v.get<std::string>(), nullptr, 16)); }

/// A TensorView over bytes the test owns.
struct Buffer {
  hf::TensorInfo info;
  std::string bytes;
  hf::TensorView view() const {
    return {&info, reinterpret_cast<const std::byte *>(bytes.data()), nullptr};
  }
};

template <typename T>
Buffer buffer(hf::DType dtype, std::vector<int64_t> shape, const std::vector<T> &values) {
  Buffer b;
  b.info.name = "t";
  b.info.dtype = dtype;
  b.info.shape = std::move(shape);
  b.bytes.assign(reinterpret_cast<const char *>(values.data()), values.size() * sizeof(T));
  b.info.end = b.bytes.size();
  return b;
}

std::vector<float> dense(const hf::DenseSource &s, int64_t rows, int64_t cols) {
  std::vector<float> out(size_t(rows * cols));
  s.decode(0, rows, 0, cols, out.data(), cols);
  // The transposed form must hold the same values.
  std::vector<float> t(size_t(rows * cols));
  s.decodeTransposed(0, cols, 0, rows, t.data(), rows);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      EXPECT_EQ(out[size_t(r * cols + c)], t[size_t(c * rows + r)]) << r << "," << c;
  return out;
}

constexpr uint16_t kHalfOne = 0x3C00;

TEST(Fp8, E4M3TableIsTheOCPDefinition) {
  json table = unitVectors()["fp8_e4m3"]["decode"];
  ASSERT_EQ(table.size(), 256u);
  for (int c = 0; c < 256; ++c) {
    float got = e4m3ToF32(uint8_t(c));
    if (table[c].is_null())
      EXPECT_TRUE(std::isnan(got)) << c;
    else
      EXPECT_EQ(got, table[c].get<float>()) << c;
  }
}

TEST(Fp8, E5M2AndE8M0) {
  EXPECT_EQ(e5m2ToF32(0x3C), 1.0f);
  EXPECT_EQ(e5m2ToF32(0x7B), 57344.0f);
  EXPECT_EQ(e5m2ToF32(0x01), std::ldexp(1.0f, -16));
  EXPECT_TRUE(std::isinf(e5m2ToF32(0x7C)));
  EXPECT_TRUE(std::isnan(e5m2ToF32(0x7D)));
  EXPECT_EQ(e8m0ToF32(127), 1.0f);
  EXPECT_EQ(e8m0ToF32(0), std::ldexp(1.0f, -127));
  EXPECT_TRUE(std::isnan(e8m0ToF32(255)));
  EXPECT_EQ(halfToF32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(halfToF32(0xC000), -2.0f);
}

TEST(Awq, PackOrderOfAutoAWQ) {
  json v = unitVectors()["autoawq_gemm_order"];
  // Every input row packs the same outputs (weight[o, i] = o % 16).
  std::vector<uint32_t> words;
  for (int i = 0; i < 32; ++i)
    for (const json &w : v["qweight_row0_hex"])
      words.push_back(hex(w));
  Buffer qweight = buffer(hf::DType::I32, {32, 4}, words);
  Buffer qzeros = buffer(hf::DType::I32, {1, 4}, std::vector<uint32_t>(4, 0));
  Buffer scales = buffer(hf::DType::F16, {1, 32}, std::vector<uint16_t>(32, kHalfOne));
  AwqParts parts{qweight.view(), qzeros.view(), scales.view(), 32, 32, 32};
  std::vector<float> w = dense(*makeAwqSource(parts), 32, 32);
  json row0 = v["dequantize_gemm_row0"]; // dequantize_gemm is [in, out]
  for (int o = 0; o < 32; ++o)
    for (int i = 0; i < 32; ++i)
      ASSERT_EQ(w[size_t(o * 32 + i)], row0[o].get<float>()) << o << "," << i;
}

TEST(Gptq, V1StoresZeroMinusOneV2AsIs) {
  json v = unitVectors()["gptqmodel_pack"];
  std::vector<uint32_t> words;
  for (const json &row : v["qweight_hex"])
    for (const json &w : row)
      words.push_back(hex(w));
  Buffer qweight = buffer(hf::DType::I32, {2, 8}, words);
  Buffer scales = buffer(hf::DType::F16, {1, 8}, std::vector<uint16_t>(8, kHalfOne));
  for (bool v1 : {true, false}) {
    SCOPED_TRACE(v1 ? "v1" : "v2");
    Buffer qzeros = buffer(hf::DType::I32, {1, 1},
                           std::vector<uint32_t>{hex(v[v1 ? "qzeros_v1_hex" : "qzeros_v2_hex"][0])});
    GptqParts parts{qweight.view(), qzeros.view(), scales.view(), 8, 16, 1, 4, v1,
                    std::vector<int32_t>(16, 0)};
    std::vector<float> w = dense(*makeGptqSource(parts), 8, 16);
    // integer of (input i, output o) = i, zero of output o = o + 1.
    for (int o = 0; o < 8; ++o)
      for (int i = 0; i < 16; ++i)
        ASSERT_EQ(w[size_t(o * 16 + i)], float(i - (o + 1))) << o << "," << i;
  }
}

TEST(Gptq, EightBitsAndGroupIndex) {
  // 8-bit: four inputs per word; groups taken from g_idx, not i / g.
  std::vector<uint32_t> q = {0x04030201u, 0x08070605u}; // inputs 0..7 of output 0
  Buffer qweight = buffer(hf::DType::I32, {2, 1}, q);
  Buffer qzeros = buffer(hf::DType::I32, {2, 1}, std::vector<uint32_t>{0, 1}); // v2
  Buffer scales = buffer(hf::DType::F32, {2, 1}, std::vector<float>{1.0f, 0.5f});
  GptqParts parts{qweight.view(), qzeros.view(), scales.view(), 1, 8, 2, 8, false,
                  {1, 0, 1, 0, 1, 0, 1, 0}};
  std::vector<float> w = dense(*makeGptqSource(parts), 1, 8);
  for (int i = 0; i < 8; ++i) {
    float expect = i % 2 == 0 ? 0.5f * float(i + 1 - 1) : 1.0f * float(i + 1);
    EXPECT_EQ(w[size_t(i)], expect) << i;
  }
}

TEST(CompressedTensors, PackToInt32Vectors) {
  json v = unitVectors()["compressed_tensors_pack_to_int32"];
  auto decodeRow = [&](const json &c, int64_t in) {
    std::vector<uint32_t> words;
    for (const json &w : c["packed_hex"])
      words.push_back(hex(w));
    Buffer codes = buffer(hf::DType::I32, {1, int64_t(words.size())}, words);
    Buffer scale = buffer(hf::DType::BF16, {1, 1}, std::vector<uint16_t>{0x3F80});
    ScaledParts p;
    p.codesKind = ScaledParts::Codes::PackedInt;
    p.codes = codes.view();
    p.bits = 4;
    p.scale = scale.view();
    p.out = 1;
    p.in = in;
    p.blockRows = 1;
    p.blockCols = in;
    return dense(*makeScaledSource(p), 1, in);
  };
  std::vector<float> row = decodeRow(v["int4_row"], 16);
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(row[size_t(i)], float(v["int4_row"]["value_int8"][0][i].get<int>()));
  std::vector<float> padded = decodeRow(v["int4_padding"], 10);
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(padded[size_t(i)], float(v["int4_padding"]["value_int8"][0][i].get<int>()));
}

TEST(CompressedTensors, ZeroPointsPackedAlongOutputs) {
  json v = unitVectors()["compressed_tensors_pack_to_int32"]["int4_packed_dim0_zero_points"];
  std::vector<uint32_t> zp;
  for (const json &w : v["packed_hex"])
    zp.push_back(hex(w));
  // 9 outputs, 8 inputs of code 0 (stored 8), one channel scale each.
  Buffer codes = buffer(hf::DType::I32, {9, 1}, std::vector<uint32_t>(9, 0x88888888u));
  Buffer scale = buffer(hf::DType::F32, {9, 1}, std::vector<float>(9, 1.0f));
  Buffer zero = buffer(hf::DType::I32, {2, 1}, zp);
  ScaledParts p;
  p.codesKind = ScaledParts::Codes::PackedInt;
  p.codes = codes.view();
  p.bits = 4;
  p.scale = scale.view();
  p.cellRows = 9;
  p.cellCols = 1;
  p.zeroKind = ScaledParts::Zero::PackedRows;
  p.zero = zero.view();
  p.out = 9;
  p.in = 8;
  p.blockRows = 1;
  p.blockCols = 8;
  std::vector<float> w = dense(*makeScaledSource(p), 9, 8);
  for (int o = 0; o < 9; ++o)
    for (int i = 0; i < 8; ++i)
      EXPECT_EQ(w[size_t(o * 8 + i)], -float(v["value_int8"][o][0].get<int>())) << o;
}

TEST(Fp8Block, ScaleInvMultipliesPartialBlocks) {
  // [3, 5] with 2x2 blocks: ceil gives a 2x3 scale grid (partial blocks).
  std::vector<uint8_t> codes(15, 0x38); // 1.0
  Buffer c = buffer(hf::DType::F8_E4M3, {3, 5}, codes);
  Buffer s = buffer(hf::DType::F32, {2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6});
  ScaledParts p;
  p.codes = c.view();
  p.scale = s.view();
  p.cellRows = 2;
  p.cellCols = 3;
  p.out = 3;
  p.in = 5;
  p.blockRows = 2;
  p.blockCols = 2;
  std::vector<float> w = dense(*makeScaledSource(p), 3, 5);
  for (int r = 0; r < 3; ++r)
    for (int col = 0; col < 5; ++col)
      EXPECT_EQ(w[size_t(r * 5 + col)], float((r / 2) * 3 + col / 2 + 1));
}

/// gguf-py's own blocks: every decoded value bit-identical.
TEST(GGML, BlocksDecodeLikeGgufPy) {
  auto file = hf::SafeTensorsFile::open(kData + "/quant/unit/gguf_blocks.safetensors");
  ASSERT_TRUE(file.ok()) << file.status();
  for (const char *name : {"Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K", "Q4_K",
                           "Q5_K", "Q6_K"}) {
    SCOPED_TRACE(name);
    uint32_t type = 0;
    for (uint32_t id = 0; id < 64; ++id)
      if (gguf::ggmlTypeName(id) == name)
        type = id;
    const gguf::GGMLType *t = gguf::ggmlType(type);
    ASSERT_NE(t, nullptr);
    auto bytes = (*file)->get(std::string(name) + ".bytes");
    auto want = (*file)->get(std::string(name) + ".dequant");
    ASSERT_TRUE(bytes.ok() && want.ok());
    int64_t rows = bytes->shape()[0], rowBytes = bytes->shape()[1];
    int64_t cols = want->shape()[1];
    ASSERT_EQ(rowBytes, cols / t->blockSize * t->typeSize);
    std::vector<float> block(size_t(t->blockSize));
    int64_t mismatches = 0;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t b = 0; b < cols / t->blockSize; ++b) {
        gguf::decodeBlock(type, bytes->data + r * rowBytes + b * t->typeSize, block.data());
        for (int64_t k = 0; k < t->blockSize; ++k) {
          float expect;
          std::memcpy(&expect, want->data + 4 * (r * cols + b * t->blockSize + k), 4);
          uint32_t eb, gb;
          std::memcpy(&eb, &expect, 4);
          std::memcpy(&gb, &block[size_t(k)], 4);
          mismatches += eb != gb;
        }
      }
    EXPECT_EQ(mismatches, 0);
  }
}

TEST(GGML, IQ4LayoutsAndTypeTable) {
  const int8_t kvalues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                              1,    13,   25,  38,  53,  69,  89,  113};
  // IQ4_NL: d = 1, byte j = (j & 15) | ((15 - (j & 15)) << 4).
  std::string nl(18, '\0');
  std::memcpy(nl.data(), &kHalfOne, 2);
  for (int j = 0; j < 16; ++j)
    nl[size_t(2 + j)] = char(j | ((15 - j) << 4));
  float y[256];
  gguf::decodeBlock(gguf::kIQ4_NL, reinterpret_cast<const std::byte *>(nl.data()), y);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], float(kvalues[j]));
    EXPECT_EQ(y[j + 16], float(kvalues[15 - j]));
  }
  // IQ4_XS: d = 1, sub-block scales 6 bits (low nibbles in scales_l, high
  // 2 bits in scales_h) minus 32; sub-block s has scale s + 1 - 32 + 32 = s + 1.
  std::string xs(136, '\0');
  std::memcpy(xs.data(), &kHalfOne, 2);
  uint16_t sh = 0;
  for (int s = 0; s < 8; ++s) {
    int scale = 33 + s; // stored, minus 32 = s + 1
    xs[size_t(4 + s / 2)] = char(xs[size_t(4 + s / 2)] | ((scale & 0xF) << (4 * (s % 2))));
    sh = uint16_t(sh | (((scale >> 4) & 3) << (2 * s)));
    for (int k = 0; k < 16; ++k)
      xs[size_t(8 + s * 16 + k)] = char((k & 0xF) | ((15 - k) << 4));
  }
  std::memcpy(xs.data() + 2, &sh, 2);
  gguf::decodeBlock(gguf::kIQ4_XS, reinterpret_cast<const std::byte *>(xs.data()), y);
  for (int s = 0; s < 8; ++s)
    for (int k = 0; k < 16; ++k) {
      EXPECT_EQ(y[s * 32 + k], float(s + 1) * float(kvalues[k]));
      EXPECT_EQ(y[s * 32 + 16 + k], float(s + 1) * float(kvalues[15 - k]));
    }
  EXPECT_EQ(gguf::ggmlTypeName(gguf::kQ4_K), "Q4_K");
  EXPECT_EQ(gguf::ggmlType(gguf::kQ6_K)->typeSize, 210);
  EXPECT_FALSE(gguf::ggmlType(16)->decodable); // IQ2_XXS: known, refused
  EXPECT_EQ(gguf::ggmlType(77), nullptr);
}

} // namespace
