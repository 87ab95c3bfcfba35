//===- Unicode.cpp - UTF-8 helpers and PCRE2 regexes for tokenizers -------===//
//
// Implements Unicode.h. PCRE2 is used in UTF + UCP mode so that \p{L}, \p{N},
// \s and \w follow Unicode like the Oniguruma regexes of HF `tokenizers`.
//
//===----------------------------------------------------------------------===//

#include "frontend/Tokenizer/Unicode.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <array>

namespace qeff::tokenizer::detail {

size_t utf8SeqLen(unsigned char c) {
  if (c < 0x80)
    return 1;
  if ((c & 0xE0) == 0xC0)
    return 2;
  if ((c & 0xF0) == 0xE0)
    return 3;
  if ((c & 0xF8) == 0xF0)
    return 4;
  return 1;
}

char32_t decodeUtf8(std::string_view text, size_t &pos) {
  auto c = static_cast<unsigned char>(text[pos]);
  size_t len = utf8SeqLen(c);
  if (len == 1 || pos + len > text.size()) {
    ++pos;
    return c;
  }
  char32_t cp = len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
  for (size_t i = 1; i < len; ++i)
    cp = (cp << 6) | (static_cast<unsigned char>(text[pos + i]) & 0x3F);
  pos += len;
  return cp;
}

void appendUtf8(std::string &out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

/// Length of the valid UTF-8 sequence at `text[pos]`, or 0 when invalid
/// (overlong forms, surrogates and code points past U+10FFFF are invalid).
static size_t validSeqLen(std::string_view text, size_t pos) {
  auto b0 = static_cast<unsigned char>(text[pos]);
  if (b0 < 0x80)
    return 1;
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0)
      lo = 0xA0;
    else if (b0 == 0xED)
      hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0)
      lo = 0x90;
    else if (b0 == 0xF4)
      hi = 0x8F;
  } else {
    return 0;
  }
  if (pos + len > text.size())
    return 0;
  auto b1 = static_cast<unsigned char>(text[pos + 1]);
  if (b1 < lo || b1 > hi)
    return 0;
  for (size_t i = 2; i < len; ++i) {
    auto b = static_cast<unsigned char>(text[pos + i]);
    if ((b & 0xC0) != 0x80)
      return 0;
  }
  return len;
}

bool isValidUtf8(std::string_view text) {
  for (size_t pos = 0; pos < text.size();) {
    size_t len = validSeqLen(text, pos);
    if (len == 0)
      return false;
    pos += len;
  }
  return true;
}

std::string sanitizeUtf8(std::string_view text) {
  if (isValidUtf8(text))
    return std::string(text);
  std::string out;
  out.reserve(text.size() + 8);
  for (size_t pos = 0; pos < text.size();) {
    size_t len = validSeqLen(text, pos);
    if (len != 0) {
      out.append(text.substr(pos, len));
      pos += len;
      continue;
    }
    // One U+FFFD per maximal invalid prefix of a would-be sequence.
    size_t skip = 1;
    size_t want = utf8SeqLen(static_cast<unsigned char>(text[pos]));
    while (skip < want && pos + skip < text.size() &&
           (static_cast<unsigned char>(text[pos + skip]) & 0xC0) == 0x80)
      ++skip;
    appendUtf8(out, 0xFFFD);
    pos += skip;
  }
  return out;
}

bool isUnicodeWhitespace(char32_t cp) {
  switch (cp) {
  case 0x09:
  case 0x0A:
  case 0x0B:
  case 0x0C:
  case 0x0D:
  case 0x20:
  case 0x85:
  case 0xA0:
  case 0x1680:
  case 0x2028:
  case 0x2029:
  case 0x202F:
  case 0x205F:
  case 0x3000:
    return true;
  default:
    return cp >= 0x2000 && cp <= 0x200A;
  }
}

namespace {
struct ByteTables {
  std::array<char32_t, 256> toUnicode{};
  ByteTables() {
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) ||
                       (b >= 174 && b <= 255);
      toUnicode[b] = printable ? static_cast<char32_t>(b) : next++;
    }
  }
};
const ByteTables &byteTables() {
  static const ByteTables tables;
  return tables;
}
} // namespace

char32_t byteToUnicode(uint8_t byte) { return byteTables().toUnicode[byte]; }

int unicodeToByte(char32_t cp) {
  if ((cp >= 33 && cp <= 126) || (cp >= 161 && cp <= 172) ||
      (cp >= 174 && cp <= 255))
    return static_cast<int>(cp);
  if (cp < 256 || cp >= 256 + 68)
    return -1;
  // Code points 256.. enumerate the non-printable bytes in increasing order.
  const auto &table = byteTables().toUnicode;
  for (int b = 0; b < 256; ++b)
    if (table[b] == cp)
      return b;
  return -1;
}

std::string replaceAll(std::string_view text, std::string_view from,
                       std::string_view to) {
  if (from.empty())
    return std::string(text);
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (true) {
    size_t hit = text.find(from, pos);
    if (hit == std::string_view::npos)
      break;
    out.append(text.substr(pos, hit - pos));
    out.append(to);
    pos = hit + from.size();
  }
  out.append(text.substr(pos));
  return out;
}

//===----------------------------------------------------------------------===//
// Regex
//===----------------------------------------------------------------------===//

struct Regex::Code {
  pcre2_code *code = nullptr;
  ~Code() { pcre2_code_free(code); }
};

absl::StatusOr<Regex> Regex::compile(std::string_view pattern) {
  int errorCode = 0;
  PCRE2_SIZE errorOffset = 0;
  pcre2_code *code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()),
                                   pattern.size(), PCRE2_UTF | PCRE2_UCP,
                                   &errorCode, &errorOffset, nullptr);
  if (!code) {
    std::array<PCRE2_UCHAR, 256> message{};
    pcre2_get_error_message(errorCode, message.data(), message.size());
    return absl::InvalidArgumentError(
        strCat("invalid regex '", pattern, "' at offset ", errorOffset, ": ",
               reinterpret_cast<const char *>(message.data())));
  }
  // JIT is an optimisation only; the interpreter is used when it fails.
  (void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  auto owned = std::make_shared<Code>();
  owned->code = code;
  Regex regex;
  regex.code_ = std::move(owned);
  regex.pattern_ = std::string(pattern);
  return regex;
}

absl::StatusOr<Regex> Regex::literal(std::string_view literal) {
  // \Q...\E quotes everything except a literal "\E", which is spliced in.
  std::string quoted = "\\Q";
  quoted += qeff::tokenizer::detail::replaceAll(literal, "\\E", "\\E\\\\E\\Q");
  quoted += "\\E";
  return compile(quoted);
}

std::vector<std::pair<size_t, size_t>>
Regex::findAll(std::string_view text) const {
  std::vector<std::pair<size_t, size_t>> matches;
  if (!code_)
    return matches;
  pcre2_match_data *data =
      pcre2_match_data_create_from_pattern(code_->code, nullptr);
  size_t start = 0;
  while (start <= text.size()) {
    auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    int rc = pcre2_match(code_->code, subject, text.size(), start,
                         PCRE2_NO_UTF_CHECK, data, nullptr);
    // The JIT has a small fixed stack; the interpreter uses the heap.
    if (rc < 0 && rc != PCRE2_ERROR_NOMATCH)
      rc = pcre2_match(code_->code, subject, text.size(), start,
                       PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, data, nullptr);
    if (rc < 0)
      break; // no further match (or a PCRE2 resource limit on huge input)
    PCRE2_SIZE *ovector = pcre2_get_ovector_pointer(data);
    size_t begin = ovector[0], end = ovector[1];
    if (end < begin) // \K tricks; never produced by tokenizer patterns
      break;
    matches.emplace_back(begin, end);
    if (end == begin) {
      if (end >= text.size())
        break;
      start = end + utf8SeqLen(static_cast<unsigned char>(text[end]));
    } else {
      start = end;
    }
  }
  pcre2_match_data_free(data);
  return matches;
}

std::string Regex::replaceAll(std::string_view text,
                              std::string_view replacement) const {
  std::string out;
  size_t prev = 0;
  for (auto [begin, end] : findAll(text)) {
    out.append(text.substr(prev, begin - prev));
    out.append(replacement);
    prev = end;
  }
  out.append(text.substr(prev));
  return out;
}

} // namespace qeff::tokenizer::detail
