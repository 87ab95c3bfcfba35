//===- TokenBytesTest.cpp - the bytes each token adds to decoded text -----===//
//
// Tokenizer::tokenBytes, which constrained decoding reads the vocabulary
// through: for every kind of tokenizer in test/data, the shares of random
// id sequences concatenate to decode()'s text; known tokens of each kind
// (byte-level characters, the metaspace, <0xNN> byte fallback, first-token
// stripping, no decoder); special tokens have none.
//
//===----------------------------------------------------------------------===//

#include "test/unit/Tokenizer/NamedTokenizers.h"

#include <gtest/gtest.h>

#include <random>

using qeff::tokenizer::TokenId;
using qeff::tokenizer::Tokenizer;

namespace {

using qeff::test::namedTokenizer;

/// A tokenizer built by the test itself.
Tokenizer built(absl::StatusOr<Tokenizer> tokenizer) {
  if (!tokenizer.ok()) {
    ADD_FAILURE() << tokenizer.status();
    std::abort();
  }
  return *std::move(tokenizer);
}

bool validUtf8(const std::string &s) {
  for (size_t i = 0; i < s.size();) {
    unsigned char c = s[i];
    size_t n = c < 0x80         ? 1
               : (c >> 5) == 6  ? 2
               : (c >> 4) == 14 ? 3
               : (c >> 3) == 30 ? 4
                                : 0;
    if (!n || i + n > s.size() || (n == 2 && c < 0xC2))
      return false;
    for (size_t k = 1; k < n; ++k)
      if ((uint8_t(s[i + k]) & 0xC0) != 0x80)
        return false;
    uint32_t cp = n == 1 ? c : c & (0x7F >> n);
    for (size_t k = 1; k < n; ++k)
      cp = cp << 6 | (uint8_t(s[i + k]) & 0x3F);
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += n;
  }
  return true;
}

TEST(TokenBytes, SharesConcatenateToTheDecodedText) {
  for (const char *name : {"stories260K", "llama2", "mistral", "gpt2", "llama3",
                           "qwen2", "gpt-neox"}) {
    Tokenizer tok = namedTokenizer(name);
    ASSERT_FALSE(tok.cleansUpSpaces()) << name;
    std::vector<TokenId> usable;
    for (size_t id = 0; id < tok.vocabSize(); ++id) {
      std::optional<std::string> bytes = tok.tokenBytes(TokenId(id));
      if (bytes)
        usable.push_back(TokenId(id));
      else
        EXPECT_EQ(tok.decode({TokenId(id)}, true), "") << name << " " << id;
    }
    ASSERT_GT(usable.size(), tok.vocabSize() * 9 / 10) << name;
    std::mt19937 rng(42);
    size_t checked = 0;
    for (int trial = 0; trial < 2000 && checked < 300; ++trial) {
      std::vector<TokenId> ids(1 + rng() % 6);
      for (TokenId &id : ids)
        id = usable[rng() % usable.size()];
      std::string expected = *tok.tokenBytes(ids[0], /*atStart=*/true);
      for (size_t i = 1; i < ids.size(); ++i)
        expected += *tok.tokenBytes(ids[i]);
      if (!validUtf8(expected))
        continue; // decode() would replace the broken character
      ++checked;
      ASSERT_EQ(tok.decode(ids, true), expected) << name << " trial " << trial;
    }
    EXPECT_GE(checked, 300u) << name;
  }
}

TEST(TokenBytes, KnownTokensOfEachKind) {
  // SentencePiece with byte fallback: the metaspace is a space, except as
  // the first token (the decoder strips one leading space).
  Tokenizer llama = namedTokenizer("llama2");
  TokenId brace = *llama.tokenToId("\xE2\x96\x81{");
  EXPECT_EQ(llama.tokenBytes(brace), " {");
  EXPECT_EQ(llama.tokenBytes(brace, true), "{");
  EXPECT_EQ(llama.tokenBytes(*llama.tokenToId("<0x41>")), "A");
  EXPECT_EQ(llama.tokenBytes(*llama.tokenToId("<0xC3>")), "\xC3"); // raw
  EXPECT_EQ(llama.tokenBytes(*llama.tokenToId("<0x20>"), true), "");
  EXPECT_EQ(llama.tokenBytes(*llama.tokenToId("</s>")), std::nullopt);
  EXPECT_EQ(llama.tokenBytes(*llama.tokenToId("<s>")), std::nullopt);
  EXPECT_EQ(llama.tokenBytes(-1), std::nullopt);
  EXPECT_EQ(llama.tokenBytes(TokenId(llama.vocabSize())), std::nullopt);
  // Byte-level BPE: GPT-2's printable characters back to bytes.
  Tokenizer gpt2 = namedTokenizer("gpt2");
  EXPECT_EQ(gpt2.tokenBytes(*gpt2.tokenToId("\xC4\xA0hello")), " hello");
  EXPECT_EQ(gpt2.tokenBytes(*gpt2.tokenToId("\xC4\x8A")), "\n");
  EXPECT_EQ(gpt2.tokenBytes(*gpt2.tokenToId("\xC3\x83")), "\xC3"); // one byte
  EXPECT_EQ(gpt2.tokenBytes(*gpt2.tokenToId("\xC4\xA0hello"), true), " hello");
  EXPECT_EQ(gpt2.tokenBytes(*gpt2.tokenToId("<|endoftext|>")), std::nullopt);
  Tokenizer qwen = namedTokenizer("qwen2");
  EXPECT_EQ(qwen.tokenBytes(*qwen.tokenToId("<|im_start|>")), std::nullopt);
}

std::string tinyJson(const std::string &extra) {
  return R"({"model": {"type": "BPE", "unk_token": "<unk>",
    "vocab": {"<unk>": 0, "a": 1, "b": 2, "\u2581": 3, "\u2581a": 4},
    "merges": ["\u2581 a"]},
    "added_tokens": [{"id": 5, "content": "<X>", "special": true,
                      "normalized": false},
                     {"id": 6, "content": "<Y>", "special": false,
                      "normalized": false}])" +
         extra + "}";
}

TEST(TokenBytes, MetaspaceAndNoDecoder) {
  Tokenizer first = built(Tokenizer::fromJsonText(tinyJson(
      R"(, "decoder": {"type": "Metaspace", "replacement": "\u2581",
                       "prepend_scheme": "first"})")));
  EXPECT_EQ(first.tokenBytes(4), " a");
  EXPECT_EQ(first.tokenBytes(4, true), "a");
  EXPECT_EQ(first.tokenBytes(5), std::nullopt); // special
  EXPECT_EQ(first.tokenBytes(6), "<Y>");        // added, not special
  EXPECT_EQ(first.decode({4, 6, 4}, true), "a<Y> a");
  Tokenizer never = built(Tokenizer::fromJsonText(tinyJson(
      R"(, "decoder": {"type": "Metaspace", "replacement": "\u2581",
                       "prepend_scheme": "never"})")));
  EXPECT_EQ(never.tokenBytes(4, true), " a");
  // No decoder: HF joins the tokens with spaces.
  Tokenizer bare = built(Tokenizer::fromJsonText(tinyJson("")));
  EXPECT_EQ(bare.tokenBytes(1, true), "a");
  EXPECT_EQ(bare.tokenBytes(2), " b");
  EXPECT_EQ(bare.decode({1, 2}, true), "a b");
  // A Replace on text already joined could match across tokens: no share.
  Tokenizer joined = built(Tokenizer::fromJsonText(tinyJson(
      R"(, "decoder": {"type": "Sequence", "decoders": [{"type": "Fuse"},
           {"type": "Replace", "pattern": {"String": "ab"}, "content": "x"}]})")));
  EXPECT_EQ(joined.tokenBytes(1), std::nullopt);
}

} // namespace
