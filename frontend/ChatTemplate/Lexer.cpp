//===- Lexer.cpp - jinja2's lexer for chat templates ----------------------===//
//
// Follows jinja2.lexer with trim_blocks=True, lstrip_blocks=True and
// keep_trailing_newline=False: newlines normalised to "\n" and one trailing
// newline dropped; "{%-"/"{{-"/"{#-" strip all whitespace before the tag,
// "-%}"/"-}}"/"-#}" all after; a block or comment tag alone on its line
// (only spaces before it) takes that indentation with it unless opened with
// "+"; the first newline after a block or comment tag is dropped unless
// closed with "+".
//
//===----------------------------------------------------------------------===//

#include "frontend/ChatTemplate/Ast.h"
#include "frontend/ChatTemplate/Text.h"

#include <algorithm>

namespace qeff::chat::detail {
namespace {

class Lexer {
public:
  explicit Lexer(std::string_view source) {
    // Newlines normalised; one trailing newline dropped.
    src.reserve(source.size());
    for (size_t k = 0; k < source.size(); ++k) {
      if (source[k] == '\r') {
        src += '\n';
        if (k + 1 < source.size() && source[k + 1] == '\n')
          ++k;
      } else {
        src += source[k];
      }
    }
    if (!src.empty() && src.back() == '\n')
      src.pop_back();
    lineStarts.push_back(0);
    for (size_t k = 0; k < src.size(); ++k)
      if (src[k] == '\n')
        lineStarts.push_back(k + 1);
  }

  std::vector<Token> run();

private:
  // Line and column of a byte offset. Offsets are asked for in (nearly)
  // increasing order, so a cursor makes this linear over the template.
  SourceLoc locAt(size_t pos) {
    if (pos < cursorPos) {
      auto it = std::upper_bound(lineStarts.begin(), lineStarts.end(), pos);
      cursorLine = size_t(it - lineStarts.begin());
      cursorPos = lineStarts[cursorLine - 1];
      cursorCol = 1;
    }
    while (cursorPos < pos && cursorPos < src.size()) {
      if (src[cursorPos] == '\n') {
        ++cursorLine;
        cursorCol = 1;
        ++cursorPos;
      } else {
        nextCodePoint(src, cursorPos);
        ++cursorCol;
      }
    }
    return {uint32_t(cursorLine), uint32_t(cursorCol)};
  }

  // Python's `\s` (Unicode whitespace) at pos; its UTF-8 length or 0.
  size_t spaceAt(size_t pos) const {
    if (pos >= src.size())
      return 0;
    size_t next = pos;
    char32_t cp = nextCodePoint(src, next);
    return isPySpace(cp) ? next - pos : 0;
  }
  size_t skipSpaces(size_t pos) const {
    while (size_t n = spaceAt(pos))
      pos += n;
    return pos;
  }
  bool startsWith(size_t pos, std::string_view s) const {
    return src.compare(pos, s.size(), s) == 0;
  }

  void emitData(std::string text, size_t pos) {
    if (!text.empty())
      tokens.push_back({TokenKind::Data, std::move(text), locAt(pos)});
  }
  // The text before a tag, with the tag's whitespace control applied.
  void emitTextBefore(size_t from, size_t to, char sign, bool isVariable) {
    std::string text = src.substr(from, to - from);
    if (sign == '-') {
      text = pyStrip(text, nullptr, false, true);
    } else if (sign != '+' && !isVariable) {
      size_t lineStart = text.rfind('\n');
      lineStart = lineStart == std::string::npos ? 0 : lineStart + 1;
      if (lineStart > 0 || lineStarting) {
        size_t p = lineStart;
        while (p < text.size()) {
          size_t q = p;
          if (!isPySpace(nextCodePoint(text, q)))
            break;
          p = q;
        }
        if (p == text.size() && p > lineStart)
          text.resize(lineStart);
      }
    }
    emitData(std::move(text), from);
  }

  // After a block or comment end "%}"/"#}" at pos (sign '+', '-' or 0 for the
  // character before it): the position after its whitespace handling.
  size_t afterBlockEnd(size_t pos, char sign) {
    pos += 2;
    if (sign == '-')
      pos = skipSpaces(pos);
    else if (sign != '+' && pos < src.size() && src[pos] == '\n')
      ++pos;
    lineStarting = pos > 0 && src[pos - 1] == '\n';
    return pos;
  }

  size_t lexComment(size_t pos);
  size_t lexRaw(size_t pos, size_t bodyStart);
  size_t lexTag(size_t pos, bool isBlock);

  std::string src;
  std::vector<size_t> lineStarts;
  std::vector<Token> tokens;
  bool lineStarting = true;
  size_t cursorPos = 0, cursorLine = 1, cursorCol = 1;
};

std::vector<Token> Lexer::run() {
  size_t pos = 0;
  while (pos < src.size()) {
    size_t tag = pos;
    while (true) {
      tag = src.find('{', tag);
      if (tag == std::string::npos || tag + 1 >= src.size())
        break;
      char c = src[tag + 1];
      if (c == '%' || c == '{' || c == '#')
        break;
      ++tag;
    }
    if (tag == std::string::npos || tag + 1 >= src.size()) {
      emitData(src.substr(pos), pos);
      break;
    }
    char type = src[tag + 1];
    char sign = tag + 2 < src.size() && (src[tag + 2] == '-' || src[tag + 2] == '+')
                    ? src[tag + 2]
                    : 0;
    size_t inner = tag + 2 + (sign ? 1 : 0);
    // {% raw %}: body up to {% endraw %} verbatim.
    if (type == '%') {
      size_t p = skipSpaces(inner);
      if (startsWith(p, "raw")) {
        size_t q = skipSpaces(p + 3);
        size_t end = 0;
        if (startsWith(q, "-%}"))
          end = skipSpaces(q + 3);
        else if (startsWith(q, "%}"))
          end = q + 2;
        if (end) {
          emitTextBefore(pos, tag, sign, false);
          pos = lexRaw(tag, end);
          continue;
        }
      }
    }
    emitTextBefore(pos, tag, sign, type == '{');
    lineStarting = false;
    if (type == '#')
      pos = lexComment(inner);
    else
      pos = lexTag(inner, type == '%');
  }
  tokens.push_back({TokenKind::End, "", locAt(src.size())});
  return std::move(tokens);
}

size_t Lexer::lexComment(size_t pos) {
  size_t end = src.find("#}", pos);
  if (end == std::string::npos)
    fail(locAt(pos), "missing end of comment tag '#}'");
  char sign = end > pos && (src[end - 1] == '-' || src[end - 1] == '+')
                  ? src[end - 1]
                  : 0;
  return afterBlockEnd(end, sign);
}

size_t Lexer::lexRaw(size_t tag, size_t bodyStart) {
  size_t pos = bodyStart;
  while (true) {
    size_t open = src.find("{%", pos);
    if (open == std::string::npos)
      fail(locAt(tag), "missing end of raw directive '{% endraw %}'");
    size_t p = open + 2;
    char sign = p < src.size() && (src[p] == '-' || src[p] == '+') ? src[p] : 0;
    if (sign)
      ++p;
    p = skipSpaces(p);
    if (!startsWith(p, "endraw")) {
      pos = open + 2;
      continue;
    }
    p = skipSpaces(p + 6);
    char endSign = 0;
    if (startsWith(p, "+%}") || startsWith(p, "-%}"))
      endSign = src[p++];
    else if (!startsWith(p, "%}")) {
      pos = open + 2;
      continue;
    }
    lineStarting = src[bodyStart - 1] == '\n';
    emitTextBefore(bodyStart, open, sign, false);
    return afterBlockEnd(p, endSign);
  }
}

size_t Lexer::lexTag(size_t pos, bool isBlock) {
  SourceLoc begin = locAt(pos);
  tokens.push_back({isBlock ? TokenKind::BlockBegin : TokenKind::VariableBegin,
                    "", begin});
  std::vector<char> brackets;
  while (true) {
    pos = skipSpaces(pos);
    if (pos >= src.size())
      fail(begin, isBlock ? "missing end of block tag '%}'"
                          : "missing end of variable tag '}}'");
    SourceLoc loc = locAt(pos);
    if (brackets.empty()) {
      if (isBlock) {
        if (startsWith(pos, "+%}") || startsWith(pos, "-%}")) {
          tokens.push_back({TokenKind::BlockEnd, "", loc});
          return afterBlockEnd(pos + 1, src[pos]);
        }
        if (startsWith(pos, "%}")) {
          tokens.push_back({TokenKind::BlockEnd, "", loc});
          return afterBlockEnd(pos, 0);
        }
      } else {
        if (startsWith(pos, "-}}")) {
          tokens.push_back({TokenKind::VariableEnd, "", loc});
          pos = skipSpaces(pos + 3);
          lineStarting = src[pos - 1] == '\n';
          return pos;
        }
        if (startsWith(pos, "}}")) {
          tokens.push_back({TokenKind::VariableEnd, "", loc});
          lineStarting = false;
          return pos + 2;
        }
      }
    }
    char c = src[pos];
    auto isDigit = [&](size_t p) { return p < src.size() && src[p] >= '0' && src[p] <= '9'; };
    // Digits with single underscores between them: (\d+_)*\d+.
    auto digits = [&](size_t p) {
      if (!isDigit(p))
        return p;
      while (isDigit(p) || (src[p] == '_' && isDigit(p + 1)))
        ++p;
      return p;
    };
    if (isDigit(pos)) {
      size_t end = digits(pos);
      bool isFloat = false;
      bool afterDot = pos > 0 && src[pos - 1] == '.';
      if (!afterDot) {
        size_t p = end;
        if (p < src.size() && src[p] == '.' && isDigit(p + 1)) {
          p = digits(p + 1);
          isFloat = true;
          end = p;
        }
        if (p < src.size() && (src[p] == 'e' || src[p] == 'E')) {
          size_t q = p + 1;
          if (q < src.size() && (src[q] == '+' || src[q] == '-'))
            ++q;
          if (isDigit(q)) {
            end = digits(q);
            isFloat = true;
          }
        }
      }
      std::string text;
      for (size_t k = pos; k < end; ++k)
        if (src[k] != '_')
          text += src[k];
      tokens.push_back(
          {isFloat ? TokenKind::Float : TokenKind::Integer, text, loc});
      pos = end;
      continue;
    }
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
      size_t end = pos;
      while (end < src.size() &&
             ((src[end] >= 'a' && src[end] <= 'z') ||
              (src[end] >= 'A' && src[end] <= 'Z') ||
              (src[end] >= '0' && src[end] <= '9') || src[end] == '_'))
        ++end;
      tokens.push_back({TokenKind::Name, src.substr(pos, end - pos), loc});
      pos = end;
      continue;
    }
    if (c == '\'' || c == '"') {
      size_t p = pos + 1;
      while (p < src.size() && src[p] != c) {
        if (src[p] == '\\')
          ++p;
        ++p;
      }
      if (p >= src.size())
        fail(loc, "unterminated string literal");
      tokens.push_back({TokenKind::String,
                        decodeStringLiteral(
                            std::string_view(src).substr(pos + 1, p - pos - 1),
                            loc),
                        loc});
      pos = p + 1;
      continue;
    }
    static const char *const twoChar[] = {"//", "**", "==", "!=", ">=", "<="};
    std::string op;
    for (const char *t : twoChar)
      if (startsWith(pos, t))
        op = t;
    if (op.empty()) {
      if (std::string_view("+-/*%~[](){}><=.:|,;").find(c) ==
          std::string_view::npos) {
        size_t next = pos;
        char32_t cp = nextCodePoint(src, next);
        std::string shown;
        appendCodePoint(shown, cp);
        fail(loc, "unexpected character '" + shown + "' in tag");
      }
      op = std::string(1, c);
    }
    if (op == "(" || op == "[" || op == "{") {
      if (brackets.size() >= kMaxParseDepth)
        fail(loc, "brackets nested deeper than " +
                      std::to_string(kMaxParseDepth));
      brackets.push_back(op == "(" ? ')' : op == "[" ? ']' : '}');
    } else if (op == ")" || op == "]" || op == "}") {
      if (brackets.empty())
        fail(loc, "unexpected '" + op + "'");
      if (brackets.back() != op[0])
        fail(loc, "unexpected '" + op + "', expected '" +
                      std::string(1, brackets.back()) + "'");
      brackets.pop_back();
    }
    tokens.push_back({TokenKind::Operator, op, loc});
    pos += op.size();
  }
}

} // namespace

std::vector<Token> lex(std::string_view source) {
  return Lexer(source).run();
}

} // namespace qeff::chat::detail
