//===- Normalizers.cpp - tokenizer.json "normalizer" ----------------------===//
//
// The normalizers of Hugging Face `tokenizers`: Sequence, Prepend, Replace,
// Strip, ByteLevel, the Unicode normalization forms NFC, NFD, NFKC and NFKD
// (utf8proc), Lowercase, StripAccents, Nmt and BertNormalizer, each with the
// character-level semantics of the Rust implementation. The SentencePiece
// Precompiled charsmap is rejected by name.
//
//===----------------------------------------------------------------------===//

#include "frontend/Tokenizer/Components.h"
#include "frontend/Tokenizer/Unicode.h"

#include <utf8proc.h>

#include <cstdlib>

namespace qeff::tokenizer::detail {
namespace {

/// `text` through utf8proc_map with `options` (a normalization form). The
/// text is valid UTF-8 (encode sanitizes it first), so utf8proc cannot fail
/// but for memory; then the text stays as it was.
void mapUtf8proc(std::string &text, int options) {
  utf8proc_uint8_t *out = nullptr;
  utf8proc_ssize_t n = utf8proc_map(
      reinterpret_cast<const utf8proc_uint8_t *>(text.data()),
      static_cast<utf8proc_ssize_t>(text.size()), &out,
      static_cast<utf8proc_option_t>(options | UTF8PROC_STABLE));
  if (n >= 0)
    text.assign(reinterpret_cast<const char *>(out), static_cast<size_t>(n));
  std::free(out);
}

/// Rewrites every code point of `text` with `f`, which appends its
/// replacement (nothing to drop the code point).
template <typename F> void mapCodePoints(std::string &text, F f) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();)
    f(decodeUtf8(text, pos), out);
  text = std::move(out);
}

/// Rust's char::to_lowercase: the simple lowercase mapping, except U+0130
/// (the only unconditional multi-character lowercase mapping).
void lowercase(std::string &text) {
  mapCodePoints(text, [](char32_t cp, std::string &out) {
    if (cp == 0x130) {
      out += "i\xCC\x87"; // i + U+0307
      return;
    }
    appendUtf8(out, static_cast<char32_t>(utf8proc_tolower(cp)));
  });
}

bool isMark(char32_t cp) {
  utf8proc_category_t c = utf8proc_category(cp);
  return c == UTF8PROC_CATEGORY_MN || c == UTF8PROC_CATEGORY_MC ||
         c == UTF8PROC_CATEGORY_ME;
}

/// NFD, then every combining mark dropped (HF StripAccents after NFD, as
/// BertNormalizer does it).
void stripAccents(std::string &text) {
  mapCodePoints(text, [](char32_t cp, std::string &out) {
    if (!isMark(cp))
      appendUtf8(out, cp);
  });
}

class UnicodeFormNormalizer : public Normalizer {
public:
  explicit UnicodeFormNormalizer(int options) : options_(options) {}
  void normalize(std::string &text) const override {
    mapUtf8proc(text, options_);
  }

private:
  int options_;
};

class LowercaseNormalizer : public Normalizer {
public:
  void normalize(std::string &text) const override { lowercase(text); }
};

class StripAccentsNormalizer : public Normalizer {
public:
  void normalize(std::string &text) const override { stripAccents(text); }
};

/// HF normalizers::Nmt: drops some control characters, maps others and a few
/// separators to a space.
class NmtNormalizer : public Normalizer {
public:
  void normalize(std::string &text) const override {
    mapCodePoints(text, [](char32_t cp, std::string &out) {
      if ((cp >= 0x01 && cp <= 0x08) || cp == 0x0B ||
          (cp >= 0x0E && cp <= 0x1F) || cp == 0x7F || cp == 0x8F ||
          cp == 0x9F)
        return;
      bool space = cp == 0x09 || cp == 0x0A || cp == 0x0C || cp == 0x0D ||
                   cp == 0x1680 || (cp >= 0x200B && cp <= 0x200F) ||
                   cp == 0x2028 || cp == 0x2029 || cp == 0x2581 ||
                   cp == 0xFEFF || cp == 0xFFFD;
      appendUtf8(out, space ? U' ' : cp);
    });
  }
};

/// HF normalizers::BertNormalizer: clean_text, handle_chinese_chars,
/// strip_accents (defaults to lowercase), lowercase, in that order.
class BertNormalizer : public Normalizer {
public:
  BertNormalizer(bool cleanText, bool chineseChars, bool stripAccents,
                 bool lowercase)
      : cleanText_(cleanText), chineseChars_(chineseChars),
        stripAccents_(stripAccents), lowercase_(lowercase) {}

  void normalize(std::string &text) const override {
    if (cleanText_)
      mapCodePoints(text, [](char32_t cp, std::string &out) {
        bool whitespace = cp == '\t' || cp == '\n' || cp == '\r' ||
                          isUnicodeWhitespace(cp);
        // Rust's char::is_other (Cc, Cf, Cn, Co, Cs), tab/newline/return
        // excepted.
        utf8proc_category_t c = utf8proc_category(cp);
        bool other = c == UTF8PROC_CATEGORY_CC || c == UTF8PROC_CATEGORY_CF ||
                     c == UTF8PROC_CATEGORY_CN || c == UTF8PROC_CATEGORY_CO ||
                     c == UTF8PROC_CATEGORY_CS;
        if (cp == 0 || cp == 0xFFFD || (other && !whitespace))
          return;
        appendUtf8(out, whitespace ? U' ' : cp);
      });
    if (chineseChars_)
      mapCodePoints(text, [](char32_t cp, std::string &out) {
        bool chinese = (cp >= 0x4E00 && cp <= 0x9FFF) ||
                       (cp >= 0x3400 && cp <= 0x4DBF) ||
                       (cp >= 0x20000 && cp <= 0x2A6DF) ||
                       (cp >= 0x2A700 && cp <= 0x2B73F) ||
                       (cp >= 0x2B740 && cp <= 0x2B81F) ||
                       (cp >= 0x2B920 && cp <= 0x2CEAF) ||
                       (cp >= 0xF900 && cp <= 0xFAFF) ||
                       (cp >= 0x2F800 && cp <= 0x2FA1F);
        if (chinese)
          out += ' ';
        appendUtf8(out, cp);
        if (chinese)
          out += ' ';
      });
    if (stripAccents_) {
      mapUtf8proc(text, UTF8PROC_DECOMPOSE);
      stripAccents(text);
    }
    if (lowercase_)
      lowercase(text);
  }

private:
  bool cleanText_, chineseChars_, stripAccents_, lowercase_;
};

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
  if (*type == "NFC")
    return std::make_unique<UnicodeFormNormalizer>(UTF8PROC_COMPOSE);
  if (*type == "NFD")
    return std::make_unique<UnicodeFormNormalizer>(UTF8PROC_DECOMPOSE);
  if (*type == "NFKC")
    return std::make_unique<UnicodeFormNormalizer>(UTF8PROC_COMPOSE |
                                                   UTF8PROC_COMPAT);
  if (*type == "NFKD")
    return std::make_unique<UnicodeFormNormalizer>(UTF8PROC_DECOMPOSE |
                                                   UTF8PROC_COMPAT);
  if (*type == "Lowercase")
    return std::make_unique<LowercaseNormalizer>();
  if (*type == "StripAccents")
    return std::make_unique<StripAccentsNormalizer>();
  if (*type == "Nmt")
    return std::make_unique<NmtNormalizer>();
  if (*type == "BertNormalizer") {
    auto clean = getBool(json, path, "clean_text", true);
    if (!clean.ok())
      return clean.status();
    auto chinese = getBool(json, path, "handle_chinese_chars", true);
    if (!chinese.ok())
      return chinese.status();
    auto lower = getBool(json, path, "lowercase", true);
    if (!lower.ok())
      return lower.status();
    // strip_accents: null (or absent) follows lowercase.
    const Json *stripValue = findMember(json, "strip_accents");
    auto strip = stripValue && stripValue->is_null()
                     ? absl::StatusOr<bool>(*lower)
                     : getBool(json, path, "strip_accents", *lower);
    if (!strip.ok())
      return strip.status();
    return std::make_unique<BertNormalizer>(*clean, *chinese, *strip, *lower);
  }
  return unsupported(path / "type", strCat("normalizer '", *type, "'"));
}

} // namespace qeff::tokenizer::detail
