//===- GGUFFileTest.cpp - the GGUF reader and model mapping ---------------===//
//
// Part of qeff. Well-formed files parse; malformed ones (truncated at any
// byte, absurd counts, strings and arrays past the end, bad offsets,
// alignment, types, dimensions, duplicates) end in an error naming the file
// and the key or tensor. The model mapping refuses architectures, tensors
// and types it cannot import by name.
//
//===----------------------------------------------------------------------===//

#include "GGUFWriter.h"
#include "QuantTestUtil.h"

#include "frontend/GGUF/GGMLTypes.h"
#include "frontend/GGUF/GGUFFile.h"
#include "frontend/GGUF/GGUFModel.h"

#include <gmock/gmock.h>
#include <nlohmann/json.hpp>

using namespace qeff;
using namespace qeff::gguf;
using namespace qeff::quant::test;
using ::testing::HasSubstr;

namespace {

GGUFWriter sample() {
  GGUFWriter w;
  w.kvString("general.architecture", "llama");
  w.kvU32("llama.block_count", 1);
  w.kvStrings("tokenizer.ggml.tokens", {"a", "b"});
  w.tensor({"norm.weight", {4}, kF32, std::string(16, '\x01')});
  w.tensor({"q.weight", {32, 2}, kQ8_0, std::string(68, '\x02')});
  return w;
}

std::string parseError(const std::string &image) {
  auto f = GGUFFile::parse(reinterpret_cast<const std::byte *>(image.data()), image.size(),
                           "x.gguf");
  return f.ok() ? "" : std::string(f.status().message());
}

TEST(GGUFFile, ParsesAWellFormedImage) {
  std::string image = sample().build();
  auto f = GGUFFile::parse(reinterpret_cast<const std::byte *>(image.data()), image.size(), "x.gguf");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ((*f)->version(), 3u);
  EXPECT_EQ(*(*f)->getString("general.architecture"), "llama");
  EXPECT_EQ(*(*f)->getInt("llama.block_count"), 1);
  ASSERT_EQ((*f)->tensors().size(), 2u);
  const TensorInfo *q = (*f)->findTensor("q.weight");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->bytes, 68u);
  EXPECT_EQ(uint8_t(q->data[0]), 2);
  EXPECT_THAT(std::string((*f)->getInt("general.architecture").status().message()),
              HasSubstr("metadata 'general.architecture' must be an integer, got string"));
}

TEST(GGUFFile, EveryTruncationIsAnError) {
  std::string image = sample().build();
  for (size_t n = 0; n < image.size(); ++n)
    EXPECT_NE(parseError(image.substr(0, n)), "") << "truncated to " << n << " bytes";
}

TEST(GGUFFile, MalformedFieldsAreNamed) {
  {
    GGUFWriter w = sample();
    w.tensorCountOverride = uint64_t(1) << 40;
    EXPECT_THAT(parseError(w.build()), HasSubstr("claims 1099511627776 tensors"));
  }
  {
    GGUFWriter w = sample();
    w.kvCountOverride = uint64_t(1) << 50;
    EXPECT_THAT(parseError(w.build()), HasSubstr("metadata pairs, more than"));
  }
  {
    GGUFWriter w;
    std::string kv;
    GGUFWriter::str(kv, "k");
    GGUFWriter::put(kv, uint32_t(8));
    GGUFWriter::put(kv, uint64_t(1) << 40); // string length past the end
    w.kvRaw(kv);
    EXPECT_THAT(parseError(w.build()), HasSubstr("metadata 'k': string length runs past the end"));
  }
  {
    GGUFWriter w;
    std::string kv;
    GGUFWriter::str(kv, "arr");
    GGUFWriter::put(kv, uint32_t(9));
    GGUFWriter::put(kv, uint32_t(4));
    GGUFWriter::put(kv, uint64_t(1) << 33); // array count past the end
    w.kvRaw(kv);
    EXPECT_THAT(parseError(w.build()), HasSubstr("metadata 'arr': "));
  }
  {
    GGUFWriter w = sample();
    w.kvBool("flag", true);
    std::string image = w.build();
    image[image.find("flag") + 4 + 4] = 2; // the bool's byte
    EXPECT_THAT(parseError(image), HasSubstr("bool value 2"));
  }
  {
    GGUFWriter w;
    w.tensor({"t", {4}, kF32, std::string(16, '\0'), 8}); // not aligned
    EXPECT_THAT(parseError(w.build()), HasSubstr("tensor 't': offset 8 is not a multiple"));
  }
  {
    GGUFWriter w;
    w.tensor({"t", {4}, kF32, std::string(16, '\0'), 64}); // past the end
    std::string image = w.build();
    image.resize(image.size() - 8);
    EXPECT_THAT(parseError(image), HasSubstr("run past the end of the file"));
  }
  {
    GGUFWriter w;
    w.tensor({"a", {8}, kF32, std::string(32, '\0'), 0});
    w.tensor({"b", {8}, kF32, std::string(32, '\0'), 0});
    EXPECT_THAT(parseError(w.build()), HasSubstr("overlap"));
  }
  {
    GGUFWriter w;
    w.tensor({"t", {4}, 77, std::string(16, '\0')});
    EXPECT_THAT(parseError(w.build()), HasSubstr("tensor 't': unknown ggml type 77"));
  }
  {
    GGUFWriter w;
    w.tensor({"t", {48}, kQ4_K, std::string(144, '\0')});
    EXPECT_THAT(parseError(w.build()), HasSubstr("not a multiple of the Q4_K block of 256"));
  }
  {
    GGUFWriter w;
    w.tensor({"t", {1, 1, 1, 1, 1}, kF32, std::string(4, '\0')});
    EXPECT_THAT(parseError(w.build()), HasSubstr("5 dimensions"));
  }
  {
    GGUFWriter w;
    w.tensor({"t", {uint64_t(1) << 30, uint64_t(1) << 30}, kF32, ""});
    EXPECT_THAT(parseError(w.build()), HasSubstr("the product below 2^48"));
  }
  {
    GGUFWriter w;
    w.kvU32("k", 1);
    w.kvU32("k", 2);
    EXPECT_THAT(parseError(w.build()), HasSubstr("metadata 'k' appears twice"));
  }
  {
    GGUFWriter w;
    w.tensor({"t", {4}, kF32, std::string(16, '\0')});
    w.tensor({"t", {4}, kF32, std::string(16, '\0')});
    EXPECT_THAT(parseError(w.build()), HasSubstr("tensor 't' appears twice"));
  }
  {
    GGUFWriter w;
    w.kvU32("general.alignment", 24);
    EXPECT_THAT(parseError(w.build()), HasSubstr("'general.alignment' must be a power of two"));
  }
  {
    GGUFWriter w;
    w.version = 1;
    EXPECT_THAT(parseError(w.build()), HasSubstr("GGUF version 1 is not supported"));
    w.version = 0x03000000;
    EXPECT_THAT(parseError(w.build()), HasSubstr("big-endian"));
  }
  EXPECT_THAT(parseError("GGML" + std::string(20, '\0')), HasSubstr("not a GGUF file"));
}

TEST(GGUFModel, FixtureConfigAndTiedEmbeddings) {
  auto model = openGGUFModel(kData + "/models/stories260K-gguf/stories260K.gguf");
  ASSERT_TRUE(model.ok()) << model.status();
  auto config = nlohmann::json::parse(model->hfFiles["config.json"]);
  EXPECT_EQ(config["architectures"][0], "LlamaForCausalLM");
  EXPECT_EQ(config["hidden_size"], 64);
  EXPECT_EQ(config["num_hidden_layers"], 5);
  EXPECT_EQ(config["num_key_value_heads"], 4);
  EXPECT_EQ(config["rms_norm_eps"].get<double>(), 1e-05); // the f32 read back shortest
  EXPECT_EQ(config["tie_word_embeddings"], true);         // no output.weight
  EXPECT_TRUE(model->hfFiles.count("tokenizer.json"));
  // Q/K are decoded (un-permuted), the rest are views of the F32 data.
  EXPECT_NE(model->checkpoint->decodedSource("model.layers.0.self_attn.q_proj.weight"), nullptr);
  EXPECT_EQ(model->checkpoint->decodedSource("model.layers.0.self_attn.v_proj.weight"), nullptr);
  EXPECT_FALSE(model->checkpoint->contains("lm_head.weight"));
}

TEST(GGUFModel, RefusalsNameTheKeyOrTensor) {
  TempDir dir;
  auto errorOf = [&](const GGUFWriter &w) {
    std::string path = dir.write("m.gguf", w.build());
    auto model = openGGUFModel(path);
    return model.ok() ? "" : std::string(model.status().message());
  };
  auto base = [] {
    GGUFWriter w;
    w.kvU32("llama.block_count", 1);
    w.kvU32("llama.embedding_length", 32);
    w.kvU32("llama.attention.head_count", 2);
    return w;
  };
  {
    GGUFWriter w = base();
    w.kvString("general.architecture", "qwen3moe");
    EXPECT_THAT(errorOf(w), HasSubstr("'general.architecture' is 'qwen3moe'; supported GGUF "
                                      "architectures: llama, qwen2, qwen3,"));
  }
  {
    // A qwen3 file without the per-head query/key norms is not Qwen3.
    GGUFWriter w;
    w.kvString("general.architecture", "qwen3");
    w.kvU32("qwen3.block_count", 1);
    w.kvU32("qwen3.embedding_length", 32);
    w.kvU32("qwen3.attention.head_count", 2);
    w.tensor({"token_embd.weight", {32, 4}, kF32, std::string(512, '\0')});
    EXPECT_THAT(errorOf(w), HasSubstr("qwen3 needs the per-head query/key norms "
                                      "'blk.0.attn_q_norm.weight'"));
  }
  {
    GGUFWriter w = base();
    w.kvString("general.architecture", "llama");
    w.tensor({"token_embd.weight", {32, 4}, kF32, std::string(512, '\0')});
    w.tensor({"rope_freqs.weight", {8}, kF32, std::string(32, '\0')});
    EXPECT_THAT(errorOf(w), HasSubstr("tensor 'rope_freqs.weight' is not part of a llama model"));
  }
  {
    GGUFWriter w = base();
    w.kvString("general.architecture", "llama");
    w.tensor({"token_embd.weight", {256, 4}, 16 /* IQ2_XXS */, std::string(4 * 66, '\0')});
    EXPECT_THAT(errorOf(w), HasSubstr("'token_embd.weight' has ggml type IQ2_XXS, which qeff "
                                      "cannot dequantize"));
  }
  {
    GGUFWriter w = base();
    w.kvString("general.architecture", "llama");
    w.kvU32("llama.attention.head_count_kv", 3);
    w.tensor({"token_embd.weight", {32, 4}, kF32, std::string(512, '\0')});
    EXPECT_THAT(errorOf(w), HasSubstr("'llama.attention.head_count_kv' is 3, which does not divide"));
  }
}

} // namespace
