//===- QuantCheckpointTest.cpp - quantization_config and packed checkpoints ===//
//
// Part of qeff. A quantized checkpoint opens as dense weights; what qeff
// cannot import (other kernels, bit widths, dynamic or sparse schemes,
// bitsandbytes, unknown methods) and malformed packed tensors (wrong
// shapes, group sizes that do not divide, missing parts, group indices out
// of range) end in an error naming the field or tensor.
//
//===----------------------------------------------------------------------===//

#include "QuantTestUtil.h"

#include "frontend/Quant/QuantCheckpoint.h"

#include <gmock/gmock.h>
#include <nlohmann/json.hpp>

#include <cctype>

using namespace qeff;
using namespace qeff::quant;
using namespace qeff::quant::test;
using ::testing::HasSubstr;

namespace {

std::string config(const std::string &quant) { return configWithQuant(quant); }

std::string openError(const TempDir &dir) {
  auto cfg = hf::JsonConfig::read(dir.file("config.json"));
  if (!cfg.ok())
    return std::string(cfg.status().message());
  auto ckpt = openDenseCheckpoint(dir.path(), *cfg);
  return ckpt.ok() ? "" : std::string(ckpt.status().message());
}

/// A 64 x 64 AWQ GEMM Linear `m` with group size `g` (all codes 0).
std::vector<OwnedTensor> awqLinear(int64_t out = 64, int64_t in = 64, int64_t g = 32) {
  return {tensorOf("m.qweight", hf::DType::I32, {in, out / 8},
                   std::vector<int32_t>(size_t(in * out / 8), 0)),
          tensorOf("m.qzeros", hf::DType::I32, {in / g, out / 8},
                   std::vector<int32_t>(size_t(in / g * out / 8), 0)),
          tensorOf("m.scales", hf::DType::F16, {in / g, out},
                   std::vector<uint16_t>(size_t(in / g * out), 0x3C00))};
}

const char *kAwq = R"({"quant_method": "awq", "bits": 4, "group_size": 32,
                       "zero_point": true, "version": "gemm"})";

TEST(QuantCheckpoint, AwqBecomesOneDenseWeight) {
  TempDir dir;
  std::vector<OwnedTensor> t = awqLinear();
  t.push_back(tensorOf("m.input_scale", hf::DType::F32, {1}, std::vector<float>{1}));
  writeCheckpoint(dir, t, config(kAwq));
  auto cfg = hf::JsonConfig::read(dir.file("config.json"));
  ASSERT_TRUE(cfg.ok());
  auto ckpt = openDenseCheckpoint(dir.path(), *cfg);
  ASSERT_TRUE(ckpt.ok()) << ckpt.status();
  EXPECT_EQ((*ckpt)->tensorNames(), std::vector<std::string>{"m.weight"});
  const hf::TensorInfo *w = (*ckpt)->find("m.weight");
  EXPECT_EQ(w->dtype, hf::DType::F32);
  EXPECT_EQ(w->shape, (std::vector<int64_t>{64, 64}));
  ASSERT_NE((*ckpt)->decodedSource("m.weight"), nullptr);
  EXPECT_EQ((*ckpt)->decodedSource("m.weight")->format(), "AWQ int4 g32");
  EXPECT_EQ((*ckpt)->filePathOf("m.weight"), dir.file("model.safetensors"));
}

TEST(QuantCheckpoint, AwqMalformed) {
  {
    TempDir dir; // group size that does not divide the inputs
    writeCheckpoint(dir, awqLinear(), config(R"({"quant_method": "awq", "group_size": 48})"));
    EXPECT_THAT(openError(dir), HasSubstr("group_size 48 does not divide"));
  }
  {
    TempDir dir; // qweight of the wrong shape
    std::vector<OwnedTensor> t = awqLinear();
    t[0] = tensorOf("m.qweight", hf::DType::I32, {64, 4}, std::vector<int32_t>(256, 0));
    writeCheckpoint(dir, t, config(kAwq));
    EXPECT_THAT(openError(dir), HasSubstr("tensor 'm.qweight': has shape [64, 4], expected [64, 8]"));
  }
  {
    TempDir dir; // a part missing
    std::vector<OwnedTensor> t = awqLinear();
    t.erase(t.begin() + 1);
    writeCheckpoint(dir, t, config(kAwq));
    EXPECT_THAT(openError(dir), HasSubstr("has no tensor 'm.qzeros'"));
  }
  {
    TempDir dir; // integer scales
    std::vector<OwnedTensor> t = awqLinear();
    t[2] = tensorOf("m.scales", hf::DType::I16, {2, 64}, std::vector<int16_t>(128, 1));
    writeCheckpoint(dir, t, config(kAwq));
    EXPECT_THAT(openError(dir), HasSubstr("scales must be floating point"));
  }
  {
    TempDir dir; // declared unconverted but packed
    writeCheckpoint(dir, awqLinear(),
                    config(R"({"quant_method": "awq", "group_size": 32,
                               "modules_to_not_convert": ["m"]})"));
    EXPECT_THAT(openError(dir), HasSubstr("modules_to_not_convert"));
  }
  {
    TempDir dir; // packed tensors without a quantization_config
    std::vector<OwnedTensor> t = awqLinear();
    std::vector<hf::TensorToWrite> out;
    for (const OwnedTensor &x : t)
      out.push_back({x.name, x.dtype, x.shape, x.bytes.data(), x.bytes.size()});
    ASSERT_TRUE(hf::writeSafeTensors(dir.file("model.safetensors"), out).ok());
    dir.write("config.json", R"({"architectures": ["LlamaForCausalLM"]})");
    EXPECT_THAT(openError(dir), HasSubstr("'m.qweight' (I32) is a quantized tensor, but"));
  }
}

std::vector<OwnedTensor> gptqLinear(int64_t groups = 2, bool gidx = false, int32_t badGroup = 0) {
  std::vector<OwnedTensor> t = {
      tensorOf("m.qweight", hf::DType::I32, {8, 64}, std::vector<int32_t>(512, 0)),
      tensorOf("m.qzeros", hf::DType::I32, {groups, 8},
               std::vector<int32_t>(size_t(groups * 8), 0x77777777)),
      tensorOf("m.scales", hf::DType::F16, {groups, 64},
               std::vector<uint16_t>(size_t(groups * 64), 0x3C00))};
  if (gidx) {
    std::vector<int32_t> g(64);
    for (int i = 0; i < 64; ++i)
      g[size_t(i)] = (i * 7) % int32_t(groups);
    g[5] = badGroup ? badGroup : g[5];
    t.push_back(tensorOf("m.g_idx", hf::DType::I32, {64}, g));
  }
  return t;
}

TEST(QuantCheckpoint, GptqDescActAndGroupIndex) {
  const char *descAct = R"({"quant_method": "gptq", "bits": 4, "group_size": 32,
                             "desc_act": true, "sym": true, "checkpoint_format": "gptq"})";
  {
    TempDir dir;
    writeCheckpoint(dir, gptqLinear(2, true), config(descAct));
    EXPECT_EQ(openError(dir), "");
  }
  {
    TempDir dir;
    writeCheckpoint(dir, gptqLinear(2, false), config(descAct));
    EXPECT_THAT(openError(dir), HasSubstr("desc_act is true but module 'm' has no 'm.g_idx'"));
  }
  {
    TempDir dir;
    writeCheckpoint(dir, gptqLinear(2, true, 9), config(descAct));
    EXPECT_THAT(openError(dir), HasSubstr("entry 5 is group 9, outside the 2 groups"));
  }
  {
    TempDir dir; // scales for 3 groups where 64 inputs in groups of 32 make 2
    writeCheckpoint(dir, gptqLinear(3, false),
                    config(R"({"quant_method": "gptq", "bits": 4, "group_size": 32})"));
    EXPECT_THAT(openError(dir), HasSubstr("has 3 groups, but 64 inputs in groups of 32 make 2"));
  }
  {
    TempDir dir; // "-:" dynamic rule on a packed module
    writeCheckpoint(dir, gptqLinear(),
                    config(R"({"quant_method": "gptq", "bits": 4, "group_size": 32,
                               "dynamic": {"-:m$": {}}})"));
    EXPECT_THAT(openError(dir), HasSubstr("matches quantization_config.dynamic '-:m$'"));
  }
}

TEST(QuantCheckpoint, CompressedTensorsMalformed) {
  std::string ct = R"({"quant_method": "compressed-tensors", "format": "pack-quantized",
    "quantization_status": "compressed", "ignore": ["lm_head"],
    "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4,
      "type": "int", "symmetric": true, "strategy": "group", "group_size": 32}}}})";
  auto parts = [](int64_t in, std::vector<int64_t> packedShape) {
    return std::vector<OwnedTensor>{
        tensorOf("m.weight_packed", hf::DType::I32, packedShape,
                 std::vector<int32_t>(size_t(packedShape[0] * packedShape[1]), 0)),
        tensorOf("m.weight_scale", hf::DType::BF16, {16, in / 32},
                 std::vector<uint16_t>(size_t(16 * (in / 32)), 0x3F80)),
        tensorOf("m.weight_shape", hf::DType::I64, {2}, std::vector<int64_t>{16, in})};
  };
  {
    TempDir dir;
    writeCheckpoint(dir, parts(64, {16, 8}), config(ct));
    EXPECT_EQ(openError(dir), "");
  }
  {
    TempDir dir;
    writeCheckpoint(dir, parts(64, {16, 7}), config(ct));
    EXPECT_THAT(openError(dir), HasSubstr("'m.weight_packed': has shape [16, 7], expected [16, 8]"));
  }
  {
    TempDir dir; // 48 inputs: group 32 does not divide
    std::vector<OwnedTensor> t = parts(64, {16, 6});
    t[2] = tensorOf("m.weight_shape", hf::DType::I64, {2}, std::vector<int64_t>{16, 48});
    writeCheckpoint(dir, t, config(ct));
    EXPECT_THAT(openError(dir), HasSubstr("has 48 inputs, which group_size 32 does not divide"));
  }
  {
    TempDir dir; // weight_shape holding nonsense
    std::vector<OwnedTensor> t = parts(64, {16, 8});
    t[2] = tensorOf("m.weight_shape", hf::DType::I64, {2}, std::vector<int64_t>{16, -3});
    writeCheckpoint(dir, t, config(ct));
    EXPECT_THAT(openError(dir), HasSubstr("'m.weight_shape': holds dimension -3"));
  }
}

struct Refusal {
  const char *quant;
  const char *message;
};

class QuantRefusal : public ::testing::TestWithParam<Refusal> {};

TEST_P(QuantRefusal, NamesTheField) {
  TempDir dir;
  dir.write("config.json", config(GetParam().quant));
  auto cfg = hf::JsonConfig::read(dir.file("config.json"));
  ASSERT_TRUE(cfg.ok());
  auto scheme = parseQuantizationConfig(*cfg);
  ASSERT_FALSE(scheme.ok());
  EXPECT_THAT(std::string(scheme.status().message()), HasSubstr(GetParam().message));
  EXPECT_THAT(std::string(scheme.status().message()), HasSubstr("config.json: field 'quantization_config."));
}

INSTANTIATE_TEST_SUITE_P(
    Refusals, QuantRefusal,
    ::testing::Values(
        Refusal{R"({"quant_method": "awq", "version": "gemv"})", "quantization_config.version' is 'gemv'"},
        Refusal{R"({"quant_method": "awq", "version": "marlin"})", "only AWQ GEMM"},
        Refusal{R"({"quant_method": "awq", "version": "exllama"})", "only AWQ GEMM"},
        Refusal{R"({"quant_method": "awq", "w_bit": 3})", "quantization_config.w_bit' is 3"},
        Refusal{R"({"quant_method": "gptq", "bits": 3})", "3-bit and 2-bit packings are not"},
        Refusal{R"({"quant_method": "gptq", "checkpoint_format": "marlin"})", "quantization_config.checkpoint_format' is 'marlin'"},
        Refusal{R"({"quant_method": "gptq", "group_size": 0})", "quantization_config.group_size' must be a positive group size or -1"},
        Refusal{R"({"quant_method": "gptq", "dynamic": {"+:(": {}}})", "does not compile"},
        Refusal{R"({"quant_method": "compressed-tensors", "format": "pack-quantized",
                    "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 8,
                    "type": "int", "dynamic": true}}}})",
                "dynamic weight quantization"},
        Refusal{R"({"quant_method": "compressed-tensors", "format": "sparse-24-bitmask",
                    "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 4,
                    "type": "int"}}}})",
                "quantization_config.format' is 'sparse-24-bitmask'"},
        Refusal{R"({"quant_method": "compressed-tensors", "format": "pack-quantized",
                    "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 4,
                    "type": "int", "strategy": "tensor_group"}}}})",
                "'tensor_group'"},
        Refusal{R"({"quant_method": "compressed-tensors", "format": "float-quantized",
                    "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 4,
                    "type": "float"}}}})",
                "NVFP4"},
        Refusal{R"({"quant_method": "compressed-tensors", "quantization_status": "frozen",
                    "config_groups": {}})",
                "quantization_config.quantization_status' is 'frozen'"},
        Refusal{R"({"quant_method": "fp8", "fmt": "e5m2"})", "quantization_config.fmt' is 'e5m2'"},
        Refusal{R"({"quant_method": "fp8", "weight_block_size": [128]})", "quantization_config.weight_block_size' must be two"},
        Refusal{R"({"quant_method": "bitsandbytes", "load_in_4bit": true})", "bitsandbytes"},
        Refusal{R"({"quant_method": "hqq"})", "quantization_config.quant_method' is 'hqq', which qeff cannot import"},
        Refusal{R"({"bits": 4})", "quantization_config.quant_method' is missing"},
        Refusal{R"({"quant_method": "awq", "version": "gemv_fast"})", "only AWQ GEMM"},
        Refusal{R"({"quant_method": "gptq", "bits": 2})", "quantization_config.bits' is 2"},
        Refusal{R"({"quant_method": "gptq", "dynamic": {"+:.*down": {"bits": 3}}})",
                "quantization_config.dynamic.+:.*down.bits' is 3"},
        Refusal{R"({"quant_method": "compressed-tensors", "format": "marlin-24",
                    "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 4,
                    "type": "int"}}}})",
                "quantization_config.format' is 'marlin-24'"},
        Refusal{R"({"quant_method": "fp8", "scale_fmt": "e4m3"})",
                "quantization_config.scale_fmt' is 'e4m3'"}),
    // Stable test names (the default prints the parameter's pointers).
    [](const ::testing::TestParamInfo<Refusal> &info) {
      std::string method = "none";
      auto quant = nlohmann::json::parse(info.param.quant);
      if (quant.contains("quant_method"))
        method = quant["quant_method"].get<std::string>();
      for (char &c : method)
        if (!std::isalnum(static_cast<unsigned char>(c)))
          c = '_';
      return method + "_" + std::to_string(info.index);
    });

} // namespace
