//===- SchemaValidator.h - a JSON Schema checker for the tests --*- C++ -*-===//
//
// Part of qeff's tests. Checks a JSON value against a schema, written from
// the JSON Schema specification (2020-12, plus draft-4 tuple items and
// boolean exclusive bounds) independently of QEffStructured's compiler, so
// that the structured-output tests do not check the compiler against
// itself. Covers the keywords the compiler supports; any other keyword is
// reported as an error, so a test cannot pass by accident.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_TEST_UNIT_STRUCTURED_SCHEMAVALIDATOR_H
#define QEFF_TEST_UNIT_STRUCTURED_SCHEMAVALIDATOR_H

#include <nlohmann/json.hpp>

#include <string>

namespace qeff::test {

/// Empty when `value` satisfies `schema` (references resolve against
/// `schema`), else why not.
std::string validateJson(const nlohmann::ordered_json &value,
                         const nlohmann::ordered_json &schema);

} // namespace qeff::test

#endif // QEFF_TEST_UNIT_STRUCTURED_SCHEMAVALIDATOR_H
