//===- SchemaFuzzTest.cpp - random schemas, random outputs ----------------===//
//
// Part of qeff's tests. Random schemas built from the supported keywords
// (nested objects with optional, required and other properties, tuples,
// bounded strings and numbers, enums of every JSON type, anyOf, type
// arrays, recursive $defs) are compiled, then walked byte by byte and token
// by token (stories260K); every output must parse and validate against its
// schema by the independent checker. A schema may only be refused for
// having no value. QEFF_FUZZ_SCHEMAS=N sets the number of schemas (400),
// QEFF_FUZZ_DUMP=file writes the schemas and outputs out.
//
//===----------------------------------------------------------------------===//

#include "SchemaValidator.h"
#include "Walks.h"
#include "runtime/structured/Machine.h"
#include "runtime/structured/SchemaCompiler.h"

#include <cstdlib>
#include <fstream>
#include <random>

using namespace qeff;
using Json = nlohmann::ordered_json;

namespace {

class SchemaGen {
public:
  explicit SchemaGen(unsigned seed) : rng_(seed) {}

  Json root() {
    Json schema = value(0);
    if (pick(3) == 0 || usedRef_) {
      if (!schema.is_object())
        schema = {{"allOf", Json::array({schema})}};
      // A recursive definition: a node with an optional child of its own.
      schema["$defs"] = {
          {"node",
           {{"type", "object"},
            {"properties",
             {{"v", scalar()}, {"child", {{"$ref", "#/$defs/node"}}}}},
            {"required", {"v"}},
            {"additionalProperties", false}}}};
    }
    return schema;
  }

private:
  unsigned pick(unsigned n) { return rng_() % n; }

  Json literal() {
    static const Json pool = Json::parse(
        R"(["a", "bb", "x y", "\u00e9t\u00e9", "", 0, 1, -2.5, 1e3, true, false,
            null, {"k": 1}, [1, "z"], {}])");
    return pool[pick(unsigned(pool.size()))];
  }

  Json scalar() {
    switch (pick(7)) {
    case 0: {
      Json s = {{"type", "string"}};
      if (pick(2)) {
        unsigned lo = pick(4);
        s["minLength"] = lo;
        if (pick(2))
          s["maxLength"] = lo + pick(6);
      } else if (pick(2)) {
        s["maxLength"] = pick(8);
      }
      return s;
    }
    case 1:
    case 2: {
      bool integer = pick(2);
      Json s = {{"type", integer ? "integer" : "number"}};
      auto bound = [&] {
        int whole = int(pick(200)) - 100;
        return integer || pick(2) ? Json(whole) : Json(whole / 8.0);
      };
      if (pick(3)) {
        Json a = bound(), b = bound();
        if (a.get<double>() > b.get<double>())
          std::swap(a, b);
        s[pick(2) ? "minimum" : "exclusiveMinimum"] = a;
        if (pick(3))
          s[pick(2) ? "maximum" : "exclusiveMaximum"] = b;
      }
      return s;
    }
    case 3:
      return {{"type", pick(2) ? "boolean" : "null"}};
    case 4: {
      Json values = Json::array();
      for (unsigned i = 0, n = 1 + pick(4); i < n; ++i)
        values.push_back(literal());
      Json s = {{"enum", values}};
      if (pick(4) == 0)
        s["type"] = Json::array({"string", "number"});
      return s;
    }
    case 5:
      return {{"const", literal()}};
    default:
      return {{"type", pick(2) ? Json::array({"string", "null"})
                               : Json::array({"integer", "boolean"})}};
    }
  }

  Json value(int depth) {
    if (depth >= 3)
      return scalar();
    switch (pick(8)) {
    case 0:
    case 1:
      return object(depth);
    case 2:
      return array(depth);
    case 3: {
      Json alts = Json::array();
      for (unsigned i = 0, n = 2 + pick(2); i < n; ++i)
        alts.push_back(value(depth + 1));
      return {{"anyOf", alts}};
    }
    case 4:
      usedRef_ = true;
      return {{"$ref", "#/$defs/node"}};
    case 5:
      return pick(2) ? Json::object() : Json(true); // any value
    default:
      return scalar();
    }
  }

  Json object(int depth) {
    static const char *kNames[] = {"id",     "name", "a b",    "k\"q",
                                   "\u00e9", "x",    "nested", ""};
    Json props = Json::object();
    Json required = Json::array();
    for (unsigned i = 0, n = pick(5); i < n; ++i) {
      std::string name = kNames[pick(8)];
      if (props.contains(name))
        continue;
      props[name] = value(depth + 1);
      if (pick(2))
        required.push_back(name);
    }
    Json s = {{"type", "object"}};
    if (!props.empty() || pick(2))
      s["properties"] = props;
    switch (pick(4)) {
    case 0:
      s["additionalProperties"] = false;
      break;
    case 1:
      s["additionalProperties"] = true;
      break;
    case 2:
      s["additionalProperties"] = value(depth + 1);
      if (pick(3) == 0)
        required.push_back("undeclared");
      break;
    default:
      break;
    }
    if (!required.empty())
      s["required"] = required;
    return s;
  }

  Json array(int depth) {
    Json s = {{"type", "array"}};
    if (pick(3) == 0) {
      Json prefix = Json::array();
      for (unsigned i = 0, n = 1 + pick(2); i < n; ++i)
        prefix.push_back(value(depth + 1));
      s["prefixItems"] = prefix;
      if (pick(2))
        s["items"] = pick(2) ? Json(false) : value(depth + 1);
    } else if (pick(4)) {
      s["items"] = value(depth + 1);
    }
    if (pick(2)) {
      unsigned lo = pick(3);
      s["minItems"] = lo;
      if (pick(2))
        s["maxItems"] = lo + pick(4);
    }
    return s;
  }

  std::mt19937 rng_;
  bool usedRef_ = false;
};

void checkOutput(const std::string &text, const Json &schema,
                 const std::string &what) {
  // QEFF_FUZZ_DUMP=file appends {"schema", "output"} lines, for checking
  // the outputs with another validator.
  if (const char *dump = std::getenv("QEFF_FUZZ_DUMP")) {
    std::ofstream out(dump, std::ios::app);
    out << Json{{"schema", schema}, {"output", text}}.dump() << "\n";
  }
  Json value = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(value.is_discarded()) << what << ": not JSON: " << text;
  ASSERT_EQ(test::validateJson(value, schema), "")
      << what << "\n  schema: " << schema.dump() << "\n  output: " << text;
}

TEST(StructuredSchemaFuzz, RandomSchemasGiveValidOutput) {
  const test::TestVocab &v = test::testVocab("stories260K");
  size_t compiled = 0, empty = 0, outputs = 0;
  // QEFF_FUZZ_SCHEMAS=N runs more (or fewer) schemas than ctest does.
  const char *count = std::getenv("QEFF_FUZZ_SCHEMAS");
  const unsigned schemas = count ? unsigned(std::atoi(count)) : 400;
  for (unsigned seed = 1; seed <= schemas; ++seed) {
    Json schema = SchemaGen(seed).root();
    std::string error;
    structured::CompileOptions options;
    auto program =
        structured::compileJsonSchema(&schema, "schema", options, error);
    if (!program) {
      // Only "no value" may refuse a schema of supported keywords.
      ASSERT_NE(error.find("no JSON value satisfies"), std::string::npos)
          << schema.dump() << ": " << error;
      ++empty;
      continue;
    }
    ++compiled;
    for (unsigned walk = 1; walk <= 8; ++walk) {
      test::Walk w = test::byteWalk(*program, seed * 100 + walk);
      ASSERT_TRUE(w.ended) << schema.dump();
      EXPECT_TRUE(structured::matchesText(*program, w.text));
      checkOutput(w.text, schema, "bytes, seed " + std::to_string(seed));
      ++outputs;
    }
    auto c = structured::makeJsonConstraint(v.vocab, &schema, "schema", error);
    ASSERT_TRUE(c) << error;
    for (unsigned walk = 1; walk <= 4; ++walk) {
      test::Walk w = test::randomWalk(*c, v, seed * 100 + walk);
      ASSERT_TRUE(w.ended) << schema.dump();
      ASSERT_EQ(v.tokenizer.decode(w.ids, true), w.text);
      checkOutput(w.text, schema, "tokens, seed " + std::to_string(seed));
      ++outputs;
    }
    if (HasFatalFailure())
      return;
  }
  std::printf(
      "[ fuzz ] %zu schemas compiled, %zu without a value, %zu outputs\n",
      compiled, empty, outputs);
  EXPECT_GT(compiled, schemas * 3 / 4);
}

} // namespace
