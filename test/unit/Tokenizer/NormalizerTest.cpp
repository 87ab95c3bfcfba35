//===- NormalizerTest.cpp - tokenizer.json normalizers --------------------===//
//
// The Unicode normalizers of Hugging Face `tokenizers` (NFC, NFD, NFKC,
// NFKD, Lowercase, StripAccents, Nmt, BertNormalizer) on strings whose
// results follow from the Unicode tables and the Rust implementation's
// character rules; and a real NFC tokenizer (Qwen) through encode.
//
//===----------------------------------------------------------------------===//

#include "frontend/Tokenizer/Components.h"
#include "frontend/Tokenizer/Tokenizer.h"

#include <gtest/gtest.h>

namespace {

using qeff::tokenizer::Tokenizer;
using qeff::tokenizer::detail::Json;
using qeff::tokenizer::detail::JsonPath;
using qeff::tokenizer::detail::parseNormalizer;

std::string normalize(const std::string &normalizerJson, std::string text) {
  auto normalizer = parseNormalizer(Json::parse(normalizerJson),
                                    JsonPath{"tokenizer.json", "normalizer"});
  EXPECT_TRUE(normalizer.ok()) << normalizer.status();
  if (!normalizer.ok())
    return "<error>";
  (*normalizer)->normalize(text);
  return text;
}

TEST(Normalizer, UnicodeForms) {
  // é precomposed (U+00E9) and decomposed (e + U+0301).
  EXPECT_EQ(normalize(R"({"type": "NFC"})", "e\u0301t\u00e9"), "\u00e9t\u00e9");
  EXPECT_EQ(normalize(R"({"type": "NFD"})", "\u00e9"), "e\u0301");
  // Compatibility forms: the fi ligature, a full-width H, circled one.
  EXPECT_EQ(normalize(R"({"type": "NFKC"})", "\ufb01 \uff28 \u2460"), "fi H 1");
  EXPECT_EQ(normalize(R"({"type": "NFKD"})", "\u00e9\ufb01"), "e\u0301fi");
  // Canonical forms keep compatibility characters.
  EXPECT_EQ(normalize(R"({"type": "NFC"})", "\ufb01"), "\ufb01");
  // Hangul composes.
  EXPECT_EQ(normalize(R"({"type": "NFC"})", "\u1100\u1161"), "\uac00");
}

TEST(Normalizer, LowercaseIsRustCharToLowercase) {
  EXPECT_EQ(normalize(R"({"type": "Lowercase"})", "\u00c0BC \u0394\u03a3"),
            "\u00e0bc \u03b4\u03c3");
  // U+0130 lowercases to two code points; final sigma is not special.
  EXPECT_EQ(normalize(R"({"type": "Lowercase"})", "\u0130"), "i\u0307");
  EXPECT_EQ(normalize(R"({"type": "Lowercase"})", "\u1e9e"), "\u00df");
}

TEST(Normalizer, StripAccentsAfterNfd) {
  EXPECT_EQ(normalize(R"({"type": "Sequence", "normalizers":
                          [{"type": "NFD"}, {"type": "StripAccents"}]})",
                      "caf\u00e9 na\u00efve"),
            "cafe naive");
  // Without NFD, precomposed letters have no mark to strip.
  EXPECT_EQ(normalize(R"({"type": "StripAccents"})", "\u00e9e\u0301"),
            "\u00e9e");
}

TEST(Normalizer, Nmt) {
  EXPECT_EQ(normalize(R"({"type": "Nmt"})", "a\x01" "b\tc\u200bd\ufeff"),
            "ab c d ");
}

TEST(Normalizer, BertNormalizer) {
  const std::string text = "H\u00e9llo\tW\u00f6rld \u4e2d\u6587\x01";
  EXPECT_EQ(normalize(R"({"type": "BertNormalizer", "clean_text": true,
                          "handle_chinese_chars": true, "strip_accents": null,
                          "lowercase": true})",
                      text),
            "hello world  \u4e2d  \u6587 ");
  EXPECT_EQ(normalize(R"({"type": "BertNormalizer", "clean_text": true,
                          "handle_chinese_chars": false,
                          "strip_accents": false, "lowercase": false})",
                      text),
            "H\u00e9llo W\u00f6rld \u4e2d\u6587");
  EXPECT_EQ(normalize(R"({"type": "BertNormalizer", "clean_text": false,
                          "handle_chinese_chars": false, "strip_accents": true,
                          "lowercase": false})",
                      "\u00c9"),
            "E");
}

TEST(Normalizer, WrongFieldTypesAndUnknownNamesAreErrors) {
  auto bad = parseNormalizer(
      Json::parse(R"({"type": "BertNormalizer", "lowercase": "yes"})"),
      JsonPath{"tokenizer.json", "normalizer"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("normalizer.lowercase"),
            std::string::npos)
      << bad.status();
  auto unknown = parseNormalizer(Json::parse(R"({"type": "Precompiled"})"),
                                 JsonPath{"tokenizer.json", "normalizer"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("Precompiled"), std::string::npos);
}

// The real Qwen tokenizer.json (NFC normalizer): a decomposed accent encodes
// exactly like the precomposed one, and both decode to the NFC text.
TEST(Normalizer, QwenEncodesNfc) {
  auto tok = Tokenizer::fromFile(QEFF_TEST_DATA_DIR
                                 "/tokenizers/qwen2/tokenizer.json");
  ASSERT_TRUE(tok.ok()) << tok.status();
  std::vector<int64_t> composed = tok->encode("caf\u00e9 cr\u00e8me", false);
  std::vector<int64_t> decomposed = tok->encode("cafe\u0301 cre\u0300me", false);
  EXPECT_EQ(composed, decomposed);
  EXPECT_EQ(tok->decode(decomposed), "caf\u00e9 cr\u00e8me");
}

} // namespace
