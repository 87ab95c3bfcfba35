//===- TokenMaskTest.cpp - the token mask on real vocabularies ------------===//
//
// Part of qeff's tests. On real tokenizers: the mask of a state is exactly
// the set of tokens accept() takes from it (checked token by token), the
// first token is read as decode() reads it, special tokens are never
// allowed, and canEnd/mustEnd follow the document.
//
//===----------------------------------------------------------------------===//

#include "TestTokenizers.h"

#include <random>

using namespace qeff;
using Json = nlohmann::ordered_json;

namespace {

std::shared_ptr<const runtime::TokenConstraint>
constraintFor(const test::TestVocab &v, const char *schema) {
  std::string error;
  Json json;
  if (schema)
    json = Json::parse(schema);
  auto c = structured::makeJsonConstraint(v.vocab, schema ? &json : nullptr,
                                          "schema", error);
  EXPECT_TRUE(c) << error;
  return c;
}

std::vector<uint8_t> maskOf(runtime::ConstraintMatcher &m, size_t size) {
  std::vector<uint8_t> mask(size, 0);
  m.allowedTokens(mask);
  return mask;
}

std::unique_ptr<runtime::ConstraintMatcher>
replay(const runtime::TokenConstraint &c, const std::vector<int64_t> &ids) {
  auto m = c.start();
  for (int64_t id : ids)
    EXPECT_TRUE(m->accept(id)) << id;
  return m;
}

/// A prefix of `steps` random allowed tokens.
std::vector<int64_t> randomPrefix(const runtime::TokenConstraint &c,
                                  size_t vocab, unsigned seed, int steps) {
  std::mt19937 rng(seed);
  auto m = c.start();
  std::vector<int64_t> ids;
  for (int i = 0; i < steps; ++i) {
    std::vector<uint8_t> mask = maskOf(*m, vocab);
    std::vector<int64_t> allowed;
    for (size_t t = 0; t < vocab; ++t)
      if (mask[t])
        allowed.push_back(int64_t(t));
    if (allowed.empty())
      break;
    int64_t pick = allowed[rng() % allowed.size()];
    EXPECT_TRUE(m->accept(pick));
    ids.push_back(pick);
  }
  return ids;
}

/// mask[t] == accept(t) from the state after `prefix`, for every token
/// (`stride` > 1: every stride-th token plus every allowed one).
void checkMaskAgainstAccept(const runtime::TokenConstraint &c,
                            const test::TestVocab &v,
                            const std::vector<int64_t> &prefix, size_t stride) {
  const size_t n = v.tokenizer.vocabSize();
  auto m = replay(c, prefix);
  std::vector<uint8_t> mask = maskOf(*m, n);
  size_t allowed = 0;
  for (size_t t = 0; t < n; ++t) {
    if (!mask[t] && t % stride)
      continue;
    allowed += mask[t];
    auto fresh = replay(c, prefix);
    ASSERT_EQ(bool(mask[t]), fresh->accept(int64_t(t)))
        << v.name << " token " << t << " after " << prefix.size() << " tokens";
  }
  // A state that cannot end must let something through.
  if (!m->canEnd())
    EXPECT_GT(allowed, 0u) << v.name << ": dead end";
  EXPECT_EQ(m->mustEnd(), m->canEnd() && allowed == 0) << v.name;
}

const char *kPerson = R"({"type": "object", "properties": {
  "name": {"type": "string", "maxLength": 12},
  "age": {"type": "integer", "minimum": 0, "maximum": 120},
  "tags": {"type": "array", "items": {"enum": ["a", "bb", "ccc"]}, "maxItems": 3},
  "ok": {"type": "boolean"}},
  "required": ["name", "age"], "additionalProperties": false})";

TEST(StructuredTokenMask, MaskIsExactlyWhatAcceptTakes) {
  for (const char *name : {"stories260K", "llama2", "gpt2", "qwen2"}) {
    const test::TestVocab &v = test::testVocab(name);
    const size_t n = v.tokenizer.vocabSize();
    // Exhaustive on the small vocabularies, sampled on the large ones.
    const size_t stride = n > 40000 ? 23 : 1;
    for (const char *schema : {static_cast<const char *>(nullptr), kPerson}) {
      auto c = constraintFor(v, schema);
      ASSERT_TRUE(c);
      for (unsigned seed : {1u, 2u})
        for (int steps : {0, 1, 3, 8}) {
          std::vector<int64_t> prefix = randomPrefix(*c, n, seed, steps);
          checkMaskAgainstAccept(*c, v, prefix, stride);
          if (testing::Test::HasFatalFailure())
            return;
        }
    }
  }
}

TEST(StructuredTokenMask, FirstTokenIsReadAsDecodeReadsIt) {
  // Llama 2: "▁{" decodes to "{" as the first token, " {" after others.
  const test::TestVocab &llama = test::testVocab("llama2");
  auto open = llama.tokenizer.tokenToId("\xE2\x96\x81{");
  ASSERT_TRUE(open);
  EXPECT_EQ(llama.tokenizer.decode({*open}, true), "{");
  auto c = constraintFor(llama, nullptr);
  auto m = c->start();
  std::vector<uint8_t> mask = maskOf(*m, llama.tokenizer.vocabSize());
  EXPECT_TRUE(mask[*open]);
  // GPT-2: "{\"" is one token; " {" (with its space) is not a start.
  const test::TestVocab &gpt2 = test::testVocab("gpt2");
  auto brace = gpt2.tokenizer.tokenToId("{\"");
  auto spaced = gpt2.tokenizer.tokenToId("\xC4\xA0{");
  ASSERT_TRUE(brace && spaced);
  auto g = constraintFor(gpt2, nullptr)->start();
  mask = maskOf(*g, gpt2.tokenizer.vocabSize());
  EXPECT_TRUE(mask[*brace]);
  EXPECT_FALSE(mask[*spaced]);
  ASSERT_TRUE(g->accept(*brace));
  // Inside the key: "name" then "\":" (closing the key, then the colon).
  auto nameTok = gpt2.tokenizer.tokenToId("name");
  auto quoteColon = gpt2.tokenizer.tokenToId("\":");
  auto quoteBrace = gpt2.tokenizer.tokenToId("\"}");
  ASSERT_TRUE(nameTok && quoteColon && quoteBrace);
  ASSERT_TRUE(g->accept(*nameTok));
  mask = maskOf(*g, gpt2.tokenizer.vocabSize());
  EXPECT_TRUE(mask[*quoteColon]);
  EXPECT_FALSE(mask[*quoteBrace]);
}

TEST(StructuredTokenMask, SpecialTokensAreNeverAllowed) {
  for (const char *name : {"stories260K", "llama2", "qwen2"}) {
    const test::TestVocab &v = test::testVocab(name);
    auto c = constraintFor(v, nullptr);
    std::vector<int64_t> prefix =
        randomPrefix(*c, v.tokenizer.vocabSize(), 7, 5);
    auto m = replay(*c, prefix);
    std::vector<uint8_t> mask = maskOf(*m, v.tokenizer.vocabSize());
    std::vector<int64_t> special = v.tokenizer.eosIds();
    if (auto bos = v.tokenizer.bosId())
      special.push_back(*bos);
    ASSERT_FALSE(special.empty()) << name;
    for (int64_t id : special) {
      EXPECT_TRUE(v.tokenizer.isSpecial(id)) << name << " " << id;
      EXPECT_FALSE(mask[id]) << name << " " << id;
      EXPECT_FALSE(m->accept(id)) << name << " " << id;
    }
    EXPECT_FALSE(m->accept(-1));
    EXPECT_FALSE(m->accept(int64_t(v.tokenizer.vocabSize()) + 5));
  }
}

TEST(StructuredTokenMask, MaskSizesOtherThanTheVocabulary) {
  const test::TestVocab &v = test::testVocab("stories260K");
  auto m = constraintFor(v, nullptr)->start();
  // A model vocabulary larger than the tokenizer's: the rest stays 0.
  std::vector<uint8_t> big = maskOf(*m, v.tokenizer.vocabSize() + 100);
  for (size_t t = v.tokenizer.vocabSize(); t < big.size(); ++t)
    EXPECT_FALSE(big[t]);
  // Smaller: no write past its end.
  std::vector<uint8_t> small = maskOf(*m, 10);
  EXPECT_EQ(small.size(), 10u);
}

TEST(StructuredTokenMask, CanEndAndMustEnd) {
  const test::TestVocab &v = test::testVocab("gpt2");
  auto tokenOf = [&](const std::string &text) {
    auto id = v.tokenizer.tokenToId(text);
    EXPECT_TRUE(id) << text;
    return id.value_or(-1);
  };
  auto obj = constraintFor(v, nullptr)->start();
  EXPECT_FALSE(obj->canEnd());
  ASSERT_TRUE(obj->accept(tokenOf("{")));
  EXPECT_FALSE(obj->canEnd());
  ASSERT_TRUE(obj->accept(tokenOf("}")));
  EXPECT_TRUE(obj->canEnd());
  EXPECT_TRUE(obj->mustEnd());
  std::vector<uint8_t> none = maskOf(*obj, v.tokenizer.vocabSize());
  EXPECT_EQ(std::count(none.begin(), none.end(), 1), 0);
  // A number may end or go on.
  auto num = constraintFor(v, R"({"type": "integer"})")->start();
  ASSERT_TRUE(num->accept(tokenOf("12")));
  EXPECT_TRUE(num->canEnd());
  EXPECT_FALSE(num->mustEnd());
  EXPECT_TRUE(maskOf(*num, v.tokenizer.vocabSize())[tokenOf("3")]);
  EXPECT_FALSE(num->accept(tokenOf("a")));
  EXPECT_TRUE(num->canEnd()); // a refused token leaves the state unchanged
}

} // namespace
