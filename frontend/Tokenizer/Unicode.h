//===- Unicode.h - UTF-8 helpers and PCRE2 regexes for tokenizers -*- C++
//-*-===//
//
// Small text utilities shared by the tokenizer components: UTF-8 decoding and
// sanitising, the GPT-2 byte <-> unicode table, Unicode whitespace, and a
// PCRE2-backed regex (UTF + UCP mode) standing in for the Oniguruma regexes
// Hugging Face `tokenizers` uses. Internal to QEffTokenizer.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_TOKENIZER_UNICODE_H
#define QEFF_FRONTEND_TOKENIZER_UNICODE_H

#include "absl/status/statusor.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace qeff::tokenizer::detail {

/// Concatenates anything streamable (strings, std::string_view, numbers).
/// Used instead of absl::StrCat, which Debian's Abseil (built without
/// std::string_view aliasing) cannot take std::string_view arguments for.
template <typename... Args> std::string strCat(const Args &...args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

/// Byte length of the UTF-8 sequence starting with lead byte `c` (1 for
/// invalid lead bytes, so loops always advance).
size_t utf8SeqLen(unsigned char c);

/// Decodes the code point at `text[pos]` (text must be valid UTF-8) and
/// advances `pos` past it.
char32_t decodeUtf8(std::string_view text, size_t &pos);

/// Appends the UTF-8 encoding of `cp` to `out`.
void appendUtf8(std::string &out, char32_t cp);

/// Returns `text` with every invalid UTF-8 sequence replaced by U+FFFD, the
/// way Python decodes bytes with errors="replace". Valid input is returned
/// unchanged.
std::string sanitizeUtf8(std::string_view text);

/// True when `text` is entirely valid UTF-8.
bool isValidUtf8(std::string_view text);

/// Rust's `char::is_whitespace` (the Unicode White_Space property).
bool isUnicodeWhitespace(char32_t cp);

/// Maps one byte to the printable code point GPT-2's byte-level BPE uses.
char32_t byteToUnicode(uint8_t byte);

/// Inverse of byteToUnicode; returns -1 for code points outside the table.
int unicodeToByte(char32_t cp);

/// Replaces every non-overlapping occurrence of `from` in `text` with `to`.
std::string replaceAll(std::string_view text, std::string_view from,
                       std::string_view to);

/// A compiled PCRE2 pattern in UTF + UCP mode (\p{L}, \s, \w are Unicode).
/// Copies share the compiled code; matching is thread-safe.
class Regex {
public:
  /// Compiles `pattern`; the error names the pattern and PCRE2's message.
  static absl::StatusOr<Regex> compile(std::string_view pattern);

  /// Builds a regex matching `literal` verbatim.
  static absl::StatusOr<Regex> literal(std::string_view literal);

  /// All non-overlapping matches in `text` (valid UTF-8), left to right, as
  /// [begin, end) byte offsets. After an empty match the search resumes one
  /// character further, as Oniguruma's find_iter does.
  std::vector<std::pair<size_t, size_t>> findAll(std::string_view text) const;

  /// Replaces every match in `text` by `replacement` (taken literally).
  std::string replaceAll(std::string_view text,
                         std::string_view replacement) const;

  const std::string &pattern() const { return pattern_; }

private:
  struct Code;
  std::shared_ptr<const Code> code_;
  std::string pattern_;
};

} // namespace qeff::tokenizer::detail

#endif // QEFF_FRONTEND_TOKENIZER_UNICODE_H
