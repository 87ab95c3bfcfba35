//===- SchemaErrorsTest.cpp - refused and hostile schemas -----------------===//
//
// Part of qeff's tests. Every unsupported keyword is refused with an error
// naming its path in the request; hostile schemas (deep nesting, huge
// enums, reference cycles that read nothing, recursion with no finite
// value) are refused quickly with a clear error.
//
//===----------------------------------------------------------------------===//

#include "runtime/structured/SchemaCompiler.h"

#include <gtest/gtest.h>

#include <chrono>

using namespace qeff::structured;
using Json = nlohmann::ordered_json;

namespace {

const char *kWhere = "response_format.json_schema.schema";

std::string errorOf(const Json &schema) {
  std::string error;
  auto program = compileJsonSchema(&schema, kWhere, CompileOptions{}, error);
  EXPECT_FALSE(program) << schema.dump() << " compiled";
  EXPECT_FALSE(error.empty());
  return error;
}

std::string errorOf(const char *text) { return errorOf(Json::parse(text)); }

TEST(StructuredSchemaErrors, UnsupportedKeywordsNameTheirPath) {
  EXPECT_EQ(
      errorOf(
          R"({"type": "object", "properties": {"age": {"type": "string", "pattern": "^[0-9]+$"}}})"),
      "response_format.json_schema.schema.properties.age.pattern: not "
      "supported (regular expressions are not implemented)");
  EXPECT_EQ(errorOf(R"({"type": "string", "format": "date-time"})"),
            "response_format.json_schema.schema.format: not supported "
            "(string formats are not enforced, so they are refused rather "
            "than ignored)");
  EXPECT_EQ(
      errorOf(
          R"({"type": "array", "items": [{"type": "integer", "multipleOf": 2}]})"),
      "response_format.json_schema.schema.items[0].multipleOf: not "
      "supported");
  EXPECT_EQ(errorOf(R"({"properties": {"a b": {"not": {}}}})"),
            "response_format.json_schema.schema.properties[\"a b\"].not: not "
            "supported (no negation or conditionals)");
  EXPECT_EQ(errorOf(R"({"type": "object", "x-custom": 1})"),
            "response_format.json_schema.schema.x-custom: not supported");
  for (const char *keyword :
       {"patternProperties", "propertyNames", "minProperties", "maxProperties",
        "dependentRequired", "dependentSchemas", "unevaluatedProperties",
        "contains", "if", "nullable", "$anchor", "$dynamicRef"}) {
    Json schema = {{"type", "object"}, {keyword, Json::object()}};
    EXPECT_EQ(
        errorOf(schema).rfind(std::string(kWhere) + "." + keyword + ": ", 0),
        0u)
        << keyword;
  }
}

TEST(StructuredSchemaErrors, MisusedKeywords) {
  EXPECT_EQ(errorOf(R"({"allOf": [{"type": "string"}, {"maxLength": 3}]})"),
            std::string(kWhere) +
                ".allOf: allOf with 2 schemas is not supported (only one)");
  EXPECT_EQ(errorOf(R"({"type": "object", "anyOf": [{"required": ["a"]}]})"),
            std::string(kWhere) + ".type: not supported next to anyOf");
  EXPECT_EQ(
      errorOf(R"({"$ref": "#/$defs/a", "maxLength": 2, "$defs": {"a": {}}})"),
      std::string(kWhere) + ".maxLength: not supported next to $ref");
  EXPECT_EQ(errorOf(R"({"enum": ["a"], "maxLength": 2})"),
            std::string(kWhere) + ".maxLength: not supported next to enum");
  EXPECT_EQ(errorOf(R"({"type": "string", "minimum": 1})"),
            std::string(kWhere) +
                ".minimum: does not apply to the schema's type");
  EXPECT_EQ(errorOf(R"({"type": "array", "uniqueItems": true})"),
            std::string(kWhere) + ".uniqueItems: true is not supported");
  EXPECT_EQ(errorOf(R"({"type": "stringy"})"),
            std::string(kWhere) +
                ".type: expected one of null, boolean, string, integer, "
                "number, object, array");
  EXPECT_EQ(errorOf(R"({"type": "string", "minLength": -1})"),
            std::string(kWhere) +
                ".minLength: expected a non-negative integer");
  EXPECT_EQ(errorOf(R"({"type": "integer", "minimum": "3"})"),
            std::string(kWhere) + ".minimum: expected a finite number");
  EXPECT_EQ(errorOf(R"({"type": "object", "required": "a"})"),
            std::string(kWhere) +
                ".required: expected an array of property names");
  EXPECT_EQ(errorOf(R"({"type": "array", "additionalItems": false})"),
            std::string(kWhere) +
                ".additionalItems: has no effect without an array of items: "
                "refused");
  EXPECT_EQ(errorOf(R"({"properties": {"a": {"$id": "x"}}})"),
            std::string(kWhere) +
                ".properties.a.$id: not supported below the root (references "
                "resolve against the root only)");
  EXPECT_EQ(errorOf(R"([1, 2])"),
            std::string(kWhere) +
                ": expected a schema (an object or a boolean)");
  EXPECT_EQ(errorOf(R"({"type": "integer", "exclusiveMinimum": true})"),
            std::string(kWhere) +
                ".exclusiveMinimum: true needs the bound it makes exclusive");
}

TEST(StructuredSchemaErrors, References) {
  EXPECT_EQ(errorOf(R"({"$ref": "#/$defs/missing"})"),
            std::string(kWhere) +
                ".$ref: '#/$defs/missing' does not resolve inside the schema");
  EXPECT_EQ(errorOf(R"({"$ref": "https://example.com/schema.json"})"),
            std::string(kWhere) +
                ".$ref: 'https://example.com/schema.json': only references "
                "inside the schema (#/...) are supported");
  // Cycles that never read a byte.
  EXPECT_NE(errorOf(R"({"$ref": "#/$defs/a", "$defs": {
                         "a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}})")
                .find("cycle that reads nothing"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"$ref": "#"})").find("cycle that reads nothing"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"$ref": "#/$defs/a", "$defs": {
                         "a": {"anyOf": [{"$ref": "#/$defs/a"}, {"type": "null"}]}}})")
                .find(std::string(kWhere) + ".$defs.a: $ref/anyOf cycle"),
            std::string::npos);
}

TEST(StructuredSchemaErrors, SchemasWithNoValue) {
  const std::string none =
      std::string(kWhere) +
      ": no JSON value satisfies the schema within the supported bounds";
  for (
      const char *schema : {
          "false",
          R"({"enum": []})",
          R"({"type": "string", "minLength": 5, "maxLength": 4})",
          R"({"type": "integer", "minimum": 5, "maximum": 4})",
          R"({"type": "integer", "minimum": 0.2, "maximum": 0.8})",
          R"({"type": "integer", "minimum": 1e20})",
          R"({"type": "array", "minItems": 3, "maxItems": 2})",
          R"({"type": "array", "prefixItems": [{}], "items": false, "minItems": 2})",
          R"({"type": "object", "required": ["a"], "additionalProperties": false})",
          R"({"type": "integer", "enum": ["a", 1.5]})",
          // Recursion with no finite value.
          R"({"type": "object", "properties": {"x": {"$ref": "#"}}, "required": ["x"]})",
          R"({"type": "array", "items": {"$ref": "#"}, "minItems": 1})",
      })
    EXPECT_EQ(errorOf(schema).rfind(none, 0), 0u) << schema;
}

TEST(StructuredSchemaErrors, HostileSchemasAreBounded) {
  auto start = std::chrono::steady_clock::now();
  // Required nesting deeper than the generated-JSON bound.
  Json deep = {{"type", "integer"}};
  for (int i = 0; i < 40; ++i)
    deep = {
        {"type", "object"}, {"properties", {{"x", deep}}}, {"required", {"x"}}};
  EXPECT_NE(errorOf(deep).find("at most 32 nested objects and arrays"),
            std::string::npos);
  // A schema document nested beyond the compiler's bound.
  Json nested = Json::object();
  for (int i = 0; i < 1000; ++i)
    nested = {{"type", "array"}, {"items", nested}};
  EXPECT_NE(errorOf(nested).find("schema nested deeper than 64 levels"),
            std::string::npos);
  // A huge enum.
  Json bigEnum = Json::array();
  for (int i = 0; i < 20000; ++i)
    bigEnum.push_back("value" + std::to_string(i));
  EXPECT_NE(errorOf(Json{{"enum", bigEnum}}).find("too many enum/const values"),
            std::string::npos);
  // Too many subschemas.
  Json props = Json::object();
  for (int i = 0; i < 20000; ++i)
    props["p" + std::to_string(i)] = {{"type", "integer"}};
  EXPECT_NE(errorOf(Json{{"type", "object"}, {"properties", props}})
                .find("schema too large: more than 10000 subschemas"),
            std::string::npos);
  // A long $ref chain (a work list, no C++ recursion) ending in a cycle.
  Json defs = Json::object();
  for (int i = 0; i < 5000; ++i)
    defs["d" + std::to_string(i)] = {
        {"$ref", "#/$defs/d" + std::to_string((i + 1) % 5000)}};
  EXPECT_NE(errorOf(Json{{"$ref", "#/$defs/d0"}, {"$defs", defs}})
                .find("cycle that reads nothing"),
            std::string::npos);
  // Anyof fan-out: alternatives are bounded after expansion.
  Json fan = Json::object();
  Json alts = Json::array();
  for (int i = 0; i < 50; ++i)
    alts.push_back({{"enum", {i}}});
  Json layers = Json::object();
  for (int l = 0; l < 60; ++l)
    layers["l" + std::to_string(l)] = {
        {"anyOf",
         l ? Json::array({{{"$ref", "#/$defs/l" + std::to_string(l - 1)}},
                          {{"enum", {l}}}})
           : alts}};
  std::string error;
  Json fanSchema = {{"$ref", "#/$defs/l59"}, {"$defs", layers}};
  auto program = compileJsonSchema(&fanSchema, kWhere, CompileOptions{}, error);
  EXPECT_TRUE(program) << error; // 60 * ~80 alternatives: within bounds
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_LT(seconds, 10.0);
}

TEST(StructuredSchemaErrors, RealWorldSchemasCompile) {
  // A pydantic v2 model with Optional, nested model, enum and list.
  const char *pydantic = R"({
    "$defs": {
      "Color": {"enum": ["red", "green"], "title": "Color", "type": "string"},
      "Pet": {"properties": {"name": {"title": "Name", "type": "string"}},
              "required": ["name"], "title": "Pet", "type": "object"}},
    "properties": {
      "name": {"title": "Name", "type": "string"},
      "age": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null, "title": "Age"},
      "color": {"$ref": "#/$defs/Color"},
      "pets": {"items": {"$ref": "#/$defs/Pet"}, "title": "Pets", "type": "array"}},
    "required": ["name", "color", "pets"],
    "title": "Person", "type": "object"})";
  std::string error;
  Json schema = Json::parse(pydantic);
  EXPECT_TRUE(compileJsonSchema(&schema, kWhere, CompileOptions{}, error))
      << error;
  // OpenAI strict-mode style.
  const char *strict = R"({"type": "object", "additionalProperties": false,
    "properties": {"steps": {"type": "array", "items": {"type": "object",
      "properties": {"explanation": {"type": "string"}, "output": {"type": "string"}},
      "required": ["explanation", "output"], "additionalProperties": false}},
      "final_answer": {"type": "string"}},
    "required": ["steps", "final_answer"]})";
  schema = Json::parse(strict);
  EXPECT_TRUE(compileJsonSchema(&schema, kWhere, CompileOptions{}, error))
      << error;
}

TEST(StructuredSchemaErrors, TokenizerLimitsOnLiterals) {
  CompileOptions guarded;
  guarded.guardCleanUp = true;
  Json schema = Json::parse(R"({"enum": ["fine", "not , fine"]})");
  std::string error;
  EXPECT_FALSE(compileJsonSchema(&schema, kWhere, guarded, error));
  EXPECT_EQ(error.rfind(std::string(kWhere) + ".enum: holds a space before", 0),
            0u)
      << error;
  CompileOptions asciiOnly;
  asciiOnly.allBytes = false;
  schema = Json::parse("{\"const\": \"caf\xC3\xA9\"}");
  EXPECT_FALSE(compileJsonSchema(&schema, kWhere, asciiOnly, error));
  EXPECT_NE(error.find("non-ASCII"), std::string::npos) << error;
}

} // namespace
