//===- SchemaCompilerImpl.h - the schema compiler's state -------*- C++ -*-===//
//
// Part of qeff. Internal to QEffStructured: the compiler of SchemaCompiler.h,
// whose keyword handling is in SchemaCompiler.cpp and whose passes over the
// finished table (union flattening, least depths, numeric bounds) are in
// SchemaAnalysis.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_STRUCTURED_SCHEMACOMPILERIMPL_H
#define QEFF_RUNTIME_STRUCTURED_SCHEMACOMPILERIMPL_H

#include "runtime/structured/SchemaCompiler.h"

#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

namespace qeff::structured::detail {

using Json = nlohmann::ordered_json;

enum TypeBit : uint8_t {
  kNull = 1,
  kBoolean = 2,
  kString = 4,
  kInteger = 8,
  kNumber = 16,
  kObject = 32,
  kArray = 64,
};

/// `path` + ".key" (or `["key"]` when the key is not a plain name).
std::string keyPath(const std::string &path, const std::string &key);
std::string indexPath(const std::string &path, size_t i);
/// JSON Schema equality: numbers by value, objects regardless of order.
bool equalJson(const Json &a, const Json &b);
/// Whether `value` has one of the TypeBit `types` (1.0 is an integer).
bool hasType(const Json &value, uint8_t types);

class Compiler {
public:
  Compiler(const Json *root, std::string_view where,
           const CompileOptions &options)
      : root_(root), where_(where), options_(options) {}
  std::shared_ptr<const Program> run(std::string &error);

private:
  struct Pending {
    int32_t id;
    const Json *json;
    std::string path;
  };

  bool fail(const std::string &path, const std::string &message);
  int32_t newSchema(const std::string &path);
  /// A new schema compiled from `s`, or -1.
  int32_t sub(const Json &s, const std::string &path, int nesting);
  bool compile(int32_t id, const Json &s, const std::string &path, int nesting);
  /// The schema a "$ref" names (queued for compilation once), or -1.
  int32_t ref(const Json &value, const std::string &path);
  int32_t anySchema();
  /// Adds `value` to `table` and an alternative of schema `id` reading it.
  template <typename T>
  void addAlt(int32_t id, AltKind kind, std::vector<T> &table, T value) {
    table.push_back(std::move(value));
    p_.schemas[id].alts.push_back({kind, int32_t(table.size() - 1)});
  }
  int32_t literalTrie(const std::vector<std::string> &texts);
  int32_t nullTrie();
  int32_t boolTrie();

  bool readTypes(const Json &s, const std::string &path, uint8_t &types);
  bool readCount(const Json &s, const std::string &path, const char *key,
                 uint32_t &out);
  bool readBounds(const Json &s, const std::string &path, bool integer,
                  NumberSpec &spec);
  /// The compact JSON text of a literal, checked against the tokenizer's
  /// limits and counted toward the schema's.
  bool dumpLiteral(const Json &value, const std::string &path,
                   std::string &out);

  bool compileLiterals(int32_t id, const Json &s, const std::string &path);
  bool compileString(int32_t id, const Json &s, const std::string &path);
  bool compileNumber(int32_t id, const Json &s, const std::string &path,
                     bool integer);
  bool compileObject(int32_t id, const Json &s, const std::string &path,
                     int nesting);
  bool addObject(int32_t id, ObjectShape shape, const std::string &path);
  bool compileArray(int32_t id, const Json &s, const std::string &path,
                    int nesting);

  // SchemaAnalysis.cpp
  bool flattenUnions();
  bool mergeLiterals();
  bool computeDepths();

  const Json *root_;
  std::string where_;
  CompileOptions options_;
  Program p_;
  std::string error_;
  /// Per schema: the schemas whose alternatives it takes ($ref, anyOf...).
  std::vector<std::vector<int32_t>> unions_;
  std::vector<std::string> paths_;
  std::unordered_map<std::string, int32_t> refs_;
  std::deque<Pending> work_;
  int32_t any_ = -1, nullTrie_ = -1, boolTrie_ = -1;
  size_t literalBytes_ = 0, literalCount_ = 0;
};

} // namespace qeff::structured::detail

#endif // QEFF_RUNTIME_STRUCTURED_SCHEMACOMPILERIMPL_H
