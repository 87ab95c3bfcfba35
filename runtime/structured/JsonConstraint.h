//===- JsonConstraint.h - JSON output by constrained decoding ---*- C++ -*-===//
//
// Part of qeff. The TokenConstraint behind OpenAI's response_format: JSON
// mode ({"type": "json_object"}: one JSON object) and JSON schema
// ({"type": "json_schema", "json_schema": {"schema": ...}}). The schema is
// compiled into a byte-level pushdown matcher (SchemaCompiler.h,
// Machine.h); at each step a token is allowed iff the matcher can read all
// of its bytes (Tokenizer::tokenBytes) from its state. What is supported,
// the whitespace and number bounds, and what is refused are in
// docs/structured-output.md.
//
// Usage (the vocabulary once per tokenizer, a constraint per request, a
// matcher per sequence through TokenConstraint::start()):
//
//   std::string error;
//   auto vocab = qeff::structured::makeVocabulary(tokenizer, error);
//   auto constraint = qeff::structured::makeResponseFormatConstraint(
//       vocab, request["response_format"], "response_format", error);
//   if (!constraint && !error.empty())
//     return badRequest(error); // names the field, down to the schema path
//
// The bytes a token adds are those of decode(generatedIds,
// /*skipSpecialTokens=*/true): the first generated token as the start of
// the text (SentencePiece's leading space stripped). Special tokens are
// never allowed.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_STRUCTURED_JSONCONSTRAINT_H
#define QEFF_RUNTIME_STRUCTURED_JSONCONSTRAINT_H

#include "runtime/generation/TokenConstraint.h"
#include "runtime/structured/Vocabulary.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <string_view>

namespace qeff::tokenizer {
class Tokenizer;
} // namespace qeff::tokenizer

namespace qeff::structured {

/// The token bytes of `tokenizer`, for every constraint on it (immutable,
/// thread-safe; build once, it takes ~10 ms for 32k tokens, ~150 ms for
/// 150k). nullptr with `error` set when the vocabulary cannot spell JSON
/// (a printable ASCII character with no token of its own).
std::shared_ptr<const Vocabulary>
makeVocabulary(const tokenizer::Tokenizer &tokenizer, std::string &error);

/// A constraint to one JSON value of `schema` (an OpenAI json_schema's
/// "schema", kept in its key order: properties are generated in that
/// order), or with `schema` == nullptr to one JSON object (JSON mode).
/// `where` prefixes error paths ("response_format.json_schema.schema").
/// nullptr with `error` = "<where>.<path>: <reason>" when the schema uses
/// something unsupported, exceeds a limit, or admits no value.
std::shared_ptr<const runtime::TokenConstraint>
makeJsonConstraint(std::shared_ptr<const Vocabulary> vocabulary,
                   const nlohmann::ordered_json *schema, std::string_view where,
                   std::string &error);

/// OpenAI's `response_format` object, checked and turned into a constraint:
///   {"type": "text"}                 -> nullptr, `error` empty (no constraint)
///   {"type": "json_object"}          -> JSON mode
///   {"type": "json_schema", "json_schema": {"name": ..., "schema": {...},
///    "strict": ..., "description": ...}} -> the schema
/// `name` (required, 1-64 of a-z A-Z 0-9 _ -) and `description` only name
/// the format; `strict` may be true, false or null: the output follows the
/// schema exactly either way. Any other field is refused. nullptr with
/// `error` = "<where>.<field>: <reason>" when refused (`where`: the field's
/// name in the request, "response_format").
std::shared_ptr<const runtime::TokenConstraint>
makeResponseFormatConstraint(std::shared_ptr<const Vocabulary> vocabulary,
                             const nlohmann::ordered_json &responseFormat,
                             std::string_view where, std::string &error);

} // namespace qeff::structured

#endif // QEFF_RUNTIME_STRUCTURED_JSONCONSTRAINT_H
