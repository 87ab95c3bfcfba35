//===- SchemaValidator.cpp - a JSON Schema checker for the tests ----------===//
//
// Part of qeff's tests. See SchemaValidator.h. Numbers compare as doubles,
// the way JavaScript validators (ajv) compare them.
//
//===----------------------------------------------------------------------===//

#include "SchemaValidator.h"

#include <cmath>
#include <set>

namespace qeff::test {
namespace {

using Json = nlohmann::ordered_json;

bool sameValue(const Json &a, const Json &b) {
  if (a.is_number() && b.is_number())
    return a.get<double>() == b.get<double>();
  if (a.type() != b.type())
    return false;
  if (a.is_object()) {
    if (a.size() != b.size())
      return false;
    for (const auto &[k, v] : a.items())
      if (!b.contains(k) || !sameValue(v, b[k]))
        return false;
    return true;
  }
  if (a.is_array()) {
    if (a.size() != b.size())
      return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!sameValue(a[i], b[i]))
        return false;
    return true;
  }
  return a == b;
}

size_t codePoints(const std::string &s) {
  size_t n = 0;
  for (unsigned char c : s)
    n += (c & 0xC0) != 0x80;
  return n;
}

bool isType(const Json &v, const std::string &type) {
  if (type == "null")
    return v.is_null();
  if (type == "boolean")
    return v.is_boolean();
  if (type == "string")
    return v.is_string();
  if (type == "number")
    return v.is_number();
  if (type == "integer")
    return v.is_number_integer() ||
           (v.is_number_float() &&
            std::floor(v.get<double>()) == v.get<double>());
  if (type == "object")
    return v.is_object();
  if (type == "array")
    return v.is_array();
  return false;
}

class Validator {
public:
  explicit Validator(const Json &root) : root_(root) {}

  std::string check(const Json &v, const Json &s, const std::string &at,
                    int depth = 0) {
    if (depth > 200)
      return at + ": schema recursion too deep";
    if (s.is_boolean())
      return s.get<bool>() ? "" : at + ": false schema";
    static const std::set<std::string> kKnown = {"type",
                                                 "enum",
                                                 "const",
                                                 "properties",
                                                 "required",
                                                 "additionalProperties",
                                                 "items",
                                                 "prefixItems",
                                                 "additionalItems",
                                                 "minItems",
                                                 "maxItems",
                                                 "minLength",
                                                 "maxLength",
                                                 "minimum",
                                                 "maximum",
                                                 "exclusiveMinimum",
                                                 "exclusiveMaximum",
                                                 "anyOf",
                                                 "oneOf",
                                                 "allOf",
                                                 "$ref",
                                                 "$defs",
                                                 "definitions",
                                                 "title",
                                                 "description",
                                                 "default",
                                                 "examples",
                                                 "$schema",
                                                 "$comment",
                                                 "uniqueItems"};
    for (const auto &[key, value] : s.items())
      if (!kKnown.count(key))
        return at + ": the test validator does not know '" + key + "'";
    if (s.contains("$ref")) {
      std::string ref = s["$ref"];
      // "#" or "#/a/b" (the tests' schemas need no ~ escapes).
      const Json *target = &root_;
      for (size_t pos = 1; pos < ref.size();) {
        size_t end = ref.find('/', pos + 1);
        std::string key =
            ref.substr(pos + 1, end == std::string::npos ? std::string::npos
                                                         : end - pos - 1);
        target = &(*target)[key];
        pos = end == std::string::npos ? ref.size() : end;
      }
      if (std::string e = check(v, *target, at, depth + 1); !e.empty())
        return e;
    }
    if (s.contains("type")) {
      const Json &t = s["type"];
      bool ok = false;
      if (t.is_string())
        ok = isType(v, t);
      else
        for (const Json &name : t)
          ok = ok || isType(v, name);
      if (!ok)
        return at + ": not of type " + t.dump();
    }
    if (s.contains("enum")) {
      bool found = false;
      for (const Json &e : s["enum"])
        found = found || sameValue(v, e);
      if (!found)
        return at + ": not in enum";
    }
    if (s.contains("const") && !sameValue(v, s["const"]))
      return at + ": not the const";
    if (s.contains("anyOf")) {
      bool any = false;
      for (const Json &sub : s["anyOf"])
        any = any || check(v, sub, at, depth + 1).empty();
      if (!any)
        return at + ": matches no anyOf alternative";
    }
    if (s.contains("oneOf")) {
      int matches = 0;
      for (const Json &sub : s["oneOf"])
        matches += check(v, sub, at, depth + 1).empty();
      if (matches != 1)
        return at + ": matches " + std::to_string(matches) +
               " oneOf alternatives";
    }
    if (s.contains("allOf"))
      for (const Json &sub : s["allOf"])
        if (std::string e = check(v, sub, at, depth + 1); !e.empty())
          return e;
    if (v.is_string()) {
      size_t n = codePoints(v.get<std::string>());
      if (s.contains("minLength") && n < s["minLength"].get<double>())
        return at + ": shorter than minLength";
      if (s.contains("maxLength") && n > s["maxLength"].get<double>())
        return at + ": longer than maxLength";
    }
    if (v.is_number()) {
      double x = v.get<double>();
      bool exMinFlag = s.contains("exclusiveMinimum") &&
                       s["exclusiveMinimum"].is_boolean() &&
                       s["exclusiveMinimum"].get<bool>();
      bool exMaxFlag = s.contains("exclusiveMaximum") &&
                       s["exclusiveMaximum"].is_boolean() &&
                       s["exclusiveMaximum"].get<bool>();
      if (s.contains("minimum") && (exMinFlag ? x <= s["minimum"].get<double>()
                                              : x < s["minimum"].get<double>()))
        return at + ": below minimum";
      if (s.contains("maximum") && (exMaxFlag ? x >= s["maximum"].get<double>()
                                              : x > s["maximum"].get<double>()))
        return at + ": above maximum";
      if (s.contains("exclusiveMinimum") && s["exclusiveMinimum"].is_number() &&
          x <= s["exclusiveMinimum"].get<double>())
        return at + ": not above exclusiveMinimum";
      if (s.contains("exclusiveMaximum") && s["exclusiveMaximum"].is_number() &&
          x >= s["exclusiveMaximum"].get<double>())
        return at + ": not below exclusiveMaximum";
    }
    if (v.is_object()) {
      if (s.contains("required"))
        for (const Json &name : s["required"])
          if (!v.contains(name.get<std::string>()))
            return at + ": lacks required '" + name.get<std::string>() + "'";
      for (const auto &[key, value] : v.items()) {
        std::string here = at + "." + key;
        if (s.contains("properties") && s["properties"].contains(key)) {
          if (std::string e =
                  check(value, s["properties"][key], here, depth + 1);
              !e.empty())
            return e;
        } else if (s.contains("additionalProperties")) {
          if (std::string e =
                  check(value, s["additionalProperties"], here, depth + 1);
              !e.empty())
            return e;
        }
      }
    }
    if (v.is_array()) {
      // The tuple (prefixItems, or draft 4's array of items), then the
      // schema of the later items.
      const Json *tuple = nullptr, *rest = nullptr;
      if (s.contains("prefixItems")) {
        tuple = &s["prefixItems"];
        rest = s.contains("items") ? &s["items"] : nullptr;
      } else if (s.contains("items") && s["items"].is_array()) {
        tuple = &s["items"];
        rest = s.contains("additionalItems") ? &s["additionalItems"] : nullptr;
      } else if (s.contains("items")) {
        rest = &s["items"];
      }
      const size_t prefix = tuple ? tuple->size() : 0;
      for (size_t i = 0; i < v.size(); ++i) {
        const Json *item = i < prefix ? &(*tuple)[i] : rest;
        if (!item)
          continue;
        if (std::string e = check(
                v[i], *item, at + "[" + std::to_string(i) + "]", depth + 1);
            !e.empty())
          return e;
      }
      if (s.contains("minItems") && v.size() < s["minItems"].get<double>())
        return at + ": fewer than minItems";
      if (s.contains("maxItems") && v.size() > s["maxItems"].get<double>())
        return at + ": more than maxItems";
    }
    return "";
  }

private:
  const Json &root_;
};

} // namespace

std::string validateJson(const nlohmann::ordered_json &value,
                         const nlohmann::ordered_json &schema) {
  return Validator(schema).check(value, schema, "$");
}

} // namespace qeff::test
