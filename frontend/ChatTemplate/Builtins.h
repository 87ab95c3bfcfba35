//===- Builtins.h - Operators, filters, tests, methods, globals -*- C++ -*-===//
//
// The Python and jinja2 semantics behind each operator, filter, test, str and
// dict method and global function of the supported subset. Names outside
// these lists are rejected by the parser.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_CHATTEMPLATE_BUILTINS_H
#define QEFF_FRONTEND_CHATTEMPLATE_BUILTINS_H

#include "frontend/ChatTemplate/ChatTemplate.h"
#include "frontend/ChatTemplate/Value.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace qeff::chat::detail {

bool isFilterName(const std::string &name);
bool isTestName(const std::string &name);
bool isMethodName(const std::string &name);
bool isGlobalFunction(const std::string &name);

/// Evaluated call arguments.
struct CallArgs {
  ValueList positional;
  std::vector<std::pair<std::string, Value>> keywords;
  SourceLoc loc;
};

/// Binds `args` to the parameter names of `what` the way Python does
/// (positional first, then keywords; unknown or repeated ones are errors).
std::vector<std::optional<Value>> bindArgs(const CallArgs &args,
                                           const std::vector<const char *> &params,
                                           const std::string &what);

/// The per-render resource accounting.
struct Budget {
  const RenderLimits &limits;
  uint64_t iterations = 0;

  void checkSize(size_t bytesOrItems, SourceLoc loc) const;
  void countIteration();
};

/// jinja2's UndefinedError for any use of an undefined value but printing,
/// truth testing, iterating and comparing.
[[noreturn]] void failUndefined(const Value &v, SourceLoc loc);

/// The items a for loop (or list(), join, ...) iterates: a list's items, a
/// dict's keys, a string's characters; Undefined iterates as empty.
ValueList iterate(const Value &v, SourceLoc loc);

/// Python's `len`.
int64_t length(const Value &v, SourceLoc loc);

/// jinja2's getattr (attribute, then item) and getitem (item, then attribute).
Value getAttr(const Value &obj, const std::string &name, SourceLoc loc);
Value getItem(const Value &obj, const Value &key, SourceLoc loc);
Value getSlice(const Value &obj, const Value &start, const Value &stop,
               const Value &step, SourceLoc loc);

/// Arithmetic and concatenation: + - * / // % ** ~.
Value binaryOp(const std::string &op, const Value &a, const Value &b,
               SourceLoc loc, const Budget &budget);
/// Unary - and +.
Value unaryOp(const std::string &op, const Value &a, SourceLoc loc);
/// ==, !=, <, <=, >, >=, in, not in.
bool compare(const std::string &op, const Value &a, const Value &b,
             SourceLoc loc);

Value applyFilter(const std::string &name, const Value &value,
                  const CallArgs &args, Budget &budget);
bool applyTest(const std::string &name, const Value &value,
               const CallArgs &args);
Value callMethod(const Value &obj, const std::string &name,
                 const CallArgs &args, Budget &budget);
/// A global function (not a macro): raise_exception, strftime_now, range,
/// dict, namespace.
Value callGlobal(const Callable &fn, const CallArgs &args, Budget &budget);

} // namespace qeff::chat::detail

#endif // QEFF_FRONTEND_CHATTEMPLATE_BUILTINS_H
