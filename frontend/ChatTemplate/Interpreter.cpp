//===- Interpreter.cpp - Rendering a parsed chat template -----------------===//
//
// Scoping follows jinja2: the render context and top-level `set`s share the
// root scope; every for-loop iteration gets a fresh scope (a `set` inside a
// loop is gone after the iteration, hence namespace()); if blocks do not open
// scopes; a macro sees the root scope and its own arguments only.
//
//===----------------------------------------------------------------------===//

#include "frontend/ChatTemplate/Interpreter.h"

#include "frontend/ChatTemplate/Builtins.h"

#include <unordered_map>

namespace qeff::chat::detail {
namespace {

using Frame = std::unordered_map<std::string, Value>;

enum class Flow { Normal, Break, Continue };

bool containsNamespace(const Value &v) {
  switch (v.kind()) {
  case Kind::Namespace:
    return true;
  case Kind::List:
    for (const Value &item : v.listRef().items)
      if (containsNamespace(item))
        return true;
    return false;
  case Kind::Dict:
    for (const auto &entry : v.dictRef().entries)
      if (containsNamespace(entry.second))
        return true;
    return false;
  default:
    return false;
  }
}

class Interpreter {
public:
  Interpreter(const Value &context, const RenderLimits &limits)
      : budget{limits} {
    for (const auto &[key, value] : context.dictRef().entries)
      root[key.str()] = value;
    scopes.push_back(&root);
  }

  std::string run(const Body &body) {
    std::string out;
    exec(body, out);
    return out;
  }

private:
  void emit(std::string &out, std::string_view text, SourceLoc loc) {
    out.append(text);
    budget.checkSize(out.size(), loc);
  }

  Value lookup(const std::string &name) const {
    for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
      auto found = (*it)->find(name);
      if (found != (*it)->end())
        return found->second;
    }
    static const std::unordered_map<std::string, Callable::Builtin> globals = {
        {"raise_exception", Callable::Builtin::RaiseException},
        {"strftime_now", Callable::Builtin::StrftimeNow},
        {"range", Callable::Builtin::Range},
        {"dict", Callable::Builtin::Dict},
        {"namespace", Callable::Builtin::Namespace}};
    auto g = globals.find(name);
    if (g != globals.end()) {
      auto fn = std::make_shared<Callable>();
      fn->builtin = g->second;
      fn->name = name;
      return Value::callable(std::move(fn));
    }
    return Value::undefined("'" + name + "' is undefined");
  }

  Flow exec(const Body &body, std::string &out) {
    for (const StmtPtr &s : body) {
      Flow flow = execOne(*s, out);
      if (flow != Flow::Normal)
        return flow;
    }
    return Flow::Normal;
  }

  Flow execOne(const Stmt &s, std::string &out) {
    switch (s.kind) {
    case StmtKind::Text:
      emit(out, s.text, s.loc);
      return Flow::Normal;
    case StmtKind::Print:
      emit(out, toStrAt(eval(*s.expr), s.loc), s.loc);
      return Flow::Normal;
    case StmtKind::If:
      for (const auto &[cond, body] : s.branches)
        if (eval(*cond).truthy())
          return exec(body, out);
      return exec(s.elseBody, out);
    case StmtKind::For:
      return execFor(s, out);
    case StmtKind::Set:
      assign(s, eval(*s.expr));
      return Flow::Normal;
    case StmtKind::SetBlock: {
      std::string captured;
      exec(s.body, captured);
      assign(s, Value::string(std::move(captured)));
      return Flow::Normal;
    }
    case StmtKind::Macro: {
      auto fn = std::make_shared<Callable>();
      fn->macro = &s;
      fn->name = s.text;
      (*scopes.back())[s.text] = Value::callable(std::move(fn));
      return Flow::Normal;
    }
    case StmtKind::Break:
      return Flow::Break;
    case StmtKind::Continue:
      return Flow::Continue;
    case StmtKind::Block:
      return exec(s.body, out);
    }
    return Flow::Normal;
  }

  static std::string toStrAt(const Value &v, SourceLoc loc) {
    try {
      return toStr(v);
    } catch (TemplateError &e) {
      fail(loc, e.message.substr(e.message.find(": ") + 2));
    }
  }

  void bindTargets(Frame &frame, const std::vector<std::string> &targets,
                   const Value &v, SourceLoc loc) {
    if (targets.size() == 1) {
      frame[targets[0]] = v;
      return;
    }
    ValueList items = iterate(v, loc);
    if (items.size() != targets.size())
      fail(loc, "cannot unpack " + std::to_string(items.size()) +
                    " values into " + std::to_string(targets.size()) +
                    " names");
    for (size_t k = 0; k < targets.size(); ++k)
      frame[targets[k]] = items[k];
  }

  void assign(const Stmt &s, const Value &v) {
    if (s.attrTarget) {
      Value target = lookup(s.targets[0]);
      if (target.kind() != Kind::Namespace)
        fail(s.loc, "cannot assign attribute on non-namespace object '" +
                        s.targets[0] + "'");
      if (containsNamespace(v))
        fail(s.loc, "storing a namespace inside a namespace is not supported");
      target.dictPtr()->set(Value::string(s.targets[1]), v);
      return;
    }
    bindTargets(*scopes.back(), s.targets, v, s.loc);
  }

  Flow execFor(const Stmt &s, std::string &out) {
    ValueList all = iterate(eval(*s.expr), s.expr->loc);
    ValueList items;
    if (s.cond) {
      for (const Value &item : all) {
        budget.countIteration();
        Frame frame;
        bindTargets(frame, s.targets, item, s.loc);
        scopes.push_back(&frame);
        bool keep = eval(*s.cond).truthy();
        scopes.pop_back();
        if (keep)
          items.push_back(item);
      }
    } else {
      items = std::move(all);
    }
    if (items.empty())
      return exec(s.elseBody, out);
    auto state = std::make_shared<LoopState>();
    state->items = &items;
    state->depth = ++loopDepth;
    for (size_t k = 0; k < items.size(); ++k) {
      budget.countIteration();
      state->index0 = k;
      Frame frame;
      frame["loop"] = Value::loop(state);
      bindTargets(frame, s.targets, items[k], s.loc);
      scopes.push_back(&frame);
      Flow flow = exec(s.body, out);
      scopes.pop_back();
      if (flow == Flow::Break)
        break;
    }
    --loopDepth;
    // The loop object may outlive the loop (stored by a set); it must not
    // point at this frame's items any more.
    state->items = &emptyItems;
    state->index0 = 0;
    return Flow::Normal;
  }

  CallArgs evalArgs(const Expr &e) {
    CallArgs args;
    args.loc = e.loc;
    for (const ExprPtr &a : e.items)
      args.positional.push_back(eval(*a));
    for (const auto &[key, a] : e.kwargs)
      args.keywords.emplace_back(key, eval(*a));
    return args;
  }

  Value callMacro(const Stmt &macro, const CallArgs &args, SourceLoc loc) {
    if (callDepth >= budget.limits.maxCallDepth)
      failLimit("the macro call depth of " +
                std::to_string(budget.limits.maxCallDepth));
    if (args.positional.size() > macro.params.size())
      fail(loc, "macro '" + macro.text + "' takes not more than " +
                    std::to_string(macro.params.size()) + " argument(s)");
    Frame frame;
    std::vector<bool> given(macro.params.size(), false);
    for (size_t k = 0; k < args.positional.size(); ++k) {
      frame[macro.params[k].first] = args.positional[k];
      given[k] = true;
    }
    for (const auto &[key, value] : args.keywords) {
      size_t k = 0;
      while (k < macro.params.size() && macro.params[k].first != key)
        ++k;
      if (k == macro.params.size())
        fail(loc, "macro '" + macro.text + "' takes no keyword argument '" +
                      key + "'");
      frame[key] = value;
      given[k] = true;
    }
    std::vector<Frame *> saved = std::move(scopes);
    scopes = {&root, &frame};
    for (size_t k = 0; k < macro.params.size(); ++k)
      if (!given[k])
        frame[macro.params[k].first] =
            macro.params[k].second
                ? eval(*macro.params[k].second)
                : Value::undefined("parameter '" + macro.params[k].first +
                                   "' was not provided");
    ++callDepth;
    unsigned savedLoopDepth = loopDepth;
    loopDepth = 0;
    std::string out;
    try {
      exec(macro.body, out);
    } catch (...) {
      scopes = std::move(saved);
      throw;
    }
    loopDepth = savedLoopDepth;
    --callDepth;
    scopes = std::move(saved);
    return Value::string(std::move(out));
  }

  Value evalCall(const Expr &e) {
    const Expr &callee = *e.base;
    if (callee.kind == ExprKind::Attr) {
      Value obj = eval(*callee.base);
      CallArgs args = evalArgs(e);
      return callMethod(obj, callee.name, args, budget);
    }
    Value fn = eval(callee);
    CallArgs args = evalArgs(e);
    if (fn.isUndefined())
      failUndefined(fn, callee.loc);
    if (fn.kind() != Kind::Callable)
      fail(e.loc, "'" + fn.typeName() + "' object is not callable");
    const Callable &c = *fn.callablePtr();
    if (c.macro)
      return callMacro(*static_cast<const Stmt *>(c.macro), args, e.loc);
    return callGlobal(c, args, budget);
  }

  Value eval(const Expr &e) {
    switch (e.kind) {
    case ExprKind::Literal:
      return e.literal;
    case ExprKind::Name:
      return lookup(e.name);
    case ExprKind::List:
    case ExprKind::Tuple: {
      ValueList items;
      for (const ExprPtr &item : e.items)
        items.push_back(eval(*item));
      return e.kind == ExprKind::List ? Value::list(std::move(items))
                                      : Value::tuple(std::move(items));
    }
    case ExprKind::Dict: {
      auto d = std::make_shared<Dict>();
      for (size_t k = 0; k + 1 < e.items.size(); k += 2) {
        Value key = eval(*e.items[k]);
        hashKey(key, e.items[k]->loc);
        d->set(key, eval(*e.items[k + 1]));
      }
      return Value::dict(std::move(d));
    }
    case ExprKind::Attr:
      return getAttr(eval(*e.base), e.name, e.loc);
    case ExprKind::Item: {
      Value obj = eval(*e.base);
      return getItem(obj, eval(*e.items[0]), e.loc);
    }
    case ExprKind::Slice: {
      Value obj = eval(*e.base);
      Value parts[3];
      for (int k = 0; k < 3; ++k)
        if (e.items[k])
          parts[k] = eval(*e.items[k]);
      return getSlice(obj, parts[0], parts[1], parts[2], e.loc);
    }
    case ExprKind::Call:
      return evalCall(e);
    case ExprKind::Filter: {
      Value v = eval(*e.base);
      CallArgs args = evalArgs(e);
      return applyFilter(e.name, v, args, budget);
    }
    case ExprKind::Test: {
      Value v = eval(*e.base);
      CallArgs args = evalArgs(e);
      return Value::boolean(applyTest(e.name, v, args) != e.negated);
    }
    case ExprKind::Unary: {
      Value v = eval(*e.items[0]);
      if (e.name == "not")
        return Value::boolean(!v.truthy());
      return unaryOp(e.name, v, e.loc);
    }
    case ExprKind::Binary: {
      Value a = eval(*e.items[0]);
      if (e.name == "and")
        return a.truthy() ? eval(*e.items[1]) : a;
      if (e.name == "or")
        return a.truthy() ? a : eval(*e.items[1]);
      Value b = eval(*e.items[1]);
      return binaryOp(e.name, a, b, e.loc, budget);
    }
    case ExprKind::Compare: {
      Value left = eval(*e.items[0]);
      for (size_t k = 0; k < e.ops.size(); ++k) {
        Value right = eval(*e.items[k + 1]);
        if (!compare(e.ops[k], left, right, e.loc))
          return Value::boolean(false);
        left = std::move(right);
      }
      return Value::boolean(true);
    }
    case ExprKind::CondExpr:
      if (eval(*e.items[1]).truthy())
        return eval(*e.items[0]);
      if (e.items[2])
        return eval(*e.items[2]);
      return Value::undefined("the inline if-expression on line " +
                              std::to_string(e.loc.line) +
                              " evaluated to false and no else section was "
                              "defined.");
    }
    fail(e.loc, "unknown expression");
  }

  Budget budget;
  Frame root;
  std::vector<Frame *> scopes;
  unsigned callDepth = 0;
  unsigned loopDepth = 0;
  const ValueList emptyItems;
};

} // namespace

std::string render(const Template &tmpl, const Value &context,
                   const RenderLimits &limits) {
  if (!context.isDict())
    throw TemplateError{absl::StatusCode::kInvalidArgument,
                        "chat template context must be a JSON object"};
  for (const auto &entry : context.dictRef().entries)
    if (!entry.first.isString())
      throw TemplateError{absl::StatusCode::kInvalidArgument,
                          "chat template context keys must be strings"};
  Interpreter interp(context, limits);
  return interp.run(tmpl.body);
}

} // namespace qeff::chat::detail
