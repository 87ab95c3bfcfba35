//===- SchemaCompiler.cpp - JSON schema -> Program ------------------------===//
//
// Part of qeff. See SchemaCompiler.h. Subschemas are compiled into numbered
// schemas; $ref targets go through a work list (so a chain of references
// costs no C++ stack) and are compiled once; unions are flattened and the
// least nesting depth of every schema is computed afterwards
// (SchemaAnalysis.cpp).
//
//===----------------------------------------------------------------------===//

#include "runtime/structured/Lexemes.h"
#include "runtime/structured/SchemaCompilerImpl.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

namespace qeff::structured {
namespace detail {
namespace {

/// Keywords that never change what validates.
const std::set<std::string> kAnnotations = {
    "title",    "description", "default",     "examples",
    "$comment", "deprecated",  "readOnly",    "writeOnly",
    "$schema",  "$defs",       "definitions", "$id"};

const std::set<std::string> kStringKeys = {"minLength", "maxLength"};
const std::set<std::string> kNumberKeys = {
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"};
const std::set<std::string> kObjectKeys = {"properties", "required",
                                           "additionalProperties"};
const std::set<std::string> kArrayKeys = {"items",           "prefixItems",
                                          "additionalItems", "minItems",
                                          "maxItems",        "uniqueItems"};
const std::set<std::string> kCombinators = {"$ref",  "anyOf", "oneOf",
                                            "allOf", "enum",  "const"};

/// Why a known keyword is refused, beyond "not supported".
std::string refusal(const std::string &key) {
  if (key == "pattern" || key == "patternProperties")
    return "not supported (regular expressions are not implemented)";
  if (key == "format")
    return "not supported (string formats are not enforced, so they are "
           "refused rather than ignored)";
  if (key == "not" || key == "if" || key == "then" || key == "else")
    return "not supported (no negation or conditionals)";
  return "not supported";
}

} // namespace

std::string keyPath(const std::string &path, const std::string &key) {
  bool plain = !key.empty();
  for (char c : key)
    plain =
        plain && (std::isalnum(uint8_t(c)) || c == '_' || c == '$' || c == '-');
  if (plain)
    return path + "." + key;
  return path + "[" +
         Json(key).dump(-1, ' ', false, Json::error_handler_t::replace) + "]";
}

std::string indexPath(const std::string &path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

bool Compiler::fail(const std::string &path, const std::string &message) {
  if (error_.empty())
    error_ = path + ": " + message;
  return false;
}

int32_t Compiler::newSchema(const std::string &path) {
  if (p_.schemas.size() >= kMaxSchemas) {
    fail(path, "schema too large: more than " + std::to_string(kMaxSchemas) +
                   " subschemas");
    return -1;
  }
  p_.schemas.emplace_back();
  unions_.emplace_back();
  paths_.push_back(path);
  return int32_t(p_.schemas.size() - 1);
}

int32_t Compiler::sub(const Json &s, const std::string &path, int nesting) {
  int32_t id = newSchema(path);
  if (id < 0 || !compile(id, s, path, nesting))
    return -1;
  return id;
}

int32_t Compiler::literalTrie(const std::vector<std::string> &texts) {
  Trie trie;
  for (size_t i = 0; i < texts.size(); ++i)
    trie.insert(texts[i], int32_t(i));
  p_.tries.push_back(std::move(trie));
  return int32_t(p_.tries.size() - 1);
}

int32_t Compiler::nullTrie() {
  if (nullTrie_ < 0)
    nullTrie_ = literalTrie({"null"});
  return nullTrie_;
}

int32_t Compiler::boolTrie() {
  if (boolTrie_ < 0)
    boolTrie_ = literalTrie({"true", "false"});
  return boolTrie_;
}

int32_t Compiler::anySchema() {
  if (any_ >= 0)
    return any_;
  any_ = newSchema(where_);
  if (any_ < 0)
    return -1;
  int32_t null = nullTrie(), boolean = boolTrie();
  p_.schemas[any_].alts.push_back({AltKind::Literal, null});
  p_.schemas[any_].alts.push_back({AltKind::Literal, boolean});
  addAlt(any_, AltKind::String, p_.strings, StringSpec{});
  addAlt(any_, AltKind::Number, p_.numbers, NumberSpec{});
  ObjectShape object;
  object.additional = any_;
  object.nextRequired = {0};
  p_.strings.push_back(StringSpec{});
  object.additionalKey = int32_t(p_.strings.size() - 1);
  addAlt(any_, AltKind::Object, p_.objects, std::move(object));
  ArrayShape array;
  array.items = any_;
  addAlt(any_, AltKind::Array, p_.arrays, std::move(array));
  return any_;
}

int32_t Compiler::ref(const Json &value, const std::string &path) {
  if (!value.is_string()) {
    fail(path, "expected a string");
    return -1;
  }
  const std::string pointer = value.get<std::string>();
  if (auto it = refs_.find(pointer); it != refs_.end())
    return it->second;
  if (pointer.empty() || pointer[0] != '#') {
    fail(path, "'" + pointer +
                   "': only references inside the schema (#/...) are "
                   "supported");
    return -1;
  }
  // JSON pointer (RFC 6901) below the root.
  const Json *at = root_;
  std::string targetPath = where_;
  for (size_t pos = 1; pos < pointer.size();) {
    if (pointer[pos] != '/') {
      fail(path, "'" + pointer + "' is not a JSON pointer");
      return -1;
    }
    size_t end = pointer.find('/', pos + 1);
    std::string token = pointer.substr(
        pos + 1, end == std::string::npos ? std::string::npos : end - pos - 1);
    std::string key;
    for (size_t i = 0; i < token.size(); ++i) {
      if (token[i] == '~' && i + 1 < token.size() &&
          (token[i + 1] == '0' || token[i + 1] == '1')) {
        key += token[++i] == '0' ? '~' : '/';
      } else {
        key += token[i];
      }
    }
    const Json *next = nullptr;
    if (at->is_object() && at->contains(key)) {
      next = &(*at)[key];
      targetPath = keyPath(targetPath, key);
    } else if (at->is_array() && !key.empty() &&
               key.find_first_not_of("0123456789") == std::string::npos &&
               key.size() < 10 && std::stoul(key) < at->size()) {
      next = &(*at)[std::stoul(key)];
      targetPath = indexPath(targetPath, std::stoul(key));
    }
    if (!next) {
      fail(path, "'" + pointer + "' does not resolve inside the schema");
      return -1;
    }
    at = next;
    pos = end == std::string::npos ? pointer.size() : end;
  }
  int32_t id = newSchema(targetPath);
  if (id < 0)
    return -1;
  refs_[pointer] = id;
  work_.push_back({id, at, targetPath});
  return id;
}

bool Compiler::compile(int32_t id, const Json &s, const std::string &path,
                       int nesting) {
  if (nesting > kMaxSchemaNesting)
    return fail(path, "schema nested deeper than " +
                          std::to_string(kMaxSchemaNesting) + " levels");
  if (s.is_boolean()) {
    if (s.get<bool>()) {
      int32_t any = anySchema();
      if (any < 0)
        return false;
      unions_[id].push_back(any);
    }
    return true; // false: no value (the schema keeps no alternative)
  }
  if (!s.is_object())
    return fail(path, "expected a schema (an object or a boolean)");

  // Every keyword is either understood or refused, by name.
  std::vector<std::string> constraints;
  for (const auto &[key, value] : s.items()) {
    if (kAnnotations.count(key)) {
      if (key == "$id" && &s != root_)
        return fail(keyPath(path, key),
                    "not supported below the root (references resolve "
                    "against the root only)");
      continue;
    }
    if (kCombinators.count(key) || kStringKeys.count(key) ||
        kNumberKeys.count(key) || kObjectKeys.count(key) ||
        kArrayKeys.count(key) || key == "type") {
      constraints.push_back(key);
      continue;
    }
    return fail(keyPath(path, key), refusal(key));
  }
  auto onlyWith = [&](const std::string &keyword,
                      const std::set<std::string> &allowed) {
    for (const std::string &key : constraints)
      if (key != keyword && !allowed.count(key))
        return fail(keyPath(path, key), "not supported next to " + keyword);
    return true;
  };

  if (s.contains("$ref")) {
    if (!onlyWith("$ref", {}))
      return false;
    int32_t target = ref(s["$ref"], keyPath(path, "$ref"));
    if (target < 0)
      return false;
    unions_[id].push_back(target);
    return true;
  }
  for (const char *keyword : {"anyOf", "oneOf", "allOf"}) {
    if (!s.contains(keyword))
      continue;
    if (!onlyWith(keyword, {}))
      return false;
    const Json &list = s[keyword];
    std::string at = keyPath(path, keyword);
    if (!list.is_array() || list.empty())
      return fail(at, "expected a non-empty array of schemas");
    if (std::string(keyword) == "allOf" && list.size() != 1)
      return fail(at, "allOf with " + std::to_string(list.size()) +
                          " schemas is not supported (only one)");
    // oneOf is read as anyOf: the alternatives a schema author writes are
    // normally disjoint (docs/structured-output.md).
    for (size_t i = 0; i < list.size(); ++i) {
      int32_t member = sub(list[i], indexPath(at, i), nesting + 1);
      if (member < 0)
        return false;
      unions_[id].push_back(member);
    }
    return true;
  }
  if (s.contains("enum") || s.contains("const")) {
    if (!onlyWith(s.contains("enum") ? "enum" : "const",
                  {"enum", "const", "type"}))
      return false;
    return compileLiterals(id, s, path);
  }

  uint8_t types = 0;
  if (!readTypes(s, path, types))
    return false;
  if (types & kNull)
    p_.schemas[id].alts.push_back({AltKind::Literal, nullTrie()});
  if (types & kBoolean)
    p_.schemas[id].alts.push_back({AltKind::Literal, boolTrie()});
  if ((types & kString) && !compileString(id, s, path))
    return false;
  if ((types & (kInteger | kNumber)) &&
      !compileNumber(id, s, path, !(types & kNumber)))
    return false;
  if ((types & kObject) && !compileObject(id, s, path, nesting))
    return false;
  if ((types & kArray) && !compileArray(id, s, path, nesting))
    return false;
  return true;
}

bool Compiler::readTypes(const Json &s, const std::string &path,
                         uint8_t &types) {
  static const std::pair<const char *, uint8_t> kNames[] = {
      {"null", kNull},       {"boolean", kBoolean}, {"string", kString},
      {"integer", kInteger}, {"number", kNumber},   {"object", kObject},
      {"array", kArray}};
  auto bit = [&](const Json &name, const std::string &at) -> bool {
    if (name.is_string())
      for (const auto &[text, b] : kNames)
        if (name.get<std::string>() == text) {
          types |= b;
          return true;
        }
    return fail(at, "expected one of null, boolean, string, integer, "
                    "number, object, array");
  };
  std::string at = keyPath(path, "type");
  if (s.contains("type")) {
    const Json &type = s["type"];
    if (type.is_array()) {
      if (type.empty())
        return fail(at, "expected a type name or a non-empty array of them");
      for (size_t i = 0; i < type.size(); ++i)
        if (!bit(type[i], indexPath(at, i)))
          return false;
    } else if (!bit(type, at)) {
      return false;
    }
  }
  // Keywords of types the schema does not allow would never apply: refuse
  // them rather than leave them silently without effect.
  const std::pair<const std::set<std::string> *, uint8_t> kOwners[] = {
      {&kStringKeys, kString},
      {&kNumberKeys, uint8_t(kInteger | kNumber)},
      {&kObjectKeys, kObject},
      {&kArrayKeys, kArray}};
  if (!s.contains("type")) {
    // No type: the types whose keywords appear (a subset of what the
    // schema allows, which is what a reader of such a schema expects), or
    // any value when none does.
    for (const auto &[keys, b] : kOwners)
      for (const std::string &key : *keys)
        if (s.contains(key))
          types |= b;
    if (!types)
      types = kNull | kBoolean | kString | kNumber | kObject | kArray;
    return true;
  }
  for (const auto &[keys, b] : kOwners)
    if (!(types & b))
      for (const std::string &key : *keys)
        if (s.contains(key))
          return fail(keyPath(path, key),
                      "does not apply to the schema's type");
  return true;
}

bool Compiler::readCount(const Json &s, const std::string &path,
                         const char *key, uint32_t &out) {
  if (!s.contains(key))
    return true;
  const Json &v = s[key];
  std::string at = keyPath(path, key);
  if (!v.is_number_unsigned() &&
      !(v.is_number_integer() && v.get<int64_t>() >= 0) &&
      !(v.is_number_float() && v.get<double>() >= 0 &&
        v.get<double>() == std::floor(v.get<double>())))
    return fail(at, "expected a non-negative integer");
  double value = v.get<double>();
  // A maximum beyond 2^32 - 2 bounds nothing a generation can reach.
  out = value >= double(kUnbounded) ? kUnbounded : uint32_t(value);
  return true;
}

bool Compiler::compileString(int32_t id, const Json &s,
                             const std::string &path) {
  StringSpec spec;
  if (!readCount(s, path, "minLength", spec.minLength) ||
      !readCount(s, path, "maxLength", spec.maxLength))
    return false;
  if (spec.minLength == kUnbounded)
    return fail(keyPath(path, "minLength"), "too large");
  if (spec.minLength > spec.maxLength)
    return true; // no string: the alternative is dropped
  addAlt(id, AltKind::String, p_.strings, spec);
  return true;
}

bool Compiler::compileNumber(int32_t id, const Json &s, const std::string &path,
                             bool integer) {
  NumberSpec spec;
  if (!readBounds(s, path, integer, spec))
    return false;
  if (!numberSpecNonEmpty(spec))
    return true; // no number within the bounds and digit budgets
  addAlt(id, AltKind::Number, p_.numbers, spec);
  return true;
}

bool Compiler::compileObject(int32_t id, const Json &s, const std::string &path,
                             int nesting) {
  ObjectShape shape;
  std::string propsPath = keyPath(path, "properties");
  if (s.contains("properties")) {
    const Json &props = s["properties"];
    if (!props.is_object())
      return fail(propsPath, "expected an object of schemas");
    for (const auto &[name, value] : props.items()) {
      int32_t schema = sub(value, keyPath(propsPath, name), nesting + 1);
      if (schema < 0)
        return false;
      shape.props.push_back({name, schema, false});
    }
  }
  std::string additionalPath = keyPath(path, "additionalProperties");
  if (s.contains("additionalProperties")) {
    const Json &additional = s["additionalProperties"];
    if (additional.is_boolean()) {
      shape.additional = additional.get<bool>() ? anySchema() : -1;
      if (additional.get<bool>() && shape.additional < 0)
        return false;
    } else {
      shape.additional = sub(additional, additionalPath, nesting + 1);
      if (shape.additional < 0)
        return false;
    }
  } else if (!s.contains("properties")) {
    // No properties and nothing said about others: any object.
    shape.additional = anySchema();
    if (shape.additional < 0)
      return false;
  } // else: the declared properties only (a subset of what validates)

  if (s.contains("required")) {
    const Json &required = s["required"];
    std::string at = keyPath(path, "required");
    if (!required.is_array())
      return fail(at, "expected an array of property names");
    std::set<std::string> seen;
    for (size_t i = 0; i < required.size(); ++i) {
      if (!required[i].is_string())
        return fail(indexPath(at, i), "expected a property name");
      std::string name = required[i].get<std::string>();
      if (!seen.insert(name).second)
        return fail(indexPath(at, i), "'" + name + "' is listed twice");
      auto it = std::find_if(shape.props.begin(), shape.props.end(),
                             [&](const Property &p) { return p.name == name; });
      if (it != shape.props.end()) {
        it->required = true;
        continue;
      }
      // Required but not declared: the schema of other properties, after
      // the declared ones.
      if (shape.additional < 0)
        return true; // no object can have it: the alternative is dropped
      shape.props.push_back({name, shape.additional, true});
    }
  }
  return addObject(id, std::move(shape), path);
}

bool Compiler::addObject(int32_t id, ObjectShape shape,
                         const std::string &path) {
  const uint32_t n = uint32_t(shape.props.size());
  shape.nextRequired.assign(n + 1, n);
  for (uint32_t i = n; i-- > 0;)
    shape.nextRequired[i] =
        shape.props[i].required ? i : shape.nextRequired[i + 1];
  if (n) {
    Trie keys, names;
    for (uint32_t i = 0; i < n; ++i) {
      std::string key;
      if (!dumpLiteral(
              Json(shape.props[i].name),
              keyPath(keyPath(path, "properties"), shape.props[i].name), key))
        return false;
      keys.insert(key, int32_t(i));
      names.insert(shape.props[i].name, int32_t(i));
    }
    keys.collectBelow();
    p_.tries.push_back(std::move(keys));
    shape.keys = int32_t(p_.tries.size() - 1);
    p_.tries.push_back(std::move(names));
    StringSpec other;
    other.exclude = int32_t(p_.tries.size() - 1);
    p_.strings.push_back(other);
  } else {
    p_.strings.push_back(StringSpec{});
  }
  shape.additionalKey = int32_t(p_.strings.size() - 1);
  addAlt(id, AltKind::Object, p_.objects, std::move(shape));
  return true;
}

bool Compiler::compileArray(int32_t id, const Json &s, const std::string &path,
                            int nesting) {
  ArrayShape shape;
  auto schemaList = [&](const Json &list, const std::string &at) {
    if (!list.is_array())
      return fail(at, "expected an array of schemas");
    for (size_t i = 0; i < list.size(); ++i) {
      int32_t item = sub(list[i], indexPath(at, i), nesting + 1);
      if (item < 0)
        return false;
      shape.prefix.push_back(item);
    }
    return true;
  };
  auto later = [&](const char *key) -> bool {
    // Items after the prefix: a schema, true/absent (any value), false.
    if (!s.contains(key)) {
      shape.items = anySchema();
      return shape.items >= 0;
    }
    const Json &v = s[key];
    if (v.is_boolean()) {
      shape.items = v.get<bool>() ? anySchema() : -1;
      return !v.get<bool>() || shape.items >= 0;
    }
    shape.items = sub(v, keyPath(path, key), nesting + 1);
    return shape.items >= 0;
  };
  if (s.contains("prefixItems")) {
    if (!schemaList(s["prefixItems"], keyPath(path, "prefixItems")))
      return false;
    if (s.contains("additionalItems"))
      return fail(keyPath(path, "additionalItems"),
                  "not supported with prefixItems (use items)");
    if (s.contains("items") && s["items"].is_array())
      return fail(keyPath(path, "items"),
                  "expected a schema (prefixItems holds the tuple)");
    if (!later("items"))
      return false;
  } else if (s.contains("items") && s["items"].is_array()) {
    // Draft 4 to 2019-09 tuples.
    if (!schemaList(s["items"], keyPath(path, "items")) ||
        !later("additionalItems"))
      return false;
  } else {
    if (s.contains("additionalItems"))
      return fail(keyPath(path, "additionalItems"),
                  "has no effect without an array of items: refused");
    if (!later("items"))
      return false;
  }
  if (s.contains("uniqueItems")) {
    const Json &unique = s["uniqueItems"];
    if (!unique.is_boolean())
      return fail(keyPath(path, "uniqueItems"), "expected a boolean");
    if (unique.get<bool>())
      return fail(keyPath(path, "uniqueItems"), "true is not supported");
  }
  if (!readCount(s, path, "minItems", shape.minItems) ||
      !readCount(s, path, "maxItems", shape.maxItems))
    return false;
  if (shape.minItems == kUnbounded)
    return fail(keyPath(path, "minItems"), "too large");
  uint32_t most = shape.maxItems;
  if (shape.items < 0)
    most = std::min<uint32_t>(most, uint32_t(shape.prefix.size()));
  if (shape.minItems > most)
    return true; // no array: the alternative is dropped
  addAlt(id, AltKind::Array, p_.arrays, std::move(shape));
  return true;
}

bool Compiler::dumpLiteral(const Json &value, const std::string &path,
                           std::string &out) {
  try {
    out = value.dump();
  } catch (const std::exception &) {
    return fail(path, "holds invalid UTF-8");
  }
  if (options_.guardCleanUp && hasCleanUpSpace(out))
    return fail(path, "holds a space before . ? ! , or ' that this "
                      "tokenizer's decoding removes "
                      "(clean_up_tokenization_spaces)");
  if (!options_.allBytes)
    for (char c : out)
      if (uint8_t(c) >= 0x80)
        return fail(path, "holds non-ASCII characters, which this "
                          "tokenizer cannot spell byte by byte");
  literalBytes_ += out.size();
  if (++literalCount_ > kMaxLiterals || literalBytes_ > kMaxLiteralBytes)
    return fail(path, "too many enum/const values or property names (at "
                      "most " +
                          std::to_string(kMaxLiterals) + " and " +
                          std::to_string(kMaxLiteralBytes) + " bytes)");
  return true;
}

bool Compiler::compileLiterals(int32_t id, const Json &s,
                               const std::string &path) {
  uint8_t types = 0;
  if (s.contains("type") && !readTypes(s, path, types))
    return false;
  std::vector<const Json *> values;
  std::string at;
  if (s.contains("enum")) {
    at = keyPath(path, "enum");
    if (!s["enum"].is_array())
      return fail(at, "expected an array");
    for (const Json &v : s["enum"])
      values.push_back(&v);
  }
  if (s.contains("const")) {
    const Json &c = s["const"];
    if (values.empty() && !s.contains("enum")) {
      values.push_back(&c);
      at = keyPath(path, "const");
    } else {
      // enum and const: the const when the enum has it.
      bool listed =
          std::any_of(values.begin(), values.end(),
                      [&](const Json *v) { return equalJson(*v, c); });
      values.assign(listed ? 1 : 0, &c);
    }
  }
  std::vector<std::string> texts;
  for (size_t i = 0; i < values.size(); ++i) {
    if (types && !hasType(*values[i], types))
      continue; // outside the schema's type: not a value
    std::string text;
    if (!dumpLiteral(*values[i], at, text))
      return false;
    texts.push_back(std::move(text));
  }
  if (texts.empty())
    return true; // no value
  p_.schemas[id].alts.push_back({AltKind::Literal, literalTrie(texts)});
  return true;
}

std::shared_ptr<const Program> Compiler::run(std::string &error) {
  p_.maxDepth = options_.maxDepth;
  p_.guardCleanUp = options_.guardCleanUp;
  int32_t root = newSchema(where_);
  bool ok = root >= 0;
  refs_["#"] = root;
  if (ok && !root_) {
    // JSON mode: any object.
    ObjectShape shape;
    shape.additional = anySchema();
    ok = shape.additional >= 0 && addObject(root, std::move(shape), where_);
  } else if (ok) {
    ok = compile(root, *root_, where_, 0);
  }
  while (ok && !work_.empty()) {
    Pending next = work_.front();
    work_.pop_front();
    ok = compile(next.id, *next.json, next.path, 0);
  }
  p_.root = root;
  ok = ok && flattenUnions() && mergeLiterals() && computeDepths();
  if (!ok) {
    error = error_.empty() ? where_ + ": cannot be compiled" : error_;
    return nullptr;
  }
  return std::make_shared<const Program>(std::move(p_));
}

} // namespace detail

std::shared_ptr<const Program>
compileJsonSchema(const nlohmann::ordered_json *schema, std::string_view where,
                  const CompileOptions &options, std::string &error) {
  try {
    detail::Compiler compiler(schema, where.empty() ? "schema" : where,
                              options);
    return compiler.run(error);
  } catch (const std::exception &e) {
    // Only allocation failures can get here (the JSON is read with checks).
    error = std::string(where.empty() ? "schema" : where) +
            ": cannot be compiled: " + e.what();
    return nullptr;
  }
}

} // namespace qeff::structured
