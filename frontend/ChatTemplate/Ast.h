//===- Ast.h - Tokens and syntax tree of a chat template --------*- C++ -*-===//
//
// The lexer turns the template source into tokens (text data, tag delimiters,
// and the expression tokens inside tags) with jinja2's whitespace rules
// already applied; the parser builds this tree of statements and expressions.
// The tree is immutable after parse and shared by every render.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_CHATTEMPLATE_AST_H
#define QEFF_FRONTEND_CHATTEMPLATE_AST_H

#include "frontend/ChatTemplate/Value.h"

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace qeff::chat::detail {

enum class TokenKind {
  Data,          // text outside tags
  BlockBegin,    // {%
  BlockEnd,      // %}
  VariableBegin, // {{
  VariableEnd,   // }}
  Name,
  String,
  Integer,
  Float,
  Operator,
  End,
};

struct Token {
  TokenKind kind;
  std::string text; // data, name, decoded string, number text or operator
  SourceLoc loc;
};

/// Tokenizes with trim_blocks, lstrip_blocks and keep_trailing_newline=False.
std::vector<Token> lex(std::string_view source);

enum class ExprKind {
  Literal,  // literal
  Name,     // name
  List,     // items
  Tuple,    // items
  Dict,     // items as key, value, key, value, ...
  Attr,     // base.name
  Item,     // base[items[0]]
  Slice,    // base[items[0]:items[1]:items[2]] (null parts omitted)
  Call,     // base(items, kwargs)
  Filter,   // base | name(items, kwargs); base null inside a filter block
  Test,     // base is [not] name(items)
  Unary,    // op items[0]: "-", "+", "not"
  Binary,   // items[0] op items[1]: + - * / // % ** ~ and or
  Compare,  // items[0] ops[0] items[1] ops[1] items[2] ...
  CondExpr, // items[0] if items[1] else items[2] (items[2] may be null)
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  ExprKind kind;
  SourceLoc loc;
  std::string name; // Name, Attr, Filter, Test; the operator of Unary/Binary
  Value literal;
  ExprPtr base;
  std::vector<ExprPtr> items;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  std::vector<std::string> ops; // Compare
  bool negated = false;         // Test: "is not"
};

enum class StmtKind {
  Text,     // text
  Print,    // {{ expr }}
  If,       // branches
  For,      // {% for targets in expr [if cond] %} body [else elseBody]
  Set,      // {% set targets = expr %} or {% set ns.attr = expr %}
  SetBlock, // {% set name %}body{% endset %}
  Macro,    // {% macro name(params) %}body{% endmacro %}
  Break,
  Continue,
  Block, // {% generation %}body{% endgeneration %}: renders body as is
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct Stmt {
  StmtKind kind;
  SourceLoc loc;
  std::string text;
  ExprPtr expr;                 // Print, For iterable, Set value
  ExprPtr cond;                 // For filter
  std::vector<std::string> targets; // For / Set names; Set attr: {ns, attr}
  bool attrTarget = false;      // Set: targets are namespace and attribute
  std::vector<std::pair<ExprPtr, Body>> branches; // If: cond, body
  Body body, elseBody;
  std::vector<std::pair<std::string, ExprPtr>> params; // Macro (default or null)
};

/// A parsed template.
struct Template {
  std::string source;
  Body body;
};

/// Parses a token stream; unsupported constructs are errors.
std::shared_ptr<Template> parseTemplate(std::string_view source);

/// Maximum nesting of blocks and expressions accepted by the parser.
constexpr unsigned kMaxParseDepth = 256;

} // namespace qeff::chat::detail

#endif // QEFF_FRONTEND_CHATTEMPLATE_AST_H
