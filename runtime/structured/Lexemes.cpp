//===- Lexemes.cpp - JSON strings and numbers byte by byte ----------------===//
//
// Part of qeff. See Lexemes.h.
//
//===----------------------------------------------------------------------===//

#include "runtime/structured/Lexemes.h"

#include <cstring>

namespace qeff::structured {

//===----------------------------------------------------------------------===//
// Strings
//===----------------------------------------------------------------------===//

int64_t StringState::pack() const {
  static_assert(sizeof(StringState) == 8, "StringState must fit an int64");
  int64_t packed;
  std::memcpy(&packed, this, sizeof packed);
  return packed;
}

StringState StringState::unpack(int64_t packed) {
  StringState s;
  std::memcpy(&s, &packed, sizeof s);
  return s;
}

static int hexValue(uint8_t c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

static void feedCodePoint(StringStep &step, uint32_t cp) {
  if (cp < 0x80) {
    step.feed[step.nfeed++] = uint8_t(cp);
  } else if (cp < 0x800) {
    step.feed[step.nfeed++] = uint8_t(0xC0 | (cp >> 6));
    step.feed[step.nfeed++] = uint8_t(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    step.feed[step.nfeed++] = uint8_t(0xE0 | (cp >> 12));
    step.feed[step.nfeed++] = uint8_t(0x80 | ((cp >> 6) & 0x3F));
    step.feed[step.nfeed++] = uint8_t(0x80 | (cp & 0x3F));
  } else {
    step.feed[step.nfeed++] = uint8_t(0xF0 | (cp >> 18));
    step.feed[step.nfeed++] = uint8_t(0x80 | ((cp >> 12) & 0x3F));
    step.feed[step.nfeed++] = uint8_t(0x80 | ((cp >> 6) & 0x3F));
    step.feed[step.nfeed++] = uint8_t(0x80 | (cp & 0x3F));
  }
}

/// A raw character's first byte: how many continuation bytes follow and the
/// range of the first of them (RFC 3629: no overlongs, no surrogates, at
/// most U+10FFFF). False for bytes that cannot start a character.
static bool utf8Lead(uint8_t c, uint8_t &need, uint8_t &lo, uint8_t &hi) {
  lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF)
    need = 1;
  else if (c == 0xE0)
    need = 2, lo = 0xA0;
  else if (c == 0xED)
    need = 2, hi = 0x9F;
  else if (c >= 0xE1 && c <= 0xEF)
    need = 2;
  else if (c == 0xF0)
    need = 3, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3)
    need = 3;
  else if (c == 0xF4)
    need = 3, hi = 0x8F;
  else
    return false;
  return true;
}

StringStep stepString(StringState &s, uint32_t &high, uint8_t c,
                      bool guardCleanUp) {
  StringStep step;
  step.result = StringResult::More;
  auto dead = [&] {
    step.result = StringResult::Dead;
    return step;
  };
  switch (s.phase) {
  case StringState::Body:
    if (c == '"') {
      s.guard = 0;
      step.result = StringResult::Closed;
      return step;
    }
    step.newChar = true;
    if (c == '\\') {
      s.phase = StringState::Escape;
      s.guard = 0;
      return step;
    }
    if (c < 0x20)
      return dead();
    if (c < 0x80) {
      if (guardCleanUp) {
        if (((s.guard & 1) && std::strchr(".?!,'", c)) ||
            ((s.guard & 2) && c == '\''))
          return dead();
        s.guard = c == ' ' ? 1 : (c == 'n' && (s.guard & 1)) ? 2 : 0;
      }
      step.feed[step.nfeed++] = c;
      return step;
    }
    if (!utf8Lead(c, s.need, s.lo, s.hi))
      return dead();
    s.phase = StringState::Utf8;
    s.guard = 0;
    step.feed[step.nfeed++] = c;
    return step;
  case StringState::Utf8:
    if (c < s.lo || c > s.hi)
      return dead();
    step.feed[step.nfeed++] = c;
    s.lo = 0x80, s.hi = 0xBF;
    if (--s.need == 0)
      s.phase = StringState::Body;
    return step;
  case StringState::Escape: {
    static constexpr char kFrom[] = "\"\\/bfnrt";
    static constexpr char kTo[] = "\"\\/\b\f\n\r\t";
    if (c == 'u') {
      s.phase = StringState::Hex, s.hex = 0, s.unit = 0;
      return step;
    }
    const char *at = c ? std::strchr(kFrom, c) : nullptr;
    if (!at)
      return dead();
    step.feed[step.nfeed++] = uint8_t(kTo[at - kFrom]);
    s.phase = StringState::Body;
    return step;
  }
  case StringState::Hex: {
    int d = hexValue(c);
    if (d < 0)
      return dead();
    s.unit = uint16_t(s.unit * 16 + d);
    ++s.hex;
    // "\uDC".."\uDF" can only be a lone low surrogate: refuse it as soon
    // as its second digit shows (a later refusal would be a dead end).
    if (s.hex == 2 && s.unit >= 0xDC && s.unit <= 0xDF)
      return dead();
    if (s.hex < 4)
      return step;
    if (s.unit >= 0xD800 && s.unit <= 0xDBFF) {
      high = s.unit;
      s.phase = StringState::LowSlash;
      return step;
    }
    feedCodePoint(step, s.unit);
    s.phase = StringState::Body;
    return step;
  }
  case StringState::LowSlash:
    if (c != '\\')
      return dead();
    s.phase = StringState::LowU;
    return step;
  case StringState::LowU:
    if (c != 'u')
      return dead();
    s.phase = StringState::LowHex, s.hex = 0, s.unit = 0;
    return step;
  case StringState::LowHex: {
    int d = hexValue(c);
    if (d < 0 || (s.hex == 0 && d != 0xD) || (s.hex == 1 && d < 0xC))
      return dead();
    s.unit = uint16_t(s.unit * 16 + d);
    if (++s.hex < 4)
      return step;
    feedCodePoint(step, 0x10000 + ((high - 0xD800) << 10) + (s.unit - 0xDC00));
    s.phase = StringState::Body;
    return step;
  }
  }
  return dead();
}

bool hasCleanUpSpace(const std::string &text) {
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] != ' ')
      continue;
    if (std::strchr(".?!,'", text[i + 1]) && text[i + 1])
      return true;
    if (text[i + 1] == 'n' && i + 2 < text.size() && text[i + 2] == '\'')
      return true;
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Numbers
//===----------------------------------------------------------------------===//

Int128 pow10i(int n) {
  Int128 p = 1;
  for (int i = 0; i < n; ++i)
    p *= 10;
  return p;
}

namespace {

/// Whether the arithmetic progression a, a + step, ..., <= b meets [lo, hi].
bool progressionHits(Int128 a, Int128 step, Int128 b, Int128 lo, Int128 hi) {
  if (b < a)
    return false;
  Int128 from = a > lo ? a : lo, to = b < hi ? b : hi;
  if (from > to)
    return false;
  Int128 first = a + (from - a + step - 1) / step * step;
  return first <= to;
}

/// The values (as magnitudes, in the spec's units) every completion of `s`
/// can take, as progressions; `visit` returns true to stop.
template <typename Visit>
bool forEachCompletion(const NumberSpec &spec, const NumberState &s,
                       Visit visit) {
  const int scale = spec.integer ? 0 : kScaleDigits;
  const Int128 one = pow10i(scale); // 1.0 in the spec's units
  // The finest step of a number whose integer part has k digits: the last
  // fraction digit the budget leaves (integers: 1).
  auto step = [&](int k) { return spec.integer ? Int128(1) : pow10i(k); };
  switch (s.phase) {
  case NumberState::Start:
  case NumberState::Minus: {
    // 0 (with fraction digits), then 1..9, 10..99, ...
    if (visit(Int128(0), step(1), one - step(1)))
      return true;
    for (int k = 1; k <= kMaxDigits; ++k)
      if (visit(pow10i(k - 1) * one, step(k), pow10i(k) * one - step(k)))
        return true;
    return false;
  }
  case NumberState::Zero:
    return visit(Int128(0), step(1), one - step(1));
  case NumberState::Int:
    for (int j = 0; s.intDigits + j <= kMaxDigits; ++j) {
      Int128 base = Int128(s.intPart) * pow10i(j);
      if (visit(base * one, step(s.intDigits + j),
                (base + pow10i(j)) * one - step(s.intDigits + j)))
        return true;
    }
    return false;
  case NumberState::Dot:
    return visit(Int128(s.intPart) * one, step(s.intDigits),
                 Int128(s.intPart + 1) * one - step(s.intDigits));
  case NumberState::Frac: {
    Int128 value = Int128(s.intPart) * one +
                   Int128(s.fracPart) * pow10i(scale - s.fracDigits);
    return visit(value, step(s.intDigits),
                 value + pow10i(scale - s.fracDigits) - step(s.intDigits));
  }
  default:
    return false;
  }
}

bool feasible(const NumberSpec &spec, const NumberState &s) {
  if (!spec.bounded)
    return true;
  auto hits = [&](bool negative) {
    // A negative value -m lies in [lo, hi] when m lies in [-hi, -lo].
    Int128 lo = negative ? -spec.hi : spec.lo;
    Int128 hi = negative ? -spec.lo : spec.hi;
    return forEachCompletion(spec, s, [&](Int128 a, Int128 step, Int128 b) {
      return progressionHits(a, step, b, lo, hi);
    });
  };
  if (s.phase == NumberState::Start)
    return hits(false) || hits(true);
  return hits(s.negative);
}

Int128 currentValue(const NumberSpec &spec, const NumberState &s) {
  const int scale = spec.integer ? 0 : kScaleDigits;
  Int128 value = Int128(s.intPart) * pow10i(scale);
  if (s.fracDigits)
    value += Int128(s.fracPart) * pow10i(scale - s.fracDigits);
  return s.negative ? -value : value;
}

} // namespace

bool stepNumber(const NumberSpec &spec, NumberState &s, uint8_t c) {
  NumberState n = s;
  const bool digit = c >= '0' && c <= '9';
  const int d = c - '0';
  // Exponents only on unbounded numbers: the bounds reasoning is on plain
  // decimals.
  const bool exponent =
      !spec.integer && !spec.bounded && (c == 'e' || c == 'E');
  switch (s.phase) {
  case NumberState::Start:
  case NumberState::Minus:
    if (c == '-' && s.phase == NumberState::Start) {
      n.phase = NumberState::Minus, n.negative = true;
    } else if (c == '0') {
      n.phase = NumberState::Zero, n.intDigits = 1;
    } else if (digit) {
      n.phase = NumberState::Int, n.intDigits = 1, n.intPart = d;
    } else {
      return false;
    }
    break;
  case NumberState::Zero:
  case NumberState::Int:
    if (digit && s.phase == NumberState::Int && s.intDigits < kMaxDigits) {
      n.intPart = s.intPart * 10 + d, ++n.intDigits;
    } else if (c == '.' && !spec.integer && s.intDigits < kMaxDigits) {
      n.phase = NumberState::Dot;
    } else if (exponent) {
      n.phase = NumberState::Exp;
    } else {
      return false;
    }
    break;
  case NumberState::Dot:
  case NumberState::Frac:
    if (digit && s.intDigits + s.fracDigits < kMaxDigits) {
      n.phase = NumberState::Frac;
      n.fracPart = s.fracPart * 10 + d, ++n.fracDigits;
    } else if (exponent && s.phase == NumberState::Frac) {
      n.phase = NumberState::Exp;
    } else {
      return false;
    }
    break;
  case NumberState::Exp:
  case NumberState::ExpSign:
    if ((c == '+' || c == '-') && s.phase == NumberState::Exp)
      n.phase = NumberState::ExpSign;
    else if (digit)
      n.phase = NumberState::ExpDigit, n.expDigits = 1;
    else
      return false;
    break;
  case NumberState::ExpDigit:
    if (!digit || s.expDigits >= kMaxExponentDigits)
      return false;
    ++n.expDigits;
    break;
  default:
    return false;
  }
  if (!feasible(spec, n))
    return false;
  s = n;
  return true;
}

bool numberCanEnd(const NumberSpec &spec, const NumberState &s) {
  switch (s.phase) {
  case NumberState::Zero:
  case NumberState::Int:
  case NumberState::Frac:
  case NumberState::ExpDigit:
    break;
  default:
    return false;
  }
  if (!spec.bounded)
    return true;
  Int128 v = currentValue(spec, s);
  return v >= spec.lo && v <= spec.hi;
}

bool numberCanContinue(const NumberSpec &spec, const NumberState &s) {
  // The state is feasible (stepNumber keeps it so); what is left is whether
  // a completion is longer than what was read.
  switch (s.phase) {
  case NumberState::Start:
  case NumberState::Minus:
  case NumberState::Dot:
  case NumberState::Exp:
  case NumberState::ExpSign:
    return true;
  case NumberState::Zero:
    // "0." then "0" is the same value, so a fraction is possible whenever
    // "0" was (integers: nothing follows "0").
    return !spec.integer;
  case NumberState::Int:
    if (!spec.integer) // "I." then "0", or an exponent
      return s.intDigits < kMaxDigits || !spec.bounded;
    if (s.intDigits >= kMaxDigits)
      return false;
    if (!spec.bounded)
      return true;
    for (uint8_t digit = '0'; digit <= '9'; ++digit) {
      NumberState n = s;
      if (stepNumber(spec, n, digit))
        return true;
    }
    return false;
  case NumberState::Frac:
    return s.intDigits + s.fracDigits < kMaxDigits || !spec.bounded;
  case NumberState::ExpDigit:
    return s.expDigits < kMaxExponentDigits;
  default:
    return false;
  }
}

bool numberSpecNonEmpty(const NumberSpec &spec) {
  return feasible(spec, NumberState{});
}

} // namespace qeff::structured
