//===- Text.cpp - Python str semantics on UTF-8 ---------------------------===//

#include "frontend/ChatTemplate/Text.h"

#include <cstdio>

namespace qeff::chat::detail {

char32_t nextCodePoint(std::string_view text, size_t &pos) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char c = byte(pos);
  size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3
                                         : (c >> 3) == 30           ? 4
                                                                    : 1;
  if (len == 1 || pos + len > text.size()) {
    ++pos;
    return c;
  }
  char32_t cp = c & (0x7f >> len);
  for (size_t k = 1; k < len; ++k) {
    if ((byte(pos + k) & 0xc0) != 0x80) {
      ++pos;
      return c;
    }
    cp = (cp << 6) | (byte(pos + k) & 0x3f);
  }
  pos += len;
  return cp;
}

void appendCodePoint(std::string &out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

std::vector<char32_t> codePoints(std::string_view text) {
  std::vector<char32_t> cps;
  for (size_t pos = 0; pos < text.size();)
    cps.push_back(nextCodePoint(text, pos));
  return cps;
}

std::string fromCodePoints(const std::vector<char32_t> &cps, size_t begin,
                           size_t end) {
  std::string out;
  for (size_t k = begin; k < end; ++k)
    appendCodePoint(out, cps[k]);
  return out;
}

size_t codePointCount(std::string_view text) {
  size_t n = 0;
  for (size_t pos = 0; pos < text.size(); ++n)
    nextCodePoint(text, pos);
  return n;
}

bool isPySpace(char32_t cp) {
  if ((cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x20))
    return true;
  switch (cp) {
  case 0x85:
  case 0xa0:
  case 0x1680:
  case 0x2028:
  case 0x2029:
  case 0x202f:
  case 0x205f:
  case 0x3000:
    return true;
  default:
    return cp >= 0x2000 && cp <= 0x200a;
  }
}

std::string pyStrip(std::string_view s, const std::string *chars, bool left,
                    bool right) {
  std::vector<char32_t> cps = codePoints(s);
  std::vector<char32_t> set;
  if (chars)
    set = codePoints(*chars);
  auto strip = [&](char32_t cp) {
    if (!chars)
      return isPySpace(cp);
    for (char32_t c : set)
      if (c == cp)
        return true;
    return false;
  };
  size_t b = 0, e = cps.size();
  if (left)
    while (b < e && strip(cps[b]))
      ++b;
  if (right)
    while (e > b && strip(cps[e - 1]))
      --e;
  return fromCodePoints(cps, b, e);
}

std::vector<std::string> pySplit(std::string_view s, const std::string *sep,
                                 int64_t maxsplit, SourceLoc loc) {
  std::vector<std::string> out;
  if (sep) {
    if (sep->empty())
      fail(loc, "str.split: empty separator");
    size_t pos = 0;
    while (maxsplit < 0 || int64_t(out.size()) < maxsplit) {
      size_t hit = s.find(*sep, pos);
      if (hit == std::string_view::npos)
        break;
      out.emplace_back(s.substr(pos, hit - pos));
      pos = hit + sep->size();
    }
    out.emplace_back(s.substr(pos));
    return out;
  }
  std::vector<char32_t> cps = codePoints(s);
  size_t k = 0, n = cps.size();
  while (true) {
    while (k < n && isPySpace(cps[k]))
      ++k;
    if (k == n)
      break;
    if (maxsplit >= 0 && int64_t(out.size()) == maxsplit) {
      out.push_back(fromCodePoints(cps, k, n));
      break;
    }
    size_t b = k;
    while (k < n && !isPySpace(cps[k]))
      ++k;
    out.push_back(fromCodePoints(cps, b, k));
  }
  return out;
}

std::string pyReplace(std::string_view s, std::string_view from,
                      std::string_view to, int64_t count) {
  std::string out;
  if (from.empty()) {
    // Python inserts `to` around every code point.
    std::vector<char32_t> cps = codePoints(s);
    int64_t done = 0;
    for (size_t k = 0; k <= cps.size(); ++k) {
      if (count < 0 || done < count) {
        out += to;
        ++done;
      }
      if (k < cps.size())
        appendCodePoint(out, cps[k]);
    }
    return out;
  }
  size_t pos = 0;
  int64_t done = 0;
  while (count < 0 || done < count) {
    size_t hit = s.find(from, pos);
    if (hit == std::string_view::npos)
      break;
    out.append(s.substr(pos, hit - pos));
    out.append(to);
    pos = hit + from.size();
    ++done;
  }
  out.append(s.substr(pos));
  return out;
}

namespace {

// Code points of scripts with case (Latin beyond ASCII, Greek, Cyrillic,
// Armenian, Georgian, Cherokee, Glagolitic, fullwidth Latin, Deseret, ...):
// their case mapping needs Unicode tables this library does not carry.
bool isNonAsciiCased(char32_t cp) {
  struct Range {
    char32_t lo, hi;
  };
  static constexpr Range ranges[] = {
      {0xb5, 0xb5},       {0xc0, 0x2af},      {0x345, 0x345},
      {0x370, 0x58f},     {0x10a0, 0x10ff},   {0x13a0, 0x13ff},
      {0x1c80, 0x1cbf},   {0x1d00, 0x1fff},   {0x2100, 0x218f},
      {0x24b6, 0x24e9},   {0x2c00, 0x2d2f},   {0xa640, 0xa7ff},
      {0xab30, 0xabbf},   {0xfb00, 0xfb17},   {0xff21, 0xff5a},
      {0x10400, 0x104ff}, {0x10c80, 0x10cff}, {0x118a0, 0x118ff},
      {0x16e40, 0x16e9f}, {0x1e900, 0x1e94f}};
  for (const Range &r : ranges)
    if (cp >= r.lo && cp <= r.hi)
      return true;
  return false;
}

char32_t upperAscii(char32_t c) {
  return (c >= 'a' && c <= 'z') ? c - 32 : c;
}
char32_t lowerAscii(char32_t c) {
  return (c >= 'A' && c <= 'Z') ? c + 32 : c;
}
bool isAsciiAlpha(char32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

} // namespace

std::string pyCase(std::string_view s, CaseOp op, SourceLoc loc) {
  std::vector<char32_t> cps = codePoints(s);
  for (char32_t cp : cps)
    if (isNonAsciiCased(cp))
      fail(loc, "case mapping of the non-ASCII letter U+" +
                    [&] {
                      char buf[16];
                      std::snprintf(buf, sizeof buf, "%04X", unsigned(cp));
                      return std::string(buf);
                    }() +
                    " is not supported");
  bool prevCased = false, wordStart = true;
  for (size_t k = 0; k < cps.size(); ++k) {
    char32_t &c = cps[k];
    switch (op) {
    case CaseOp::Upper:
      c = upperAscii(c);
      break;
    case CaseOp::Lower:
      c = lowerAscii(c);
      break;
    case CaseOp::Title: {
      bool cased = isAsciiAlpha(c);
      c = prevCased ? lowerAscii(c) : upperAscii(c);
      prevCased = cased;
      break;
    }
    case CaseOp::Capitalize:
      c = k == 0 ? upperAscii(c) : lowerAscii(c);
      break;
    case CaseOp::JinjaTitle: {
      // jinja2: re.split(r"([-\s\(\{\[\<]+)"), then item[0].upper() +
      // item[1:].lower() on every piece.
      bool sep = c == '-' || c == '(' || c == '{' || c == '[' || c == '<' ||
                 isPySpace(c);
      if (sep) {
        wordStart = true;
      } else {
        c = wordStart ? upperAscii(c) : lowerAscii(c);
        wordStart = false;
      }
      break;
    }
    }
  }
  return fromCodePoints(cps, 0, cps.size());
}

namespace {

int hexValue(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

void appendHexEscape(std::string &out, char prefix, char32_t cp, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "\\%c%0*x", prefix, digits, unsigned(cp));
  out += buf;
}

} // namespace

std::string decodeStringLiteral(std::string_view body, SourceLoc loc) {
  // 1. Newlines normalised; non-ASCII turned into backslash escapes
  //    (str.encode("ascii", "backslashreplace")).
  std::string ascii;
  for (size_t pos = 0; pos < body.size();) {
    if (body[pos] == '\r') {
      ascii += '\n';
      pos += (pos + 1 < body.size() && body[pos + 1] == '\n') ? 2 : 1;
      continue;
    }
    char32_t cp = nextCodePoint(body, pos);
    if (cp < 0x80)
      ascii += static_cast<char>(cp);
    else if (cp < 0x100)
      appendHexEscape(ascii, 'x', cp, 2);
    else if (cp < 0x10000)
      appendHexEscape(ascii, 'u', cp, 4);
    else
      appendHexEscape(ascii, 'U', cp, 8);
  }
  // 2. bytes.decode("unicode-escape").
  std::string out;
  for (size_t k = 0; k < ascii.size(); ++k) {
    char c = ascii[k];
    if (c != '\\') {
      out += c;
      continue;
    }
    if (k + 1 >= ascii.size())
      fail(loc, "string literal ends with a lone backslash");
    char e = ascii[++k];
    auto hex = [&](int digits) -> char32_t {
      char32_t cp = 0;
      for (int d = 0; d < digits; ++d) {
        int v = k + 1 < ascii.size() ? hexValue(ascii[k + 1]) : -1;
        if (v < 0)
          fail(loc, std::string("truncated \\") + e + " escape in string literal");
        cp = cp * 16 + char32_t(v);
        ++k;
      }
      return cp;
    };
    switch (e) {
    case '\n':
      break;
    case '\\':
    case '\'':
    case '"':
      out += e;
      break;
    case 'a':
      out += '\a';
      break;
    case 'b':
      out += '\b';
      break;
    case 'f':
      out += '\f';
      break;
    case 'n':
      out += '\n';
      break;
    case 'r':
      out += '\r';
      break;
    case 't':
      out += '\t';
      break;
    case 'v':
      out += '\v';
      break;
    case 'x':
      appendCodePoint(out, hex(2));
      break;
    case 'u':
      appendCodePoint(out, hex(4));
      break;
    case 'U': {
      char32_t cp = hex(8);
      if (cp > 0x10ffff)
        fail(loc, "\\U escape beyond U+10FFFF in string literal");
      appendCodePoint(out, cp);
      break;
    }
    case 'N':
      fail(loc, "\\N{...} escapes in string literals are not supported");
    default:
      if (e >= '0' && e <= '7') {
        char32_t cp = char32_t(e - '0');
        for (int d = 0; d < 2 && k + 1 < ascii.size() && ascii[k + 1] >= '0' &&
                        ascii[k + 1] <= '7';
             ++d)
          cp = cp * 8 + char32_t(ascii[++k] - '0');
        appendCodePoint(out, cp);
      } else {
        out += '\\';
        out += e;
      }
    }
  }
  return out;
}

namespace {

// Python's str.isprintable is false for Cc, Cf, Cs, Co, Cn, Zl, Zp and Zs
// other than the space; these are the assigned ones of those categories
// that occur in text (unassigned code points print as themselves here).
bool isPrintable(char32_t cp) {
  if (cp < 0x20 || (cp >= 0x7f && cp <= 0xa0) || cp == 0xad)
    return false;
  struct Range {
    char32_t lo, hi;
  };
  static constexpr Range ranges[] = {
      {0x600, 0x605},     {0x61c, 0x61c},     {0x6dd, 0x6dd},
      {0x70f, 0x70f},     {0x180e, 0x180e},   {0x1680, 0x1680},
      {0x2000, 0x200f},   {0x2028, 0x202f},   {0x205f, 0x2064},
      {0x2066, 0x206f},   {0x3000, 0x3000},   {0xd800, 0xf8ff},
      {0xfeff, 0xfeff},   {0xfff9, 0xfffb},   {0x110bd, 0x110bd},
      {0x1bca0, 0x1bca3}, {0x1d173, 0x1d17a}, {0xe0001, 0xe0001},
      {0xe0020, 0xe007f}, {0xf0000, 0x10ffff}};
  for (const Range &r : ranges)
    if (cp >= r.lo && cp <= r.hi)
      return false;
  return true;
}

} // namespace

std::string strRepr(std::string_view s) {
  bool hasSingle = s.find('\'') != std::string_view::npos;
  bool hasDouble = s.find('"') != std::string_view::npos;
  char quote = hasSingle && !hasDouble ? '"' : '\'';
  std::string out(1, quote);
  for (size_t pos = 0; pos < s.size();) {
    char32_t cp = nextCodePoint(s, pos);
    if (cp == char32_t(quote) || cp == '\\') {
      out += '\\';
      out += char(cp);
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (!isPrintable(cp)) {
      if (cp < 0x100)
        appendHexEscape(out, 'x', cp, 2);
      else if (cp < 0x10000)
        appendHexEscape(out, 'u', cp, 4);
      else
        appendHexEscape(out, 'U', cp, 8);
    } else {
      appendCodePoint(out, cp);
    }
  }
  out += quote;
  return out;
}

} // namespace qeff::chat::detail
