//===- Text.h - Python str semantics on UTF-8 -------------------*- C++ -*-===//
//
// The pieces of Python's str the templates rely on, over UTF-8 strings:
// code-point indexing, str.isspace, strip, split, case mapping (ASCII only;
// non-ASCII letters are an error rather than a wrongly cased prompt), and
// the escapes of the Jinja string literal decoder.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_CHATTEMPLATE_TEXT_H
#define QEFF_FRONTEND_CHATTEMPLATE_TEXT_H

#include "frontend/ChatTemplate/Value.h"

#include <string>
#include <string_view>
#include <vector>

namespace qeff::chat::detail {

/// Decodes the code point at text[pos] and advances pos (invalid bytes decode
/// as themselves, one byte each).
char32_t nextCodePoint(std::string_view text, size_t &pos);
void appendCodePoint(std::string &out, char32_t cp);
std::vector<char32_t> codePoints(std::string_view text);
std::string fromCodePoints(const std::vector<char32_t> &cps, size_t begin,
                           size_t end);
size_t codePointCount(std::string_view text);

/// Python's str.isspace for one code point.
bool isPySpace(char32_t cp);

/// str.strip / lstrip / rstrip with no argument (whitespace) or with a set of
/// characters.
std::string pyStrip(std::string_view s, const std::string *chars, bool left,
                    bool right);
/// str.split(sep=None|sep, maxsplit).
std::vector<std::string> pySplit(std::string_view s, const std::string *sep,
                                 int64_t maxsplit, SourceLoc loc);
/// str.replace(old, new, count).
std::string pyReplace(std::string_view s, std::string_view from,
                      std::string_view to, int64_t count);

enum class CaseOp { Upper, Lower, Title, Capitalize, JinjaTitle };
/// Case mapping as Python (str.upper/lower/title/capitalize) or jinja2's
/// `title` filter does it. Non-ASCII cased letters are an error.
std::string pyCase(std::string_view s, CaseOp op, SourceLoc loc);

/// Decodes a Jinja string literal body the way jinja2's lexer does
/// (newline normalisation, then Python's unicode-escape).
std::string decodeStringLiteral(std::string_view body, SourceLoc loc);

/// Python repr of a str.
std::string strRepr(std::string_view s);

} // namespace qeff::chat::detail

#endif // QEFF_FRONTEND_CHATTEMPLATE_TEXT_H
