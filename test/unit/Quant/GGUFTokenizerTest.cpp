//===- GGUFTokenizerTest.cpp - GGUF tokenizers on llama.cpp's suites -------===//
//
// Part of qeff. The tokenizer a GGUF file carries (tokenizer.ggml.*), made
// into tokenizer.json by frontend/GGUF, must give Hugging Face's ids on
// llama.cpp's vocabulary suites (test/data/tokenizers/llama.cpp-vocab: the
// test strings and the ids HF's fast tokenizer gave) and equal the
// tokenizer.json of the same vocabulary: llama-spm from the Llama-2
// vocabulary of llama-2-tiny-random.gguf, gpt-2 and mpt from llama.cpp's own
// vocab GGUFs, stories260K.gguf against its HF twin's tokenizer.json.
//
//===----------------------------------------------------------------------===//

#include "QuantTestUtil.h"

#include "frontend/GGUF/GGUFFile.h"
#include "frontend/GGUF/GGUFTokenizer.h"
#include "frontend/Tokenizer/Tokenizer.h"

#include <nlohmann/json.hpp>

using namespace qeff;
using namespace qeff::quant::test;
using qeff::tokenizer::TokenId;
using qeff::tokenizer::Tokenizer;

namespace {

struct Case {
  std::string text;
  std::vector<TokenId> ids;
};

std::vector<Case> suite(const std::string &name) {
  std::string base = kData + "/tokenizers/llama.cpp-vocab/ggml-vocab-" + name + ".gguf";
  std::string inp = readFile(base + ".inp"), out = readFile(base + ".out");
  const std::string marker = "\n__ggml_vocab_test__\n";
  std::vector<Case> cases;
  for (size_t pos = 0, end; (end = inp.find(marker, pos)) != std::string::npos;
       pos = end + marker.size())
    cases.push_back({inp.substr(pos, end - pos), {}});
  std::istringstream lines(out);
  std::string line;
  for (Case &c : cases) {
    std::getline(lines, line);
    std::istringstream ids(line);
    for (TokenId id; ids >> id;)
      c.ids.push_back(id);
  }
  return cases;
}

/// The tokenizer of any GGUF file (vocab-only ones have no model to map).
absl::StatusOr<Tokenizer> ggufTokenizer(const std::string &path) {
  auto file = gguf::GGUFFile::open(path);
  if (!file.ok())
    return file.status();
  auto files = gguf::ggufTokenizerFiles(**file);
  if (!files.ok())
    return files.status();
  return Tokenizer::fromJsonText(files->tokenizerJson, files->tokenizerConfigJson, path);
}

struct Suite {
  std::string name, gguf;
};
void PrintTo(const Suite &s, std::ostream *os) { *os << s.name; }

class GGUFVocabSuite : public ::testing::TestWithParam<Suite> {};

TEST_P(GGUFVocabSuite, MatchesHuggingFaceIds) {
  auto tok = ggufTokenizer(kData + GetParam().gguf);
  ASSERT_TRUE(tok.ok()) << tok.status();
  std::vector<Case> cases = suite(GetParam().name);
  ASSERT_EQ(cases.size(), 46u);
  int ok = 0;
  for (const Case &c : cases) {
    std::vector<TokenId> ids = tok->encode(c.text, false);
    EXPECT_EQ(ids, c.ids) << "\"" << c.text << "\"";
    EXPECT_EQ(tok->decode(c.ids, false), c.text);
    ok += ids == c.ids;
  }
  std::cout << "[ " << GetParam().name << " from GGUF ] encode " << ok << "/46\n";
}

INSTANTIATE_TEST_SUITE_P(
    LlamaCpp, GGUFVocabSuite,
    ::testing::Values(
        Suite{"llama-spm", "/models/llama-2-tiny-random-gguf/llama-2-tiny-random.gguf"},
        Suite{"gpt-2", "/tokenizers/llama.cpp-vocab/ggml-vocab-gpt-2.gguf"},
        Suite{"mpt", "/tokenizers/llama.cpp-vocab/ggml-vocab-mpt.gguf"}),
    [](const auto &info) {
      std::string n = info.param.name;
      std::replace(n.begin(), n.end(), '-', '_');
      return n;
    });

/// The GGUF tokenizer and the tokenizer.json of the same vocabulary give the
/// same ids on every suite string, with and without BOS.
TEST(GGUFTokenizer, EqualsTokenizerJsonOfTheSameVocabulary) {
  struct Pair {
    std::string gguf, json, config;
  };
  for (const Pair &p :
       {Pair{"/models/stories260K-gguf/stories260K.gguf", "/models/stories260K-hf/tokenizer.json",
             "/models/stories260K-hf/tokenizer_config.json"},
        Pair{"/models/llama-2-tiny-random-gguf/llama-2-tiny-random.gguf",
             "/tokenizers/llama2/tokenizer.hf-internal-testing.json",
             "/tokenizers/llama2/tokenizer_config.hf-internal-testing.json"}}) {
    SCOPED_TRACE(p.gguf);
    auto fromGGUF = ggufTokenizer(kData + p.gguf);
    auto fromJson = Tokenizer::fromFile(kData + p.json, kData + p.config);
    ASSERT_TRUE(fromGGUF.ok()) << fromGGUF.status();
    ASSERT_TRUE(fromJson.ok()) << fromJson.status();
    std::vector<Case> cases = suite("llama-spm");
    cases.push_back({"Once upon a time", {}});
    for (const Case &c : cases)
      for (bool special : {false, true})
        EXPECT_EQ(fromGGUF->encode(c.text, special), fromJson->encode(c.text, special))
            << "\"" << c.text << "\"";
  }
  auto stories = ggufTokenizer(kData + "/models/stories260K-gguf/stories260K.gguf");
  ASSERT_TRUE(stories.ok());
  EXPECT_EQ(stories->encode("Once upon a time", true),
            (std::vector<TokenId>{1, 403, 407, 261, 378}));
}

} // namespace
