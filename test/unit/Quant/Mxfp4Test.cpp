//===- Mxfp4Test.cpp - GPT-OSS MXFP4 experts --------------------------------===//
//
// Part of qeff. quant_method "mxfp4": `_blocks` / `_scales` pairs decode to
// transformers' convert_moe_packed_tensors result (restated below: the FP4
// table, low nibble first, 2^(scale - 127), transpose(1, 2)) bit for bit,
// and malformed pairs are refused naming the tensor.
//
//===----------------------------------------------------------------------===//

#include "QuantTestUtil.h"

#include "frontend/Quant/Mxfp4.h"
#include "frontend/Quant/QuantCheckpoint.h"

#include <gmock/gmock.h>

#include <cmath>
#include <cstring>

using namespace qeff;
using namespace qeff::quant;
using namespace qeff::quant::test;
using ::testing::HasSubstr;

namespace {

const char *kGptOssMxfp4 = R"({"architectures": ["GptOssForCausalLM"],
  "quantization_config": {"quant_method": "mxfp4",
    "modules_to_not_convert": ["model.layers.*.self_attn", "lm_head"]}})";

std::string openError(const TempDir &dir) {
  auto cfg = hf::JsonConfig::read(dir.file("config.json"));
  if (!cfg.ok())
    return std::string(cfg.status().message());
  auto ckpt = openDenseCheckpoint(dir.path(), *cfg);
  return ckpt.ok() ? "" : std::string(ckpt.status().message());
}

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

TEST(Mxfp4, DecodesLikeConvertMoePackedTensors) {
  // E = 2 experts, R = 3 packed rows, G = 2 blocks: every byte value and
  // scale exponents from -127 (subnormal results) to 127.
  const int64_t E = 2, R = 3, G = 2;
  std::vector<uint8_t> blocks(size_t(E * R * G * 16)), scales(size_t(E * R * G));
  for (size_t i = 0; i < blocks.size(); ++i)
    blocks[i] = uint8_t((i * 37 + 11) & 0xFF);
  const uint8_t exps[] = {0, 1, 100, 126, 127, 128, 140, 200, 254, 3, 127, 60};
  for (size_t i = 0; i < scales.size(); ++i)
    scales[i] = exps[i % 12];
  TempDir dir;
  writeCheckpoint(dir,
                  {tensorOf("x.down_proj_blocks", hf::DType::U8, {E, R, G, 16}, blocks),
                   tensorOf("x.down_proj_scales", hf::DType::U8, {E, R, G}, scales),
                   tensorOf("x.down_proj_bias", hf::DType::F32, {E, R},
                            std::vector<float>(size_t(E * R), 0.5f))},
                  kGptOssMxfp4);
  auto cfg = hf::JsonConfig::read(dir.file("config.json"));
  ASSERT_TRUE(cfg.ok());
  auto ckpt = openDenseCheckpoint(dir.path(), *cfg);
  ASSERT_TRUE(ckpt.ok()) << ckpt.status();
  EXPECT_EQ((*ckpt)->tensorNames(),
            (std::vector<std::string>{"x.down_proj", "x.down_proj_bias"}));
  const hf::TensorInfo *w = (*ckpt)->find("x.down_proj");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->dtype, hf::DType::F32);
  EXPECT_EQ(w->shape, (std::vector<int64_t>{E, G * 32, R}));
  const hf::DenseSource *src = (*ckpt)->decodedSource("x.down_proj");
  ASSERT_NE(src, nullptr);
  EXPECT_EQ(src->format(), "MXFP4");
  // The dense [E, K * R] matrix, decoded in one tile.
  const int64_t K = G * 32;
  std::vector<float> got(size_t(E * K * R));
  src->decode(0, E, 0, K * R, got.data(), K * R);
  // convert_moe_packed_tensors restated: out[e, r, 32 g + 2 b] = lut[lo],
  // out[e, r, 32 g + 2 b + 1] = lut[hi], times 2^(scale - 127); the model's
  // tensor is out.transpose(1, 2).
  const float lut[16] = {+0.0f, +0.5f, +1.0f, +1.5f, +2.0f, +3.0f, +4.0f, +6.0f,
                         -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};
  int64_t subnormal = 0;
  for (int64_t e = 0; e < E; ++e)
    for (int64_t r = 0; r < R; ++r)
      for (int64_t g = 0; g < G; ++g) {
        int64_t cell = (e * R + r) * G + g;
        float scale = std::ldexp(1.0f, int(scales[size_t(cell)]) - 127);
        for (int64_t b = 0; b < 16; ++b) {
          uint8_t byte = blocks[size_t(cell * 16 + b)];
          for (int half = 0; half < 2; ++half) {
            float want = lut[half ? byte >> 4 : byte & 0x0F] * scale;
            int64_t k = 32 * g + 2 * b + half;
            float have = got[size_t(e * K * R + k * R + r)];
            subnormal += std::fpclassify(want) == FP_SUBNORMAL;
            ASSERT_EQ(bitsOf(have), bitsOf(want))
                << "e " << e << " k " << k << " r " << r;
          }
        }
      }
  EXPECT_GT(subnormal, 0); // the scale-0 blocks exercise them
  // A tile of single elements agrees with the whole.
  float one;
  src->decode(1, 2, 5 * R + 2, 5 * R + 3, &one, 1);
  EXPECT_EQ(bitsOf(one), bitsOf(got[size_t(K * R + 5 * R + 2)]));
}

TEST(Mxfp4, MalformedPairsNameTheTensor) {
  auto pair = [](std::vector<int64_t> blockShape, std::vector<int64_t> scaleShape,
                 hf::DType blockType = hf::DType::U8, uint8_t scale = 127) {
    int64_t nb = 1, ns = 1;
    for (int64_t d : blockShape)
      nb *= d;
    for (int64_t d : scaleShape)
      ns *= d;
    return std::vector<OwnedTensor>{
        tensorOf("m.gate_up_proj_blocks", blockType, blockShape,
                 std::vector<uint8_t>(size_t(nb * (blockType == hf::DType::U8 ? 1 : 2)), 0x21)),
        tensorOf("m.gate_up_proj_scales", hf::DType::U8, scaleShape,
                 std::vector<uint8_t>(size_t(ns), scale))};
  };
  struct Case {
    std::vector<OwnedTensor> tensors;
    const char *message;
  } cases[] = {
      {pair({2, 4, 2, 15}, {2, 4, 2}),
       "tensor 'm.gate_up_proj_blocks': has shape [2, 4, 2, 15]; MXFP4 expert blocks are"},
      {pair({4, 2, 16}, {4, 2}),
       "tensor 'm.gate_up_proj_blocks': has shape [4, 2, 16]"},
      {pair({2, 4, 2, 16}, {2, 4, 3}),
       "tensor 'm.gate_up_proj_scales': has shape [2, 4, 3]; it must be the blocks' "
       "shape less the last dimension, [2, 4, 2]"},
      {pair({2, 4, 2, 16}, {2, 4, 2}, hf::DType::F16),
       "tensor 'm.gate_up_proj_blocks': is F16; MXFP4 blocks are U8"},
      {pair({2, 4, 2, 16}, {2, 4, 2}, hf::DType::U8, 255),
       "tensor 'm.gate_up_proj_scales': holds the E8M0 NaN code 255 at element 0"},
      {{pair({2, 4, 2, 16}, {2, 4, 2})[0]},
       "tensor 'm.gate_up_proj_blocks': is an MXFP4 blocks tensor without its "
       "'m.gate_up_proj_scales'"},
      {{pair({2, 4, 2, 16}, {2, 4, 2})[1]},
       "tensor 'm.gate_up_proj_scales': is an MXFP4 scales tensor without its "
       "'m.gate_up_proj_blocks'"},
  };
  for (const Case &c : cases) {
    TempDir dir;
    writeCheckpoint(dir, c.tensors, kGptOssMxfp4);
    EXPECT_THAT(openError(dir), HasSubstr(c.message));
  }
  // mxfp4 is read for GPT-OSS experts only.
  TempDir dir;
  writeCheckpoint(dir, pair({2, 4, 2, 16}, {2, 4, 2}),
                  configWithQuant(R"({"quant_method": "mxfp4"})"));
  EXPECT_THAT(openError(dir),
              HasSubstr("'quantization_config.quant_method' is 'mxfp4', which qeff "
                        "reads for GptOssForCausalLM experts only, not for "
                        "'LlamaForCausalLM'"));
}

} // namespace
