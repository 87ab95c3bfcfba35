//===- Normalizers.cpp - tokenizer.json "normalizer" ----------------------===//
//
// Sequence, Prepend, Replace, Strip and ByteLevel normalizers. Unicode
// normalization forms (NFC, NFKC, ...), Lowercase, BertNormalizer and the
// SentencePiece Precompiled charsmap are rejected by name.
//
//===----------------------------------------------------------------------===//

#include "frontend/Tokenizer/Components.h"
#include "frontend/Tokenizer/Unicode.h"

namespace qeff::tokenizer::detail {
namespace {

class SequenceNormalizer : public Normalizer {
public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<const Normalizer>> s)
      : steps_(std::move(s)) {}
  void normalize(std::string &text) const override {
    for (const auto &step : steps_)
      step->normalize(text);
  }

private:
  std::vector<std::unique_ptr<const Normalizer>> steps_;
};

/// Prepends a string to non-empty text (HF normalizers::Prepend).
class PrependNormalizer : public Normalizer {
public:
  explicit PrependNormalizer(std::string prefix) : prefix_(std::move(prefix)) {}
  void normalize(std::string &text) const override {
    if (!text.empty())
      text.insert(0, prefix_);
  }

private:
  std::string prefix_;
};

class ReplaceNormalizer : public Normalizer {
public:
  ReplaceNormalizer(Matcher matcher, std::string content)
      : matcher_(std::move(matcher)), content_(std::move(content)) {}
  void normalize(std::string &text) const override {
    replaceMatches(matcher_, content_, text);
  }

private:
  Matcher matcher_;
  std::string content_;
};

/// Trims Unicode whitespace on either side.
class StripNormalizer : public Normalizer {
public:
  StripNormalizer(bool left, bool right) : left_(left), right_(right) {}
  void normalize(std::string &text) const override {
    size_t begin = 0, end = text.size();
    if (left_) {
      while (begin < end) {
        size_t pos = begin;
        if (!isUnicodeWhitespace(decodeUtf8(text, pos)))
          break;
        begin = pos;
      }
    }
    if (right_) {
      while (end > begin) {
        size_t start = end - 1;
        while (start > begin &&
               (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80)
          --start;
        size_t pos = start;
        if (!isUnicodeWhitespace(decodeUtf8(text, pos)))
          break;
        end = start;
      }
    }
    text = text.substr(begin, end - begin);
  }

private:
  bool left_, right_;
};

/// Maps every byte to its GPT-2 byte-level character.
class ByteLevelNormalizer : public Normalizer {
public:
  void normalize(std::string &text) const override {
    std::string out;
    out.reserve(text.size() * 2);
    for (char c : text)
      appendUtf8(out, byteToUnicode(static_cast<uint8_t>(c)));
    text = std::move(out);
  }
};

} // namespace

absl::StatusOr<std::unique_ptr<const Normalizer>>
parseNormalizer(const Json &json, const JsonPath &path) {
  auto type = getType(json, path);
  if (!type.ok())
    return type.status();

  if (*type == "Sequence") {
    auto steps = parseSequence<Normalizer>(json, path, "normalizers", parseNormalizer);
    if (!steps.ok())
      return steps.status();
    return std::make_unique<SequenceNormalizer>(*std::move(steps));
  }
  if (*type == "Prepend") {
    auto prefix = getString(json, path, "prepend");
    if (!prefix.ok())
      return prefix.status();
    return std::make_unique<PrependNormalizer>(*std::move(prefix));
  }
  if (*type == "Replace") {
    auto matcher = parsePattern(json, path);
    if (!matcher.ok())
      return matcher.status();
    auto content = getString(json, path, "content");
    if (!content.ok())
      return content.status();
    return std::make_unique<ReplaceNormalizer>(*std::move(matcher),
                                               *std::move(content));
  }
  if (*type == "Strip") {
    auto left = getBool(json, path, "strip_left", true);
    if (!left.ok())
      return left.status();
    auto right = getBool(json, path, "strip_right", true);
    if (!right.ok())
      return right.status();
    return std::make_unique<StripNormalizer>(*left, *right);
  }
  if (*type == "ByteLevel")
    return std::make_unique<ByteLevelNormalizer>();
  return unsupported(path / "type", strCat("normalizer '", *type, "'"));
}

} // namespace qeff::tokenizer::detail
