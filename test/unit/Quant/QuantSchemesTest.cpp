//===- QuantSchemesTest.cpp - quantization_config variants, decoded values ===//
//
// Part of qeff. The fixtures of test/data/quant cover group size 32 of the
// common forms; real checkpoints also use group sizes 16 to 128 and -1, the
// gptq_v2 format, compressed-tensors int-/naive-quantized weights, `re:`
// targets and ignores, tensor and block strategies, per-tensor FP8 scales and
// E8M0 / E5M2 elements. Each case writes a small checkpoint, opens it through
// openDenseCheckpoint and compares every decoded value with the library's
// formula evaluated here element by element (`float(q - z) * float(s)`).
//
//===----------------------------------------------------------------------===//

#include "QuantTestUtil.h"

#include "frontend/Quant/Fp8.h"
#include "frontend/Quant/QuantCheckpoint.h"

#include <gmock/gmock.h>

#include <cmath>
#include <functional>
#include <random>

using namespace qeff;
using namespace qeff::quant;
using namespace qeff::quant::test;
using ::testing::HasSubstr;

namespace {

absl::StatusOr<std::unique_ptr<hf::Checkpoint>> open(const TempDir &dir) {
  auto cfg = hf::JsonConfig::read(dir.file("config.json"));
  if (!cfg.ok())
    return cfg.status();
  return openDenseCheckpoint(dir.path(), *cfg);
}

/// Every value of the decoded `name` ([out, in]) equals want(o, i), in both
/// the row-major and the transposed decode.
void expectDecoded(const hf::Checkpoint &ckpt, const std::string &name, int64_t out,
                   int64_t in, const std::function<float(int64_t, int64_t)> &want) {
  const hf::DenseSource *s = ckpt.decodedSource(name);
  ASSERT_NE(s, nullptr) << name;
  ASSERT_EQ(ckpt.find(name)->shape, (std::vector<int64_t>{out, in}));
  std::vector<float> rows(size_t(out * in)), cols(size_t(out * in));
  s->decode(0, out, 0, in, rows.data(), in);
  s->decodeTransposed(0, in, 0, out, cols.data(), out);
  int64_t bad = 0;
  for (int64_t o = 0; o < out; ++o)
    for (int64_t i = 0; i < in; ++i) {
      float w = want(o, i);
      if (rows[size_t(o * in + i)] != w || cols[size_t(i * out + o)] != w) {
        if (++bad <= 3)
          ADD_FAILURE() << name << "[" << o << ", " << i << "]: got "
                        << rows[size_t(o * in + i)] << " / " << cols[size_t(i * out + o)]
                        << ", want " << w;
      }
    }
  EXPECT_EQ(bad, 0) << name;
}

std::mt19937 &rng() {
  static std::mt19937 r(28);
  return r;
}
int randomInt(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng()); }

/// f16 bits of small dyadic scales (exact in f16 and f32).
uint16_t halfOf(int k) { return uint16_t(0x2C00 + 0x40 * k); } // 2^-4 * (1 + k/16)

/// A GPTQ Linear [out, in] with 4-bit codes q[i][o], zeros z[g][o] in
/// [1, 15] (so v1's stored z - 1 never borrows) and f16 scales s[g][o].
struct Gptq {
  int64_t out, in, groups;
  std::vector<int> q, z;
  std::vector<uint16_t> s;
  std::vector<OwnedTensor> tensors(const std::string &m, bool v1) const {
    std::vector<int32_t> qw(size_t(in / 8 * out), 0), qz(size_t(groups * out / 8), 0);
    for (int64_t i = 0; i < in; ++i)
      for (int64_t o = 0; o < out; ++o)
        qw[size_t(i / 8 * out + o)] |= int32_t(uint32_t(q[size_t(i * out + o)]) << (4 * (i % 8)));
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t o = 0; o < out; ++o)
        qz[size_t(g * out / 8 + o / 8)] |=
            int32_t(uint32_t(z[size_t(g * out + o)] - (v1 ? 1 : 0)) << (4 * (o % 8)));
    return {tensorOf(m + ".qweight", hf::DType::I32, {in / 8, out}, qw),
            tensorOf(m + ".qzeros", hf::DType::I32, {groups, out / 8}, qz),
            tensorOf(m + ".scales", hf::DType::F16, {groups, out}, s)};
  }
  float at(int64_t o, int64_t i, int64_t groupSize) const {
    int64_t g = i / groupSize;
    return float(q[size_t(i * out + o)] - z[size_t(g * out + o)]) *
           halfToF32(s[size_t(g * out + o)]);
  }
};

Gptq randomGptq(int64_t out, int64_t in, int64_t groups) {
  Gptq p{out, in, groups, {}, {}, {}};
  for (int64_t k = 0; k < in * out; ++k)
    p.q.push_back(randomInt(0, 15));
  for (int64_t k = 0; k < groups * out; ++k) {
    p.z.push_back(randomInt(1, 15));
    p.s.push_back(halfOf(randomInt(0, 15)));
  }
  return p;
}

TEST(QuantSchemes, GptqV2WholeRowGroupAndGroupSize16) {
  // group_size -1 (one group over all inputs) in the gptq_v2 format: zeros
  // stored as they are.
  Gptq whole = randomGptq(16, 64, 1);
  // group_size 16 in v1 (AutoGPTQ: no checkpoint_format; zeros stored - 1).
  Gptq g16 = randomGptq(16, 64, 4);
  {
    TempDir dir;
    writeCheckpoint(dir, whole.tensors("m", false),
                    configWithQuant(R"({"quant_method": "gptq", "bits": 4, "group_size": -1,
                               "sym": false, "checkpoint_format": "gptq_v2"})"));
    auto ckpt = open(dir);
    ASSERT_TRUE(ckpt.ok()) << ckpt.status();
    expectDecoded(**ckpt, "m.weight", 16, 64,
                  [&](int64_t o, int64_t i) { return whole.at(o, i, 64); });
  }
  {
    TempDir dir;
    writeCheckpoint(dir, g16.tensors("m", true),
                    configWithQuant(R"({"quant_method": "gptq", "bits": 4, "group_size": 16,
                               "desc_act": false})"));
    auto ckpt = open(dir);
    ASSERT_TRUE(ckpt.ok()) << ckpt.status();
    EXPECT_EQ((*ckpt)->decodedSource("m.weight")->format().find("GPTQ"), 0u);
    expectDecoded(**ckpt, "m.weight", 16, 64,
                  [&](int64_t o, int64_t i) { return g16.at(o, i, 16); });
  }
  {
    TempDir dir; // the same v1 tensors read as v2 are off by one zero
    writeCheckpoint(dir, g16.tensors("m", true),
                    configWithQuant(R"({"quant_method": "gptq", "group_size": 16,
                               "checkpoint_format": "gptq_v2"})"));
    auto ckpt = open(dir);
    ASSERT_TRUE(ckpt.ok()) << ckpt.status();
    std::vector<float> w(16 * 64);
    (*ckpt)->decodedSource("m.weight")->decode(0, 16, 0, 64, w.data(), 64);
    EXPECT_EQ(w[0], g16.at(0, 0, 16) + halfToF32(g16.s[0]));
  }
}

TEST(QuantSchemes, AwqAliasesAndGroupSize16) {
  // AutoAWQ's own spellings (w_bit, q_group_size); qweight [in, out/8] in
  // AutoAWQ's nibble order.
  const int order[8] = {0, 2, 4, 6, 1, 3, 5, 7};
  int64_t out = 16, in = 48, g = 16, groups = in / g;
  std::vector<int> q, z;
  std::vector<uint16_t> s;
  for (int64_t k = 0; k < in * out; ++k)
    q.push_back(randomInt(0, 15));
  for (int64_t k = 0; k < groups * out; ++k) {
    z.push_back(randomInt(0, 15));
    s.push_back(halfOf(randomInt(0, 15)));
  }
  std::vector<int32_t> qw(size_t(in * out / 8), 0), qz(size_t(groups * out / 8), 0);
  for (int64_t i = 0; i < in; ++i)
    for (int64_t c = 0; c < out / 8; ++c)
      for (int j = 0; j < 8; ++j)
        qw[size_t(i * out / 8 + c)] |=
            int32_t(uint32_t(q[size_t(i * out + 8 * c + order[j])]) << (4 * j));
  for (int64_t gi = 0; gi < groups; ++gi)
    for (int64_t c = 0; c < out / 8; ++c)
      for (int j = 0; j < 8; ++j)
        qz[size_t(gi * out / 8 + c)] |=
            int32_t(uint32_t(z[size_t(gi * out + 8 * c + order[j])]) << (4 * j));
  TempDir dir;
  writeCheckpoint(dir,
                  {tensorOf("model.layers.0.mlp.up_proj.qweight", hf::DType::I32,
                            {in, out / 8}, qw),
                   tensorOf("model.layers.0.mlp.up_proj.qzeros", hf::DType::I32,
                            {groups, out / 8}, qz),
                   tensorOf("model.layers.0.mlp.up_proj.scales", hf::DType::F16,
                            {groups, out}, s),
                   tensorOf("lm_head.weight", hf::DType::F32, {2, 2},
                            std::vector<float>{1, 2, 3, 4})},
                  configWithQuant(R"({"quant_method": "awq", "w_bit": 4, "q_group_size": 16,
                             "zero_point": true, "version": "GEMM",
                             "modules_to_not_convert": ["lm_head"]})"));
  auto ckpt = open(dir);
  ASSERT_TRUE(ckpt.ok()) << ckpt.status();
  EXPECT_EQ((*ckpt)->decodedSource("model.layers.0.mlp.up_proj.weight")->format(),
            "AWQ int4 g16");
  expectDecoded(**ckpt, "model.layers.0.mlp.up_proj.weight", out, in, [&](int64_t o, int64_t i) {
    int64_t k = (i / g) * out + o;
    return float(q[size_t(i * out + o)] - z[size_t(k)]) * halfToF32(s[size_t(k)]);
  });
  // The unconverted head stays as stored.
  EXPECT_EQ((*ckpt)->decodedSource("lm_head.weight"), nullptr);
  EXPECT_EQ((*ckpt)->find("lm_head.weight")->dtype, hf::DType::F32);
}

/// compressed-tensors with two config groups chosen by `re:` targets, an
/// `re:` ignore, int-quantized I8 weights per channel with zero points, and
/// FP8 (E5M2) weights with 2 x 16 block scales over a partial last block.
TEST(QuantSchemes, CompressedTensorsGroupsByRegexIntAndBlockFp8) {
  std::string ct = R"({"quant_method": "compressed-tensors", "format": "int-quantized",
    "quantization_status": "compressed", "ignore": ["lm_head", "re:.*\\.mlp\\.gate_proj$"],
    "config_groups": {
      "attn": {"targets": ["re:.*self_attn\\.(q|k)_proj$"], "weights": {"num_bits": 8,
        "type": "int", "symmetric": false, "strategy": "channel"}},
      "mlp": {"targets": ["re:.*mlp\\.up_proj$"], "format": "float-quantized",
        "weights": {"num_bits": 8, "type": "float", "strategy": "block",
        "block_structure": [2, 16]}}}})";
  int64_t out = 5, in = 40; // blocks: 3 x 3 cells, the last row/column partial
  std::vector<int8_t> q(size_t(out * in));
  std::vector<int8_t> zp(static_cast<size_t>(out));
  std::vector<uint16_t> chScale(static_cast<size_t>(out));
  for (auto &v : q)
    v = int8_t(randomInt(-128, 127));
  for (int64_t o = 0; o < out; ++o) {
    zp[size_t(o)] = int8_t(randomInt(-8, 7));
    chScale[size_t(o)] = uint16_t(0x3C00 + 0x100 * randomInt(-4, 4)); // f16 0.5 .. 2
  }
  // E5M2 codes of small values: sign, exponent 13..17, 2 mantissa bits.
  std::vector<uint8_t> f8(size_t(out * in));
  for (auto &v : f8)
    v = uint8_t((randomInt(0, 1) << 7) | (randomInt(13, 17) << 2) | randomInt(0, 3));
  std::vector<float> blockScale(9);
  for (auto &v : blockScale)
    v = std::ldexp(1.0f + float(randomInt(0, 7)) / 8, randomInt(-6, 2));
  TempDir dir;
  writeCheckpoint(
      dir,
      {tensorOf("model.layers.0.self_attn.q_proj.weight", hf::DType::I8, {out, in}, q),
       tensorOf("model.layers.0.self_attn.q_proj.weight_scale", hf::DType::F16, {out, 1}, chScale),
       tensorOf("model.layers.0.self_attn.q_proj.weight_zero_point", hf::DType::I8, {out, 1}, zp),
       tensorOf("model.layers.0.mlp.up_proj.weight", hf::DType::F8_E5M2, {out, in}, f8),
       tensorOf("model.layers.0.mlp.up_proj.weight_scale", hf::DType::F32, {3, 3}, blockScale),
       tensorOf("model.layers.0.mlp.up_proj.input_scale", hf::DType::F32, {1},
                std::vector<float>{0.5f}),
       tensorOf("model.layers.0.mlp.gate_proj.weight", hf::DType::BF16, {2, 2},
                std::vector<uint16_t>{0x3F80, 0, 0, 0x3F80})},
      configWithQuant(ct));
  auto ckpt = open(dir);
  ASSERT_TRUE(ckpt.ok()) << ckpt.status();
  expectDecoded(**ckpt, "model.layers.0.self_attn.q_proj.weight", out, in,
                [&](int64_t o, int64_t i) {
                  return float(q[size_t(o * in + i)] - zp[size_t(o)]) *
                         halfToF32(chScale[size_t(o)]);
                });
  expectDecoded(**ckpt, "model.layers.0.mlp.up_proj.weight", out, in,
                [&](int64_t o, int64_t i) {
                  return e5m2ToF32(f8[size_t(o * in + i)]) *
                         blockScale[size_t((o / 2) * 3 + i / 16)];
                });
  // Ignored by regex and stored dense: untouched; activation scales dropped.
  EXPECT_EQ((*ckpt)->find("model.layers.0.mlp.gate_proj.weight")->dtype, hf::DType::BF16);
  EXPECT_EQ((*ckpt)->find("model.layers.0.mlp.up_proj.input_scale"), nullptr);
  EXPECT_EQ((*ckpt)->find("model.layers.0.self_attn.q_proj.weight_zero_point"), nullptr);

  // A module of 2 x 2 int8 codes alone in a checkpoint: the error opening it.
  auto errorOf = [&](const std::string &m) {
    TempDir bad;
    writeCheckpoint(bad,
                    {tensorOf(m + ".weight", hf::DType::I8, {2, 2}, std::vector<int8_t>{1, 2, 3, 4}),
                     tensorOf(m + ".weight_scale", hf::DType::F32, {2, 1}, std::vector<float>{1, 1})},
                    configWithQuant(ct));
    auto r = open(bad);
    return r.ok() ? std::string() : std::string(r.status().message());
  };
  // The regex ignore names a module that holds quantized tensors.
  EXPECT_THAT(errorOf("model.layers.0.mlp.gate_proj"),
              HasSubstr("matches quantization_config.ignore 're:.*\\.mlp\\.gate_proj$'"));
  // A quantized module no group targets.
  EXPECT_THAT(errorOf("model.layers.0.mlp.down_proj"),
              HasSubstr("'model.layers.0.mlp.down_proj' holds quantized tensors but "
                        "matches the targets of no quantization_config.config_groups"));
}

/// naive-quantized: integer weights with one symmetric per-tensor scale.
TEST(QuantSchemes, CompressedTensorsNaiveQuantizedPerTensor) {
  int64_t out = 3, in = 7;
  std::vector<int8_t> q(size_t(out * in));
  for (auto &v : q)
    v = int8_t(randomInt(-127, 127));
  TempDir dir;
  writeCheckpoint(dir,
                  {tensorOf("m.weight", hf::DType::I8, {out, in}, q),
                   tensorOf("m.weight_scale", hf::DType::BF16, {1},
                            std::vector<uint16_t>{0x3D80})}, // 0.0625
                  configWithQuant(R"({"quant_method": "compressed-tensors", "format": "naive-quantized",
                    "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 8,
                    "type": "int", "symmetric": true, "strategy": "tensor"}}}})"));
  auto ckpt = open(dir);
  ASSERT_TRUE(ckpt.ok()) << ckpt.status();
  expectDecoded(**ckpt, "m.weight", out, in,
                [&](int64_t o, int64_t i) { return float(q[size_t(o * in + i)]) * 0.0625f; });
}

/// quant_method fp8: per-tensor scales (no weight_block_size) and
/// DeepSeek-style block scales stored as E8M0 (scale_fmt ue8m0).
TEST(QuantSchemes, Fp8PerTensorAndE8M0BlockScales) {
  int64_t out = 4, in = 6;
  std::vector<uint8_t> codes(size_t(out * in));
  for (auto &v : codes) // any E4M3 code but the NaNs 0x7F / 0xFF
    v = uint8_t(randomInt(0, 0x7E) | (randomInt(0, 1) << 7));
  {
    TempDir dir;
    writeCheckpoint(dir,
                    {tensorOf("m.weight", hf::DType::F8_E4M3, {out, in}, codes),
                     tensorOf("m.weight_scale", hf::DType::F32, {}, std::vector<float>{0.375f})},
                    configWithQuant(R"({"quant_method": "fp8", "fmt": "e4m3",
                               "activation_scheme": "dynamic"})"));
    auto ckpt = open(dir);
    ASSERT_TRUE(ckpt.ok()) << ckpt.status();
    expectDecoded(**ckpt, "m.weight", out, in, [&](int64_t o, int64_t i) {
      return e4m3ToF32(codes[size_t(o * in + i)]) * 0.375f;
    });
  }
  {
    TempDir dir; // 3 x 4 blocks: a 2 x 2 grid, both last blocks partial
    std::vector<uint8_t> e8m0 = {127, 128, 120, 130}; // 1, 2, 2^-7, 8
    writeCheckpoint(dir,
                    {tensorOf("m.weight", hf::DType::F8_E4M3, {out, in}, codes),
                     tensorOf("m.weight_scale_inv", hf::DType::F8_E8M0, {2, 2}, e8m0)},
                    configWithQuant(R"({"quant_method": "fp8", "weight_block_size": [3, 4],
                               "scale_fmt": "ue8m0"})"));
    auto ckpt = open(dir);
    ASSERT_TRUE(ckpt.ok()) << ckpt.status();
    expectDecoded(**ckpt, "m.weight", out, in, [&](int64_t o, int64_t i) {
      return e4m3ToF32(codes[size_t(o * in + i)]) *
             std::ldexp(1.0f, int(e8m0[size_t((o / 3) * 2 + i / 4)]) - 127);
    });
  }
}

} // namespace
