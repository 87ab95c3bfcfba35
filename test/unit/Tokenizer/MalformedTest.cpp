//===- MalformedTest.cpp - errors for bad or unsupported tokenizer files --===//
//
// Every malformed or unsupported input must give an absl::Status whose
// message names the file and the JSON field (or the feature), never a crash
// or an exception.
//
//===----------------------------------------------------------------------===//

#include "frontend/Tokenizer/Tokenizer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

using qeff::tokenizer::Tokenizer;

namespace {

const std::string kData = QEFF_TEST_DATA_DIR "/tokenizers/";

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

/// A valid minimal tokenizer.json with `model`, plus `extra` members.
std::string withModel(const std::string &model, const std::string &extra = "") {
  return R"({"model": )" + model + extra + "}";
}

const std::string kModel =
    R"({"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]})";

struct Bad {
  std::string label;
  std::string json;
  absl::StatusCode code;
  std::vector<std::string> mentions; // substrings the message must contain
};

void PrintTo(const Bad &bad, std::ostream *os) { *os << bad.label; }

class Malformed : public ::testing::TestWithParam<Bad> {};

TEST_P(Malformed, GivesSpecificError) {
  const Bad &bad = GetParam();
  auto tokenizer = Tokenizer::fromJsonText(bad.json, "", "bad.json");
  ASSERT_FALSE(tokenizer.ok()) << bad.label;
  EXPECT_EQ(tokenizer.status().code(), bad.code) << tokenizer.status();
  std::string message(tokenizer.status().message());
  EXPECT_NE(message.find("bad.json"), std::string::npos) << message;
  for (const std::string &needle : bad.mentions)
    EXPECT_NE(message.find(needle), std::string::npos)
        << "'" << needle << "' not in: " << message;
}

using absl::StatusCode;

INSTANTIATE_TEST_SUITE_P(
    Files, Malformed,
    ::testing::Values(
        Bad{"NotJson",
            "{\"model\": ",
            StatusCode::kInvalidArgument,
            {"not valid JSON"}},
        Bad{"TopLevelArray",
            "[]",
            StatusCode::kInvalidArgument,
            {"JSON object"}},
        Bad{"NoModel", "{}", StatusCode::kInvalidArgument, {"'model'"}},
        Bad{"Unigram",
            withModel(R"({"type": "Unigram", "vocab": []})"),
            StatusCode::kUnimplemented,
            {"'model.type'", "Unigram"}},
        Bad{"WordPiece",
            withModel(R"({"type": "WordPiece", "vocab": {}})"),
            StatusCode::kUnimplemented,
            {"WordPiece"}},
        Bad{"VocabNotObject",
            withModel(R"({"type": "BPE", "vocab": [], "merges": []})"),
            StatusCode::kInvalidArgument,
            {"'model.vocab'"}},
        Bad{"VocabIdNotInt",
            withModel(R"({"type": "BPE", "vocab": {"a": "x"}, "merges": []})"),
            StatusCode::kInvalidArgument,
            {"'model.vocab'", "'a'"}},
        Bad{"MergeUnknownToken",
            withModel(
                R"({"type": "BPE", "vocab": {"a": 0}, "merges": ["a q"]})"),
            StatusCode::kInvalidArgument,
            {"'model.merges'", "not in the vocabulary"}},
        Bad{"MergeNotPair",
            withModel(
                R"({"type": "BPE", "vocab": {"a": 0}, "merges": ["aa"]})"),
            StatusCode::kInvalidArgument,
            {"'model.merges[0]'"}},
        Bad{"MergeWrongType",
            withModel(R"({"type": "BPE", "vocab": {"a": 0}, "merges": [3]})"),
            StatusCode::kInvalidArgument,
            {"'model.merges[0]'"}},
        Bad{"UnkNotInVocab",
            withModel(R"({"type": "BPE", "unk_token": "<unk>",
                          "vocab": {"a": 0}, "merges": []})"),
            StatusCode::kInvalidArgument,
            {"'model.unk_token'", "<unk>"}},
        Bad{"Dropout",
            withModel(R"({"type": "BPE", "dropout": 0.1, "vocab": {"a": 0},
                          "merges": []})"),
            StatusCode::kUnimplemented,
            {"'model.dropout'"}},
        Bad{"NormalizerPrecompiled",
            withModel(kModel, R"(, "normalizer": {"type": "Precompiled",
                "precompiled_charsmap": "AAAA"})"),
            StatusCode::kUnimplemented,
            {"'normalizer.type'", "'Precompiled'"}},
        Bad{"NestedNormalizer",
            withModel(kModel, R"(, "normalizer": {"type": "Sequence",
                "normalizers": [{"type": "Prepend", "prepend": "x"},
                                {"type": "Precompiled"}]})"),
            StatusCode::kUnimplemented,
            {"'normalizer.normalizers[1].type'", "Precompiled"}},
        Bad{"ReplaceWithoutPattern",
            withModel(kModel, R"(, "normalizer": {"type": "Replace",
                "content": "x"})"),
            StatusCode::kInvalidArgument,
            {"'normalizer.pattern'"}},
        Bad{"PreTokenizerBert",
            withModel(kModel,
                      R"(, "pre_tokenizer": {"type": "BertPreTokenizer"})"),
            StatusCode::kUnimplemented,
            {"'pre_tokenizer.type'", "Bert"}},
        Bad{"BadRegex",
            withModel(kModel, R"(, "pre_tokenizer": {"type": "Split",
                "pattern": {"Regex": "(ab"}, "behavior": "Isolated",
                "invert": false})"),
            StatusCode::kInvalidArgument,
            {"'pre_tokenizer.pattern.Regex'", "invalid regex"}},
        Bad{"BadBehavior",
            withModel(kModel, R"(, "pre_tokenizer": {"type": "Split",
                "pattern": {"String": " "}, "behavior": "Sideways"})"),
            StatusCode::kInvalidArgument,
            {"'pre_tokenizer.behavior'", "Sideways"}},
        Bad{"BadPrependScheme",
            withModel(kModel, R"(, "pre_tokenizer": {"type": "Metaspace",
                "replacement": "_", "prepend_scheme": "sometimes"})"),
            StatusCode::kInvalidArgument,
            {"'pre_tokenizer.prepend_scheme'"}},
        Bad{"DecoderWordPiece",
            withModel(kModel, R"(, "decoder": {"type": "WordPiece"})"),
            StatusCode::kUnimplemented,
            {"'decoder.type'", "WordPiece"}},
        Bad{"DecoderNoType",
            withModel(kModel, R"(, "decoder": {"x": 1})"),
            StatusCode::kInvalidArgument,
            {"'decoder.type'"}},
        Bad{"TemplateUndefinedToken",
            withModel(kModel, R"(, "post_processor": {"type":
                "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>",
                "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                "special_tokens": {}})"),
            StatusCode::kInvalidArgument,
            {"'post_processor.special_tokens.<s>'"}},
        // Without its merges a BPE vocabulary of longer tokens would encode
        // every word character by character (issue 26, item 8).
        Bad{"MergesEmptyButVocabNeedsThem",
            withModel(R"({"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2},
                          "merges": []})"),
            StatusCode::kInvalidArgument,
            {"'model.merges'", "'ab'", "character by character"}},
        Bad{"MergesMissing",
            withModel(R"({"type": "BPE", "vocab": {"a": 0, "b": 1}})"),
            StatusCode::kInvalidArgument,
            {"'model.merges'", "missing"}},
        // A special-token id past the vocabulary's int range (2^62): refused,
        // not silently added to or dropped from every encoding.
        Bad{"TemplateIdHuge",
            withModel(kModel, R"(, "post_processor": {"type":
                "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>",
                "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                "special_tokens": {"<s>": {"id": "<s>",
                "ids": [4611686018427387904], "tokens": ["<s>"]}}})"),
            StatusCode::kInvalidArgument,
            {"'post_processor.special_tokens.<s>.ids[0]'", "out of range"}},
        Bad{"TemplateIdNotAToken",
            withModel(kModel, R"(, "post_processor": {"type":
                "TemplateProcessing", "single": [{"Sequence": {"id": "A",
                "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                "special_tokens": {"</s>": {"id": "</s>", "ids": [7],
                "tokens": ["</s>"]}}})"),
            StatusCode::kInvalidArgument,
            {"'post_processor'", "token id 7", "neither in the vocabulary"}},
        Bad{"BertClsIdHuge",
            withModel(kModel, R"(, "post_processor": {"type": "BertProcessing",
                "cls": ["[CLS]", 4611686018427387904], "sep": ["[SEP]", 1]})"),
            StatusCode::kInvalidArgument,
            {"'post_processor.cls[1]'", "out of range"}},
        Bad{"AddedTokenNoId",
            withModel(kModel, R"(, "added_tokens": [{"content": "<s>"}])"),
            StatusCode::kInvalidArgument,
            {"'added_tokens[0].id'"}},
        Bad{"AddedTokenBadFlag",
            withModel(kModel, R"(, "added_tokens": [{"id": 5, "content": "<s>",
                "special": "yes"}])"),
            StatusCode::kInvalidArgument,
            {"'added_tokens[0].special'"}}),
    [](const ::testing::TestParamInfo<Bad> &info) { return info.param.label; });

// A vocabulary of single characters needs no merges: loaded as Hugging Face
// loads it (continuing-subword prefix, byte-fallback, unk and added tokens
// included).
TEST(MalformedMerges, CharacterLevelVocabularyNeedsNoMerges) {
  auto tokenizer = Tokenizer::fromJsonText(
      withModel(R"({"type": "BPE", "unk_token": "<unk>",
                    "continuing_subword_prefix": "##", "byte_fallback": true,
                    "vocab": {"<unk>": 0, "a": 1, "b": 2, "##b": 3,
                              "<0x41>": 4, "<s>": 5, "é": 6},
                    "merges": []})",
                R"(, "added_tokens": [{"id": 5, "content": "<s>",
                    "special": true}])"),
      "", "chars.json");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  EXPECT_EQ(tokenizer->encode("ab", /*addSpecialTokens=*/false),
            (std::vector<int64_t>{1, 3}));
}

TEST(MalformedConfig, NamesConfigField) {
  std::string json = withModel(kModel);
  auto bad = Tokenizer::fromJsonText(json, R"({"bos_token": 5})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("tokenizer_config.json: field "
                                        "'bos_token'"),
            std::string::npos)
      << bad.status();
  auto unknown = Tokenizer::fromJsonText(json, R"({"eos_token": "</s>"})");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("'eos_token'"), std::string::npos);
  auto noBos = Tokenizer::fromJsonText(json, R"({"add_bos_token": true})");
  ASSERT_FALSE(noBos.ok());
  EXPECT_NE(noBos.status().message().find("add_bos_token"), std::string::npos);
}

TEST(MalformedFiles, MissingFilesAreNotFound) {
  auto missing = Tokenizer::fromFile(kData + "no/such/tokenizer.json");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("no/such/tokenizer.json"),
            std::string::npos);
  auto dir = Tokenizer::fromDirectory(kData + "no-such-dir");
  EXPECT_EQ(dir.status().code(), absl::StatusCode::kNotFound);
}

TEST(MalformedFiles, BadMergesLineNamesLine) {
  auto tmp =
      std::filesystem::temp_directory_path() /
      ("qeff-tok-" +
       std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::create_directories(tmp);
  std::ofstream(tmp / "vocab.json") << R"({"a": 0, "b": 1, "ab": 2})";
  std::ofstream(tmp / "merges.txt") << "#version: 0.2\na b\nab\n";
  auto tok = Tokenizer::fromDirectory(tmp.string());
  ASSERT_FALSE(tok.ok());
  EXPECT_NE(tok.status().message().find("merges.txt: line 3"),
            std::string::npos)
      << tok.status();
  std::ofstream(tmp / "merges.txt") << "#version: 0.2\na b\n";
  auto good = Tokenizer::fromDirectory(tmp.string());
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_EQ(good->encode("ab"), (std::vector<int64_t>{2}));
  std::filesystem::remove_all(tmp);
}

// Truncated and corrupted copies of a real file: errors, never crashes.
TEST(MalformedFiles, TruncatedAndCorruptedNeverCrash) {
  std::string json = readFile(kData + "stories260K/tokenizer.json");
  ASSERT_FALSE(json.empty());
  for (size_t cut = 0; cut < json.size(); cut += json.size() / 97 + 1) {
    auto tok = Tokenizer::fromJsonText(json.substr(0, cut));
    EXPECT_FALSE(tok.ok()) << "cut at " << cut;
  }
  std::mt19937 rng(1234);
  for (int round = 0; round < 200; ++round) {
    std::string corrupt = json;
    for (int flips = 0; flips < 3; ++flips)
      corrupt[rng() % corrupt.size()] = static_cast<char>(rng() % 256);
    auto tok = Tokenizer::fromJsonText(corrupt);
    if (tok.ok()) {
      // Whatever loaded must still encode and decode without crashing.
      auto ids = tok->encode("Once upon a time \xE6\x97\xA5");
      (void)tok->decode(ids, true);
    }
  }
}

} // namespace
