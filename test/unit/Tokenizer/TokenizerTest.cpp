//===- TokenizerTest.cpp - QEffTokenizer behaviour tests ------------------===//
//
// Known ids of real vocabularies (stories260K, Llama 2, Mistral, GPT-2),
// byte fallback, special-token splitting, added-token flags, Metaspace,
// split behaviours, config overrides and streaming decode.
//
//===----------------------------------------------------------------------===//

#include "frontend/Tokenizer/Tokenizer.h"
#include "frontend/Tokenizer/Components.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

using qeff::tokenizer::BpeFlavor;
using qeff::tokenizer::DecodeStream;
using qeff::tokenizer::TokenId;
using qeff::tokenizer::Tokenizer;
using Ids = std::vector<TokenId>;

namespace {

const std::string kData = QEFF_TEST_DATA_DIR "/tokenizers/";

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

Tokenizer load(absl::StatusOr<Tokenizer> tokenizer) {
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status();
  if (!tokenizer.ok())
    std::abort();
  return *std::move(tokenizer);
}

Tokenizer stories() {
  return load(Tokenizer::fromDirectory(kData + "stories260K"));
}

Tokenizer llama2(const std::string &config = "") {
  std::string json =
      readFile(kData + "llama2/tokenizer.hf-internal-testing.json");
  std::string cfg =
      config.empty()
          ? readFile(kData + "llama2/tokenizer_config.hf-internal-testing.json")
          : config;
  return load(Tokenizer::fromJsonText(json, cfg));
}

Tokenizer gpt2() {
  return load(Tokenizer::fromVocabAndMerges(kData + "gpt2/encoder.json",
                                            kData + "gpt2/vocab.bpe"));
}

//===----------------------------------------------------------------------===//
// Real vocabularies
//===----------------------------------------------------------------------===//

TEST(Stories260K, OnceUponATime) {
  Tokenizer tok = stories();
  EXPECT_EQ(tok.encode("Once upon a time", true), (Ids{1, 403, 407, 261, 378}));
  EXPECT_EQ(tok.encode("Once upon a time", false), (Ids{403, 407, 261, 378}));
  EXPECT_EQ(tok.decode(Ids{1, 403, 407, 261, 378}, true), "Once upon a time");
  EXPECT_EQ(tok.bosId(), 1);
  EXPECT_EQ(tok.eosIds(), (Ids{2}));
  EXPECT_TRUE(tok.addsBos());
  EXPECT_EQ(tok.vocabSize(), 512u);
  EXPECT_EQ(tok.idToToken(403), "\u2581Once");
  EXPECT_EQ(tok.tokenToId("\u2581upon"), 407);
  EXPECT_EQ(tok.tokenToId("no-such-token"), std::nullopt);
  EXPECT_TRUE(tok.isSpecial(1));
  EXPECT_FALSE(tok.isSpecial(403));
}

TEST(Stories260K, GenerationConfigAddsEosIds) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / "qeff-tok-genconfig";
  fs::create_directories(dir);
  fs::copy_file(kData + "stories260K/tokenizer.json", dir / "tokenizer.json",
                fs::copy_options::overwrite_existing);
  std::ofstream(dir / "generation_config.json")
      << R"({"eos_token_id": [2, 5]})";
  Tokenizer tok = load(Tokenizer::fromDirectory(dir.string()));
  EXPECT_EQ(tok.eosIds(), (Ids{2, 5}));
  EXPECT_EQ(tok.bosId(), 1); // from the post-processor template
  fs::remove(dir / "tokenizer.json");
  std::ofstream(dir / "tokenizer.model") << "x";
  auto spOnly = Tokenizer::fromDirectory(dir.string());
  EXPECT_EQ(spOnly.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(spOnly.status().message().find("SentencePiece"), std::string::npos);
  fs::remove_all(dir);
}

TEST(Stories260K, ByteFallback) {
  Tokenizer tok = stories();
  // U+65E5 is E6 97 A5; the 512-token vocabulary has only <0xNN> for it.
  Ids ids = tok.encode("\u65E5", false);
  EXPECT_EQ(ids, (Ids{410, 233, 154, 168}));
  EXPECT_EQ(tok.decode(ids), "\u65E5");
  // A lone continuation byte decodes to U+FFFD, one per byte.
  EXPECT_EQ(tok.decode(Ids{410, 154, 168}), "\uFFFD\uFFFD");
}

TEST(Llama2, SpecialTokensSplitBeforeNormalization) {
  Tokenizer tok = llama2();
  // Each text segment between special tokens gets its own "▁" prefix (the
  // legacy LlamaTokenizer behaviour of HF tokenizers).
  EXPECT_EQ(tok.encode("Hello</s>world<s>", false), (Ids{15043, 2, 3186, 1}));
  EXPECT_EQ(tok.encode("Hello world", true), (Ids{1, 15043, 3186}));
  EXPECT_EQ(tok.decode(Ids{1, 15043, 3186, 2}, true), "Hello world");
  EXPECT_EQ(tok.decode(Ids{1, 15043, 3186, 2}, false), "<s> Hello world</s>");
  EXPECT_EQ(tok.vocabSize(), 32000u);
}

TEST(Llama2, ConfigOverridesTemplate) {
  std::string base =
      readFile(kData + "llama2/tokenizer_config.hf-internal-testing.json");
  auto withFlags = [&](const std::string &flags) {
    std::string config = base;
    config.replace(config.find("\"add_bos_token\": true"),
                   std::string("\"add_bos_token\": true").size(), flags);
    return config;
  };
  EXPECT_EQ(llama2(withFlags("\"add_bos_token\": false")).encode("Hello"),
            (Ids{15043}));
  Tokenizer both = llama2(withFlags("\"add_bos_token\": true"));
  EXPECT_EQ(both.encode("Hello"), (Ids{1, 15043}));
  std::string eosConfig = base;
  eosConfig.replace(eosConfig.find("\"add_eos_token\": false"),
                    std::string("\"add_eos_token\": false").size(),
                    "\"add_eos_token\": true");
  EXPECT_EQ(llama2(eosConfig).encode("Hello"), (Ids{1, 15043, 2}));
}

TEST(Mistral, KnownIds) {
  Tokenizer tok = load(Tokenizer::fromDirectory(kData + "mistral"));
  EXPECT_EQ(tok.encode("Hello world", true), (Ids{1, 22557, 1526}));
  EXPECT_EQ(tok.encode("[INST]", false), (Ids{733, 16289, 28793}));
  EXPECT_EQ(tok.encode("\n", false), (Ids{28705, 13}));
  EXPECT_EQ(tok.decode(tok.encode("[INST] Hi! \xF0\x9F\x98\x81 [/INST]"), true),
            "[INST] Hi! \xF0\x9F\x98\x81 [/INST]");
}

TEST(Gpt2, EndOfTextIsSpecial) {
  Tokenizer tok = gpt2();
  EXPECT_EQ(tok.encode("Hello<|endoftext|>world"), (Ids{15496, 50256, 6894}));
  EXPECT_EQ(tok.decode(Ids{15496, 50256, 6894}, true), "Helloworld");
  EXPECT_EQ(tok.decode(Ids{15496, 50256, 6894}, false),
            "Hello<|endoftext|>world");
  EXPECT_EQ(tok.bosId(), 50256);
  EXPECT_EQ(tok.eosIds(), (Ids{50256}));
  EXPECT_FALSE(tok.addsBos());
  EXPECT_EQ(tok.vocabSize(), 50257u);
  // encoder.json + vocab.bpe in a directory load the same way.
  Tokenizer fromDir = load(Tokenizer::fromDirectory(kData + "gpt2"));
  EXPECT_EQ(fromDir.encode(" Hello world!"), tok.encode(" Hello world!"));
}

// Control: the pre-tokenizer regex matters, so the suites can fail. The
// Llama-3 vocabulary split with the GPT-2 regex differs on digit runs.
TEST(Llama3, RegexMatters) {
  Tokenizer right = load(Tokenizer::fromVocabAndMerges(
      kData + "llama3/encoder.json", kData + "llama3/vocab.bpe",
      BpeFlavor::Llama3));
  Tokenizer wrong = load(Tokenizer::fromVocabAndMerges(
      kData + "llama3/encoder.json", kData + "llama3/vocab.bpe",
      BpeFlavor::Gpt2));
  // Llama 3 splits digits in groups of three.
  EXPECT_EQ(right.encode("1234567", false).size(), 3u);
  EXPECT_NE(right.encode("1234567", false), wrong.encode("1234567", false));
}

TEST(Encode, SharedAcrossThreads) {
  Tokenizer tok = gpt2();
  Tokenizer moved = std::move(tok);
  EXPECT_EQ(tok.encode("still usable"), moved.encode("still usable"));
  const std::string text = "Hello, world! 123 \u65E5\u672C  \n\tend";
  const Ids expected = moved.encode(text);
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i)
        mismatches[t] +=
            moved.encode(text) != expected || moved.decode(expected) != text;
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(mismatches, (std::vector<int>(4, 0)));
}

TEST(Encode, InvalidUtf8IsReplaced) {
  Tokenizer tok = gpt2();
  EXPECT_EQ(tok.encode("a\xFF"
                       "b"),
            tok.encode("a\uFFFD"
                       "b"));
  EXPECT_EQ(tok.encode("\xE6\x97"), tok.encode("\uFFFD"));
  EXPECT_TRUE(tok.encode("").empty());
}

//===----------------------------------------------------------------------===//
// Synthetic tokenizers for the added-token flags and pre-tokenizers
//===----------------------------------------------------------------------===//

/// A character-level BPE: a b c space, merges a+b, ab+c; plus `extra`
/// top-level members.
std::string tinyJson(const std::string &addedTokens,
                     const std::string &extra = "") {
  return R"({"model": {"type": "BPE", "unk_token": "<unk>",
    "vocab": {"<unk>": 0, "a": 1, "b": 2, "c": 3, " ": 4, "ab": 5,
              "abc": 6, "\u2581": 7, "\u2581a": 8},
    "merges": ["a b", ["ab", "c"], "\u2581 a"]},
    "added_tokens": [)" +
         addedTokens + "]" + extra + "}";
}

std::string added(const std::string &content, int id,
                  const std::string &flags) {
  return R"({"id": )" + std::to_string(id) + R"(, "content": ")" + content +
         R"(", "special": true, "normalized": false)" + flags + "}";
}

TEST(AddedTokens, LstripRstrip) {
  Tokenizer plain =
      load(Tokenizer::fromJsonText(tinyJson(added("<X>", 9, ""))));
  EXPECT_EQ(plain.encode("a <X> b"), (Ids{1, 4, 9, 4, 2}));
  Tokenizer left = load(Tokenizer::fromJsonText(
      tinyJson(added("<X>", 9, R"(, "lstrip": true)"))));
  EXPECT_EQ(left.encode("a  <X> b"), (Ids{1, 9, 4, 2}));
  Tokenizer both = load(Tokenizer::fromJsonText(
      tinyJson(added("<X>", 9, R"(, "lstrip": true, "rstrip": true)"))));
  EXPECT_EQ(both.encode("a <X>  b"), (Ids{1, 9, 2}));
  // Without a decoder HF joins the tokens with spaces.
  EXPECT_EQ(both.decode(Ids{1, 9, 2}, true), "a b");
}

TEST(AddedTokens, SingleWordAndLongestMatch) {
  Tokenizer tok = load(Tokenizer::fromJsonText(
      tinyJson(added("bc", 9, R"(, "single_word": true)") + "," +
               added("<X>", 10, "") + "," + added("<X>>", 11, ""))));
  EXPECT_EQ(tok.encode("abc"), (Ids{6}));           // "bc" inside a word
  EXPECT_EQ(tok.encode("a bc"), (Ids{1, 4, 9}));    // "bc" as a word
  EXPECT_EQ(tok.encode("a<X>>c"), (Ids{1, 11, 3})); // leftmost-longest
  EXPECT_EQ(tok.encode("<X>c"), (Ids{10, 3}));
}

TEST(AddedTokens, UnknownCharactersFuseOnlyWhenAsked) {
  Tokenizer tok = load(Tokenizer::fromJsonText(tinyJson("")));
  EXPECT_EQ(tok.encode("a\u00e9\u00e9b"), (Ids{1, 0, 0, 2}));
  std::string fused = tinyJson("");
  fused.replace(fused.find("\"unk_token\""), 0, "\"fuse_unk\": true, ");
  EXPECT_EQ(load(Tokenizer::fromJsonText(fused)).encode("a\u00e9\u00e9b"),
            (Ids{1, 0, 2}));
}

TEST(Metaspace, PrependSchemeFirstOnlyAtStart) {
  auto withScheme = [](const std::string &scheme) {
    return load(Tokenizer::fromJsonText(tinyJson(
        added("<s>", 9, ""),
        R"(, "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581",
              "prepend_scheme": ")" +
            scheme + R"(", "split": true},
            "decoder": {"type": "Metaspace", "replacement": "\u2581",
              "prepend_scheme": ")" +
            scheme + R"("})")));
  };
  Tokenizer first = withScheme("first");
  EXPECT_EQ(first.encode("a<s>a a"), (Ids{8, 9, 1, 8}));
  Tokenizer always = withScheme("always");
  EXPECT_EQ(always.encode("a<s>a a"), (Ids{8, 9, 8, 8}));
  Tokenizer never = withScheme("never");
  EXPECT_EQ(never.encode("a a"), (Ids{1, 8}));
  EXPECT_EQ(first.decode(Ids{8, 8}), "a a");
  EXPECT_EQ(never.decode(Ids{8, 8}), " a a");
}

TEST(SplitBehavior, MatchesHuggingFaceExamples) {
  using qeff::tokenizer::detail::Piece;
  using qeff::tokenizer::detail::SplitBehavior;
  using qeff::tokenizer::detail::splitPiece;
  auto run = [](SplitBehavior behavior, bool invert = false) {
    std::string text = "the-final--countdown";
    std::vector<std::pair<size_t, size_t>> dashes;
    for (size_t i = 0; i < text.size(); ++i)
      if (text[i] == '-')
        dashes.emplace_back(i, i + 1);
    std::vector<Piece> out;
    splitPiece(Piece{text, true}, dashes, behavior, invert, out);
    std::vector<std::string> texts;
    for (const Piece &piece : out)
      texts.push_back(piece.text);
    return texts;
  };
  using Strings = std::vector<std::string>;
  EXPECT_EQ(run(SplitBehavior::Removed),
            (Strings{"the", "final", "countdown"}));
  EXPECT_EQ(run(SplitBehavior::Isolated),
            (Strings{"the", "-", "final", "-", "-", "countdown"}));
  EXPECT_EQ(run(SplitBehavior::MergedWithPrevious),
            (Strings{"the-", "final-", "-", "countdown"}));
  EXPECT_EQ(run(SplitBehavior::MergedWithNext),
            (Strings{"the", "-final", "-", "-countdown"}));
  EXPECT_EQ(run(SplitBehavior::Contiguous),
            (Strings{"the", "-", "final", "--", "countdown"}));
  EXPECT_EQ(run(SplitBehavior::Removed, /*invert=*/true),
            (Strings{"-", "-", "-"}));
}

//===----------------------------------------------------------------------===//
// Streaming decode
//===----------------------------------------------------------------------===//

TEST(DecodeStream, HoldsBackIncompleteCharacters) {
  Tokenizer tok = stories();
  std::string text = "Once \u65E5\u672C upon \xF0\x9F\x98\x81 a time";
  Ids ids = tok.encode(text, true);
  DecodeStream stream(tok);
  std::vector<std::string> chunks;
  for (TokenId id : ids)
    chunks.push_back(stream.step(id));
  std::string joined;
  for (const std::string &chunk : chunks) {
    std::string clean = chunk;
    EXPECT_EQ(clean.find("\uFFFD"), std::string::npos) << chunk;
    joined += chunk;
  }
  joined += stream.flush();
  EXPECT_EQ(joined, text);
  EXPECT_EQ(joined, tok.decode(ids, true));
  // The first byte of U+65E5 completes nothing.
  size_t firstByte = 0;
  while (ids[firstByte] != 233)
    ++firstByte;
  EXPECT_EQ(chunks[firstByte], "");
}

TEST(DecodeStream, UpdateTakesAllIdsSoFar) {
  Tokenizer tok = llama2();
  Ids ids = tok.encode("Hello world, this is qeff", true);
  DecodeStream stream(tok);
  std::string joined;
  for (size_t n = 1; n <= ids.size(); ++n)
    joined += stream.update(absl::MakeConstSpan(ids.data(), n));
  EXPECT_EQ(joined, "Hello world, this is qeff");
  EXPECT_EQ(stream.update(ids), ""); // nothing new
}

} // namespace
