//===- Filters.cpp - jinja2's filters and tests ---------------------------===//
//
// jinja2.filters / jinja2.tests as jinja2 3.1 defines them, with transformers'
// tojson. Filters that return generators in jinja2 (map, select, reject,
// selectattr, rejectattr, items, reverse of a list) return lists here; the
// difference only shows when such a value is printed, which jinja2 prints as
// "<generator object ...>" and no chat template does.
//
//===----------------------------------------------------------------------===//

#include "frontend/ChatTemplate/Builtins.h"
#include "frontend/ChatTemplate/Text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

namespace qeff::chat::detail {

bool isFilterName(const std::string &name) {
  static const std::set<std::string> names = {
      "abs",     "capitalize", "count",  "d",          "default", "first",
      "float",   "indent",     "int",    "items",      "join",    "last",
      "length",  "list",       "lower",  "map",        "max",     "min",
      "reject",  "rejectattr", "replace", "reverse",   "round",   "select",
      "selectattr", "string",  "sum",    "title",      "tojson",  "trim",
      "unique",  "upper"};
  return names.count(name) != 0;
}

bool isTestName(const std::string &name) {
  static const std::set<std::string> names = {
      "boolean", "callable", "defined",  "divisibleby", "eq",     "equalto",
      "even",    "false",    "float",    "ge",          "gt",     "greaterthan",
      "in",      "integer",  "iterable", "le",          "lower",  "lessthan",
      "lt",      "mapping",  "ne",       "none",        "number", "odd",
      "sameas",  "sequence", "string",   "true",        "undefined", "upper",
      "==",      "!=",       "<",        "<=",          ">",      ">="};
  return names.count(name) != 0;
}

namespace {

std::string argStr(const std::optional<Value> &v, const std::string &dflt) {
  return v ? toStr(*v) : dflt;
}

int64_t argInt(const std::optional<Value> &v, int64_t dflt, SourceLoc loc,
               const char *what) {
  if (!v)
    return dflt;
  if (v->kind() != Kind::Int && v->kind() != Kind::Bool)
    fail(loc, std::string(what) + " must be an integer, not " + v->typeName());
  return v->asInt();
}

// jinja2's make_attrgetter: "a.b.0" looked up with getitem part by part.
Value attrPath(const Value &item, const std::string &path, SourceLoc loc) {
  Value v = item;
  size_t pos = 0;
  while (true) {
    size_t dot = path.find('.', pos);
    std::string part = path.substr(pos, dot == std::string::npos ? dot : dot - pos);
    bool digits = !part.empty() &&
                  part.find_first_not_of("0123456789") == std::string::npos;
    v = getItem(v, digits ? Value::integer(std::atoll(part.c_str()))
                          : Value::string(part),
                loc);
    if (dot == std::string::npos)
      return v;
    pos = dot + 1;
  }
}

Value selectOrReject(const Value &value, const CallArgs &args, bool select,
                     bool byAttr) {
  SourceLoc loc = args.loc;
  size_t first = 0;
  std::string attribute;
  if (byAttr) {
    if (args.positional.empty())
      fail(loc, "selectattr/rejectattr need an attribute name");
    attribute = toStr(args.positional[0]);
    first = 1;
  }
  if (!args.keywords.empty())
    fail(loc, "select/reject filters take no keyword arguments");
  std::string test;
  CallArgs testArgs{{}, {}, loc};
  if (args.positional.size() > first) {
    test = toStr(args.positional[first]);
    if (!isTestName(test))
      fail(loc, "test '" + test + "' is not supported");
    testArgs.positional.assign(args.positional.begin() + first + 1,
                               args.positional.end());
  }
  ValueList out;
  for (const Value &item : iterate(value, loc)) {
    Value subject = byAttr ? attrPath(item, attribute, loc) : item;
    bool ok = test.empty() ? subject.truthy()
                           : applyTest(test, subject, testArgs);
    if (ok == select)
      out.push_back(item);
  }
  return Value::list(std::move(out));
}

// Python's splitlines (without keepends).
std::vector<std::string> splitLines(const std::string &s) {
  std::vector<std::string> lines;
  std::string cur;
  bool pending = false;
  for (size_t pos = 0; pos < s.size();) {
    char32_t cp = nextCodePoint(s, pos);
    bool brk = cp == '\n' || cp == '\r' || cp == 0x0b || cp == 0x0c ||
               cp == 0x1c || cp == 0x1d || cp == 0x1e || cp == 0x85 ||
               cp == 0x2028 || cp == 0x2029;
    if (!brk) {
      appendCodePoint(cur, cp);
      pending = true;
      continue;
    }
    if (cp == '\r' && pos < s.size() && s[pos] == '\n')
      ++pos;
    lines.push_back(cur);
    cur.clear();
    pending = false;
  }
  if (pending)
    lines.push_back(cur);
  return lines;
}

Value indentFilter(const Value &value, const CallArgs &args) {
  auto a = bindArgs(args, {"width", "first", "blank"}, "indent");
  std::string indention;
  if (a[0] && a[0]->isString())
    indention = a[0]->str();
  else
    indention = std::string(size_t(std::max<int64_t>(0, argInt(a[0], 4, args.loc, "indent width"))), ' ');
  bool first = a[1] && a[1]->truthy();
  bool blank = a[2] && a[2]->truthy();
  std::vector<std::string> lines = splitLines(toStr(value) + "\n");
  std::string rv;
  if (blank) {
    for (size_t k = 0; k < lines.size(); ++k)
      rv += (k ? "\n" + indention : "") + lines[k];
  } else {
    rv = lines.empty() ? "" : lines[0];
    for (size_t k = 1; k < lines.size(); ++k)
      rv += "\n" + (lines[k].empty() ? "" : indention + lines[k]);
  }
  return Value::string(first ? indention + rv : rv);
}

// Python's round(x, n) for floats: correctly rounded, ties to even.
double pyRound(double x, int64_t n) {
  if (!std::isfinite(x) || n > 300)
    return x;
  if (n < 0) {
    double p = std::pow(10.0, double(-n));
    double y = std::nearbyint(x / p) * p;
    return y;
  }
  char buf[400];
  std::snprintf(buf, sizeof buf, "%.*f", int(n), x);
  return std::strtod(buf, nullptr);
}

Value intFilter(const Value &v, const CallArgs &args) {
  auto a = bindArgs(args, {"default", "base"}, "int");
  Value dflt = a[0] ? *a[0] : Value::integer(0);
  int64_t base = argInt(a[1], 10, args.loc, "int base");
  switch (v.kind()) {
  case Kind::Int:
  case Kind::Bool:
    return Value::integer(v.asInt());
  case Kind::Float:
    if (!std::isfinite(v.asFloat()) || std::fabs(v.asFloat()) >= 9.2e18)
      return dflt;
    return Value::integer(int64_t(v.asFloat()));
  case Kind::String: {
    std::string s = pyStrip(v.str(), nullptr, true, true);
    std::string digits;
    for (size_t k = 0; k < s.size(); ++k)
      if (s[k] != '_' || (k > 0 && k + 1 < s.size()))
        digits += s[k];
    if (!digits.empty()) {
      errno = 0;
      char *end = nullptr;
      long long r = std::strtoll(digits.c_str(), &end, int(base));
      if (errno == 0 && end && *end == 0 && !std::isspace((unsigned char)digits[0]))
        return Value::integer(r);
      errno = 0;
      double f = std::strtod(digits.c_str(), &end);
      if (base == 10 && errno == 0 && end && *end == 0 && std::isfinite(f) &&
          std::fabs(f) < 9.2e18)
        return Value::integer(int64_t(f));
    }
    return dflt;
  }
  default:
    return dflt;
  }
}

Value floatFilter(const Value &v, const CallArgs &args) {
  auto a = bindArgs(args, {"default"}, "float");
  Value dflt = a[0] ? *a[0] : Value::real(0.0);
  if (v.isNumber())
    return Value::real(v.asFloat());
  if (v.isString()) {
    std::string s = pyStrip(v.str(), nullptr, true, true);
    char *end = nullptr;
    double f = std::strtod(s.c_str(), &end);
    if (!s.empty() && end && *end == 0 &&
        s.find_first_of("xXpP") == std::string::npos)
      return Value::real(f);
  }
  return dflt;
}

// max / min with jinja2's case-insensitive default for strings.
Value extremum(const Value &value, const CallArgs &args, bool wantMax) {
  auto a = bindArgs(args, {"case_sensitive", "attribute"}, wantMax ? "max" : "min");
  bool caseSensitive = a[0] && a[0]->truthy();
  ValueList items = iterate(value, args.loc);
  if (items.empty())
    return Value::undefined(std::string("No aggregated item, sequence was empty."));
  auto key = [&](const Value &item) {
    Value k = a[1] ? attrPath(item, toStr(*a[1]), args.loc) : item;
    if (!caseSensitive && k.isString())
      return Value::string(pyCase(k.str(), CaseOp::Lower, args.loc));
    return k;
  };
  size_t best = 0;
  Value bestKey = key(items[0]);
  for (size_t k = 1; k < items.size(); ++k) {
    Value kk = key(items[k]);
    if (compare(wantMax ? ">" : "<", kk, bestKey, args.loc)) {
      best = k;
      bestKey = kk;
    }
  }
  return items[best];
}

} // namespace

Value applyFilter(const std::string &name, const Value &value,
                  const CallArgs &args, Budget &budget) {
  SourceLoc loc = args.loc;
  if (name == "default" || name == "d") {
    auto a = bindArgs(args, {"default_value", "boolean"}, name);
    bool boolean = a[1] && a[1]->truthy();
    if (value.isUndefined() || (boolean && !value.truthy()))
      return a[0] ? *a[0] : Value::string("");
    return value;
  }
  if (name == "length" || name == "count") {
    bindArgs(args, {}, name);
    return Value::integer(length(value, loc));
  }
  if (name == "tojson") {
    auto a = bindArgs(args, {"ensure_ascii", "indent", "separators", "sort_keys"},
                      name);
    JsonOptions options;
    options.ensureAscii = a[0] && a[0]->truthy();
    options.sortKeys = a[3] && a[3]->truthy();
    if (a[1] && !a[1]->isNone())
      options.indent =
          int(std::clamp<int64_t>(argInt(a[1], 0, loc, "tojson indent"), 0, 64));
    if (a[2] && !a[2]->isNone()) {
      // Unpacked like Python: any iterable of two strings.
      ValueList seps = iterate(*a[2], loc);
      if (seps.size() != 2 || !seps[0].isString() || !seps[1].isString())
        fail(loc, "tojson: separators must be a pair of strings");
      options.itemSep = seps[0].str();
      options.keySep = seps[1].str();
      if (options.itemSep.empty() || options.keySep.empty())
        fail(loc, "tojson: empty separators are not supported");
    }
    std::string out = toJson(value, options, loc);
    budget.checkSize(out.size(), loc);
    return Value::string(std::move(out));
  }
  if (name == "trim") {
    auto a = bindArgs(args, {"chars"}, name);
    std::string chars = a[0] && !a[0]->isNone() ? toStr(*a[0]) : "";
    return Value::string(pyStrip(toStr(value), a[0] && !a[0]->isNone() ? &chars : nullptr,
                                 true, true));
  }
  if (name == "upper" || name == "lower" || name == "title" ||
      name == "capitalize") {
    bindArgs(args, {}, name);
    CaseOp op = name == "upper"   ? CaseOp::Upper
                : name == "lower" ? CaseOp::Lower
                : name == "title" ? CaseOp::JinjaTitle
                                  : CaseOp::Capitalize;
    return Value::string(pyCase(toStr(value), op, loc));
  }
  if (name == "string") {
    bindArgs(args, {}, name);
    return Value::string(toStr(value));
  }
  if (name == "join") {
    auto a = bindArgs(args, {"d", "attribute"}, name);
    std::string sep = argStr(a[0], "");
    std::string out;
    bool firstItem = true;
    for (const Value &item : iterate(value, loc)) {
      Value v = a[1] ? attrPath(item, toStr(*a[1]), loc) : item;
      out += (firstItem ? "" : sep) + toStr(v);
      firstItem = false;
      budget.checkSize(out.size(), loc);
    }
    return Value::string(std::move(out));
  }
  if (name == "first" || name == "last") {
    bindArgs(args, {}, name);
    ValueList items = iterate(value, loc);
    if (items.empty())
      return Value::undefined(std::string("No ") + name +
                              " item, sequence was empty.");
    return name == "first" ? items.front() : items.back();
  }
  if (name == "list") {
    bindArgs(args, {}, name);
    return Value::list(iterate(value, loc));
  }
  if (name == "int")
    return intFilter(value, args);
  if (name == "float")
    return floatFilter(value, args);
  if (name == "replace") {
    auto a = bindArgs(args, {"old", "new", "count"}, name);
    if (!a[0] || !a[1])
      fail(loc, "replace needs the old and new strings");
    int64_t count = a[2] && !a[2]->isNone() ? argInt(a[2], -1, loc, "count") : -1;
    std::string out = pyReplace(toStr(value), toStr(*a[0]), toStr(*a[1]), count);
    budget.checkSize(out.size(), loc);
    return Value::string(std::move(out));
  }
  if (name == "items") {
    bindArgs(args, {}, name);
    if (value.isUndefined())
      return Value::list({});
    if (!value.isDict())
      fail(loc, "items filter: can only get item pairs from a mapping, not " +
                    value.typeName());
    ValueList pairs;
    for (const auto &[k, v] : value.dictRef().entries)
      pairs.push_back(Value::tuple({k, v}));
    return Value::list(std::move(pairs));
  }
  if (name == "map") {
    if (!args.positional.empty()) {
      std::string filter = toStr(args.positional[0]);
      if (!isFilterName(filter) || filter == "map")
        fail(loc, "map: filter '" + filter + "' is not supported");
      CallArgs inner{ValueList(args.positional.begin() + 1, args.positional.end()),
                     args.keywords, loc};
      ValueList out;
      for (const Value &item : iterate(value, loc))
        out.push_back(applyFilter(filter, item, inner, budget));
      return Value::list(std::move(out));
    }
    auto a = bindArgs(args, {"attribute", "default"}, name);
    if (!a[0])
      fail(loc, "map needs a filter name or attribute=");
    ValueList out;
    for (const Value &item : iterate(value, loc)) {
      Value v = attrPath(item, toStr(*a[0]), loc);
      out.push_back(v.isUndefined() && a[1] ? *a[1] : v);
    }
    return Value::list(std::move(out));
  }
  if (name == "select" || name == "reject")
    return selectOrReject(value, args, name == "select", false);
  if (name == "selectattr" || name == "rejectattr")
    return selectOrReject(value, args, name == "selectattr", true);
  if (name == "reverse") {
    bindArgs(args, {}, name);
    if (value.isString()) {
      std::vector<char32_t> cps = codePoints(value.str());
      std::reverse(cps.begin(), cps.end());
      return Value::string(fromCodePoints(cps, 0, cps.size()));
    }
    ValueList items = iterate(value, loc);
    std::reverse(items.begin(), items.end());
    return Value::list(std::move(items));
  }
  if (name == "unique") {
    auto a = bindArgs(args, {"case_sensitive", "attribute"}, name);
    bool caseSensitive = a[0] && a[0]->truthy();
    std::set<std::string> seen;
    ValueList out;
    for (const Value &item : iterate(value, loc)) {
      Value k = a[1] ? attrPath(item, toStr(*a[1]), loc) : item;
      if (!caseSensitive && k.isString())
        k = Value::string(pyCase(k.str(), CaseOp::Lower, loc));
      if (seen.insert(hashKey(k, loc)).second)
        out.push_back(item);
    }
    return Value::list(std::move(out));
  }
  if (name == "max" || name == "min")
    return extremum(value, args, name == "max");
  if (name == "sum") {
    auto a = bindArgs(args, {"attribute", "start"}, name);
    Value total = a[1] ? *a[1] : Value::integer(0);
    for (const Value &item : iterate(value, loc))
      total = binaryOp("+", total, a[0] ? attrPath(item, toStr(*a[0]), loc) : item,
                       loc, budget);
    return total;
  }
  if (name == "abs") {
    bindArgs(args, {}, name);
    if (!value.isNumber())
      fail(loc, "bad operand type for abs(): '" + value.typeName() + "'");
    if (value.kind() == Kind::Float)
      return Value::real(std::fabs(value.asFloat()));
    return value.asInt() < 0 ? unaryOp("-", value, loc) : Value::integer(value.asInt());
  }
  if (name == "round") {
    auto a = bindArgs(args, {"precision", "method"}, name);
    int64_t precision = argInt(a[0], 0, loc, "round precision");
    std::string method = argStr(a[1], "common");
    if (!value.isNumber())
      fail(loc, "round: must be a number, not " + value.typeName());
    double x = value.asFloat();
    if (method == "common") {
      if (value.kind() != Kind::Float)
        return Value::integer(value.asInt());
      return Value::real(pyRound(x, precision));
    }
    if (method != "ceil" && method != "floor")
      fail(loc, "round: method must be common, ceil or floor");
    double p = std::pow(10.0, double(precision));
    double r = method == "ceil" ? std::ceil(x * p) : std::floor(x * p);
    return Value::real(r / p);
  }
  if (name == "indent")
    return indentFilter(value, args);
  fail(loc, "filter '" + name + "' is not supported");
}

bool applyTest(const std::string &name, const Value &v, const CallArgs &args) {
  SourceLoc loc = args.loc;
  auto arg = [&]() -> const Value & {
    if (args.positional.size() != 1 || !args.keywords.empty())
      fail(loc, "test '" + name + "' takes one argument");
    return args.positional[0];
  };
  if (name == "defined")
    return !v.isUndefined();
  if (name == "undefined")
    return v.isUndefined();
  if (name == "none")
    return v.isNone();
  if (name == "boolean")
    return v.kind() == Kind::Bool;
  if (name == "true")
    return v.kind() == Kind::Bool && v.asBool();
  if (name == "false")
    return v.kind() == Kind::Bool && !v.asBool();
  if (name == "integer")
    return v.kind() == Kind::Int;
  if (name == "float")
    return v.kind() == Kind::Float;
  if (name == "number")
    return v.isNumber();
  if (name == "string")
    return v.isString();
  if (name == "mapping")
    return v.isDict();
  if (name == "iterable")
    return v.isUndefined() || v.isString() || v.isList() || v.isDict();
  if (name == "sequence")
    return v.isUndefined() || v.isString() || v.isList() || v.isDict();
  if (name == "callable")
    return v.kind() == Kind::Callable;
  if (name == "odd" || name == "even") {
    if (v.kind() != Kind::Int && v.kind() != Kind::Bool)
      fail(loc, "test '" + name + "' needs an integer");
    return (v.asInt() % 2 != 0) == (name == "odd");
  }
  if (name == "divisibleby") {
    const Value &n = arg();
    if (!v.isNumber() || !n.isNumber())
      fail(loc, "divisibleby needs numbers");
    if (n.asFloat() == 0)
      fail(loc, "integer division or modulo by zero");
    if (v.kind() != Kind::Float && n.kind() != Kind::Float)
      return v.asInt() % n.asInt() == 0;
    return std::fmod(v.asFloat(), n.asFloat()) == 0;
  }
  if (name == "lower" || name == "upper") {
    std::string s = toStr(v);
    bool cased = false;
    for (char c : s) {
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
        cased = true;
      if (name == "lower" ? (c >= 'A' && c <= 'Z') : (c >= 'a' && c <= 'z'))
        return false;
    }
    pyCase(s, CaseOp::Lower, loc); // rejects non-ASCII cased letters
    return cased;
  }
  if (name == "sameas") {
    const Value &other = arg();
    bool simple = [](const Value &x) {
      return x.isNone() || x.kind() == Kind::Bool || x.isUndefined();
    }(other) || [](const Value &x) {
      return x.isNone() || x.kind() == Kind::Bool || x.isUndefined();
    }(v);
    if (!simple)
      fail(loc, "test 'sameas' is only supported with none, true or false");
    return v.kind() == other.kind() && equals(v, other);
  }
  if (name == "in")
    return compare("in", v, arg(), loc);
  if (name == "eq" || name == "equalto" || name == "==")
    return compare("==", v, arg(), loc);
  if (name == "ne" || name == "!=")
    return compare("!=", v, arg(), loc);
  if (name == "lt" || name == "lessthan" || name == "<")
    return compare("<", v, arg(), loc);
  if (name == "le" || name == "<=")
    return compare("<=", v, arg(), loc);
  if (name == "gt" || name == "greaterthan" || name == ">")
    return compare(">", v, arg(), loc);
  if (name == "ge" || name == ">=")
    return compare(">=", v, arg(), loc);
  fail(loc, "test '" + name + "' is not supported");
}

} // namespace qeff::chat::detail
