//===- MatcherTest.cpp - schemas accept and refuse JSON texts -------------===//
//
// Part of qeff's tests. The byte-level matcher of a compiled schema, text by
// text: for each supported keyword, texts it must accept and texts it must
// refuse (the whitespace policy, number and string syntax included).
//
//===----------------------------------------------------------------------===//

#include "runtime/structured/Machine.h"
#include "runtime/structured/SchemaCompiler.h"

#include <gtest/gtest.h>

#include <random>
#include <regex>

using namespace qeff::structured;
using Json = nlohmann::ordered_json;

namespace {

std::shared_ptr<const Program> compile(const std::string &schema,
                                       CompileOptions options = {}) {
  std::string error;
  Json json = Json::parse(schema);
  auto program = compileJsonSchema(&json, "schema", options, error);
  EXPECT_TRUE(program) << schema << ": " << error;
  return program;
}

std::shared_ptr<const Program> jsonMode() {
  std::string error;
  auto program = compileJsonSchema(nullptr, "", CompileOptions{}, error);
  EXPECT_TRUE(program) << error;
  return program;
}

#define EXPECT_ACCEPTS(program, text)                                          \
  EXPECT_TRUE(matchesText(*(program), text)) << "should accept: " << (text)
#define EXPECT_REFUSES(program, text)                                          \
  EXPECT_FALSE(matchesText(*(program), text)) << "should refuse: " << (text)

TEST(StructuredMatcher, JsonModeIsAnyObject) {
  auto p = jsonMode();
  ASSERT_TRUE(p);
  EXPECT_ACCEPTS(p, "{}");
  EXPECT_ACCEPTS(p, R"({"a":1})");
  EXPECT_ACCEPTS(p, R"({"a": [1, {"b": null}], "c": "x", "d": true})");
  EXPECT_ACCEPTS(p, R"({"a":{"b":{"c":[[],{}]}}})");
  EXPECT_ACCEPTS(p, R"({"a":-0.5e-7,"b":1E+05,"c":0})");
  EXPECT_REFUSES(p, "[1]");
  EXPECT_REFUSES(p, R"("text")");
  EXPECT_REFUSES(p, "");
  EXPECT_REFUSES(p, "{");
  EXPECT_REFUSES(p, R"({"a":1,})");
  EXPECT_REFUSES(p, R"({"a":1}x)");
  EXPECT_REFUSES(p, R"({'a':1})");
  EXPECT_REFUSES(p, R"({a:1})");
  EXPECT_REFUSES(p, R"({"a":True})");
}

TEST(StructuredMatcher, WhitespaceIsAtMostOneSpaceAfterColonAndComma) {
  auto p = jsonMode();
  EXPECT_ACCEPTS(p, R"({"a": 1, "b": [1, 2]})");
  EXPECT_ACCEPTS(p, R"({"a":1,"b":[1,2]})");
  EXPECT_REFUSES(p, R"( {"a":1})");
  EXPECT_REFUSES(p, R"({"a":1} )");
  EXPECT_REFUSES(p, R"({ "a":1})");
  EXPECT_REFUSES(p, R"({"a" :1})");
  EXPECT_REFUSES(p, R"({"a":  1})");
  EXPECT_REFUSES(p, R"({"a":1 })");
  EXPECT_REFUSES(p, R"({"a":1 ,"b":2})");
  EXPECT_REFUSES(p, R"({"a":[ 1]})");
  EXPECT_REFUSES(p, "{\n\"a\":1}");
  EXPECT_REFUSES(p, "{\"a\":\t1}");
}

TEST(StructuredMatcher, NumberSyntaxAndDigitBounds) {
  auto p = compile(R"({"type": "number"})");
  for (const char *ok :
       {"0", "-0", "7", "-12", "3.25", "0.5", "1e5", "1E+05", "2.5e-3",
        "-0.0e0", "123456789012345", "12345678901234.5", "1e99"})
    EXPECT_ACCEPTS(p, ok);
  for (const char *bad :
       {"01", "-", "1.", ".5", "+1", "1e", "1e+", "1e100", "1234567890123456",
        "1234567890123.456", "0x10", "NaN", "Infinity", "1.5.2", "--1"})
    EXPECT_REFUSES(p, bad);
  auto i = compile(R"({"type": "integer"})");
  EXPECT_ACCEPTS(i, "-42");
  EXPECT_ACCEPTS(i, "999999999999999");
  EXPECT_REFUSES(i, "1.0");
  EXPECT_REFUSES(i, "1e3");
  EXPECT_REFUSES(i, "1000000000000000");
}

TEST(StructuredMatcher, IntegerBounds) {
  auto p = compile(R"({"type": "integer", "minimum": 3, "maximum": 17})");
  for (const char *ok : {"3", "9", "10", "17"})
    EXPECT_ACCEPTS(p, ok);
  for (const char *bad : {"2", "18", "-3", "0", "100", "170"})
    EXPECT_REFUSES(p, bad);
  auto x = compile(
      R"({"type": "integer", "exclusiveMinimum": -2, "exclusiveMaximum": 2.5})");
  for (const char *ok : {"-1", "0", "2"})
    EXPECT_ACCEPTS(x, ok);
  for (const char *bad : {"-2", "3", "-0.5"})
    EXPECT_REFUSES(x, bad);
  auto d4 = compile(
      R"({"type": "integer", "minimum": 0, "exclusiveMinimum": true, "maximum": 5, "exclusiveMaximum": false})");
  EXPECT_REFUSES(d4, "0");
  EXPECT_ACCEPTS(d4, "1");
  EXPECT_ACCEPTS(d4, "5");
  auto big = compile(R"({"type": "integer", "minimum": 1000000})");
  EXPECT_REFUSES(big, "999999");
  EXPECT_ACCEPTS(big, "1000000");
  EXPECT_ACCEPTS(big, "99999999");
}

TEST(StructuredMatcher, NumberBounds) {
  auto p = compile(R"({"type": "number", "minimum": 0, "maximum": 1})");
  for (const char *ok : {"0", "-0", "0.5", "1", "1.0", "0.999", "0.0001"})
    EXPECT_ACCEPTS(p, ok);
  for (const char *bad : {"1.01", "-0.1", "2", "1e0", "10"})
    EXPECT_REFUSES(p, bad);
  auto x = compile(R"({"type": "number", "exclusiveMaximum": 0.1})");
  EXPECT_ACCEPTS(x, "0.09999");
  EXPECT_ACCEPTS(x, "-5");
  EXPECT_REFUSES(x, "0.1");
  EXPECT_REFUSES(x, "0.10");
  EXPECT_REFUSES(x, "0.2");
  auto neg = compile(R"({"type": "number", "minimum": -5.5, "maximum": -2})");
  for (const char *ok : {"-3", "-5.5", "-2", "-2.0", "-4.25"})
    EXPECT_ACCEPTS(neg, ok);
  for (const char *bad : {"-5.51", "-1", "0", "-6", "3"})
    EXPECT_REFUSES(neg, bad);
}

/// The number grammar and bounds, independently: JSON syntax, the digit
/// budgets of docs/structured-output.md, and the value compared as a double.
bool referenceNumber(const std::string &text, bool integer, double lo,
                     double hi, bool exclusiveLo, bool exclusiveHi,
                     bool bounded) {
  static const std::regex syntax(
      R"(-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?)");
  std::smatch m;
  if (!std::regex_match(text, m, syntax))
    return false;
  size_t digits = m[1].length() + (m[2].length() ? m[2].length() - 1 : 0);
  size_t exponent = m[3].length();
  if (digits > 15)
    return false;
  if (exponent &&
      (integer || bounded ||
       exponent - 1 - (m[3].str()[1] == '+' || m[3].str()[1] == '-') > 2))
    return false;
  if (integer && m[2].length())
    return false;
  if (!bounded)
    return true;
  double v = std::strtod(text.c_str(), nullptr);
  return (exclusiveLo ? v > lo : v >= lo) && (exclusiveHi ? v < hi : v <= hi);
}

TEST(StructuredMatcher, NumbersAgainstAReference) {
  // Every string of up to 4 bytes over the number alphabet, for several
  // kinds of bounds.
  const std::string alphabet = "-0159.e+";
  struct Case {
    const char *schema;
    bool integer, bounded, exLo, exHi;
    double lo, hi;
  };
  const Case cases[] = {
      {R"({"type": "number"})", false, false, false, false, 0, 0},
      {R"({"type": "integer"})", true, false, false, false, 0, 0},
      {R"({"type": "number", "minimum": -1.5, "maximum": 10})", false, true,
       false, false, -1.5, 10},
      {R"({"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1})",
       false, true, true, true, 0, 1},
      {R"({"type": "integer", "minimum": -15, "exclusiveMaximum": 91})", true,
       true, false, true, -15, 91},
      {R"({"type": "number", "minimum": 0.15, "maximum": 0.5})", false, true,
       false, false, 0.15, 0.5},
  };
  for (const Case &c : cases) {
    auto p = compile(c.schema);
    ASSERT_TRUE(p);
    std::vector<std::string> texts{""};
    for (size_t len = 1; len <= 4; ++len) {
      std::vector<std::string> next;
      for (const std::string &t : texts)
        for (char a : alphabet)
          next.push_back(t + a);
      for (const std::string &t : next)
        ASSERT_EQ(matchesText(*p, t),
                  referenceNumber(t, c.integer, c.lo, c.hi, c.exLo, c.exHi,
                                  c.bounded))
            << c.schema << " on '" << t << "'";
      texts = std::move(next);
    }
  }
}

TEST(StructuredMatcher, BoundedNumbersNeverDeadEnd) {
  // Byte-level random walks under random bounds: every state lets some
  // byte through or is complete, and what completes is within the bounds.
  std::mt19937 rng(5);
  for (int trial = 0; trial < 300; ++trial) {
    bool integer = rng() % 2;
    auto decimal = [&] {
      int whole = int(rng() % 2000) - 1000;
      return integer ? double(whole) : whole / 100.0;
    };
    double a = decimal(), b = decimal();
    if (a > b)
      std::swap(a, b);
    bool exLo = rng() % 2, exHi = rng() % 2;
    Json schema = {{"type", integer ? "integer" : "number"},
                   {exLo ? "exclusiveMinimum" : "minimum", a},
                   {exHi ? "exclusiveMaximum" : "maximum", b}};
    std::string error;
    auto p = compileJsonSchema(&schema, "s", CompileOptions{}, error);
    if (!p) { // an empty range
      ASSERT_NE(error.find("no JSON value"), std::string::npos) << error;
      continue;
    }
    for (int walk = 0; walk < 20; ++walk) {
      Machine m(*p);
      Machine::State s = m.start();
      std::string text;
      while (true) {
        std::vector<uint8_t> next;
        for (int byte = 0; byte < 256; ++byte) {
          Machine::Mark mark = m.mark();
          if (!m.advance(s, uint8_t(byte)).dead())
            next.push_back(uint8_t(byte));
          m.rewind(mark);
        }
        if (next.empty() || (s.accepting && rng() % 3 == 0))
          break;
        text += char(next[rng() % next.size()]);
        s = m.advance(s, uint8_t(text.back()));
      }
      ASSERT_TRUE(s.accepting) << schema.dump() << ": dead end at " << text;
      double v = std::strtod(text.c_str(), nullptr);
      ASSERT_TRUE((exLo ? v > a : v >= a) && (exHi ? v < b : v <= b))
          << schema.dump() << ": " << text;
    }
  }
}

TEST(StructuredMatcher, StringsEscapesAndUtf8) {
  auto p = compile(R"({"type": "string"})");
  for (const char *ok :
       {R"("")", R"("plain")", R"("a\"b\\c\/d\b\f\n\r\t")", R"("\u0041\u00e9")",
        R"("\ud83d\ude00")", "\"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\""})
    EXPECT_ACCEPTS(p, ok);
  for (const char *bad :
       {R"("\a")", R"("\u12")", R"("\ud83d")", R"("\ude00")", R"("\ud83dx")",
        R"("\ud83d\u0041")", "\"tab\there\"", "\"nl\nhere\"", "\"\xC3\"",
        "\"\xC0\xAF\"", "\"\xED\xA0\x80\"", "\"\xF5\x80\x80\x80\"", "\"\xFF\"",
        R"("unterminated)", R"(unquoted)"})
    EXPECT_REFUSES(p, bad);
}

TEST(StructuredMatcher, StringLengthsCountCodePoints) {
  auto p = compile(R"({"type": "string", "minLength": 2, "maxLength": 3})");
  EXPECT_REFUSES(p, R"("a")");
  EXPECT_ACCEPTS(p, R"("ab")");
  EXPECT_ACCEPTS(p, R"("abc")");
  EXPECT_REFUSES(p, R"("abcd")");
  EXPECT_ACCEPTS(p, "\"\xC3\xA9\xC3\xA9\xC3\xA9\""); // 3 code points, 6 bytes
  EXPECT_ACCEPTS(p, R"("\u00e9\ud83d\ude00")");      // 2 code points
  EXPECT_REFUSES(p, R"("\n\n\n\n")");
  EXPECT_REFUSES(p, "\"\xF0\x9F\x98\x80\""); // 1 code point
}

TEST(StructuredMatcher, TypesAndTypeArrays) {
  auto b = compile(R"({"type": "boolean"})");
  EXPECT_ACCEPTS(b, "true");
  EXPECT_ACCEPTS(b, "false");
  EXPECT_REFUSES(b, "null");
  EXPECT_REFUSES(b, "tru");
  auto n = compile(R"({"type": "null"})");
  EXPECT_ACCEPTS(n, "null");
  EXPECT_REFUSES(n, "0");
  auto sn = compile(R"({"type": ["string", "null"], "maxLength": 2})");
  EXPECT_ACCEPTS(sn, R"("ab")");
  EXPECT_ACCEPTS(sn, "null");
  EXPECT_REFUSES(sn, R"("abc")");
  EXPECT_REFUSES(sn, "1");
  auto any = compile("{}");
  for (const char *ok : {"1", "null", R"("s")", "[]", "{}", "true"})
    EXPECT_ACCEPTS(any, ok);
  // No type: the types of the keywords present.
  auto inferred = compile(R"({"maxLength": 1})");
  EXPECT_ACCEPTS(inferred, R"("a")");
  EXPECT_REFUSES(inferred, "1");
}

TEST(StructuredMatcher, EnumAndConst) {
  auto e = compile(R"({"enum": ["red", "green", 1, null, {"a": [1]}, 12]})");
  for (const char *ok :
       {R"("red")", R"("green")", "1", "12", "null", R"({"a":[1]})"})
    EXPECT_ACCEPTS(e, ok);
  for (const char *bad :
       {R"("blue")", R"("re")", "2", "123", R"({"a": [1]})", "1.0"})
    EXPECT_REFUSES(e, bad);
  auto typed = compile(R"({"type": "string", "enum": ["a", 1, "b"]})");
  EXPECT_ACCEPTS(typed, R"("a")");
  EXPECT_REFUSES(typed, "1");
  auto c = compile(R"({"const": "fixed"})");
  EXPECT_ACCEPTS(c, R"("fixed")");
  EXPECT_REFUSES(c, R"("fixe")");
  auto both = compile(R"({"enum": [1, 2, 3], "const": 2})");
  EXPECT_ACCEPTS(both, "2");
  EXPECT_REFUSES(both, "1");
}

TEST(StructuredMatcher, PropertiesInOrderWithOptionalOnes) {
  auto p = compile(R"({"type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "string"},
                   "c": {"type": "boolean"}},
    "required": ["a", "c"]})");
  EXPECT_ACCEPTS(p, R"({"a":1,"c":true})");
  EXPECT_ACCEPTS(p, R"({"a":1,"b":"x","c":true})");
  EXPECT_ACCEPTS(p, R"({"a": 1, "b": "x", "c": false})");
  EXPECT_REFUSES(p, R"({"c":true,"a":1})");       // order of `properties`
  EXPECT_REFUSES(p, R"({"a":1})");                // c is required
  EXPECT_REFUSES(p, R"({"a":1,"c":true,"d":1})"); // no other properties
  EXPECT_REFUSES(p, R"({"a":1,"a":2,"c":true})");
  EXPECT_REFUSES(p, R"({"a":"1","c":true})");
  EXPECT_REFUSES(p, "{}");
  auto optional = compile(R"({"type": "object",
    "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}})");
  EXPECT_ACCEPTS(optional, "{}");
  EXPECT_ACCEPTS(optional, R"({"y":2})");
  EXPECT_ACCEPTS(optional, R"({"x":1,"y":2})");
  EXPECT_REFUSES(optional, R"({"y":2,"x":1})");
  EXPECT_REFUSES(optional, R"({"z":1})");
}

TEST(StructuredMatcher, AdditionalProperties) {
  auto schema = compile(R"({"type": "object",
    "properties": {"a": {"type": "string"}},
    "additionalProperties": {"type": "integer"}})");
  EXPECT_ACCEPTS(schema, R"({"a":"x","z":5})");
  EXPECT_ACCEPTS(schema, R"({"z":5,"w":6})");
  EXPECT_ACCEPTS(schema, R"({"ab":5})"); // "a" is a prefix, not the name
  EXPECT_REFUSES(schema, R"({"a":"x","z":"s"})");
  EXPECT_REFUSES(schema, R"({"z":5,"a":"x"})"); // declared ones come first
  EXPECT_REFUSES(schema, R"({"a":"x","a":1})"); // never a declared name
  EXPECT_REFUSES(schema, R"({"\u0061":1})");    // ... however spelled
  auto open = compile(R"({"type": "object",
    "properties": {"a": {"type": "string"}}, "additionalProperties": true})");
  EXPECT_ACCEPTS(open, R"({"a":"x","b":[1,{}]})");
  auto closed = compile(R"({"type": "object",
    "properties": {"a": {"type": "string"}}, "additionalProperties": false})");
  EXPECT_REFUSES(closed, R"({"a":"x","b":1})");
  auto required = compile(R"({"type": "object", "required": ["x"],
    "additionalProperties": {"type": "integer"}})");
  EXPECT_ACCEPTS(required, R"({"x":1})");
  EXPECT_ACCEPTS(required, R"({"x":1,"y":2})");
  EXPECT_REFUSES(required, R"({"x":"s"})");
  EXPECT_REFUSES(required, "{}");
  auto anyObject = compile(R"({"type": "object"})");
  EXPECT_ACCEPTS(anyObject, R"({"k":[1,"v",null]})");
  auto empty = compile(R"({"type": "object", "properties": {}})");
  EXPECT_ACCEPTS(empty, "{}");
  EXPECT_REFUSES(empty, R"({"a":1})");
}

TEST(StructuredMatcher, Arrays) {
  auto p = compile(R"({"type": "array", "items": {"type": "integer"},
                       "minItems": 1, "maxItems": 3})");
  EXPECT_ACCEPTS(p, "[1]");
  EXPECT_ACCEPTS(p, "[1, 2, 3]");
  EXPECT_REFUSES(p, "[]");
  EXPECT_REFUSES(p, "[1,2,3,4]");
  EXPECT_REFUSES(p, R"([1,"2"])");
  EXPECT_REFUSES(p, "[1,]");
  auto tuple = compile(R"({"type": "array",
    "prefixItems": [{"type": "string"}, {"type": "integer"}],
    "items": {"type": "boolean"}})");
  EXPECT_ACCEPTS(tuple, "[]");
  EXPECT_ACCEPTS(tuple, R"(["a"])");
  EXPECT_ACCEPTS(tuple, R"(["a",1,true,false])");
  EXPECT_REFUSES(tuple, R"([1])");
  EXPECT_REFUSES(tuple, R"(["a",1,2])");
  auto closed = compile(R"({"type": "array",
    "prefixItems": [{"type": "null"}], "items": false})");
  EXPECT_ACCEPTS(closed, "[null]");
  EXPECT_REFUSES(closed, "[null,null]");
  auto draft4 = compile(R"({"type": "array",
    "items": [{"type": "integer"}], "additionalItems": {"type": "string"}})");
  EXPECT_ACCEPTS(draft4, R"([1,"a","b"])");
  EXPECT_REFUSES(draft4, R"([1,2])");
  auto any = compile(R"({"type": "array"})");
  EXPECT_ACCEPTS(any, R"([1,"a",[null],{"b":false}])");
}

TEST(StructuredMatcher, AnyOfOneOfAllOf) {
  auto p = compile(R"({"anyOf": [
    {"type": "object", "properties": {"kind": {"const": "a"}, "x": {"type": "integer"}},
     "required": ["kind", "x"], "additionalProperties": false},
    {"type": "object", "properties": {"kind": {"const": "b"}, "y": {"type": "string"}},
     "required": ["kind", "y"], "additionalProperties": false}]})");
  EXPECT_ACCEPTS(p, R"({"kind":"a","x":1})");
  EXPECT_ACCEPTS(p, R"({"kind":"b","y":"s"})");
  EXPECT_REFUSES(p, R"({"kind":"a","y":"s"})");
  EXPECT_REFUSES(p, R"({"kind":"c","x":1})");
  auto one = compile(
      R"({"oneOf": [{"type": "integer"}, {"type": "string"}], "title": "t"})");
  EXPECT_ACCEPTS(one, "5");
  EXPECT_ACCEPTS(one, R"("5")");
  EXPECT_REFUSES(one, "null");
  auto all = compile(R"({"allOf": [{"type": "boolean"}], "description": "d"})");
  EXPECT_ACCEPTS(all, "true");
  EXPECT_REFUSES(all, "1");
  // Overlapping alternatives: both stacks live on, then merge.
  auto overlap = compile(R"({"type": "array", "items": {"anyOf": [
    {"type": "string"}, {"type": "string", "maxLength": 3}]}})");
  EXPECT_ACCEPTS(overlap,
                 R"(["a","bb","cccc","d","e","f","g","h","i","j","k"])");
}

TEST(StructuredMatcher, ManyAlternatives) {
  // 400 consts: merged into one trie, every one reachable.
  Json consts = Json::array();
  for (int i = 0; i < 400; ++i)
    consts.push_back({{"const", "v" + std::to_string(i)}});
  auto p = compile(Json{{"anyOf", consts}}.dump());
  EXPECT_ACCEPTS(p, R"("v0")");
  EXPECT_ACCEPTS(p, R"("v399")");
  EXPECT_REFUSES(p, R"("v400")");
  // 300 string alternatives cannot be merged: past kMaxStacks the later
  // ones are dropped, the output stays valid and never dead-ends.
  Json strings = Json::array();
  for (int i = 0; i < 300; ++i)
    strings.push_back({{"type", "string"}, {"minLength", i}, {"maxLength", i}});
  auto q =
      compile(Json{{"type", "array"}, {"items", {{"anyOf", strings}}}}.dump());
  EXPECT_ACCEPTS(q, R"(["","ab"])");
  EXPECT_REFUSES(q, "[\"" + std::string(299, 'x') + "\"]"); // dropped
  Machine m(*q);
  Machine::State s = m.start();
  for (char c : std::string(R"(["abc",)"))
    s = m.advance(s, uint8_t(c));
  EXPECT_EQ(s.size(), kMaxStacks); // the optional space, 255 strings
}

TEST(StructuredMatcher, RefsAndRecursion) {
  auto tree = compile(R"({"$ref": "#/$defs/node", "$defs": {"node": {
    "type": "object",
    "properties": {"value": {"type": "integer"},
                   "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
    "required": ["value", "children"], "additionalProperties": false}}})");
  EXPECT_ACCEPTS(tree, R"({"value":1,"children":[]})");
  EXPECT_ACCEPTS(
      tree,
      R"({"value":1,"children":[{"value":2,"children":[{"value":3,"children":[]}]}]})");
  EXPECT_REFUSES(tree, R"({"value":1})");
  auto legacy = compile(R"({"definitions": {"n": {"type": "integer"}},
    "type": "object", "properties": {"x": {"$ref": "#/definitions/n"}}})");
  EXPECT_ACCEPTS(legacy, R"({"x":3})");
  EXPECT_REFUSES(legacy, R"({"x":"3"})");
  auto self = compile(R"({"type": "object",
    "properties": {"next": {"$ref": "#"}}, "additionalProperties": false})");
  std::string nested = "{}";
  for (int i = 1; i < 32; ++i)
    nested = R"({"next":)" + nested + "}";
  EXPECT_ACCEPTS(self, nested);                       // 32 levels
  EXPECT_REFUSES(self, R"({"next":)" + nested + "}"); // 33
}

TEST(StructuredMatcher, NestingIsBounded) {
  auto p = jsonMode();
  auto nest = [](int depth) {
    std::string s = R"({"a":)";
    for (int i = 1; i < depth; ++i)
      s += "[";
    s += "1";
    for (int i = 1; i < depth; ++i)
      s += "]";
    return s + "}";
  };
  EXPECT_ACCEPTS(p, nest(kDefaultMaxDepth));
  EXPECT_REFUSES(p, nest(kDefaultMaxDepth + 1));
}

TEST(StructuredMatcher, CleanUpGuard) {
  CompileOptions guarded;
  guarded.guardCleanUp = true;
  auto p = compile(R"({"type": "string"})", guarded);
  EXPECT_ACCEPTS(p, R"("a, b. c! don't")");
  EXPECT_REFUSES(p, R"("a , b")");
  EXPECT_REFUSES(p, R"("end .")");
  EXPECT_REFUSES(p, R"("I can n't")");
  EXPECT_REFUSES(p, R"("it 's")");
  EXPECT_ACCEPTS(p, R"("a \u002c b")"); // an escape is not a raw comma
  auto plain = compile(R"({"type": "string"})");
  EXPECT_ACCEPTS(plain, R"("a , b")");
}

} // namespace
