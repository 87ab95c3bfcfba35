//===- RandomWalkTest.cpp - constrained output always validates -----------===//
//
// Part of qeff's tests. The property behind response_format: a sequence
// that only ever picks allowed tokens produces text that parses as JSON and
// validates against the schema (checked by an independent validator,
// SchemaValidator.h), equal to what the tokenizer decodes. Each walk picks
// a uniformly random allowed token per step (seeded), stops at mustEnd or,
// once the text may end, on a coin flip; after kWanderSteps it prefers
// closing tokens so every walk ends. 100 seeds per schema on the bundled
// model's tokenizer, fewer on the large vocabularies.
//
//===----------------------------------------------------------------------===//

#include "SchemaValidator.h"
#include "Walks.h"

#include <random>

using namespace qeff;
using Json = nlohmann::ordered_json;

namespace {

const char *kSchemas[] = {
    // A person, with every scalar kind and optional members.
    R"({"type": "object", "properties": {
      "name": {"type": "string", "minLength": 1, "maxLength": 20},
      "age": {"type": "integer", "minimum": 0, "maximum": 150},
      "email": {"type": "string"},
      "score": {"type": "number", "minimum": 0, "maximum": 1},
      "tags": {"type": "array", "items": {"type": "string", "maxLength": 5}, "maxItems": 3},
      "married": {"type": "boolean"},
      "spouse": {"type": ["string", "null"]}},
      "required": ["name", "age", "married"], "additionalProperties": false})",
    // enum, const, anyOf with overlapping alternatives.
    R"({"type": "object", "properties": {
      "kind": {"enum": ["cat", "dog", "caterpillar"]},
      "version": {"const": 2},
      "value": {"anyOf": [{"type": "integer", "minimum": -5, "maximum": 5},
                          {"type": "string", "minLength": 2, "maxLength": 4},
                          {"type": "string", "maxLength": 1},
                          {"type": "null"}]}},
      "required": ["kind", "version", "value"], "additionalProperties": false})",
    // A recursive tree through $defs.
    R"({"$ref": "#/$defs/node", "$defs": {"node": {"type": "object",
      "properties": {"label": {"type": "string", "maxLength": 6},
                     "children": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 2}},
      "required": ["label"], "additionalProperties": false}}})",
    // A root tuple.
    R"({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}],
        "items": {"type": "boolean"}, "minItems": 2, "maxItems": 5})",
    // Other properties with bounded numbers.
    R"({"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"],
        "additionalProperties": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}})",
    // Root scalars.
    R"({"type": "string", "minLength": 3, "maxLength": 10})",
    R"({"type": "number", "minimum": -2.5, "maximum": -0.5})",
    R"({"type": "integer", "exclusiveMinimum": 99, "maximum": 1000})",
    // Disjoint oneOf of an object and an array; legacy definitions.
    R"({"oneOf": [{"$ref": "#/definitions/point"},
                  {"type": "array", "items": {"type": "integer"}, "maxItems": 4}],
        "definitions": {"point": {"type": "object",
          "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
          "required": ["x", "y"], "additionalProperties": false}}})",
    // Non-ASCII literals and short strings.
    "{\"type\": \"object\", \"properties\": {\"w\": {\"enum\": "
    "[\"caf\xC3\xA9\", "
    "\"na\xC3\xAFve\", \"\xE2\x82\xAC\"]}, \"s\": {\"type\": \"string\", "
    "\"maxLength\": 2}}, \"required\": [\"w\", \"s\"]}",
    // Any value.
    "{}",
};

void walkSchemas(const char *vocabName, unsigned seeds) {
  const test::TestVocab &v = test::testVocab(vocabName);
  size_t walks = 0, tokens = 0;
  for (const char *text : kSchemas) {
    Json schema = Json::parse(text);
    std::string error;
    auto c = structured::makeJsonConstraint(v.vocab, &schema, "schema", error);
    ASSERT_TRUE(c) << text << ": " << error;
    for (unsigned seed = 1; seed <= seeds; ++seed) {
      test::Walk walk = test::randomWalk(*c, v, seed);
      if (testing::Test::HasFailure())
        return;
      ASSERT_TRUE(walk.ended);
      ++walks, tokens += walk.ids.size();
      // The matcher's bytes are what the tokenizer decodes.
      ASSERT_EQ(v.tokenizer.decode(walk.ids, true), walk.text)
          << vocabName << " seed " << seed;
      Json value = Json::parse(walk.text, nullptr, /*allow_exceptions=*/false);
      ASSERT_FALSE(value.is_discarded())
          << vocabName << " seed " << seed << ": not JSON: " << walk.text;
      std::string why = test::validateJson(value, schema);
      ASSERT_EQ(why, "") << vocabName << " seed " << seed << " schema " << text
                         << "\n  output: " << walk.text;
    }
  }
  std::printf("[ %s ] %zu walks, %zu tokens\n", vocabName, walks, tokens);
}

// The checker the walks rely on refuses what it must (else every walk
// would pass).
TEST(StructuredRandomWalk, ValidatorRefusesInvalidValues) {
  Json person = Json::parse(kSchemas[0]);
  EXPECT_EQ(test::validateJson(
                Json::parse(R"({"name":"a","age":3,"married":true})"), person),
            "");
  for (const char *bad :
       {R"({"name":"a","age":3})", R"({"name":"","age":3,"married":true})",
        R"({"name":"a","age":151,"married":true})",
        R"({"name":"a","age":3,"married":true,"x":1})",
        R"({"name":"a","age":3.5,"married":true})",
        R"({"name":"a","age":3,"married":true,"score":1.5})",
        R"({"name":"a","age":3,"married":true,"tags":["a","b","c","d"]})",
        R"({"name":"a","age":3,"married":true,"tags":["toolong"]})",
        R"({"name":"a","age":3,"married":true,"spouse":1})"})
    EXPECT_NE(test::validateJson(Json::parse(bad), person), "") << bad;
  Json tree = Json::parse(kSchemas[2]);
  EXPECT_NE(test::validateJson(
                Json::parse(R"({"label":"a","children":[{"label":7}]})"), tree),
            "");
  Json oneOf =
      Json::parse(R"({"oneOf": [{"type": "integer"}, {"type": "number"}]})");
  EXPECT_NE(test::validateJson(Json::parse("5"), oneOf), ""); // both match
  EXPECT_EQ(test::validateJson(Json::parse("5.5"), oneOf), "");
  Json tuple = Json::parse(kSchemas[3]);
  EXPECT_NE(test::validateJson(Json::parse(R"(["a",1,"b"])"), tuple), "");
  EXPECT_NE(test::validateJson(Json::parse(R"([true])"), tuple), "");
}

TEST(StructuredRandomWalk, Stories260KHundredSeeds) {
  walkSchemas("stories260K", 100);
}
TEST(StructuredRandomWalk, Llama2) { walkSchemas("llama2", 10); }
TEST(StructuredRandomWalk, Gpt2) { walkSchemas("gpt2", 10); }
TEST(StructuredRandomWalk, Qwen2) { walkSchemas("qwen2", 5); }

TEST(StructuredRandomWalk, JsonModeIsAnObject) {
  for (const char *name : {"stories260K", "gpt2"}) {
    const test::TestVocab &v = test::testVocab(name);
    std::string error;
    auto c = structured::makeJsonConstraint(v.vocab, nullptr, "", error);
    ASSERT_TRUE(c) << error;
    EXPECT_EQ(c->describe(), "JSON object");
    for (unsigned seed = 1; seed <= 100; ++seed) {
      test::Walk walk = test::randomWalk(*c, v, seed);
      ASSERT_TRUE(walk.ended);
      ASSERT_EQ(v.tokenizer.decode(walk.ids, true), walk.text);
      Json value = Json::parse(walk.text, nullptr, false);
      ASSERT_TRUE(value.is_object())
          << name << " seed " << seed << ": " << walk.text;
    }
  }
}

} // namespace
