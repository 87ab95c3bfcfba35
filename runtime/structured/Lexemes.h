//===- Lexemes.h - JSON strings and numbers byte by byte --------*- C++ -*-===//
//
// Part of qeff. The two JSON tokens whose bytes are not fixed: the body of a
// string (escapes, \u surrogate pairs, UTF-8 validity, code point counting)
// and a number (with digit budgets and, when bounded, a check after every
// byte that the prefix can still end inside the bounds, so no state is a
// dead end). Pure functions of a small state: the matcher stores the state in
// its frames and the vocabulary runs the same code over every token.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_STRUCTURED_LEXEMES_H
#define QEFF_RUNTIME_STRUCTURED_LEXEMES_H

#include "runtime/structured/Program.h"

#include <cstdint>
#include <string>

namespace qeff::structured {

//===----------------------------------------------------------------------===//
// Strings
//===----------------------------------------------------------------------===//

/// The state inside a string body (after the opening quote); 8 bytes, so a
/// frame holds it in one integer.
struct StringState {
  enum Phase : uint8_t {
    Body,     // between characters
    Escape,   // after '\'
    Hex,      // after "\u" and `hex` digits
    Utf8,     // inside a raw multi-byte character
    LowSlash, // after a high surrogate escape: '\' must follow
    LowU,     // ... then 'u'
    LowHex,   // ... then a low surrogate's hex digits
  };
  uint8_t phase = Body;
  uint8_t need = 0;       // Utf8: continuation bytes still to come
  uint8_t lo = 0, hi = 0; // Utf8: range of the next continuation byte
  uint8_t hex = 0;        // Hex, LowHex: digits read
  /// Clean-up guard: bit 0 the last raw byte was ' ', bit 1 the last two
  /// were " n".
  uint8_t guard = 0;
  uint16_t unit = 0; // Hex, LowHex: the code unit so far

  int64_t pack() const;
  static StringState unpack(int64_t packed);
};

enum class StringResult : uint8_t { Dead, More, Closed };

/// What one byte did to a string body.
struct StringStep {
  StringResult result = StringResult::Dead;
  /// The byte began a new code point (counts toward min/maxLength).
  bool newChar = false;
  /// Bytes of decoded text completed by this byte (for excluded names).
  uint8_t nfeed = 0;
  uint8_t feed[4] = {};
};

/// Advances `s` by `byte`. `high` holds a pending high surrogate between
/// its escape and the low one's. `guardCleanUp`: refuse the spaces
/// clean_up_tokenization_spaces would remove (Program::guardCleanUp).
StringStep stepString(StringState &s, uint32_t &high, uint8_t byte,
                      bool guardCleanUp);

/// Whether `text` (a whole literal, e.g. an enum value's JSON) holds a
/// space that clean_up_tokenization_spaces would remove.
bool hasCleanUpSpace(const std::string &text);

//===----------------------------------------------------------------------===//
// Numbers
//===----------------------------------------------------------------------===//

/// The state of a number being read.
struct NumberState {
  enum Phase : uint8_t {
    Start,
    Minus,
    Zero,
    Int,
    Dot,
    Frac,
    Exp,
    ExpSign,
    ExpDigit,
    Dead
  };
  uint8_t phase = Start;
  bool negative = false;
  uint8_t intDigits = 0, fracDigits = 0, expDigits = 0;
  int64_t intPart = 0, fracPart = 0;
};

/// Advances `s` by `byte`; false (s unchanged) when the byte is refused,
/// including when no number within the spec's bounds and digit budgets
/// starts with the new prefix.
bool stepNumber(const NumberSpec &spec, NumberState &s, uint8_t byte);
/// The number read so far is complete and within the bounds.
bool numberCanEnd(const NumberSpec &spec, const NumberState &s);
/// Some byte can extend the number read so far.
bool numberCanContinue(const NumberSpec &spec, const NumberState &s);
/// Some number satisfies the spec (its bounds are not empty within the
/// digit budgets).
bool numberSpecNonEmpty(const NumberSpec &spec);
/// 10^n as an Int128 (n <= 38).
Int128 pow10i(int n);

} // namespace qeff::structured

#endif // QEFF_RUNTIME_STRUCTURED_LEXEMES_H
