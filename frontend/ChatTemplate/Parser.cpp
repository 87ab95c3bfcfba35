//===- Parser.cpp - jinja2's grammar for chat templates -------------------===//
//
// Recursive descent over jinja2.parser's grammar and precedence (condexpr <
// or < and < not < compare < +,- < ~ < *,/,//,% < ** < unary < postfix and
// filters). The statements and the names of filters, tests, functions and
// methods outside the supported subset are errors here, at load.
//
//===----------------------------------------------------------------------===//

#include "frontend/ChatTemplate/Ast.h"
#include "frontend/ChatTemplate/Builtins.h"

#include <cerrno>
#include <cstdlib>
#include <set>

namespace qeff::chat::detail {
namespace {

class Parser {
public:
  explicit Parser(std::vector<Token> toks) : toks(std::move(toks)) {}

  Body parseTemplate() {
    Body body = parseBody({});
    if (peek().kind != TokenKind::End)
      fail(peek().loc, "unexpected '" + peek().text + "'");
    for (const auto &[name, loc] : calledNames)
      if (!macroNames.count(name) && !isGlobalFunction(name))
        fail(loc, "call of '" + name +
                      "', which is neither a macro of the template nor a "
                      "supported global function");
    return body;
  }

private:
  const Token &peek(size_t ahead = 0) const {
    size_t k = std::min(pos + ahead, toks.size() - 1);
    return toks[k];
  }
  const Token &next() {
    const Token &t = toks[std::min(pos, toks.size() - 1)];
    if (pos < toks.size() - 1)
      ++pos;
    return t;
  }
  bool isOp(const char *op, size_t ahead = 0) const {
    return peek(ahead).kind == TokenKind::Operator && peek(ahead).text == op;
  }
  bool isName(const char *name, size_t ahead = 0) const {
    return peek(ahead).kind == TokenKind::Name && peek(ahead).text == name;
  }
  bool acceptOp(const char *op) {
    if (!isOp(op))
      return false;
    next();
    return true;
  }
  bool acceptName(const char *name) {
    if (!isName(name))
      return false;
    next();
    return true;
  }
  static std::string describe(const Token &t) {
    switch (t.kind) {
    case TokenKind::End:
      return "end of template";
    case TokenKind::BlockEnd:
      return "end of block tag '%}'";
    case TokenKind::VariableEnd:
      return "end of print tag '}}'";
    case TokenKind::BlockBegin:
      return "'{%'";
    case TokenKind::VariableBegin:
      return "'{{'";
    case TokenKind::Data:
      return "template text";
    case TokenKind::String:
      return "string literal";
    default:
      return "'" + t.text + "'";
    }
  }
  void expectOp(const char *op) {
    if (!acceptOp(op))
      fail(peek().loc, std::string("expected '") + op + "', found " +
                           describe(peek()));
  }
  std::string expectName() {
    if (peek().kind != TokenKind::Name)
      fail(peek().loc, "expected a name, found " + describe(peek()));
    return next().text;
  }
  void expectBlockEnd() {
    if (peek().kind != TokenKind::BlockEnd)
      fail(peek().loc, "expected end of block tag '%}', found " +
                           describe(peek()));
    next();
  }

  struct DepthGuard {
    DepthGuard(Parser &p, SourceLoc loc) : p(p) {
      if (++p.depth > kMaxParseDepth)
        fail(loc, "template nested deeper than " +
                      std::to_string(kMaxParseDepth) + " levels");
    }
    ~DepthGuard() { --p.depth; }
    Parser &p;
  };

  // Each operator of a left-associative chain (a + b + c, x|f|g, a.b.c)
  // nests the tree one level deeper, so it counts against the same limit.
  struct ChainGuard {
    explicit ChainGuard(Parser &p) : p(p) {}
    void step(SourceLoc loc) {
      ++steps;
      if (++p.depth > kMaxParseDepth)
        fail(loc, "expression nested deeper than " +
                      std::to_string(kMaxParseDepth) + " levels");
    }
    ~ChainGuard() { p.depth -= steps; }
    Parser &p;
    unsigned steps = 0;
  };

  static ExprPtr makeExpr(ExprKind kind, SourceLoc loc) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->loc = loc;
    return e;
  }

  // Statements -------------------------------------------------------------

  // Parses statements until a block tag whose name is in `ends` (left
  // unconsumed, positioned at its name) or the end of the template.
  Body parseBody(const std::set<std::string> &ends) {
    Body body;
    while (true) {
      const Token &t = peek();
      if (t.kind == TokenKind::End) {
        if (!ends.empty())
          fail(t.loc, "unexpected end of template, expected '" +
                          *ends.begin() + "'");
        return body;
      }
      if (t.kind == TokenKind::Data) {
        auto s = std::make_unique<Stmt>();
        s->kind = StmtKind::Text;
        s->loc = t.loc;
        s->text = next().text;
        body.push_back(std::move(s));
        continue;
      }
      if (t.kind == TokenKind::VariableBegin) {
        next();
        auto s = std::make_unique<Stmt>();
        s->kind = StmtKind::Print;
        s->loc = t.loc;
        s->expr = parseTuple(true);
        if (peek().kind != TokenKind::VariableEnd)
          fail(peek().loc, "expected end of print tag '}}', found " +
                               describe(peek()));
        next();
        body.push_back(std::move(s));
        continue;
      }
      // Block tag.
      next();
      if (peek().kind != TokenKind::Name)
        fail(peek().loc, "expected a tag name, found " + describe(peek()));
      if (ends.count(peek().text))
        return body;
      body.push_back(parseStatement());
    }
  }

  StmtPtr parseStatement() {
    const Token &t = peek();
    DepthGuard guard(*this, t.loc);
    auto s = std::make_unique<Stmt>();
    s->loc = t.loc;
    std::string tag = next().text;
    if (tag == "if")
      return parseIf(std::move(s));
    if (tag == "for")
      return parseFor(std::move(s));
    if (tag == "set")
      return parseSet(std::move(s));
    if (tag == "macro")
      return parseMacro(std::move(s));
    if (tag == "break" || tag == "continue") {
      if (loopDepth == 0)
        fail(s->loc, "'" + tag + "' outside of a loop");
      s->kind = tag == "break" ? StmtKind::Break : StmtKind::Continue;
      expectBlockEnd();
      return s;
    }
    if (tag == "generation") {
      // transformers' AssistantTracker extension: renders its body.
      s->kind = StmtKind::Block;
      expectBlockEnd();
      s->body = parseBody({"endgeneration"});
      next();
      expectBlockEnd();
      return s;
    }
    static const std::set<std::string> known = {
        "call",   "filter", "block",   "extends", "include",  "import",
        "from",   "with",   "autoescape", "do",   "trans",    "pluralize",
        "print"};
    if (known.count(tag))
      fail(s->loc, "the '" + tag +
                       "' statement is not supported by the chat template "
                       "interpreter");
    fail(s->loc, "unknown tag '" + tag + "'");
  }

  StmtPtr parseIf(StmtPtr s) {
    s->kind = StmtKind::If;
    while (true) {
      ExprPtr cond = parseTuple(false);
      expectBlockEnd();
      Body body = parseBody({"elif", "else", "endif"});
      s->branches.emplace_back(std::move(cond), std::move(body));
      std::string tag = next().text;
      if (tag == "elif")
        continue;
      if (tag == "else") {
        expectBlockEnd();
        s->elseBody = parseBody({"endif"});
        next();
      }
      expectBlockEnd();
      return s;
    }
  }

  StmtPtr parseFor(StmtPtr s) {
    s->kind = StmtKind::For;
    s->targets = parseAssignTargets(false, &s->attrTarget);
    if (!acceptName("in"))
      fail(peek().loc, "expected 'in' in for loop, found " + describe(peek()));
    s->expr = parseTuple(false, /*stopAtIf=*/true);
    if (acceptName("if"))
      s->cond = parseExpression(true);
    if (isName("recursive"))
      fail(peek().loc, "recursive for loops are not supported");
    expectBlockEnd();
    ++loopDepth;
    s->body = parseBody({"endfor", "else"});
    --loopDepth;
    if (next().text == "else") {
      expectBlockEnd();
      s->elseBody = parseBody({"endfor"});
      next();
    }
    expectBlockEnd();
    return s;
  }

  std::vector<std::string> parseAssignTargets(bool allowNamespace,
                                              bool *isAttr) {
    std::vector<std::string> names;
    bool paren = acceptOp("(");
    SourceLoc loc = peek().loc;
    names.push_back(expectName());
    if (allowNamespace && !paren && acceptOp(".")) {
      names.push_back(expectName());
      *isAttr = true;
      return names;
    }
    while (acceptOp(",")) {
      if (peek().kind != TokenKind::Name)
        break;
      names.push_back(expectName());
    }
    if (paren)
      expectOp(")");
    for (const std::string &n : names)
      if (n == "true" || n == "false" || n == "none" || n == "True" ||
          n == "False" || n == "None" || n == "loop")
        fail(loc, "cannot assign to '" + n + "'");
    return names;
  }

  StmtPtr parseSet(StmtPtr s) {
    s->targets = parseAssignTargets(true, &s->attrTarget);
    if (acceptOp("=")) {
      s->kind = StmtKind::Set;
      s->expr = parseTuple(true);
      expectBlockEnd();
      return s;
    }
    if (s->attrTarget || s->targets.size() != 1)
      fail(s->loc, "a block set assigns exactly one name");
    if (isOp("|"))
      fail(peek().loc, "filters on a block set are not supported");
    s->kind = StmtKind::SetBlock;
    expectBlockEnd();
    s->body = parseBody({"endset"});
    next();
    expectBlockEnd();
    return s;
  }

  StmtPtr parseMacro(StmtPtr s) {
    s->kind = StmtKind::Macro;
    s->text = expectName();
    expectOp("(");
    bool defaults = false;
    while (!isOp(")")) {
      if (!s->params.empty())
        expectOp(",");
      if (isOp(")"))
        break;
      std::string name = expectName();
      ExprPtr def;
      if (acceptOp("=")) {
        def = parseExpression(true);
        defaults = true;
      } else if (defaults) {
        fail(peek().loc, "non-default argument follows default argument");
      }
      s->params.emplace_back(std::move(name), std::move(def));
    }
    next();
    expectBlockEnd();
    macroNames.insert(s->text);
    unsigned savedLoops = loopDepth;
    loopDepth = 0;
    s->body = parseBody({"endmacro"});
    loopDepth = savedLoops;
    next();
    if (peek().kind == TokenKind::Name)
      next(); // {% endmacro name %}
    expectBlockEnd();
    return s;
  }

  // Expressions ------------------------------------------------------------

  // A comma-separated list becomes a tuple ({{ a, b }}).
  ExprPtr parseTuple(bool withCondExpr, bool stopAtIf = false) {
    SourceLoc loc = peek().loc;
    ExprPtr first = parseExpression(withCondExpr && !stopAtIf);
    if (!isOp(","))
      return first;
    auto tuple = makeExpr(ExprKind::Tuple, loc);
    tuple->items.push_back(std::move(first));
    while (acceptOp(",")) {
      if (atExprEnd() || (stopAtIf && isName("if")))
        break;
      tuple->items.push_back(parseExpression(withCondExpr && !stopAtIf));
    }
    return tuple;
  }
  bool atExprEnd() const {
    TokenKind k = peek().kind;
    return k == TokenKind::BlockEnd || k == TokenKind::VariableEnd ||
           k == TokenKind::End || isOp(")") || isOp("]") || isOp("}");
  }

  ExprPtr parseExpression(bool withCondExpr) {
    DepthGuard guard(*this, peek().loc);
    if (!withCondExpr)
      return parseOr();
    ExprPtr expr = parseOr();
    ChainGuard chain(*this);
    while (isName("if")) {
      chain.step(peek().loc);
      SourceLoc loc = next().loc;
      auto cond = makeExpr(ExprKind::CondExpr, loc);
      ExprPtr test = parseOr();
      ExprPtr otherwise;
      if (acceptName("else"))
        otherwise = parseExpression(true);
      cond->items.push_back(std::move(expr));
      cond->items.push_back(std::move(test));
      cond->items.push_back(std::move(otherwise));
      expr = std::move(cond);
    }
    return expr;
  }

  ExprPtr binary(const std::string &op, SourceLoc loc, ExprPtr l, ExprPtr r) {
    auto e = makeExpr(ExprKind::Binary, loc);
    e->name = op;
    e->items.push_back(std::move(l));
    e->items.push_back(std::move(r));
    return e;
  }

  ExprPtr parseOr() {
    ExprPtr left = parseAnd();
    ChainGuard chain(*this);
    while (isName("or")) {
      chain.step(peek().loc);
      SourceLoc loc = next().loc;
      left = binary("or", loc, std::move(left), parseAnd());
    }
    return left;
  }
  ExprPtr parseAnd() {
    ExprPtr left = parseNot();
    ChainGuard chain(*this);
    while (isName("and")) {
      chain.step(peek().loc);
      SourceLoc loc = next().loc;
      left = binary("and", loc, std::move(left), parseNot());
    }
    return left;
  }
  ExprPtr parseNot() {
    if (isName("not")) {
      DepthGuard guard(*this, peek().loc);
      auto e = makeExpr(ExprKind::Unary, next().loc);
      e->name = "not";
      e->items.push_back(parseNot());
      return e;
    }
    return parseCompare();
  }
  ExprPtr parseCompare() {
    SourceLoc loc = peek().loc;
    ExprPtr first = parseMath1();
    ExprPtr cmp;
    ChainGuard chain(*this);
    while (true) {
      chain.step(peek().loc);
      std::string op;
      if (peek().kind == TokenKind::Operator &&
          (peek().text == "==" || peek().text == "!=" || peek().text == "<" ||
           peek().text == "<=" || peek().text == ">" || peek().text == ">="))
        op = next().text;
      else if (acceptName("in"))
        op = "in";
      else if (isName("not") && isName("in", 1)) {
        next();
        next();
        op = "not in";
      } else
        break;
      if (!cmp) {
        cmp = makeExpr(ExprKind::Compare, loc);
        cmp->items.push_back(std::move(first));
      }
      cmp->ops.push_back(op);
      cmp->items.push_back(parseMath1());
    }
    return cmp ? std::move(cmp) : std::move(first);
  }
  ExprPtr parseMath1() {
    ExprPtr left = parseConcat();
    ChainGuard chain(*this);
    while (isOp("+") || isOp("-")) {
      chain.step(peek().loc);
      const Token &t = next();
      left = binary(t.text, t.loc, std::move(left), parseConcat());
    }
    return left;
  }
  ExprPtr parseConcat() {
    ExprPtr left = parseMath2();
    ChainGuard chain(*this);
    while (isOp("~")) {
      chain.step(peek().loc);
      const Token &t = next();
      left = binary("~", t.loc, std::move(left), parseMath2());
    }
    return left;
  }
  ExprPtr parseMath2() {
    ExprPtr left = parsePow();
    ChainGuard chain(*this);
    while (isOp("*") || isOp("/") || isOp("//") || isOp("%")) {
      chain.step(peek().loc);
      const Token &t = next();
      left = binary(t.text, t.loc, std::move(left), parsePow());
    }
    return left;
  }
  ExprPtr parsePow() {
    ExprPtr left = parseUnary(true);
    ChainGuard chain(*this);
    while (isOp("**")) {
      chain.step(peek().loc);
      const Token &t = next();
      left = binary("**", t.loc, std::move(left), parseUnary(true));
    }
    return left;
  }
  ExprPtr parseUnary(bool withFilter) {
    DepthGuard guard(*this, peek().loc);
    ExprPtr node;
    if (isOp("-") || isOp("+")) {
      const Token &t = next();
      node = makeExpr(ExprKind::Unary, t.loc);
      node->name = t.text;
      node->items.push_back(parseUnary(false));
    } else {
      node = parsePrimary();
    }
    node = parsePostfix(std::move(node));
    if (withFilter)
      node = parseFilterExpr(std::move(node));
    return node;
  }

  ExprPtr parsePrimary() {
    const Token &t = peek();
    SourceLoc loc = t.loc;
    switch (t.kind) {
    case TokenKind::Name: {
      std::string name = next().text;
      auto e = makeExpr(ExprKind::Literal, loc);
      if (name == "true" || name == "True")
        e->literal = Value::boolean(true);
      else if (name == "false" || name == "False")
        e->literal = Value::boolean(false);
      else if (name == "none" || name == "None")
        e->literal = Value::none();
      else {
        e->kind = ExprKind::Name;
        e->name = name;
      }
      return e;
    }
    case TokenKind::String: {
      std::string s;
      while (peek().kind == TokenKind::String)
        s += next().text;
      auto e = makeExpr(ExprKind::Literal, loc);
      e->literal = Value::string(std::move(s));
      return e;
    }
    case TokenKind::Integer: {
      std::string text = next().text;
      errno = 0;
      long long v = std::strtoll(text.c_str(), nullptr, 10);
      if (errno == ERANGE)
        fail(loc, "integer literal " + text + " exceeds 64 bits");
      auto e = makeExpr(ExprKind::Literal, loc);
      e->literal = Value::integer(v);
      return e;
    }
    case TokenKind::Float: {
      auto e = makeExpr(ExprKind::Literal, loc);
      e->literal = Value::real(std::strtod(next().text.c_str(), nullptr));
      return e;
    }
    case TokenKind::Operator:
      if (acceptOp("(")) {
        if (acceptOp(")"))
          return makeExpr(ExprKind::Tuple, loc);
        ExprPtr inner = parseExpression(true);
        if (isOp(",")) {
          auto tuple = makeExpr(ExprKind::Tuple, loc);
          tuple->items.push_back(std::move(inner));
          while (acceptOp(",")) {
            if (isOp(")"))
              break;
            tuple->items.push_back(parseExpression(true));
          }
          inner = std::move(tuple);
        }
        expectOp(")");
        return inner;
      }
      if (acceptOp("[")) {
        auto list = makeExpr(ExprKind::List, loc);
        while (!isOp("]")) {
          if (!list->items.empty())
            expectOp(",");
          if (isOp("]"))
            break;
          list->items.push_back(parseExpression(true));
        }
        next();
        return list;
      }
      if (acceptOp("{")) {
        auto dict = makeExpr(ExprKind::Dict, loc);
        while (!isOp("}")) {
          if (!dict->items.empty())
            expectOp(",");
          if (isOp("}"))
            break;
          dict->items.push_back(parseExpression(true));
          expectOp(":");
          dict->items.push_back(parseExpression(true));
        }
        next();
        return dict;
      }
      break;
    default:
      break;
    }
    fail(loc, "unexpected " + describe(t) + " in expression");
  }

  ExprPtr parsePostfix(ExprPtr node) {
    ChainGuard chain(*this);
    while (true) {
      chain.step(peek().loc);
      if (isOp(".") || isOp("["))
        node = parseSubscript(std::move(node));
      else if (isOp("("))
        node = parseCall(std::move(node));
      else
        return node;
    }
  }

  ExprPtr parseFilterExpr(ExprPtr node) {
    ChainGuard chain(*this);
    while (true) {
      chain.step(peek().loc);
      if (isOp("|"))
        node = parseFilter(std::move(node));
      else if (isName("is"))
        node = parseTest(std::move(node));
      else if (isOp("("))
        node = parseCall(std::move(node));
      else
        return node;
    }
  }

  ExprPtr parseSubscript(ExprPtr base) {
    DepthGuard guard(*this, peek().loc);
    const Token &t = next();
    if (t.text == ".") {
      const Token &attr = next();
      if (attr.kind == TokenKind::Name) {
        auto e = makeExpr(ExprKind::Attr, t.loc);
        e->base = std::move(base);
        e->name = attr.text;
        return e;
      }
      if (attr.kind == TokenKind::Integer) {
        auto e = makeExpr(ExprKind::Item, t.loc);
        e->base = std::move(base);
        auto idx = makeExpr(ExprKind::Literal, attr.loc);
        idx->literal = Value::integer(std::strtoll(attr.text.c_str(), nullptr, 10));
        e->items.push_back(std::move(idx));
        return e;
      }
      fail(attr.loc, "expected an attribute name after '.', found " +
                         describe(attr));
    }
    // base[...]: an index, a slice, or a tuple of them (unsupported).
    auto parsePart = [&]() -> ExprPtr {
      if (isOp(":") || isOp("]") || isOp(","))
        return nullptr;
      return parseExpression(true);
    };
    ExprPtr first = parsePart();
    if (isOp(":")) {
      auto slice = makeExpr(ExprKind::Slice, t.loc);
      slice->base = std::move(base);
      slice->items.push_back(std::move(first));
      next();
      slice->items.push_back(parsePart());
      ExprPtr step;
      if (acceptOp(":"))
        step = parsePart();
      slice->items.push_back(std::move(step));
      expectOp("]");
      return slice;
    }
    if (!first)
      fail(peek().loc, "expected an index, found " + describe(peek()));
    if (isOp(","))
      fail(peek().loc, "tuple subscripts are not supported");
    expectOp("]");
    auto e = makeExpr(ExprKind::Item, t.loc);
    e->base = std::move(base);
    e->items.push_back(std::move(first));
    return e;
  }

  void parseArgs(Expr &e) {
    expectOp("(");
    while (!isOp(")")) {
      if (!e.items.empty() || !e.kwargs.empty())
        expectOp(",");
      if (isOp(")"))
        break;
      if (isOp("*") || isOp("**"))
        fail(peek().loc, "*args and **kwargs in calls are not supported");
      if (peek().kind == TokenKind::Name && isOp("=", 1)) {
        std::string key = next().text;
        next();
        e.kwargs.emplace_back(key, parseExpression(true));
      } else {
        if (!e.kwargs.empty())
          fail(peek().loc, "positional argument follows keyword argument");
        e.items.push_back(parseExpression(true));
      }
    }
    next();
  }

  ExprPtr parseCall(ExprPtr callee) {
    DepthGuard guard(*this, peek().loc);
    auto e = makeExpr(ExprKind::Call, peek().loc);
    if (callee->kind == ExprKind::Name) {
      calledNames.emplace_back(callee->name, callee->loc);
    } else if (callee->kind == ExprKind::Attr) {
      if (!isMethodName(callee->name))
        fail(callee->loc, "method '" + callee->name +
                              "' is not supported by the chat template "
                              "interpreter");
    } else {
      fail(callee->loc, "only global functions, macros and methods can be "
                        "called");
    }
    e->base = std::move(callee);
    parseArgs(*e);
    return e;
  }

  ExprPtr parseFilter(ExprPtr base) {
    DepthGuard guard(*this, peek().loc);
    next(); // |
    SourceLoc loc = peek().loc;
    std::string name = expectName();
    while (acceptOp("."))
      name += "." + expectName();
    if (!isFilterName(name))
      fail(loc, "filter '" + name +
                    "' is not supported by the chat template interpreter");
    auto e = makeExpr(ExprKind::Filter, loc);
    e->name = name;
    e->base = std::move(base);
    if (isOp("("))
      parseArgs(*e);
    return e;
  }

  ExprPtr parseTest(ExprPtr base) {
    DepthGuard guard(*this, peek().loc);
    next(); // is
    auto e = makeExpr(ExprKind::Test, peek().loc);
    e->negated = acceptName("not");
    SourceLoc loc = peek().loc;
    std::string name = expectName();
    if (!isTestName(name))
      fail(loc, "test '" + name +
                    "' is not supported by the chat template interpreter");
    e->name = name;
    e->base = std::move(base);
    if (isOp("(")) {
      parseArgs(*e);
    } else {
      TokenKind k = peek().kind;
      bool argStart = k == TokenKind::String || k == TokenKind::Integer ||
                      k == TokenKind::Float || isOp("(") || isOp("[") ||
                      isOp("{") ||
                      (k == TokenKind::Name && !isName("else") &&
                       !isName("or") && !isName("and"));
      if (argStart)
        e->items.push_back(parsePostfix(parsePrimary()));
    }
    return e;
  }

  std::vector<Token> toks;
  size_t pos = 0;
  unsigned depth = 0;
  unsigned loopDepth = 0;
  std::set<std::string> macroNames;
  std::vector<std::pair<std::string, SourceLoc>> calledNames;
};

} // namespace

std::shared_ptr<Template> parseTemplate(std::string_view source) {
  auto tmpl = std::make_shared<Template>();
  tmpl->source = std::string(source);
  Parser parser(lex(source));
  tmpl->body = parser.parseTemplate();
  return tmpl;
}

} // namespace qeff::chat::detail
