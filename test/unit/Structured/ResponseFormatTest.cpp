//===- ResponseFormatTest.cpp - OpenAI's response_format object -----------===//
//
// Part of qeff's tests. makeResponseFormatConstraint: text, json_object and
// json_schema, with every malformed or unsupported field refused by name.
//
//===----------------------------------------------------------------------===//

#include "TestTokenizers.h"

using namespace qeff;
using Json = nlohmann::ordered_json;

namespace {

std::shared_ptr<const runtime::TokenConstraint> make(const char *format,
                                                     std::string &error) {
  const test::TestVocab &v = test::testVocab("stories260K");
  return structured::makeResponseFormatConstraint(v.vocab, Json::parse(format),
                                                  "response_format", error);
}

TEST(StructuredResponseFormat, Kinds) {
  std::string error = "stale";
  EXPECT_FALSE(make(R"({"type": "text"})", error));
  EXPECT_EQ(error, "");
  auto object = make(R"({"type": "json_object"})", error);
  ASSERT_TRUE(object) << error;
  EXPECT_EQ(object->describe(), "JSON object");
  auto schema = make(R"({"type": "json_schema", "json_schema": {
      "name": "person_v1", "strict": true, "description": "a person",
      "schema": {"type": "object", "properties": {"name": {"type": "string"}},
                 "required": ["name"], "additionalProperties": false}}})",
                     error);
  ASSERT_TRUE(schema) << error;
  EXPECT_EQ(schema->describe(), "JSON schema");
  EXPECT_TRUE(make(R"({"type": "json_schema", "json_schema": {"name": "x",
      "strict": null, "schema": {"type": "integer"}}})",
                   error))
      << error;
}

TEST(StructuredResponseFormat, RefusalsNameTheField) {
  const std::pair<const char *, const char *> cases[] = {
      {R"("json")", "response_format: expected an object"},
      {R"({})", "response_format.type: expected \"text\", \"json_object\" or "
                "\"json_schema\""},
      {R"({"type": "xml"})",
       "response_format.type: 'xml' is not one of text, json_object, "
       "json_schema"},
      {R"({"type": "json_object", "schema": {}})",
       "response_format.schema: not supported"},
      {R"({"type": "json_schema"})",
       "response_format.json_schema: expected an object with name and schema"},
      {R"({"type": "json_schema", "json_schema": {"schema": {}}})",
       "response_format.json_schema.name: expected a string"},
      {R"({"type": "json_schema", "json_schema": {"name": "a b", "schema": {}}})",
       "response_format.json_schema.name: expected 1 to 64 letters, digits, "
       "'_' or '-'"},
      {R"({"type": "json_schema", "json_schema": {"name": "a", "strict": "yes", "schema": {}}})",
       "response_format.json_schema.strict: expected a boolean"},
      {R"({"type": "json_schema", "json_schema": {"name": "a"}})",
       "response_format.json_schema.schema: is required"},
      {R"({"type": "json_schema", "json_schema": {"name": "a", "schema": {}, "extra": 1}})",
       "response_format.json_schema.extra: not supported"},
      {R"({"type": "json_schema", "json_schema": {"name": "a", "schema":
           {"type": "object", "properties": {"age": {"type": "string", "format": "email"}}}}})",
       "response_format.json_schema.schema.properties.age.format: not "
       "supported (string formats are not enforced, so they are refused "
       "rather than ignored)"},
  };
  for (const auto &[format, expected] : cases) {
    std::string error;
    EXPECT_FALSE(make(format, error)) << format;
    EXPECT_EQ(error, expected) << format;
  }
}

} // namespace
