//===- Operators.cpp - Python operators, lookups and iteration ------------===//

#include "frontend/ChatTemplate/Builtins.h"
#include "frontend/ChatTemplate/Text.h"

#include <cmath>
#include <limits>

namespace qeff::chat::detail {

void Budget::checkSize(size_t size, SourceLoc loc) const {
  if (size > limits.maxOutputBytes)
    failLimit("the size limit of " + std::to_string(limits.maxOutputBytes) +
              " bytes (line " + std::to_string(loc.line) + ":" +
              std::to_string(loc.col) + ")");
}

void Budget::countIteration() {
  if (++iterations > limits.maxLoopIterations)
    failLimit("the limit of " + std::to_string(limits.maxLoopIterations) +
              " loop iterations");
}

void failUndefined(const Value &v, SourceLoc loc) {
  fail(loc, v.undefinedHint());
}

namespace {

std::string objectDesc(const Value &v) {
  if (v.isNone())
    return "'None'";
  return "'" + v.typeName() + " object'";
}

Value noAttribute(const Value &obj, const std::string &name) {
  return Value::undefined(objectDesc(obj) + " has no attribute '" + name + "'");
}

Value loopAttr(const LoopState &l, const std::string &name) {
  const ValueList &items = *l.items;
  int64_t n = int64_t(items.size()), i = int64_t(l.index0);
  if (name == "index")
    return Value::integer(i + 1);
  if (name == "index0")
    return Value::integer(i);
  if (name == "revindex")
    return Value::integer(n - i);
  if (name == "revindex0")
    return Value::integer(n - i - 1);
  if (name == "first")
    return Value::boolean(i == 0);
  if (name == "last")
    return Value::boolean(i == n - 1);
  if (name == "length")
    return Value::integer(n);
  if (name == "depth")
    return Value::integer(l.depth);
  if (name == "depth0")
    return Value::integer(l.depth - 1);
  if (name == "previtem")
    return i > 0 ? items[size_t(i - 1)]
                 : Value::undefined("there is no previous item");
  if (name == "nextitem")
    return i + 1 < n ? items[size_t(i + 1)]
                     : Value::undefined("there is no next item");
  return Value::undefined("'LoopContext object' has no attribute '" + name +
                          "'");
}

// Python's index normalisation; false when out of range.
bool normIndex(int64_t &i, int64_t n) {
  if (i < 0)
    i += n;
  return i >= 0 && i < n;
}

} // namespace

Value getAttr(const Value &obj, const std::string &name, SourceLoc loc) {
  switch (obj.kind()) {
  case Kind::Undefined:
    failUndefined(obj, loc);
  case Kind::Dict:
  case Kind::Namespace: {
    const Value *v = obj.dictRef().find(Value::string(name));
    if (v)
      return *v;
    return obj.kind() == Kind::Namespace
               ? Value::undefined("'Namespace object' has no attribute '" +
                                  name + "'")
               : noAttribute(obj, name);
  }
  case Kind::Loop:
    return loopAttr(*obj.loopPtr(), name);
  default:
    return noAttribute(obj, name);
  }
}

Value getItem(const Value &obj, const Value &key, SourceLoc loc) {
  switch (obj.kind()) {
  case Kind::Undefined:
    failUndefined(obj, loc);
  case Kind::Dict: {
    if (const Value *v = obj.dictRef().find(key))
      return *v;
    break;
  }
  case Kind::List:
    if (obj.listRef().form == ListForm::List ||
        obj.listRef().form == ListForm::Tuple) {
      if (key.kind() == Kind::Int || key.kind() == Kind::Bool) {
        int64_t i = key.asInt();
        const ValueList &items = obj.listRef().items;
        if (normIndex(i, int64_t(items.size())))
          return items[size_t(i)];
        return Value::undefined(objectDesc(obj) + " has no element " +
                                toStr(key));
      }
    }
    break;
  case Kind::String:
    if (key.kind() == Kind::Int || key.kind() == Kind::Bool) {
      std::vector<char32_t> cps = codePoints(obj.str());
      int64_t i = key.asInt();
      if (normIndex(i, int64_t(cps.size())))
        return Value::string(fromCodePoints(cps, size_t(i), size_t(i) + 1));
      return Value::undefined(objectDesc(obj) + " has no element " +
                              toStr(key));
    }
    break;
  default:
    break;
  }
  if (key.isString())
    return getAttr(obj, key.str(), loc);
  return Value::undefined(objectDesc(obj) + " has no element " + repr(key));
}

Value getSlice(const Value &obj, const Value &start, const Value &stop,
               const Value &step, SourceLoc loc) {
  if (obj.isUndefined())
    failUndefined(obj, loc);
  auto toIndex = [&](const Value &v, const char *what) -> std::optional<int64_t> {
    if (v.isUndefined() || v.isNone())
      return std::nullopt;
    if (v.kind() != Kind::Int && v.kind() != Kind::Bool)
      fail(loc, std::string("slice ") + what + " must be an integer or None");
    return v.asInt();
  };
  std::optional<int64_t> b = toIndex(start, "start"), e = toIndex(stop, "stop"),
                         s = toIndex(step, "step");
  int64_t st = s.value_or(1);
  if (st == 0)
    fail(loc, "slice step cannot be zero");
  bool isString = obj.isString();
  std::vector<char32_t> cps;
  const ValueList *items = nullptr;
  int64_t n;
  if (isString) {
    cps = codePoints(obj.str());
    n = int64_t(cps.size());
  } else if (obj.isList() && (obj.listRef().form == ListForm::List ||
                              obj.listRef().form == ListForm::Tuple)) {
    items = &obj.listRef().items;
    n = int64_t(items->size());
  } else {
    fail(loc, "'" + obj.typeName() + "' object is not subscriptable");
  }
  // PySlice_AdjustIndices.
  auto adjust = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v)
      return dflt;
    int64_t x = *v;
    if (x < 0) {
      x += n;
      if (x < 0)
        x = st < 0 ? -1 : 0;
    } else if (x >= n) {
      x = st < 0 ? n - 1 : n;
    }
    return x;
  };
  int64_t lo = adjust(b, st < 0 ? n - 1 : 0);
  int64_t hi = adjust(e, st < 0 ? -1 : n);
  std::string str;
  ValueList out;
  for (int64_t i = lo; st > 0 ? i < hi : i > hi; i += st) {
    if (isString)
      appendCodePoint(str, cps[size_t(i)]);
    else
      out.push_back((*items)[size_t(i)]);
  }
  if (isString)
    return Value::string(std::move(str));
  return obj.listRef().form == ListForm::Tuple ? Value::tuple(std::move(out))
                                               : Value::list(std::move(out));
}

ValueList iterate(const Value &v, SourceLoc loc) {
  switch (v.kind()) {
  case Kind::Undefined:
    return {};
  case Kind::List:
    return v.listRef().items;
  case Kind::Dict: {
    ValueList keys;
    for (const auto &entry : v.dictRef().entries)
      keys.push_back(entry.first);
    return keys;
  }
  case Kind::String: {
    ValueList chars;
    for (size_t pos = 0; pos < v.str().size();) {
      std::string c;
      appendCodePoint(c, nextCodePoint(v.str(), pos));
      chars.push_back(Value::string(std::move(c)));
    }
    return chars;
  }
  default:
    fail(loc, "'" + v.typeName() + "' object is not iterable");
  }
}

int64_t length(const Value &v, SourceLoc loc) {
  switch (v.kind()) {
  case Kind::Undefined:
    return 0;
  case Kind::String:
    return int64_t(codePointCount(v.str()));
  case Kind::List:
    return int64_t(v.listRef().items.size());
  case Kind::Dict:
    return int64_t(v.dictRef().size());
  default:
    fail(loc, "object of type '" + v.typeName() + "' has no len()");
  }
}

namespace {

[[noreturn]] void unsupportedOperands(const std::string &op, const Value &a,
                                      const Value &b, SourceLoc loc) {
  fail(loc, "unsupported operand type(s) for " + op + ": '" + a.typeName() +
                "' and '" + b.typeName() + "'");
}

bool isInt(const Value &v) {
  return v.kind() == Kind::Int || v.kind() == Kind::Bool;
}

int64_t checkedInt(__int128 v, SourceLoc loc) {
  if (v > std::numeric_limits<int64_t>::max() ||
      v < std::numeric_limits<int64_t>::min())
    fail(loc, "integer overflow (the interpreter's integers are 64-bit)");
  return int64_t(v);
}

Value repeat(const Value &seq, int64_t times, SourceLoc loc,
             const Budget &budget) {
  if (times < 0)
    times = 0;
  if (seq.isString()) {
    budget.checkSize(seq.str().size() * size_t(times), loc);
    std::string out;
    for (int64_t k = 0; k < times; ++k)
      out += seq.str();
    return Value::string(std::move(out));
  }
  const List &l = seq.listRef();
  budget.checkSize(l.items.size() * size_t(times), loc);
  ValueList out;
  for (int64_t k = 0; k < times; ++k)
    out.insert(out.end(), l.items.begin(), l.items.end());
  return l.form == ListForm::Tuple ? Value::tuple(std::move(out))
                                   : Value::list(std::move(out));
}

bool isPlainSeq(const Value &v) {
  return v.isList() && (v.listRef().form == ListForm::List ||
                        v.listRef().form == ListForm::Tuple);
}

} // namespace

Value binaryOp(const std::string &op, const Value &a, const Value &b,
               SourceLoc loc, const Budget &budget) {
  if (op == "~") {
    std::string s = toStr(a) + toStr(b);
    budget.checkSize(s.size(), loc);
    return Value::string(std::move(s));
  }
  if (a.isUndefined())
    failUndefined(a, loc);
  if (b.isUndefined())
    failUndefined(b, loc);
  if (a.isNumber() && b.isNumber()) {
    bool ints = isInt(a) && isInt(b);
    __int128 x = a.asInt(), y = b.asInt();
    double fx = a.asFloat(), fy = b.asFloat();
    if (op == "+")
      return ints ? Value::integer(checkedInt(x + y, loc)) : Value::real(fx + fy);
    if (op == "-")
      return ints ? Value::integer(checkedInt(x - y, loc)) : Value::real(fx - fy);
    if (op == "*")
      return ints ? Value::integer(checkedInt(x * y, loc)) : Value::real(fx * fy);
    if (op == "/") {
      if (fy == 0)
        fail(loc, "division by zero");
      return Value::real(fx / fy);
    }
    if (op == "//" || op == "%") {
      if (ints) {
        if (y == 0)
          fail(loc, op == "//" ? "integer division or modulo by zero"
                               : "integer modulo by zero");
        __int128 q = x / y, r = x % y;
        if (r != 0 && ((r < 0) != (y < 0))) {
          q -= 1;
          r += y;
        }
        return Value::integer(checkedInt(op == "//" ? q : r, loc));
      }
      if (fy == 0)
        fail(loc, "float division by zero");
      // CPython's float_divmod.
      double mod = std::fmod(fx, fy);
      double div = (fx - mod) / fy;
      if (mod != 0) {
        if ((fy < 0) != (mod < 0)) {
          mod += fy;
          div -= 1.0;
        }
      } else {
        mod = std::copysign(0.0, fy);
      }
      if (op == "%")
        return Value::real(mod);
      double floordiv = div == 0 ? std::copysign(0.0, fx / fy) : std::floor(div);
      if (div != 0 && div - floordiv > 0.5)
        floordiv += 1.0;
      return Value::real(floordiv);
    }
    if (op == "**") {
      if (ints && y >= 0) {
        if (x == 0 || x == 1)
          return Value::integer(y == 0 ? 1 : int64_t(x));
        if (x == -1)
          return Value::integer(y % 2 ? -1 : 1);
        __int128 result = 1;
        for (__int128 k = 0; k < y; ++k) // |x| >= 2: overflows within 64 steps
          result = checkedInt(result * x, loc);
        return Value::integer(int64_t(result));
      }
      if (fx == 0 && fy < 0)
        fail(loc, "0.0 cannot be raised to a negative power");
      return Value::real(std::pow(fx, fy));
    }
  }
  if (op == "+") {
    if (a.isString() && b.isString()) {
      budget.checkSize(a.str().size() + b.str().size(), loc);
      return Value::string(a.str() + b.str());
    }
    if (isPlainSeq(a) && isPlainSeq(b) &&
        a.listRef().form == b.listRef().form) {
      ValueList items = a.listRef().items;
      budget.checkSize(items.size() + b.listRef().items.size(), loc);
      items.insert(items.end(), b.listRef().items.begin(),
                   b.listRef().items.end());
      return a.listRef().form == ListForm::Tuple ? Value::tuple(std::move(items))
                                                 : Value::list(std::move(items));
    }
    if (a.isString())
      fail(loc, "can only concatenate str (not \"" + b.typeName() +
                    "\") to str");
    if (a.isList())
      fail(loc, "can only concatenate " + a.typeName() + " (not \"" +
                    b.typeName() + "\") to " + a.typeName());
  }
  if (op == "*") {
    if ((a.isString() || isPlainSeq(a)) && isInt(b))
      return repeat(a, b.asInt(), loc, budget);
    if ((b.isString() || isPlainSeq(b)) && isInt(a))
      return repeat(b, a.asInt(), loc, budget);
  }
  if (op == "%" && a.isString())
    fail(loc, "printf-style '%' string formatting is not supported");
  unsupportedOperands(op, a, b, loc);
}

Value unaryOp(const std::string &op, const Value &a, SourceLoc loc) {
  if (a.isUndefined())
    failUndefined(a, loc);
  if (!a.isNumber())
    fail(loc, "bad operand type for unary " + op + ": '" + a.typeName() + "'");
  if (a.kind() == Kind::Float)
    return Value::real(op == "-" ? -a.asFloat() : a.asFloat());
  return Value::integer(op == "-" ? checkedInt(-__int128(a.asInt()), loc)
                                  : a.asInt());
}

namespace {

// Python's ordering (<) for the types that have one; nullopt when equal.
int order(const Value &a, const Value &b, const std::string &op,
          SourceLoc loc) {
  if (a.isUndefined())
    failUndefined(a, loc);
  if (b.isUndefined())
    failUndefined(b, loc);
  if (a.isNumber() && b.isNumber()) {
    if (isInt(a) && isInt(b))
      return a.asInt() < b.asInt() ? -1 : a.asInt() > b.asInt() ? 1 : 0;
    double x = a.asFloat(), y = b.asFloat();
    if (std::isnan(x) || std::isnan(y))
      return 2; // every comparison false
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.isString() && b.isString()) {
    int c = a.str().compare(b.str()); // UTF-8 byte order = code point order
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  if (isPlainSeq(a) && isPlainSeq(b) && a.listRef().form == b.listRef().form) {
    const ValueList &x = a.listRef().items, &y = b.listRef().items;
    for (size_t k = 0; k < x.size() && k < y.size(); ++k)
      if (!equals(x[k], y[k]))
        return order(x[k], y[k], op, loc);
    return x.size() < y.size() ? -1 : x.size() > y.size() ? 1 : 0;
  }
  fail(loc, "'" + op + "' not supported between instances of '" +
                a.typeName() + "' and '" + b.typeName() + "'");
}

bool contains(const Value &container, const Value &item, SourceLoc loc) {
  switch (container.kind()) {
  case Kind::Undefined:
    return false;
  case Kind::String:
    if (!item.isString()) {
      if (item.isUndefined())
        failUndefined(item, loc);
      fail(loc, "'in <string>' requires string as left operand, not " +
                    item.typeName());
    }
    return container.str().find(item.str()) != std::string::npos;
  case Kind::List:
    for (const Value &v : container.listRef().items)
      if (equals(v, item))
        return true;
    return false;
  case Kind::Dict:
    hashKey(item, loc);
    return container.dictRef().find(item) != nullptr;
  default:
    fail(loc, "argument of type '" + container.typeName() +
                  "' is not iterable");
  }
}

} // namespace

bool compare(const std::string &op, const Value &a, const Value &b,
             SourceLoc loc) {
  if (op == "==")
    return equals(a, b);
  if (op == "!=")
    return !equals(a, b);
  if (op == "in")
    return contains(b, a, loc);
  if (op == "not in")
    return !contains(b, a, loc);
  int c = order(a, b, op, loc);
  if (c == 2)
    return false;
  if (op == "<")
    return c < 0;
  if (op == "<=")
    return c <= 0;
  if (op == ">")
    return c > 0;
  return c >= 0;
}

} // namespace qeff::chat::detail
