//===- Value.h - Python-like values of the Jinja interpreter ----*- C++ -*-===//
//
// The values a chat template computes with, modelled on the Python objects
// jinja2 would hold: jinja2's default Undefined, None, bool, int, float, str
// (UTF-8), list/tuple, dict (insertion ordered), namespace, the loop object
// and callables (macros and the few globals). Lists and dicts are shared and
// never mutated once built (the sandbox forbids it); a namespace is the one
// mutable object.
//
// Errors inside the interpreter are thrown as TemplateError and turned into an
// absl::Status at the API boundary; none escapes the library.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_CHATTEMPLATE_VALUE_H
#define QEFF_FRONTEND_CHATTEMPLATE_VALUE_H

#include "absl/status/status.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace qeff::chat::detail {

/// A line:column in the template source (1-based).
struct SourceLoc {
  uint32_t line = 0, col = 0;
};

/// An error while lexing, parsing or rendering. `raised` marks the message of
/// raise_exception, which is reported verbatim.
struct TemplateError {
  absl::StatusCode code;
  std::string message;
  bool raised = false;
};

[[noreturn]] void fail(SourceLoc loc, std::string message);
[[noreturn]] void failLimit(std::string message);

class Value;
struct List;
struct Dict;
struct LoopState;
struct Callable;

using ValueList = std::vector<Value>;

/// The kinds of Python object a template sees.
enum class Kind {
  Undefined,
  None,
  Bool,
  Int,
  Float,
  String,
  List,
  Dict,
  Namespace,
  Loop,
  Callable,
};

class Value {
public:
  Value() = default; // Undefined
  static Value undefined(std::string hint);
  static Value none();
  static Value boolean(bool b);
  static Value integer(int64_t i);
  static Value real(double f);
  static Value string(std::string s);
  static Value list(ValueList items);
  static Value tuple(ValueList items);
  static Value dict(std::shared_ptr<Dict> d);
  static Value ns(std::shared_ptr<Dict> d);
  static Value loop(std::shared_ptr<LoopState> l);
  static Value callable(std::shared_ptr<const Callable> c);
  static Value fromJson(const nlohmann::ordered_json &j);
  static Value fromJson(const nlohmann::json &j);

  Kind kind() const { return k; }
  bool isUndefined() const { return k == Kind::Undefined; }
  bool isNone() const { return k == Kind::None; }
  bool isString() const { return k == Kind::String; }
  bool isNumber() const {
    return k == Kind::Int || k == Kind::Float || k == Kind::Bool;
  }
  bool isList() const { return k == Kind::List; }
  bool isDict() const { return k == Kind::Dict; }

  bool asBool() const { return b; }
  int64_t asInt() const { return k == Kind::Bool ? int64_t(b) : i; }
  double asFloat() const { return k == Kind::Float ? f : double(asInt()); }
  const std::string &str() const { return s; }
  const List &listRef() const { return *l; }
  const std::shared_ptr<List> &listPtr() const { return l; }
  const std::shared_ptr<Dict> &dictPtr() const { return d; }
  const Dict &dictRef() const { return *d; }
  const std::shared_ptr<LoopState> &loopPtr() const { return lp; }
  const std::shared_ptr<const Callable> &callablePtr() const { return c; }
  /// For Undefined: what was undefined, as jinja2 words it in its error.
  const std::string &undefinedHint() const { return s; }

  /// Python truthiness.
  bool truthy() const;
  /// Python type name ("str", "int", "dict", ...), for error messages.
  std::string typeName() const;

private:
  Kind k = Kind::Undefined;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::shared_ptr<List> l;
  std::shared_ptr<Dict> d;
  std::shared_ptr<LoopState> lp;
  std::shared_ptr<const Callable> c;
};

/// How a list prints: Python list, tuple, or a dict view.
enum class ListForm { List, Tuple, DictItems, DictKeys, DictValues };

struct List {
  ValueList items;
  ListForm form = ListForm::List;
  unsigned depth = 1; // nesting of lists and dicts, this one included
};

/// Lists and dicts nest at most this deep (bounds recursion in repr, tojson,
/// comparisons and destruction).
constexpr unsigned kMaxValueDepth = 200;

/// The nesting depth of v (0 for scalars).
unsigned valueDepth(const Value &v);

/// An insertion-ordered dict; keys are hashable Values (str, int, bool,
/// None, float, tuples of those).
struct Dict {
  std::vector<std::pair<Value, Value>> entries;
  std::unordered_map<std::string, size_t> index;
  unsigned depth = 1;

  const Value *find(const Value &key) const;
  void set(const Value &key, Value value);
  size_t size() const { return entries.size(); }
};

/// The `loop` variable of a for loop.
struct LoopState {
  const ValueList *items = nullptr;
  size_t index0 = 0;
  unsigned depth = 1;
};

/// A callable value: a global function or a macro of the template.
struct Callable {
  enum class Builtin {
    None,
    RaiseException,
    StrftimeNow,
    Range,
    Dict,
    Namespace,
  };
  Builtin builtin = Builtin::None;
  const void *macro = nullptr; // const Stmt * of a macro definition
  std::string name;
};

/// The hash key of a dict key; throws for unhashable values.
std::string hashKey(const Value &v, SourceLoc loc);

/// Python `==`.
bool equals(const Value &a, const Value &b);

/// Python str(v), as `{{ v }}` prints it (Undefined prints "").
std::string toStr(const Value &v);
/// Python repr(v).
std::string repr(const Value &v);
/// The arguments of json.dumps that transformers' tojson filter passes on.
struct JsonOptions {
  int indent = -1; // < 0: None (one line)
  std::string itemSep, keySep; // empty: json.dumps's defaults for indent
  bool sortKeys = false;
  bool ensureAscii = false;
};
/// json.dumps(v, ...), as transformers' tojson filter.
std::string toJson(const Value &v, const JsonOptions &options, SourceLoc loc);
/// repr of a Python float.
std::string floatRepr(double f);

} // namespace qeff::chat::detail

#endif // QEFF_FRONTEND_CHATTEMPLATE_VALUE_H
