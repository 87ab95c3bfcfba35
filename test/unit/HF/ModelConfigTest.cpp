//===- ModelConfigTest.cpp - config.json / generation_config.json tests ---===//

#include "frontend/HF/ModelConfig.h"
#include "frontend/HF/GenerationConfig.h"

#include "test/unit/HF/TestUtil.h"

#include <nlohmann/json.hpp>

#include <cmath>

using namespace qeff::hf;
using namespace qeff::hf::test;
using ::testing::HasSubstr;

namespace {

/// A valid small Llama config; tests patch single fields.
nlohmann::json baseConfig() {
  return nlohmann::json::parse(R"({
    "architectures": ["LlamaForCausalLM"], "model_type": "llama",
    "vocab_size": 128, "hidden_size": 64, "intermediate_size": 96,
    "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 2})");
}

absl::StatusOr<ModelConfig>
parseConfig(const std::string &text,
            const FamilyDefaults &defaults = FamilyDefaults::llama()) {
  auto json = JsonConfig::parse(text, "config.json");
  if (!json.ok())
    return json.status();
  return ModelConfig::fromJson(*json, defaults);
}

absl::StatusOr<ModelConfig> parseWith(const std::string &field,
                                      const nlohmann::json &value) {
  nlohmann::json config = baseConfig();
  config[field] = value;
  return parseConfig(config.dump());
}

//===----------------------------------------------------------------------===//
// Golden configs
//===----------------------------------------------------------------------===//

TEST(ModelConfigGolden, Llama) {
  auto c =
      readModelConfig(goldenDir("LlamaForCausalLM"), FamilyDefaults::llama());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->architecture, "LlamaForCausalLM");
  EXPECT_EQ(c->modelType, "llama");
  EXPECT_EQ(c->vocabSize, 384);
  EXPECT_EQ(c->hiddenSize, 64);
  EXPECT_EQ(c->intermediateSize, 160);
  EXPECT_EQ(c->numHiddenLayers, 2);
  EXPECT_EQ(c->numAttentionHeads, 4);
  EXPECT_EQ(c->numKeyValueHeads, 2);
  EXPECT_EQ(c->headDim, 16);
  EXPECT_FALSE(c->headDimGiven);
  EXPECT_EQ(c->rotaryDim(), 16);
  EXPECT_EQ(c->hiddenAct, "silu");
  EXPECT_EQ(c->maxPositionEmbeddings, 64);
  EXPECT_DOUBLE_EQ(c->rmsNormEps, 1e-6);
  EXPECT_DOUBLE_EQ(c->ropeTheta, 10000.0);
  EXPECT_EQ(c->ropeScaling.type, RopeScalingType::None);
  EXPECT_FALSE(c->tieWordEmbeddings);
  EXPECT_FALSE(c->slidingWindow.has_value());
  EXPECT_FALSE(c->attentionBias);
  EXPECT_FALSE(c->mlpBias);
  EXPECT_EQ(c->bosTokenId, 1);
  EXPECT_EQ(c->padTokenId, 0);
  EXPECT_EQ(c->eosTokenIds, std::vector<int64_t>{2});
  EXPECT_EQ(c->torchDtype, "float32");
  ASSERT_TRUE(c->raw.has_value());
  EXPECT_EQ(*c->raw->getInt("pretraining_tp", 0), 1);
}

TEST(ModelConfigGolden, Mistral) {
  auto c = readModelConfig(goldenDir("MistralForCausalLM") + "/config.json",
                           FamilyDefaults::mistral());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->architecture, "MistralForCausalLM");
  EXPECT_EQ(c->headDim, 16);
  EXPECT_TRUE(c->headDimGiven);
  EXPECT_EQ(c->slidingWindow, 8);
  EXPECT_EQ(c->vocabSize, 320);
  EXPECT_EQ(c->intermediateSize, 128);
}

TEST(ModelConfigGolden, GenerationConfig) {
  auto g = readGenerationConfigIfPresent(goldenDir("LlamaForCausalLM"));
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_TRUE(g->has_value());
  EXPECT_EQ((*g)->bosTokenId, 1);
  EXPECT_EQ((*g)->padTokenId, 0);
  EXPECT_EQ((*g)->eosTokenIds, std::vector<int64_t>{2});
  EXPECT_FALSE((*g)->maxLength.has_value());

  TempDir dir;
  auto absent = readGenerationConfigIfPresent(dir.path());
  ASSERT_TRUE(absent.ok()) << absent.status();
  EXPECT_FALSE(absent->has_value());
}

//===----------------------------------------------------------------------===//
// Defaults and optional fields
//===----------------------------------------------------------------------===//

TEST(ModelConfigDefaults, FamilyDefaultsFillAbsentFields) {
  auto c = parseConfig(R"({"architectures": ["MistralForCausalLM"]})",
                       FamilyDefaults::mistral());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->hiddenSize, 4096);
  EXPECT_EQ(c->numAttentionHeads, 32);
  EXPECT_EQ(c->numKeyValueHeads, 8);
  EXPECT_EQ(c->headDim, 128);
  EXPECT_EQ(c->intermediateSize, 14336);
  EXPECT_EQ(c->maxPositionEmbeddings, 131072);
  EXPECT_EQ(c->slidingWindow, 4096);
  EXPECT_FALSE(c->tieWordEmbeddings);
}

TEST(ModelConfigDefaults, KvHeadsDefaultToHeadsAndTieDefault) {
  nlohmann::json config = baseConfig();
  config.erase("num_key_value_heads");
  FamilyDefaults generic = FamilyDefaults::llama();
  generic.tieWordEmbeddings = true; // PretrainedConfig's default
  auto c = parseConfig(config.dump(), generic);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->numKeyValueHeads, 4);
  EXPECT_TRUE(c->tieWordEmbeddings);
}

TEST(ModelConfigDefaults, NullSlidingWindowDisablesFamilyDefault) {
  nlohmann::json config = baseConfig();
  config["sliding_window"] = nullptr;
  auto c = parseConfig(config.dump(), FamilyDefaults::mistral());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->slidingWindow.has_value());
}

TEST(ModelConfigDefaults, ArchitectureFallsBackToModelType) {
  nlohmann::json config = baseConfig();
  config.erase("architectures");
  auto c = parseConfig(config.dump());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->architecture, "llama");
}

TEST(ModelConfigDefaults, EosList) {
  auto c = parseWith("eos_token_id", {128001, 128008, 128009});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->eosTokenIds, (std::vector<int64_t>{128001, 128008, 128009}));
}

TEST(ModelConfigDefaults, RopeScalingLinearAndLlama3) {
  auto linear = parseWith("rope_scaling", {{"type", "linear"}, {"factor", 4}});
  ASSERT_TRUE(linear.ok()) << linear.status();
  EXPECT_EQ(linear->ropeScaling.type, RopeScalingType::Linear);
  EXPECT_DOUBLE_EQ(linear->ropeScaling.factor, 4.0);

  auto llama3 =
      parseWith("rope_scaling", {{"rope_type", "llama3"},
                                 {"factor", 8.0},
                                 {"low_freq_factor", 1.0},
                                 {"high_freq_factor", 4.0},
                                 {"original_max_position_embeddings", 8192}});
  ASSERT_TRUE(llama3.ok()) << llama3.status();
  EXPECT_EQ(llama3->ropeScaling.type, RopeScalingType::Llama3);
  EXPECT_DOUBLE_EQ(llama3->ropeScaling.factor, 8.0);
  EXPECT_DOUBLE_EQ(llama3->ropeScaling.highFreqFactor, 4.0);
  EXPECT_EQ(llama3->ropeScaling.originalMaxPositionEmbeddings, 8192);

  auto dflt = parseWith("rope_scaling", {{"rope_type", "default"}});
  ASSERT_TRUE(dflt.ok()) << dflt.status();
  EXPECT_EQ(dflt->ropeScaling.type, RopeScalingType::None);
}

TEST(ModelConfigDefaults, AttributeMapReadsFamilyNames) {
  // GPT-2 style names through HF's attribute_map mechanism.
  FamilyDefaults gpt2;
  gpt2.attributeMap = {{"hidden_size", "n_embd"},
                       {"num_attention_heads", "n_head"},
                       {"num_hidden_layers", "n_layer"},
                       {"max_position_embeddings", "n_positions"}};
  gpt2.intermediateSize = 3072;
  gpt2.rotary = false;
  auto c = parseConfig(R"({"architectures": ["GPT2LMHeadModel"],
      "vocab_size": 50, "n_embd": 48, "n_head": 3, "n_layer": 2,
      "n_positions": 32, "layer_norm_epsilon": 1e-5})",
                       gpt2);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->hiddenSize, 48);
  EXPECT_EQ(c->numAttentionHeads, 3);
  EXPECT_EQ(c->headDim, 16);
  EXPECT_EQ(c->maxPositionEmbeddings, 32);
  EXPECT_DOUBLE_EQ(*c->raw->getFloat("layer_norm_epsilon", 0), 1e-5);
}

TEST(JsonConfigGetters, TypedAccess) {
  auto json = JsonConfig::parse(
      R"({"i": 3, "f": 2.5, "b": true, "s": "x", "n": null, "l": [1, 2],
          "big": 18446744073709551615, "o": {"k": 1}})",
      "cfg.json");
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(*json->getInt("i", 0), 3);
  EXPECT_EQ(*json->getInt("absent", 7), 7);
  EXPECT_EQ(*json->getInt("n", 7), 7); // null is None
  EXPECT_DOUBLE_EQ(*json->getFloat("f", 0), 2.5);
  EXPECT_DOUBLE_EQ(*json->getFloat("i", 0), 3.0);
  EXPECT_TRUE(*json->getBool("b", false));
  EXPECT_EQ(*json->getString("s", ""), "x");
  EXPECT_FALSE(json->getOptionalInt("absent")->has_value());
  EXPECT_EQ(*json->getIntOrIntList("l"), (std::vector<int64_t>{1, 2}));
  EXPECT_TRUE(json->has("o"));
  EXPECT_FALSE(json->has("n"));
  EXPECT_THAT(json->getInt("f", 0),
              StatusHasMessage("cfg.json: field 'f' must be an integer, got "
                               "2.5"));
  EXPECT_THAT(json->getInt("big", 0),
              StatusHasMessage("field 'big' must be an integer"));
  EXPECT_THAT(json->getBool("i", false),
              StatusHasMessage("field 'i' must be a boolean, got 3"));
  EXPECT_THAT(json->getString("b", ""),
              StatusHasMessage("field 'b' must be a string, got true"));
  EXPECT_THAT(json->getFloat("s", 0),
              StatusHasMessage("field 's' must be a number, got \"x\""));
  auto nested = json->getOptionalObject("o");
  ASSERT_TRUE(nested.ok() && nested->has_value());
  EXPECT_THAT((*nested)->getString("k", ""),
              StatusHasMessage("cfg.json: field 'o.k' must be a string"));
}

//===----------------------------------------------------------------------===//
// Malformed configs: each gives its specific error naming file and field.
//===----------------------------------------------------------------------===//

TEST(ModelConfigMalformed, NotObject) {
  EXPECT_THAT(parseConfig("[1]"),
              StatusHasMessage("config.json: must hold a JSON object, got "
                               "[1]"));
}

TEST(ModelConfigMalformed, NotJson) {
  EXPECT_THAT(parseConfig("{\"hidden_size\": 64,}"),
              StatusHasMessage("config.json: content is not valid JSON"));
}

TEST(ModelConfigMalformed, MissingFile) {
  TempDir dir;
  EXPECT_THAT(readModelConfig(dir.path(), FamilyDefaults::llama()),
              StatusHasMessage(dir.file("config.json") + ": cannot open"));
}

TEST(ModelConfigMalformed, WrongTypedField) {
  EXPECT_THAT(parseWith("num_attention_heads", "4"),
              StatusHasMessage("config.json: field 'num_attention_heads' must "
                               "be a positive integer, got \"4\""));
}

TEST(ModelConfigMalformed, FloatForIntegerField) {
  EXPECT_THAT(parseWith("num_hidden_layers", 2.0),
              StatusHasMessage("config.json: field 'num_hidden_layers' must "
                               "be a positive integer, got 2.0"));
}

TEST(ModelConfigMalformed, ZeroHiddenSize) {
  EXPECT_THAT(parseWith("hidden_size", 0),
              StatusHasMessage("config.json: field 'hidden_size' must be a "
                               "positive integer, got 0"));
}

TEST(ModelConfigMalformed, NegativeHiddenSize) {
  EXPECT_THAT(parseWith("hidden_size", -64),
              StatusHasMessage("config.json: field 'hidden_size' must be a "
                               "positive integer, got -64"));
}

TEST(ModelConfigMalformed, NegativeVocab) {
  EXPECT_THAT(
      parseWith("vocab_size", -1),
      StatusHasMessage("field 'vocab_size' must be a positive integer"));
}

TEST(ModelConfigMalformed, MissingRequiredField) {
  EXPECT_THAT(parseConfig(R"({"architectures": ["X"]})", FamilyDefaults{}),
              StatusHasMessage("config.json: field 'vocab_size' is missing "
                               "(required)"));
}

TEST(ModelConfigMalformed, HeadsNotDividingHidden) {
  EXPECT_THAT(parseWith("num_attention_heads", 5),
              StatusHasMessage("config.json: field 'num_attention_heads' (5) "
                               "must divide hidden_size (64) when head_dim is "
                               "not given"));
}

TEST(ModelConfigMalformed, KvHeadsNotDividingHeads) {
  EXPECT_THAT(parseWith("num_key_value_heads", 3),
              StatusHasMessage("config.json: field 'num_key_value_heads' (3) "
                               "must divide num_attention_heads (4)"));
}

TEST(ModelConfigMalformed, OddHeadDim) {
  EXPECT_THAT(parseWith("head_dim", 15),
              StatusHasMessage("config.json: field 'head_dim' gives a rotary "
                               "dimension of 15"));
}

TEST(ModelConfigMalformed, ZeroHeadDim) {
  EXPECT_THAT(parseWith("head_dim", 0),
              StatusHasMessage("field 'head_dim' must be a positive integer"));
}

TEST(ModelConfigMalformed, UnknownRopeScalingType) {
  EXPECT_THAT(parseWith("rope_scaling", {{"type", "magic"}, {"factor", 2}}),
              StatusHasMessage("config.json: field 'rope_scaling' has unknown "
                               "type 'magic' (supported: linear, llama3, "
                               "yarn, dynamic, longrope)"));
}

TEST(ModelConfigMalformed, RopeScalingVersionDisagreements) {
  // transformers 4.44.2 takes yarn's and dynamic's original context from
  // max_position_embeddings; a different rope_scaling value is refused.
  EXPECT_THAT(parseWith("rope_scaling",
                        {{"rope_type", "yarn"},
                         {"factor", 4.0},
                         {"original_max_position_embeddings", 1024}}),
              StatusHasMessage("field 'rope_scaling.original_max_position_"
                               "embeddings' (1024) differs from "
                               "max_position_embeddings (2048)"));
  EXPECT_THAT(parseWith("rope_scaling",
                        {{"type", "dynamic"},
                         {"factor", 2.0},
                         {"original_max_position_embeddings", 4096}}),
              StatusHasMessage("not supported for dynamic scaling"));
  EXPECT_THAT(parseWith("rope_scaling", {{"type", "yarn"}, {"factor", 0.5}}),
              StatusHasMessage("field 'rope_scaling.factor' must be at least 1 "
                               "for yarn scaling, got 0.5"));
}

TEST(ModelConfigMalformed, LongRopeFields) {
  nlohmann::json eight = {1, 1, 1, 1, 1, 1, 1, 1};
  nlohmann::json config = baseConfig();
  config["original_max_position_embeddings"] = 512;
  config["rope_scaling"] = {{"type", "longrope"},
                            {"short_factor", eight},
                            {"long_factor", {1, 2}}};
  EXPECT_THAT(parseConfig(config.dump()),
              StatusHasMessage("field 'rope_scaling.long_factor' has 2 "
                               "entries; longrope needs one per rotary "
                               "frequency (rotary dimension / 2 = 8)"));
  config["rope_scaling"]["long_factor"] = {1, 2, 3, 4, 5, 6, 7, -8};
  EXPECT_THAT(parseConfig(config.dump()),
              StatusHasMessage("field 'rope_scaling.long_factor' must be a "
                               "list of positive numbers"));
  config["rope_scaling"]["long_factor"] = eight;
  config["rope_scaling"]["attention_factor"] = 1.2;
  EXPECT_THAT(parseConfig(config.dump()),
              StatusHasMessage("field 'rope_scaling.attention_factor' is not "
                               "supported for longrope"));
  config["rope_scaling"].erase("attention_factor");
  config.erase("original_max_position_embeddings");
  EXPECT_THAT(parseConfig(config.dump()),
              StatusHasMessage("longrope needs the top-level "
                               "'original_max_position_embeddings'"));
}

TEST(ModelConfigDefaults, RopeScalingYarnAsTransformers455ReadsIt) {
  // The released GPT-OSS rope_scaling. A family read as transformers 4.55
  // (yarnReadsOriginalContext) takes the correction range at the nested
  // original context, keeps the explicit factor (attention factor
  // get_mscale(32) = 0.1 ln 32 + 1) and reads `truncate`.
  nlohmann::json config = baseConfig();
  config["max_position_embeddings"] = 131072;
  config["rope_scaling"] = {{"rope_type", "yarn"},
                            {"factor", 32.0},
                            {"original_max_position_embeddings", 4096},
                            {"beta_fast", 32.0},
                            {"beta_slow", 1.0},
                            {"truncate", false}};
  FamilyDefaults reads455 = FamilyDefaults::llama();
  reads455.yarnReadsOriginalContext = true;
  auto c = parseConfig(config.dump(), reads455);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->ropeScaling.originalMaxPositionEmbeddings, 4096);
  EXPECT_DOUBLE_EQ(c->ropeScaling.factor, 32.0);
  EXPECT_FALSE(c->ropeScaling.truncate);
  EXPECT_DOUBLE_EQ(c->ropeScaling.attentionFactor, 0.1 * std::log(32.0) + 1);
  // The served context is max_position_embeddings itself (not x 32).
  auto json = JsonConfig::parse(config.dump(), "config.json");
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(servedContext(*json), 131072);
  // truncate defaults to true; a non-boolean is named.
  config["rope_scaling"].erase("truncate");
  auto dflt = parseConfig(config.dump(), reads455);
  ASSERT_TRUE(dflt.ok()) << dflt.status();
  EXPECT_TRUE(dflt->ropeScaling.truncate);
  config["rope_scaling"]["truncate"] = "no";
  EXPECT_THAT(parseConfig(config.dump(), reads455),
              StatusHasMessage("'rope_scaling.truncate' must be true or false"));
  // Read as 4.44.2 (the default): both fields refused rather than guessed.
  config["rope_scaling"]["truncate"] = false;
  config["rope_scaling"]["original_max_position_embeddings"] = 131072;
  EXPECT_THAT(parseConfig(config.dump()),
              StatusHasMessage("'rope_scaling.truncate' other than true is "
                               "not supported for this class"));
}

TEST(ModelConfigDefaults, RopeScalingYarnDynamicLongRope) {
  // yarn: defaults of transformers, attention factor 0.1 ln(F) + 1.
  auto yarn = parseWith("rope_scaling", {{"rope_type", "yarn"}, {"factor", 4.0}});
  ASSERT_TRUE(yarn.ok()) << yarn.status();
  EXPECT_EQ(yarn->ropeScaling.type, RopeScalingType::Yarn);
  EXPECT_EQ(yarn->ropeScaling.originalMaxPositionEmbeddings, 2048);
  EXPECT_DOUBLE_EQ(yarn->ropeScaling.betaFast, 32.0);
  EXPECT_DOUBLE_EQ(yarn->ropeScaling.betaSlow, 1.0);
  EXPECT_DOUBLE_EQ(yarn->ropeScaling.attentionFactor, 0.1 * std::log(4.0) + 1);
  // DeepSeek's mscale / mscale_all_dim ratio; an explicit factor wins.
  auto mscale = parseWith("rope_scaling", {{"type", "yarn"},
                                           {"factor", 40.0},
                                           {"mscale", 1.0},
                                           {"mscale_all_dim", 0.5},
                                           {"beta_fast", 0}});
  ASSERT_TRUE(mscale.ok()) << mscale.status();
  EXPECT_DOUBLE_EQ(mscale->ropeScaling.attentionFactor,
                   (0.1 * std::log(40.0) + 1) / (0.05 * std::log(40.0) + 1));
  EXPECT_DOUBLE_EQ(mscale->ropeScaling.betaFast, 32.0); // `or 32`
  auto explicitFactor = parseWith(
      "rope_scaling",
      {{"type", "yarn"}, {"factor", 4.0}, {"attention_factor", 1.0}});
  ASSERT_TRUE(explicitFactor.ok()) << explicitFactor.status();
  EXPECT_DOUBLE_EQ(explicitFactor->ropeScaling.attentionFactor, 1.0);

  auto dynamic = parseWith("rope_scaling", {{"type", "dynamic"}, {"factor", 2}});
  ASSERT_TRUE(dynamic.ok()) << dynamic.status();
  EXPECT_EQ(dynamic->ropeScaling.type, RopeScalingType::Dynamic);
  EXPECT_EQ(dynamic->ropeScaling.originalMaxPositionEmbeddings, 2048);

  // longrope ("su" is its older name): the threshold and attention factor
  // from the top-level original_max_position_embeddings.
  nlohmann::json config = baseConfig();
  config["max_position_embeddings"] = 8192;
  config["original_max_position_embeddings"] = 512;
  config["rope_scaling"] = {{"type", "su"},
                            {"short_factor", {1, 1, 1, 1, 1, 1, 1, 1}},
                            {"long_factor", {1, 2, 3, 4, 5, 6, 7, 8}}};
  auto longrope = parseConfig(config.dump());
  ASSERT_TRUE(longrope.ok()) << longrope.status();
  EXPECT_EQ(longrope->ropeScaling.type, RopeScalingType::LongRope);
  EXPECT_EQ(longrope->ropeScaling.originalMaxPositionEmbeddings, 512);
  EXPECT_DOUBLE_EQ(longrope->ropeScaling.attentionFactor,
                   std::sqrt(1 + std::log(16.0) / std::log(512.0)));
  EXPECT_EQ(longrope->ropeScaling.longFactor.back(), 8.0);
}

TEST(ModelConfigDefaults, ServedContext) {
  // max_position_embeddings, times the factor of the scalings that extend
  // it; the others (llama3, longrope) state the extended context already.
  auto served = [](const nlohmann::json &config) {
    auto json = JsonConfig::parse(config.dump(), "config.json");
    return json.ok() ? servedContext(*json) : -1;
  };
  nlohmann::json c = baseConfig();
  EXPECT_EQ(served(c), 0); // no max_position_embeddings
  c["max_position_embeddings"] = 16;
  EXPECT_EQ(served(c), 16);
  c["rope_scaling"] = {{"type", "dynamic"}, {"factor", 2.0}};
  EXPECT_EQ(served(c), 32);
  c["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
  EXPECT_EQ(served(c), 64);
  c["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}};
  EXPECT_EQ(served(c), 16);
  c["rope_scaling"] = {{"rope_type", "linear"}, {"factor", "two"}};
  EXPECT_EQ(served(c), 16); // malformed: left to the import to report
}

TEST(ModelConfigGolden, RopeScalingGoldens) {
  auto phi3 = readModelConfig(goldenDir("Phi3ForCausalLM-longrope"),
                              FamilyDefaults::phi3());
  ASSERT_TRUE(phi3.ok()) << phi3.status();
  EXPECT_EQ(phi3->ropeScaling.type, RopeScalingType::LongRope);
  EXPECT_EQ(phi3->ropeScaling.originalMaxPositionEmbeddings, 16);
  EXPECT_DOUBLE_EQ(phi3->ropeScaling.attentionFactor, std::sqrt(1.5));
  auto yarn = readModelConfig(goldenDir("LlamaForCausalLM-yarn_rope"),
                              FamilyDefaults::llama());
  ASSERT_TRUE(yarn.ok()) << yarn.status();
  EXPECT_EQ(yarn->ropeScaling.originalMaxPositionEmbeddings, 32);
}

TEST(ModelConfigMalformed, RopeScalingWithoutType) {
  EXPECT_THAT(parseWith("rope_scaling", {{"factor", 2}}),
              StatusHasMessage("field 'rope_scaling' has no 'rope_type' or "
                               "'type'"));
}

TEST(ModelConfigMalformed, RopeScalingNotObject) {
  EXPECT_THAT(parseWith("rope_scaling", "linear"),
              StatusHasMessage("field 'rope_scaling' must be an object"));
}

TEST(ModelConfigMalformed, LinearRopeMissingFactor) {
  EXPECT_THAT(parseWith("rope_scaling", {{"type", "linear"}}),
              StatusHasMessage("config.json: field 'rope_scaling.factor' is "
                               "missing (required)"));
}

TEST(ModelConfigMalformed, Llama3RopeMissingOriginalMax) {
  EXPECT_THAT(parseWith("rope_scaling", {{"rope_type", "llama3"},
                                         {"factor", 8.0},
                                         {"low_freq_factor", 1.0},
                                         {"high_freq_factor", 4.0}}),
              StatusHasMessage("field "
                               "'rope_scaling.original_max_position_"
                               "embeddings' is missing (required)"));
}

TEST(ModelConfigMalformed, Llama3RopeFrequencyOrder) {
  EXPECT_THAT(
      parseWith("rope_scaling", {{"rope_type", "llama3"},
                                 {"factor", 8.0},
                                 {"low_freq_factor", 4.0},
                                 {"high_freq_factor", 4.0},
                                 {"original_max_position_embeddings", 8192}}),
      StatusHasMessage("field 'rope_scaling.high_freq_factor' (4) "
                       "must be greater than low_freq_factor (4)"));
}

TEST(ModelConfigMalformed, TieNotBool) {
  EXPECT_THAT(parseWith("tie_word_embeddings", 1),
              StatusHasMessage("config.json: field 'tie_word_embeddings' must "
                               "be a boolean, got 1"));
}

TEST(ModelConfigMalformed, SlidingWindowZero) {
  EXPECT_THAT(parseWith("sliding_window", 0),
              StatusHasMessage("field 'sliding_window' must be null or a "
                               "positive integer, got 0"));
}

TEST(ModelConfigMalformed, EosListWithString) {
  EXPECT_THAT(parseWith("eos_token_id", {2, "x"}),
              StatusHasMessage("field 'eos_token_id' must be an integer or a "
                               "list of integers"));
}

// `qeff run` refuses negative EOS ids, so every reader does (issue 26).
TEST(ModelConfigMalformed, NegativeEos) {
  EXPECT_THAT(parseWith("eos_token_id", {2, -1}),
              StatusHasMessage("config.json: field 'eos_token_id' holds -1, which "
                               "is not a token id"));
}

TEST(ModelConfigMalformed, GenerationConfigNegativeEos) {
  TempDir dir;
  dir.write("generation_config.json", R"({"eos_token_id": -5})");
  EXPECT_THAT(readGenerationConfigIfPresent(dir.path()),
              StatusHasMessage(dir.file("generation_config.json") +
                               ": field 'eos_token_id' holds -5, which is not a "
                               "token id"));
}

// A number past the double range is named by its field, nested ones with
// their path.
TEST(ModelConfigMalformed, NumberOverflowNamesTheField) {
  nlohmann::json config = baseConfig();
  config["rope_theta"] = "@";
  std::string text = config.dump();
  text.replace(text.find("\"@\""), 3, "1e999");
  EXPECT_THAT(parseConfig(text),
              StatusHasMessage("config.json: field 'rope_theta': 1e999 is out of "
                               "range"));
  EXPECT_THAT(parseConfig(R"({"rope_scaling": {"type": "linear", "factor": -1E+400}})"),
              StatusHasMessage("field 'rope_scaling.factor': -1E+400 is out of range"));
  EXPECT_THAT(parseConfig(R"({"a": [1, [2, 3e999]]})"),
              StatusHasMessage("field 'a[1][1]': 3e999 is out of range"));
}

TEST(ModelConfigMalformed, ArchitecturesNotList) {
  EXPECT_THAT(parseWith("architectures", "LlamaForCausalLM"),
              StatusHasMessage("field 'architectures' must be a list of class "
                               "names"));
}

TEST(ModelConfigMalformed, NoArchitectureNorModelType) {
  nlohmann::json config = baseConfig();
  config.erase("architectures");
  config.erase("model_type");
  EXPECT_THAT(parseConfig(config.dump()),
              StatusHasMessage("config.json: neither 'architectures' nor "
                               "'model_type' names the model class"));
}

TEST(ModelConfigMalformed, PartialRotaryOutOfRange) {
  EXPECT_THAT(parseWith("partial_rotary_factor", 1.5),
              StatusHasMessage("field 'partial_rotary_factor' must be in "
                               "(0, 1], got 1.5"));
}

TEST(ModelConfigMalformed, NegativeRopeTheta) {
  EXPECT_THAT(parseWith("rope_theta", -1.0),
              StatusHasMessage("field 'rope_theta' must be positive"));
}

TEST(ModelConfigMalformed, DeeplyNested) {
  std::string deep = std::string(5000, '[') + std::string(5000, ']');
  EXPECT_THAT(parseConfig("{\"rope_scaling\": {\"x\": " + deep + "}}"),
              StatusHasMessage("config.json: content nests deeper than 64 "
                               "levels"));
}

TEST(ModelConfigMalformed, EntryOfStructuresIsSummarised) {
  EXPECT_THAT(parseWith("hidden_size", {{1, 2}, {3}}),
              StatusHasMessage("must be a positive integer, got an array of 2 "
                               "values"));
}

TEST(ModelConfigMalformed, DuplicateField) {
  EXPECT_THAT(parseConfig(R"({"hidden_size": 64, "hidden_size": 32})"),
              StatusHasMessage("config.json: content: duplicate field "
                               "'hidden_size'"));
}

TEST(ModelConfigMalformed, GenerationConfigWrongType) {
  TempDir dir;
  dir.write("generation_config.json", R"({"eos_token_id": "2"})");
  EXPECT_THAT(readGenerationConfigIfPresent(dir.path()),
              StatusHasMessage(dir.file("generation_config.json") +
                               ": field 'eos_token_id' must be an integer or "
                               "a list of integers, got \"2\""));
}

TEST(ModelConfigMalformed, GenerationConfigMaxLength) {
  TempDir dir;
  dir.write("generation_config.json", R"({"max_length": 0})");
  EXPECT_THAT(readGenerationConfigIfPresent(dir.path()),
              StatusHasMessage("field 'max_length' must be a positive "
                               "integer, got 0"));
}

} // namespace
