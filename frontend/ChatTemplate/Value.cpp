//===- Value.cpp - Python-like values of the Jinja interpreter ------------===//

#include "frontend/ChatTemplate/Value.h"

#include "frontend/ChatTemplate/Text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace qeff::chat::detail {

void fail(SourceLoc loc, std::string message) {
  std::string where = "line " + std::to_string(loc.line) + ":" +
                      std::to_string(loc.col) + ": ";
  throw TemplateError{absl::StatusCode::kInvalidArgument, where + message};
}

void failLimit(std::string message) {
  throw TemplateError{absl::StatusCode::kResourceExhausted,
                      "chat template exceeds " + message};
}

Value Value::undefined(std::string hint) {
  Value v;
  v.s = std::move(hint);
  return v;
}
Value Value::none() {
  Value v;
  v.k = Kind::None;
  return v;
}
Value Value::boolean(bool b) {
  Value v;
  v.k = Kind::Bool;
  v.b = b;
  return v;
}
Value Value::integer(int64_t i) {
  Value v;
  v.k = Kind::Int;
  v.i = i;
  return v;
}
Value Value::real(double f) {
  Value v;
  v.k = Kind::Float;
  v.f = f;
  return v;
}
Value Value::string(std::string s) {
  Value v;
  v.k = Kind::String;
  v.s = std::move(s);
  return v;
}
unsigned valueDepth(const Value &v) {
  if (v.kind() == Kind::List)
    return v.listRef().depth;
  if (v.kind() == Kind::Dict || v.kind() == Kind::Namespace)
    return v.dictRef().depth;
  return 0;
}

namespace {
unsigned checkedDepth(unsigned childDepth) {
  if (childDepth + 1 > kMaxValueDepth)
    failLimit("the nesting limit of " + std::to_string(kMaxValueDepth) +
              " levels of lists and dicts");
  return childDepth + 1;
}
} // namespace

Value Value::list(ValueList items) {
  unsigned depth = 0;
  for (const Value &item : items)
    depth = std::max(depth, valueDepth(item));
  Value v;
  v.k = Kind::List;
  v.l = std::make_shared<List>(
      List{std::move(items), ListForm::List, checkedDepth(depth)});
  return v;
}
Value Value::tuple(ValueList items) {
  Value v = list(std::move(items));
  v.l->form = ListForm::Tuple;
  return v;
}
Value Value::dict(std::shared_ptr<Dict> d) {
  Value v;
  v.k = Kind::Dict;
  v.d = std::move(d);
  return v;
}
Value Value::ns(std::shared_ptr<Dict> d) {
  Value v;
  v.k = Kind::Namespace;
  v.d = std::move(d);
  return v;
}
Value Value::loop(std::shared_ptr<LoopState> l) {
  Value v;
  v.k = Kind::Loop;
  v.lp = std::move(l);
  return v;
}
Value Value::callable(std::shared_ptr<const Callable> c) {
  Value v;
  v.k = Kind::Callable;
  v.c = std::move(c);
  return v;
}

namespace {

template <typename Json> Value valueFromJson(const Json &j, unsigned depth) {
  if (depth > kMaxValueDepth)
    throw TemplateError{absl::StatusCode::kInvalidArgument,
                        "chat template context: JSON nested deeper than " +
                            std::to_string(kMaxValueDepth) + " levels"};
  switch (j.type()) {
  case nlohmann::json::value_t::null:
    return Value::none();
  case nlohmann::json::value_t::boolean:
    return Value::boolean(j.template get<bool>());
  case nlohmann::json::value_t::number_integer:
    return Value::integer(j.template get<int64_t>());
  case nlohmann::json::value_t::number_unsigned: {
    uint64_t u = j.template get<uint64_t>();
    if (u > uint64_t(INT64_MAX))
      throw TemplateError{absl::StatusCode::kInvalidArgument,
                          "chat template context: integer " +
                              std::to_string(u) + " exceeds 64 bits"};
    return Value::integer(int64_t(u));
  }
  case nlohmann::json::value_t::number_float:
    return Value::real(j.template get<double>());
  case nlohmann::json::value_t::string:
    return Value::string(j.template get<std::string>());
  case nlohmann::json::value_t::array: {
    ValueList items;
    items.reserve(j.size());
    for (const auto &e : j)
      items.push_back(valueFromJson(e, depth + 1));
    return Value::list(std::move(items));
  }
  case nlohmann::json::value_t::object: {
    auto d = std::make_shared<Dict>();
    for (auto it = j.begin(); it != j.end(); ++it)
      d->set(Value::string(it.key()), valueFromJson(it.value(), depth + 1));
    return Value::dict(std::move(d));
  }
  default:
    throw TemplateError{absl::StatusCode::kInvalidArgument,
                        "chat template context: binary JSON values are not "
                        "supported"};
  }
}

} // namespace

Value Value::fromJson(const nlohmann::ordered_json &j) {
  return valueFromJson(j, 0);
}
Value Value::fromJson(const nlohmann::json &j) { return valueFromJson(j, 0); }

bool Value::truthy() const {
  switch (k) {
  case Kind::Undefined:
  case Kind::None:
    return false;
  case Kind::Bool:
    return b;
  case Kind::Int:
    return i != 0;
  case Kind::Float:
    return f != 0;
  case Kind::String:
    return !s.empty();
  case Kind::List:
    return !l->items.empty();
  case Kind::Dict:
    return d->size() != 0;
  default:
    return true;
  }
}

std::string Value::typeName() const {
  switch (k) {
  case Kind::Undefined:
    return "Undefined";
  case Kind::None:
    return "NoneType";
  case Kind::Bool:
    return "bool";
  case Kind::Int:
    return "int";
  case Kind::Float:
    return "float";
  case Kind::String:
    return "str";
  case Kind::List:
    switch (l->form) {
    case ListForm::Tuple:
      return "tuple";
    case ListForm::DictItems:
      return "dict_items";
    case ListForm::DictKeys:
      return "dict_keys";
    case ListForm::DictValues:
      return "dict_values";
    default:
      return "list";
    }
  case Kind::Dict:
    return "dict";
  case Kind::Namespace:
    return "Namespace";
  case Kind::Loop:
    return "LoopContext";
  case Kind::Callable:
    return c->macro ? "Macro" : "function";
  }
  return "object";
}

std::string hashKey(const Value &v, SourceLoc loc) {
  switch (v.kind()) {
  case Kind::String:
    return "s" + v.str();
  case Kind::None:
    return "N";
  case Kind::Bool:
  case Kind::Int:
    return "n" + std::to_string(v.asInt());
  case Kind::Float: {
    double f = v.asFloat();
    if (std::isfinite(f) && f == std::floor(f) && std::fabs(f) < 9.2e18)
      return "n" + std::to_string(int64_t(f));
    return "f" + floatRepr(f);
  }
  case Kind::List:
    if (v.listRef().form == ListForm::Tuple) {
      std::string key = "t(";
      for (const Value &e : v.listRef().items)
        key += hashKey(e, loc) + ",";
      return key + ")";
    }
    break;
  default:
    break;
  }
  fail(loc, "unhashable type: '" + v.typeName() + "'");
}

const Value *Dict::find(const Value &key) const {
  std::string h;
  try {
    h = hashKey(key, {});
  } catch (const TemplateError &) {
    return nullptr;
  }
  auto it = index.find(h);
  return it == index.end() ? nullptr : &entries[it->second].second;
}

void Dict::set(const Value &key, Value value) {
  depth = std::max(depth, checkedDepth(valueDepth(value)));
  std::string h = hashKey(key, {});
  auto [it, inserted] = index.emplace(h, entries.size());
  if (inserted)
    entries.emplace_back(key, std::move(value));
  else
    entries[it->second].second = std::move(value);
}

bool equals(const Value &a, const Value &b) {
  if (a.isNumber() && b.isNumber()) {
    if (a.kind() == Kind::Float || b.kind() == Kind::Float)
      return a.asFloat() == b.asFloat();
    return a.asInt() == b.asInt();
  }
  if (a.kind() != b.kind())
    return false;
  switch (a.kind()) {
  case Kind::Undefined:
  case Kind::None:
    return true;
  case Kind::String:
    return a.str() == b.str();
  case Kind::List: {
    const List &x = a.listRef(), &y = b.listRef();
    bool xt = x.form == ListForm::Tuple, yt = y.form == ListForm::Tuple;
    if (xt != yt || x.items.size() != y.items.size())
      return false;
    for (size_t k = 0; k < x.items.size(); ++k)
      if (!equals(x.items[k], y.items[k]))
        return false;
    return true;
  }
  case Kind::Dict: {
    const Dict &x = a.dictRef(), &y = b.dictRef();
    if (x.size() != y.size())
      return false;
    for (const auto &[key, value] : x.entries) {
      const Value *other = y.find(key);
      if (!other || !equals(value, *other))
        return false;
    }
    return true;
  }
  case Kind::Namespace:
    return a.dictPtr() == b.dictPtr();
  case Kind::Loop:
    return a.loopPtr() == b.loopPtr();
  case Kind::Callable:
    return a.callablePtr() == b.callablePtr();
  default:
    return false;
  }
}

std::string floatRepr(double f) {
  if (std::isnan(f))
    return "nan";
  if (std::isinf(f))
    return f > 0 ? "inf" : "-inf";
  // Shortest digits that round-trip, as Python's repr.
  char buf[40];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*e", prec - 1, f);
    if (std::strtod(buf, nullptr) == f)
      break;
  }
  std::string text(buf);
  bool negative = text[0] == '-';
  if (negative)
    text.erase(0, 1);
  size_t ePos = text.find('e');
  int exponent = std::atoi(text.c_str() + ePos + 1);
  std::string digits;
  for (size_t k = 0; k < ePos; ++k)
    if (text[k] != '.')
      digits += text[k];
  while (digits.size() > 1 && digits.back() == '0')
    digits.pop_back();
  std::string out = negative ? "-" : "";
  if (exponent < -4 || exponent >= 16) {
    out += digits[0];
    if (digits.size() > 1)
      out += "." + digits.substr(1);
    char exp[8];
    std::snprintf(exp, sizeof exp, "e%c%02d", exponent < 0 ? '-' : '+',
                  std::abs(exponent));
    return out + exp;
  }
  if (exponent < 0)
    return out + "0." + std::string(size_t(-exponent - 1), '0') + digits;
  size_t intLen = size_t(exponent) + 1;
  if (digits.size() <= intLen)
    return out + digits + std::string(intLen - digits.size(), '0') + ".0";
  return out + digits.substr(0, intLen) + "." + digits.substr(intLen);
}

std::string repr(const Value &v) {
  switch (v.kind()) {
  case Kind::Undefined:
    return "Undefined";
  case Kind::String:
    return strRepr(v.str());
  case Kind::List: {
    const List &l = v.listRef();
    std::string body;
    for (size_t k = 0; k < l.items.size(); ++k)
      body += (k ? ", " : "") + repr(l.items[k]);
    switch (l.form) {
    case ListForm::Tuple:
      return "(" + body + (l.items.size() == 1 ? ",)" : ")");
    case ListForm::DictItems:
      return "dict_items([" + body + "])";
    case ListForm::DictKeys:
      return "dict_keys([" + body + "])";
    case ListForm::DictValues:
      return "dict_values([" + body + "])";
    default:
      return "[" + body + "]";
    }
  }
  case Kind::Dict: {
    std::string out = "{";
    bool first = true;
    for (const auto &[key, value] : v.dictRef().entries) {
      out += (first ? "" : ", ") + repr(key) + ": " + repr(value);
      first = false;
    }
    return out + "}";
  }
  default:
    return toStr(v);
  }
}

std::string toStr(const Value &v) {
  switch (v.kind()) {
  case Kind::Undefined:
    return "";
  case Kind::None:
    return "None";
  case Kind::Bool:
    return v.asBool() ? "True" : "False";
  case Kind::Int:
    return std::to_string(v.asInt());
  case Kind::Float:
    return floatRepr(v.asFloat());
  case Kind::String:
    return v.str();
  case Kind::List:
  case Kind::Dict:
    return repr(v);
  case Kind::Namespace:
    return "<Namespace " + repr(Value::dict(v.dictPtr())) + ">";
  default:
    throw TemplateError{absl::StatusCode::kInvalidArgument,
                        "chat template: printing a " + v.typeName() +
                            " object is not supported"};
  }
}

namespace {

void jsonString(std::string &out, std::string_view s, bool ensureAscii) {
  out += '"';
  for (size_t pos = 0; pos < s.size();) {
    size_t start = pos;
    char32_t cp = nextCodePoint(s, pos);
    char buf[16];
    switch (cp) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\b':
      out += "\\b";
      break;
    case '\f':
      out += "\\f";
      break;
    default:
      if (cp < 0x20) {
        std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(cp));
        out += buf;
      } else if (cp >= 0x80 && ensureAscii) {
        if (cp >= 0x10000) { // UTF-16 surrogate pair, as json.dumps
          char32_t v = cp - 0x10000;
          std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x",
                        unsigned(0xd800 + (v >> 10)),
                        unsigned(0xdc00 + (v & 0x3ff)));
        } else {
          std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(cp));
        }
        out += buf;
      } else {
        out.append(s.substr(start, pos - start));
      }
    }
  }
  out += '"';
}

void jsonFloat(std::string &out, double f) {
  if (std::isnan(f))
    out += "NaN";
  else if (std::isinf(f))
    out += f > 0 ? "Infinity" : "-Infinity";
  else
    out += floatRepr(f);
}

void jsonValue(std::string &out, const Value &v, const JsonOptions &o,
               int level, SourceLoc loc) {
  int indent = o.indent;
  std::string itemSep =
      !o.itemSep.empty() ? o.itemSep : (indent >= 0 ? std::string(",") : std::string(", "));
  std::string keySep = !o.keySep.empty() ? o.keySep : std::string(": ");
  if (level > 256)
    failLimit("the nesting depth of 256 in tojson");
  auto newline = [&](int lvl) {
    out += '\n';
    out.append(size_t(indent) * size_t(lvl), ' ');
  };
  switch (v.kind()) {
  case Kind::None:
    out += "null";
    return;
  case Kind::Bool:
    out += v.asBool() ? "true" : "false";
    return;
  case Kind::Int:
    out += std::to_string(v.asInt());
    return;
  case Kind::Float:
    jsonFloat(out, v.asFloat());
    return;
  case Kind::String:
    jsonString(out, v.str(), o.ensureAscii);
    return;
  case Kind::List: {
    const List &l = v.listRef();
    if (l.form != ListForm::List && l.form != ListForm::Tuple)
      break;
    if (l.items.empty()) {
      out += "[]";
      return;
    }
    out += '[';
    for (size_t k = 0; k < l.items.size(); ++k) {
      if (k)
        out += itemSep;
      if (indent >= 0)
        newline(level + 1);
      jsonValue(out, l.items[k], o, level + 1, loc);
    }
    if (indent >= 0)
      newline(level);
    out += ']';
    return;
  }
  case Kind::Dict: {
    const Dict &d = v.dictRef();
    if (d.size() == 0) {
      out += "{}";
      return;
    }
    out += '{';
    bool first = true;
    std::vector<const std::pair<Value, Value> *> entries;
    for (const auto &entry : d.entries)
      entries.push_back(&entry);
    if (o.sortKeys) {
      bool strings = true, numbers = true;
      for (const auto *e : entries) {
        strings = strings && e->first.isString();
        numbers = numbers && e->first.isNumber();
      }
      if (!strings && !numbers)
        fail(loc, "tojson: sort_keys needs keys of one comparable type");
      std::sort(entries.begin(), entries.end(),
                       [&](const auto *x, const auto *y) {
                         if (strings)
                           return x->first.str() < y->first.str();
                         return x->first.asFloat() < y->first.asFloat();
                       });
    }
    for (const auto *entry : entries) {
      const Value &key = entry->first;
      const Value &value = entry->second;
      if (!first)
        out += itemSep;
      first = false;
      if (indent >= 0)
        newline(level + 1);
      switch (key.kind()) {
      case Kind::String:
        jsonString(out, key.str(), o.ensureAscii);
        break;
      case Kind::None:
        out += "\"null\"";
        break;
      case Kind::Bool:
        out += key.asBool() ? "\"true\"" : "\"false\"";
        break;
      case Kind::Int:
        out += "\"" + std::to_string(key.asInt()) + "\"";
        break;
      case Kind::Float: {
        std::string f;
        jsonFloat(f, key.asFloat());
        out += "\"" + f + "\"";
        break;
      }
      default:
        fail(loc, "tojson: keys must be str, int, float, bool or None, not " +
                      key.typeName());
      }
      out += keySep;
      jsonValue(out, value, o, level + 1, loc);
    }
    if (indent >= 0)
      newline(level);
    out += '}';
    return;
  }
  default:
    break;
  }
  fail(loc, "tojson: Object of type " + v.typeName() +
                " is not JSON serializable");
}

} // namespace

std::string toJson(const Value &v, const JsonOptions &options, SourceLoc loc) {
  std::string out;
  jsonValue(out, v, options, 0, loc);
  return out;
}

} // namespace qeff::chat::detail
