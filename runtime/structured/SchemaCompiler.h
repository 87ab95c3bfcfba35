//===- SchemaCompiler.h - JSON schema -> Program ----------------*- C++ -*-===//
//
// Part of qeff. Compiles a JSON schema (or JSON mode: any JSON object) into
// the Program the matcher runs. What is supported, and how, is in
// docs/structured-output.md; every keyword outside it is refused with an
// error naming its path in the request (e.g.
// "response_format.json_schema.schema.properties.age.pattern: not
// supported"), never ignored. Schemas are bounded (kMaxSchemas subschemas,
// kMaxLiterals enum/const values of at most kMaxLiteralBytes bytes in all,
// kMaxSchemaNesting levels of nesting in the schema document) and so is the
// generated JSON (CompileOptions::maxDepth nested containers).
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_STRUCTURED_SCHEMACOMPILER_H
#define QEFF_RUNTIME_STRUCTURED_SCHEMACOMPILER_H

#include "runtime/structured/Program.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <string_view>

namespace qeff::structured {

constexpr size_t kMaxSchemas = 10000;
constexpr size_t kMaxLiterals = 10000;
constexpr size_t kMaxLiteralBytes = 256 << 10;
constexpr int kMaxSchemaNesting = 64;
/// Alternatives of all schemas after $ref/anyOf are flattened.
constexpr size_t kMaxAlternatives = 100000;
/// Nesting of the generated JSON (objects and arrays) by default.
constexpr uint32_t kDefaultMaxDepth = 32;

struct CompileOptions {
  uint32_t maxDepth = kDefaultMaxDepth;
  /// See Program::guardCleanUp; literals holding such a space are refused.
  bool guardCleanUp = false;
  /// The vocabulary spells every byte 0x80-0xFF on its own; when not,
  /// literals must be ASCII (their bytes could be unreachable).
  bool allBytes = true;
};

/// Compiles `schema` (nullptr: JSON mode, any JSON object). `where` names
/// the schema in errors ("response_format.json_schema.schema"; empty:
/// "schema"). Returns nullptr with `error` set when refused.
std::shared_ptr<const Program>
compileJsonSchema(const nlohmann::ordered_json *schema, std::string_view where,
                  const CompileOptions &options, std::string &error);

} // namespace qeff::structured

#endif // QEFF_RUNTIME_STRUCTURED_SCHEMACOMPILER_H
