//===- Json.cpp - tokenizer.json field access with precise errors ---------===//
//
// Every accessor checks the JSON type before reading, so a malformed file
// yields an absl::Status naming the file and the field, never an exception.
//
//===----------------------------------------------------------------------===//

#include "frontend/Tokenizer/Components.h"
#include "frontend/Tokenizer/Unicode.h"

namespace qeff::tokenizer::detail {

JsonPath JsonPath::operator/(std::string_view key) const {
  JsonPath child = *this;
  if (!child.field.empty())
    child.field += '.';
  child.field += key;
  return child;
}

JsonPath JsonPath::operator[](size_t index) const {
  JsonPath child = *this;
  child.field += strCat("[", index, "]");
  return child;
}

static std::string where(const JsonPath &path) {
  if (path.field.empty())
    return strCat(path.file, ": ");
  return strCat(path.file, ": field '", path.field, "': ");
}

absl::Status jsonError(const JsonPath &path, std::string_view message) {
  return absl::InvalidArgumentError(strCat(where(path), message));
}

absl::Status unsupported(const JsonPath &path, std::string_view what) {
  return absl::UnimplementedError(strCat(where(path), "unsupported ", what));
}

const Json *findMember(const Json &object, std::string_view key) {
  if (!object.is_object())
    return nullptr;
  auto it = object.find(key);
  if (it == object.end() || it->is_null())
    return nullptr;
  return &*it;
}

static const char *typeName(const Json &value) { return value.type_name(); }

absl::StatusOr<std::string> getString(const Json &object, const JsonPath &path,
                                      std::string_view key) {
  const Json *value = findMember(object, key);
  if (!value)
    return jsonError(path / key, "missing required string");
  if (!value->is_string())
    return jsonError(path / key,
                     strCat("expected a string, got ", typeName(*value)));
  return value->get<std::string>();
}

absl::StatusOr<std::optional<std::string>>
getOptString(const Json &object, const JsonPath &path, std::string_view key) {
  const Json *value = findMember(object, key);
  if (!value)
    return std::optional<std::string>();
  if (!value->is_string())
    return jsonError(path / key,
                     strCat("expected a string, got ", typeName(*value)));
  return std::optional<std::string>(value->get<std::string>());
}

absl::StatusOr<bool> getBool(const Json &object, const JsonPath &path,
                             std::string_view key, bool fallback) {
  const Json *value = findMember(object, key);
  if (!value)
    return fallback;
  if (!value->is_boolean())
    return jsonError(path / key,
                     strCat("expected a boolean, got ", typeName(*value)));
  return value->get<bool>();
}

absl::StatusOr<int64_t> getInt(const Json &object, const JsonPath &path,
                               std::string_view key, int64_t fallback) {
  const Json *value = findMember(object, key);
  if (!value)
    return fallback;
  if (!value->is_number_integer() || value->get<int64_t>() < 0)
    return jsonError(path / key, "expected a non-negative integer");
  return value->get<int64_t>();
}

absl::StatusOr<std::string> getType(const Json &object, const JsonPath &path) {
  if (!object.is_object())
    return jsonError(path,
                     strCat("expected an object, got ", typeName(object)));
  return getString(object, path, "type");
}

absl::StatusOr<std::string> getChar(const Json &object, const JsonPath &path,
                                    std::string_view key,
                                    std::string_view fallback) {
  auto value = getOptString(object, path, key);
  if (!value.ok())
    return value.status();
  std::string text = value->value_or(std::string(fallback));
  if (text.empty() || !isValidUtf8(text) ||
      utf8SeqLen(static_cast<unsigned char>(text[0])) != text.size())
    return jsonError(path / key, "expected a single character");
  return text;
}

absl::StatusOr<Matcher> parsePattern(const Json &object, const JsonPath &path) {
  const Json *pattern = findMember(object, "pattern");
  JsonPath here = path / "pattern";
  if (!pattern || !pattern->is_object() || pattern->size() != 1)
    return jsonError(here, "expected {\"String\": ...} or {\"Regex\": ...}");
  if (const Json *literal = findMember(*pattern, "String")) {
    if (!literal->is_string())
      return jsonError(here / "String", "expected a string");
    std::string needle = literal->get<std::string>();
    if (!isValidUtf8(needle))
      return jsonError(here / "String", "not valid UTF-8");
    return Matcher([needle](std::string_view text) {
      std::vector<std::pair<size_t, size_t>> hits;
      if (needle.empty())
        return hits;
      for (size_t pos = text.find(needle); pos != std::string_view::npos;
           pos = text.find(needle, pos + needle.size()))
        hits.emplace_back(pos, pos + needle.size());
      return hits;
    });
  }
  if (const Json *regex = findMember(*pattern, "Regex")) {
    if (!regex->is_string())
      return jsonError(here / "Regex", "expected a string");
    auto compiled = Regex::compile(regex->get<std::string>());
    if (!compiled.ok())
      return jsonError(here / "Regex",
                       std::string(compiled.status().message()));
    return Matcher([re = *std::move(compiled)](std::string_view text) {
      return re.findAll(text);
    });
  }
  return jsonError(here, "expected {\"String\": ...} or {\"Regex\": ...}");
}

void replaceMatches(const Matcher &matcher, const std::string &content,
                    std::string &text) {
  auto matches = matcher(text);
  if (matches.empty())
    return;
  std::string out;
  out.reserve(text.size());
  size_t prev = 0;
  for (auto [begin, end] : matches) {
    out.append(text, prev, begin - prev);
    out.append(content);
    prev = end;
  }
  out.append(text, prev, std::string::npos);
  text = std::move(out);
}

} // namespace qeff::tokenizer::detail
