//===- Methods.cpp - str and dict methods, loop.cycle, global functions ---===//

#include "frontend/ChatTemplate/Builtins.h"
#include "frontend/ChatTemplate/Text.h"

#include <ctime>
#include <set>

namespace qeff::chat::detail {

bool isMethodName(const std::string &name) {
  static const std::set<std::string> names = {
      "strip",   "lstrip", "rstrip", "split", "startswith", "endswith",
      "upper",   "lower",  "title",  "capitalize", "replace", "format",
      "join",    "find",   "get",    "items", "keys",       "values",
      "cycle"};
  return names.count(name) != 0;
}

bool isGlobalFunction(const std::string &name) {
  return name == "raise_exception" || name == "strftime_now" ||
         name == "range" || name == "dict" || name == "namespace";
}

std::vector<std::optional<Value>> bindArgs(const CallArgs &args,
                                           const std::vector<const char *> &params,
                                           const std::string &what) {
  std::vector<std::optional<Value>> bound(params.size());
  if (args.positional.size() > params.size())
    fail(args.loc, what + "() takes at most " + std::to_string(params.size()) +
                       " arguments (" + std::to_string(args.positional.size()) +
                       " given)");
  for (size_t k = 0; k < args.positional.size(); ++k)
    bound[k] = args.positional[k];
  for (const auto &[key, value] : args.keywords) {
    size_t k = 0;
    while (k < params.size() && key != params[k])
      ++k;
    if (k == params.size())
      fail(args.loc, what + "() got an unexpected keyword argument '" + key + "'");
    if (bound[k])
      fail(args.loc, what + "() got multiple values for argument '" + key + "'");
    bound[k] = value;
  }
  return bound;
}

namespace {

const std::string &needStr(const std::optional<Value> &v, const std::string &what,
                           SourceLoc loc) {
  if (!v || !v->isString())
    fail(loc, what + " must be a str, not " +
                  (v ? v->typeName() : std::string("missing")));
  return v->str();
}

// str.format with automatic ({}) or explicit ({0}, {name}) fields and no
// conversions or format specs.
std::string pyFormat(const std::string &fmt, const CallArgs &args) {
  std::string out;
  size_t autoIndex = 0;
  for (size_t k = 0; k < fmt.size(); ++k) {
    char c = fmt[k];
    if (c == '}') {
      if (k + 1 < fmt.size() && fmt[k + 1] == '}') {
        out += '}';
        ++k;
        continue;
      }
      fail(args.loc, "str.format: single '}' encountered in format string");
    }
    if (c != '{') {
      out += c;
      continue;
    }
    if (k + 1 < fmt.size() && fmt[k + 1] == '{') {
      out += '{';
      ++k;
      continue;
    }
    size_t close = fmt.find('}', k);
    if (close == std::string::npos)
      fail(args.loc, "str.format: single '{' encountered in format string");
    std::string field = fmt.substr(k + 1, close - k - 1);
    if (field.find_first_of(":!.[") != std::string::npos)
      fail(args.loc, "str.format: conversions, format specs and field "
                     "lookups are not supported");
    const Value *v = nullptr;
    if (field.empty() ||
        field.find_first_not_of("0123456789") == std::string::npos) {
      size_t idx = field.empty() ? autoIndex++ : size_t(std::stoul(field));
      if (idx >= args.positional.size())
        fail(args.loc, "str.format: replacement index " + std::to_string(idx) +
                           " out of range");
      v = &args.positional[idx];
    } else {
      for (const auto &[key, value] : args.keywords)
        if (key == field)
          v = &value;
      if (!v)
        fail(args.loc, "str.format: no argument named '" + field + "'");
    }
    out += toStr(*v);
    k = close;
  }
  return out;
}

bool affix(const std::string &s, const Value &arg, bool prefix, SourceLoc loc) {
  auto one = [&](const Value &a) {
    if (!a.isString())
      fail(loc, std::string(prefix ? "startswith" : "endswith") +
                    " first arg must be str or a tuple of str, not " +
                    a.typeName());
    const std::string &p = a.str();
    if (p.size() > s.size())
      return false;
    return prefix ? s.compare(0, p.size(), p) == 0
                  : s.compare(s.size() - p.size(), p.size(), p) == 0;
  };
  if (arg.isList() && arg.listRef().form == ListForm::Tuple) {
    for (const Value &a : arg.listRef().items)
      if (one(a))
        return true;
    return false;
  }
  return one(arg);
}

Value strMethod(const std::string &s, const std::string &name,
                const CallArgs &args, Budget &budget) {
  SourceLoc loc = args.loc;
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    auto a = bindArgs(args, {"chars"}, name);
    const std::string *chars = nullptr;
    if (a[0] && !a[0]->isNone())
      chars = &needStr(a[0], name + " arg", loc);
    return Value::string(pyStrip(s, chars, name != "rstrip", name != "lstrip"));
  }
  if (name == "split") {
    auto a = bindArgs(args, {"sep", "maxsplit"}, name);
    const std::string *sep = nullptr;
    if (a[0] && !a[0]->isNone())
      sep = &needStr(a[0], "split separator", loc);
    int64_t maxsplit = -1;
    if (a[1]) {
      if (a[1]->kind() != Kind::Int)
        fail(loc, "split maxsplit must be an integer");
      maxsplit = a[1]->asInt();
    }
    ValueList parts;
    for (std::string &p : pySplit(s, sep, maxsplit, loc))
      parts.push_back(Value::string(std::move(p)));
    return Value::list(std::move(parts));
  }
  if (name == "startswith" || name == "endswith") {
    if (args.positional.size() != 1 || !args.keywords.empty())
      fail(loc, name + "() with start/end arguments is not supported");
    return Value::boolean(affix(s, args.positional[0], name == "startswith", loc));
  }
  if (name == "upper" || name == "lower" || name == "title" ||
      name == "capitalize") {
    bindArgs(args, {}, name);
    CaseOp op = name == "upper"   ? CaseOp::Upper
                : name == "lower" ? CaseOp::Lower
                : name == "title" ? CaseOp::Title
                                  : CaseOp::Capitalize;
    return Value::string(pyCase(s, op, loc));
  }
  if (name == "replace") {
    auto a = bindArgs(args, {"old", "new", "count"}, name);
    int64_t count = -1;
    if (a[2]) {
      if (a[2]->kind() != Kind::Int)
        fail(loc, "replace count must be an integer");
      count = a[2]->asInt();
    }
    std::string out = pyReplace(s, needStr(a[0], "replace old", loc),
                                needStr(a[1], "replace new", loc), count);
    budget.checkSize(out.size(), loc);
    return Value::string(std::move(out));
  }
  if (name == "format") {
    std::string out = pyFormat(s, args);
    budget.checkSize(out.size(), loc);
    return Value::string(std::move(out));
  }
  if (name == "join") {
    auto a = bindArgs(args, {"iterable"}, name);
    if (!a[0])
      fail(loc, "join() takes exactly one argument");
    std::string out;
    bool first = true;
    for (const Value &item : iterate(*a[0], loc)) {
      if (!item.isString())
        fail(loc, "sequence item: expected str instance, " + item.typeName() +
                      " found");
      out += (first ? "" : s) + item.str();
      first = false;
      budget.checkSize(out.size(), loc);
    }
    return Value::string(std::move(out));
  }
  if (name == "find") {
    auto a = bindArgs(args, {"sub"}, name);
    size_t hit = s.find(needStr(a[0], "find sub", loc));
    if (hit == std::string::npos)
      return Value::integer(-1);
    return Value::integer(int64_t(codePointCount(std::string_view(s).substr(0, hit))));
  }
  fail(loc, "'str object' has no attribute '" + name + "'");
}

Value dictMethod(const Value &d, const std::string &name, const CallArgs &args) {
  SourceLoc loc = args.loc;
  if (name == "get") {
    auto a = bindArgs(args, {"key", "default"}, name);
    if (!a[0])
      fail(loc, "get expected at least 1 argument, got 0");
    hashKey(*a[0], loc);
    if (const Value *v = d.dictRef().find(*a[0]))
      return *v;
    return a[1] ? *a[1] : Value::none();
  }
  bindArgs(args, {}, name);
  ValueList out;
  for (const auto &[k, v] : d.dictRef().entries)
    out.push_back(name == "items"  ? Value::tuple({k, v})
                  : name == "keys" ? k
                                   : v);
  Value list = Value::list(std::move(out));
  list.listPtr()->form = name == "items"  ? ListForm::DictItems
                         : name == "keys" ? ListForm::DictKeys
                                          : ListForm::DictValues;
  return list;
}

} // namespace

Value callMethod(const Value &obj, const std::string &name,
                 const CallArgs &args, Budget &budget) {
  switch (obj.kind()) {
  case Kind::Undefined:
    failUndefined(obj, args.loc);
  case Kind::String:
    return strMethod(obj.str(), name, args, budget);
  case Kind::Dict:
    if (name == "get" || name == "items" || name == "keys" || name == "values")
      return dictMethod(obj, name, args);
    break;
  case Kind::Loop:
    if (name == "cycle") {
      if (args.positional.empty() || !args.keywords.empty())
        fail(args.loc, "no items for cycling given");
      return args.positional[obj.loopPtr()->index0 % args.positional.size()];
    }
    break;
  default:
    break;
  }
  std::string desc = obj.isNone() ? "'None'" : "'" + obj.typeName() + " object'";
  fail(args.loc, desc + " has no attribute '" + name + "'");
}

Value callGlobal(const Callable &fn, const CallArgs &args, Budget &budget) {
  SourceLoc loc = args.loc;
  switch (fn.builtin) {
  case Callable::Builtin::RaiseException: {
    auto a = bindArgs(args, {"message"}, fn.name);
    throw TemplateError{absl::StatusCode::kInvalidArgument,
                        a[0] ? toStr(*a[0]) : "", true};
  }
  case Callable::Builtin::StrftimeNow: {
    auto a = bindArgs(args, {"format"}, fn.name);
    const std::string &format = needStr(a[0], "strftime_now format", loc);
    std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    std::string buf(256 + format.size() * 8, '\0');
    size_t n = std::strftime(buf.data(), buf.size(), format.c_str(), &local);
    if (n == 0 && !format.empty())
      fail(loc, "strftime_now: the format produces no or too much output");
    buf.resize(n);
    return Value::string(std::move(buf));
  }
  case Callable::Builtin::Range: {
    if (!args.keywords.empty() || args.positional.empty() ||
        args.positional.size() > 3)
      fail(loc, "range expects 1 to 3 integer arguments");
    int64_t v[3];
    for (size_t k = 0; k < args.positional.size(); ++k) {
      const Value &a = args.positional[k];
      if (a.kind() != Kind::Int && a.kind() != Kind::Bool)
        fail(loc, "range: '" + a.typeName() +
                      "' object cannot be interpreted as an integer");
      v[k] = a.asInt();
    }
    int64_t start = 0, stop, step = 1;
    if (args.positional.size() == 1) {
      stop = v[0];
    } else {
      start = v[0];
      stop = v[1];
      if (args.positional.size() == 3)
        step = v[2];
    }
    if (step == 0)
      fail(loc, "range() arg 3 must not be zero");
    __int128 count = step > 0 ? (__int128(stop) - start + step - 1) / step
                              : (__int128(start) - stop - step - 1) / -step;
    if (count > 100000) // jinja2's sandbox MAX_RANGE
      fail(loc, "Range too big. The sandbox blocks ranges larger than "
                "MAX_RANGE (100000).");
    ValueList out;
    for (__int128 k = 0; k < count; ++k)
      out.push_back(Value::integer(int64_t(start + k * step)));
    budget.checkSize(out.size(), loc);
    return Value::list(std::move(out));
  }
  case Callable::Builtin::Dict:
  case Callable::Builtin::Namespace: {
    auto d = std::make_shared<Dict>();
    if (args.positional.size() > 1)
      fail(loc, fn.name + " expected at most 1 positional argument");
    if (!args.positional.empty()) {
      const Value &init = args.positional[0];
      if (init.isDict()) {
        for (const auto &[k, v] : init.dictRef().entries)
          d->set(k, v);
      } else {
        for (const Value &pair : iterate(init, loc)) {
          if (!pair.isList() || pair.listRef().items.size() != 2)
            fail(loc, fn.name + ": sequence elements must be pairs");
          hashKey(pair.listRef().items[0], loc);
          d->set(pair.listRef().items[0], pair.listRef().items[1]);
        }
      }
    }
    for (const auto &[k, v] : args.keywords)
      d->set(Value::string(k), v);
    return fn.builtin == Callable::Builtin::Dict ? Value::dict(std::move(d))
                                                 : Value::ns(std::move(d));
  }
  case Callable::Builtin::None:
    break;
  }
  fail(loc, "'" + fn.name + "' is not callable");
}

} // namespace qeff::chat::detail
