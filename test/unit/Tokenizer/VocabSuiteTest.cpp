//===- VocabSuiteTest.cpp - llama.cpp tokenizer suites vs HF ids ----------===//
//
// llama.cpp's test-tokenizer-0 strings (*.gguf.inp) with the ids the Hugging
// Face fast tokenizer produced for them (*.gguf.out, add_special_tokens=False),
// run against the HF-format vocabularies in test/data/tokenizers:
//   llama-spm <-> Llama-2 tokenizer.json
//   gpt-2     <-> GPT-2 encoder.json + vocab.bpe
//   llama-bpe <-> Llama-3 encoder.json + vocab.bpe (Llama-3 regex)
//   qwen2     <-> the real Qwen tokenizer.json (NFC normalizer; the Qwen3
//                 release, whose byte-level vocabulary and merges are Qwen2's)
//   mpt       <-> a GPT-NeoX tokenizer.json (NFC normalizer, runs of spaces
//                 as added tokens) built from llama.cpp's MPT vocab GGUF by
//                 test/tools/gguf-to-tokenizer-json.py
// The two byte-level vocabularies also run as tokenizer.json files built here
// in the shape HF ships for GPT-2 and Llama 3 (ByteLevel pre-tokenizer /
// Sequence[Split, ByteLevel], "a b" / [a, b] merges), so the JSON pipeline
// is checked against the same reference ids.
// Each string must encode to exactly the reference ids, the reference ids
// must decode back to the string, and streaming decode must agree.
//
//===----------------------------------------------------------------------===//

#include "frontend/Tokenizer/Tokenizer.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <functional>
#include <sstream>

using qeff::tokenizer::BpeFlavor;
using qeff::tokenizer::DecodeStream;
using qeff::tokenizer::TokenId;
using qeff::tokenizer::Tokenizer;

namespace {

const std::string kData = QEFF_TEST_DATA_DIR "/tokenizers/";

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

struct Case {
  std::string text;
  std::vector<TokenId> ids;
};

/// .inp: strings each followed by "\n__ggml_vocab_test__\n"; .out: one line
/// of space-separated ids per string.
std::vector<Case> loadSuite(const std::string &name) {
  std::string base = kData + "llama.cpp-vocab/ggml-vocab-" + name + ".gguf";
  std::string inp = readFile(base + ".inp");
  std::string out = readFile(base + ".out");
  const std::string marker = "\n__ggml_vocab_test__\n";
  std::vector<Case> cases;
  for (size_t pos = 0; pos < inp.size();) {
    size_t end = inp.find(marker, pos);
    if (end == std::string::npos)
      break;
    cases.push_back({inp.substr(pos, end - pos), {}});
    pos = end + marker.size();
  }
  std::istringstream lines(out);
  std::string line;
  for (Case &c : cases) {
    if (!std::getline(lines, line))
      break;
    std::istringstream ids(line);
    for (TokenId id; ids >> id;)
      c.ids.push_back(id);
  }
  return cases;
}

/// A tokenizer.json for a GPT-2 format vocab + merges pair, shaped like the
/// files HF ships for GPT-2 (`llama3` false) or Llama 3 (`llama3` true).
std::string byteLevelTokenizerJson(const std::string &dir, bool llama3) {
  using nlohmann::json;
  json vocab = json::parse(readFile(kData + dir + "/encoder.json"));
  json merges = json::array();
  std::istringstream lines(readFile(kData + dir + "/vocab.bpe"));
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("#version", 0) == 0 || line.empty())
      continue;
    size_t space = line.find(' ');
    // Llama 3 files use the newer [a, b] form, GPT-2 the legacy "a b".
    if (llama3)
      merges.push_back({line.substr(0, space), line.substr(space + 1)});
    else
      merges.push_back(line);
  }
  json byteLevel = {{"type", "ByteLevel"},
                    {"add_prefix_space", false},
                    {"trim_offsets", true},
                    {"use_regex", true}};
  json root = {{"version", "1.0"},
               {"truncation", nullptr},
               {"padding", nullptr},
               {"normalizer", nullptr},
               {"decoder", byteLevel}};
  json model = {{"type", "BPE"},
                {"dropout", nullptr},
                {"unk_token", nullptr},
                {"continuing_subword_prefix", ""},
                {"end_of_word_suffix", ""},
                {"fuse_unk", false},
                {"byte_fallback", false},
                {"ignore_merges", llama3},
                {"vocab", vocab},
                {"merges", merges}};
  root["model"] = model;
  auto special = [](int id, const std::string &content) {
    return json{{"id", id},        {"content", content}, {"single_word", false},
                {"lstrip", false}, {"rstrip", false},    {"normalized", false},
                {"special", true}};
  };
  if (!llama3) {
    // A one-element braced list would be taken as the object itself.
    root["added_tokens"] = json::array({special(50256, "<|endoftext|>")});
    root["pre_tokenizer"] = byteLevel;
    root["post_processor"] = byteLevel;
    return root.dump();
  }
  root["added_tokens"] = {
      special(128000, "<|begin_of_text|>"), special(128001, "<|end_of_text|>"),
      special(128006, "<|start_header_id|>"),
      special(128007, "<|end_header_id|>"), special(128009, "<|eot_id|>")};
  json split = {
      {"type", "Split"},
      {"pattern",
       {{"Regex",
         R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}}},
      {"behavior", "Isolated"},
      {"invert", false}};
  json noRegex = byteLevel;
  noRegex["use_regex"] = false;
  root["pre_tokenizer"] = {{"type", "Sequence"},
                           {"pretokenizers", {split, noRegex}}};
  json bos = {{"SpecialToken", {{"id", "<|begin_of_text|>"}, {"type_id", 0}}}};
  json seq = {{"Sequence", {{"id", "A"}, {"type_id", 0}}}};
  json templ = {{"type", "TemplateProcessing"},
                {"single", {bos, seq}},
                {"pair", {bos, seq}},
                {"special_tokens",
                 {{"<|begin_of_text|>",
                   {{"id", "<|begin_of_text|>"},
                    {"ids", {128000}},
                    {"tokens", {"<|begin_of_text|>"}}}}}}};
  root["post_processor"] = {{"type", "Sequence"},
                            {"processors", {byteLevel, templ}}};
  return root.dump();
}

struct Vocab {
  std::string name; // llama.cpp suite name
  std::function<absl::StatusOr<Tokenizer>()> load;
  std::string variant = "files";
};

void PrintTo(const Vocab &vocab, std::ostream *os) {
  *os << vocab.name << " (" << vocab.variant << ")";
}

class VocabSuite : public ::testing::TestWithParam<Vocab> {};

TEST_P(VocabSuite, MatchesHuggingFaceIds) {
  auto tokenizer = GetParam().load();
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  std::vector<Case> cases = loadSuite(GetParam().name);
  ASSERT_EQ(cases.size(), 46u) << "suite files unreadable or changed";

  int encodeOk = 0, decodeOk = 0, roundTripOk = 0, streamOk = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case &c = cases[i];
    SCOPED_TRACE("string #" + std::to_string(i) + ": \"" + c.text + "\"");
    std::vector<TokenId> ids = tokenizer->encode(c.text, false);
    EXPECT_EQ(ids, c.ids);
    encodeOk += ids == c.ids;

    std::string decoded = tokenizer->decode(c.ids, false);
    EXPECT_EQ(decoded, c.text);
    decodeOk += decoded == c.text;

    std::string roundTrip = tokenizer->decode(ids, false);
    EXPECT_EQ(roundTrip, c.text);
    roundTripOk += roundTrip == c.text;

    DecodeStream stream(*tokenizer, false);
    std::string streamed;
    for (TokenId id : c.ids) {
      std::string chunk = stream.step(id);
      streamed += chunk;
    }
    streamed += stream.flush();
    EXPECT_EQ(streamed, c.text);
    streamOk += streamed == c.text;
  }
  std::cout << "[ " << GetParam().name << " / " << GetParam().variant
            << " ] encode " << encodeOk << "/46, "
            << "decode " << decodeOk << "/46, round-trip " << roundTripOk
            << "/46, stream " << streamOk << "/46\n";
}

INSTANTIATE_TEST_SUITE_P(
    HuggingFace, VocabSuite,
    ::testing::Values(
        Vocab{"llama-spm",
              [] {
                return Tokenizer::fromFile(
                    kData + "llama2/tokenizer.hf-internal-testing.json",
                    kData + "llama2/tokenizer_config.hf-internal-testing.json");
              }},
        Vocab{"gpt-2",
              [] {
                return Tokenizer::fromVocabAndMerges(
                    kData + "gpt2/encoder.json", kData + "gpt2/vocab.bpe",
                    BpeFlavor::Gpt2);
              }},
        Vocab{"llama-bpe",
              [] {
                return Tokenizer::fromVocabAndMerges(
                    kData + "llama3/encoder.json", kData + "llama3/vocab.bpe",
                    BpeFlavor::Llama3);
              }},
        Vocab{"gpt-2",
              [] {
                return Tokenizer::fromJsonText(
                    byteLevelTokenizerJson("gpt2", false), "",
                    "gpt2 tokenizer.json");
              },
              "json"},
        Vocab{"llama-bpe",
              [] {
                return Tokenizer::fromJsonText(
                    byteLevelTokenizerJson("llama3", true), "",
                    "llama3 tokenizer.json");
              },
              "json"},
        Vocab{"qwen2",
              [] {
                return Tokenizer::fromFile(kData + "qwen2/tokenizer.json",
                                           kData +
                                               "qwen2/tokenizer_config.json");
              },
              "json"},
        Vocab{"mpt",
              [] {
                return Tokenizer::fromFile(kData + "gpt-neox/tokenizer.json");
              },
              "json"}),
    [](const ::testing::TestParamInfo<Vocab> &info) {
      std::string name;
      for (char c : info.param.name + "_" + info.param.variant)
        name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
      return name;
    });

// With clean_up_tokenization_spaces (Llama 3 and CodeGen configs set it),
// decode is not prefix-stable (" ." becomes "." once the "." arrives), yet
// streamed chunks must still concatenate to decode(allIds), for every suite
// string and every tokenizer, fed the reference ids and the ids of the
// string with punctuation spaced out (" . , ' s n't" patterns).
TEST(DecodeStreamCleanUp, ChunksConcatenateToDecode) {
  const std::string cleanUp = R"({"clean_up_tokenization_spaces": true})";
  std::vector<std::pair<std::string, absl::StatusOr<Tokenizer>>> tokenizers;
  tokenizers.emplace_back(
      "llama-spm",
      Tokenizer::fromJsonText(
          readFile(kData + "llama2/tokenizer.hf-internal-testing.json"),
          cleanUp));
  tokenizers.emplace_back(
      "llama-bpe",
      Tokenizer::fromJsonText(byteLevelTokenizerJson("llama3", true), cleanUp));
  tokenizers.emplace_back(
      "gpt-2",
      Tokenizer::fromJsonText(byteLevelTokenizerJson("gpt2", false), cleanUp));
  tokenizers.emplace_back(
      "qwen2", Tokenizer::fromJsonText(readFile(kData + "qwen2/tokenizer.json"),
                                       cleanUp));
  tokenizers.emplace_back(
      "mpt", Tokenizer::fromJsonText(
                 readFile(kData + "gpt-neox/tokenizer.json"), cleanUp));
  std::vector<std::string> texts = {
      "Hello , world . It 's a test , isn 't it ? Yes !",
      "I 'm sure they 've said we 're done . don 't ' s  ' m  ' re ' ve",
      "a ' b ' ' c  ' s x . . , , ! ? end .",
      " ' ", "  ' ve", " n't", " .", "x  ' m"};
  for (const Case &c : loadSuite("gpt-2"))
    texts.push_back(c.text);
  for (auto &[name, tokenizer] : tokenizers) {
    ASSERT_TRUE(tokenizer.ok()) << name << ": " << tokenizer.status();
    int ok = 0;
    for (const std::string &text : texts) {
      SCOPED_TRACE(name + ": \"" + text + "\"");
      std::vector<TokenId> ids = tokenizer->encode(text, false);
      DecodeStream stream(*tokenizer, false);
      std::string streamed;
      for (TokenId id : ids)
        streamed += stream.step(id);
      streamed += stream.flush();
      std::string whole = tokenizer->decode(ids, false);
      EXPECT_EQ(streamed, whole);
      ok += streamed == whole;
    }
    std::cout << "[ " << name << " + clean-up ] stream " << ok << "/"
              << texts.size() << "\n";
  }
}

// The Llama 3 tokenizer.json shape: special tokens split out, BOS from the
// Sequence[ByteLevel, TemplateProcessing] post-processor.
TEST(Llama3Json, ChatHeaderAndBos) {
  auto tok = Tokenizer::fromJsonText(byteLevelTokenizerJson("llama3", true));
  ASSERT_TRUE(tok.ok()) << tok.status();
  std::vector<TokenId> ids = tok->encode(
      "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>", true);
  EXPECT_EQ(ids, (std::vector<TokenId>{128000, 128006, 882, 128007, 271,
                                       *tok->tokenToId("Hi"), 128009}));
  EXPECT_EQ(tok->bosId(), 128000);
  EXPECT_TRUE(tok->addsBos());
  EXPECT_EQ(tok->decode(ids, true), "user\n\nHi");
  EXPECT_EQ(tok->vocabSize(), 128010u);
}

} // namespace
