//===- JsonConfig.cpp - Typed, non-throwing access to a JSON config -------===//

#include "frontend/HF/JsonConfig.h"

#include "frontend/HF/JsonUtil.h"

#include "absl/strings/str_cat.h"

#include <cmath>

namespace qeff::hf {

using detail::Json;

namespace {
constexpr uint64_t kMaxConfigSize = 64ull << 20;
} // namespace

absl::StatusOr<JsonConfig> JsonConfig::read(const std::string &path) {
  absl::StatusOr<std::string> text =
      detail::readSmallFile(path, kMaxConfigSize);
  if (!text.ok())
    return text.status();
  return parse(*text, path);
}

absl::StatusOr<JsonConfig> JsonConfig::parse(std::string_view text,
                                             std::string fileName) {
  absl::StatusOr<Json> json =
      detail::parseJson(text, fileName, "content", "field");
  if (!json.ok())
    return json.status();
  if (!json->is_object())
    return absl::InvalidArgumentError(detail::cat(
        fileName, ": must hold a JSON object, got ", detail::describe(*json)));
  return JsonConfig(std::move(fileName), "",
                    std::make_shared<const Json>(std::move(*json)));
}

bool JsonConfig::has(std::string_view field) const {
  return lookup(field) != nullptr;
}

const Json *JsonConfig::lookup(std::string_view field) const {
  auto it = json_->find(field);
  if (it == json_->end() || it->is_null())
    return nullptr;
  return &*it;
}

absl::Status JsonConfig::fieldError(std::string_view field,
                                    std::string_view message) const {
  return absl::InvalidArgumentError(
      detail::cat(fileName_, ": field '", prefix_, field, "' ", message));
}

absl::Status JsonConfig::typeError(std::string_view field,
                                   std::string_view expected,
                                   const Json &got) const {
  return fieldError(field, detail::cat("must be ", expected, ", got ",
                                       detail::describe(got)));
}

absl::StatusOr<int64_t> JsonConfig::getInt(std::string_view field,
                                           int64_t defaultValue) const {
  absl::StatusOr<std::optional<int64_t>> v = getOptionalInt(field);
  if (!v.ok())
    return v.status();
  return v->value_or(defaultValue);
}

absl::StatusOr<std::optional<int64_t>>
JsonConfig::getOptionalInt(std::string_view field) const {
  const Json *v = lookup(field);
  if (!v)
    return std::optional<int64_t>();
  std::optional<int64_t> i = detail::asInt64(*v);
  if (!i)
    return typeError(field, "an integer", *v);
  return i;
}

absl::StatusOr<int64_t>
JsonConfig::getPositiveInt(std::string_view field,
                           std::optional<int64_t> defaultValue) const {
  const Json *v = lookup(field);
  if (!v) {
    if (!defaultValue)
      return fieldError(field, "is missing (required)");
    return *defaultValue;
  }
  std::optional<int64_t> i = detail::asInt64(*v);
  if (!i || *i <= 0)
    return typeError(field, "a positive integer", *v);
  return *i;
}

absl::StatusOr<double> JsonConfig::getFloat(std::string_view field,
                                            double defaultValue) const {
  absl::StatusOr<std::optional<double>> v = getOptionalFloat(field);
  if (!v.ok())
    return v.status();
  return v->value_or(defaultValue);
}

absl::StatusOr<std::optional<double>>
JsonConfig::getOptionalFloat(std::string_view field) const {
  const Json *v = lookup(field);
  if (!v)
    return std::optional<double>();
  std::optional<double> d = detail::asDouble(*v);
  if (!d || !std::isfinite(*d))
    return typeError(field, "a number", *v);
  return d;
}

absl::StatusOr<bool> JsonConfig::getBool(std::string_view field,
                                         bool defaultValue) const {
  const Json *v = lookup(field);
  if (!v)
    return defaultValue;
  if (!v->is_boolean())
    return typeError(field, "a boolean", *v);
  return v->get<bool>();
}

absl::StatusOr<std::string>
JsonConfig::getString(std::string_view field, std::string defaultValue) const {
  absl::StatusOr<std::optional<std::string>> v = getOptionalString(field);
  if (!v.ok())
    return v.status();
  return v->value_or(std::move(defaultValue));
}

absl::StatusOr<std::optional<std::string>>
JsonConfig::getOptionalString(std::string_view field) const {
  const Json *v = lookup(field);
  if (!v)
    return std::optional<std::string>();
  if (!v->is_string())
    return typeError(field, "a string", *v);
  return std::optional<std::string>(v->get_ref<const std::string &>());
}

absl::StatusOr<std::vector<int64_t>>
JsonConfig::getIntOrIntList(std::string_view field,
                            std::vector<int64_t> defaultValue) const {
  const Json *v = lookup(field);
  if (!v)
    return defaultValue;
  if (std::optional<int64_t> i = detail::asInt64(*v))
    return std::vector<int64_t>{*i};
  std::vector<int64_t> result;
  if (v->is_array()) {
    for (const Json &e : *v) {
      std::optional<int64_t> i = detail::asInt64(e);
      if (!i)
        return typeError(field, "an integer or a list of integers", *v);
      result.push_back(*i);
    }
    return result;
  }
  return typeError(field, "an integer or a list of integers", *v);
}

absl::StatusOr<std::vector<int64_t>>
JsonConfig::getTokenIds(std::string_view field,
                        std::vector<int64_t> defaultValue) const {
  absl::StatusOr<std::vector<int64_t>> ids =
      getIntOrIntList(field, std::move(defaultValue));
  if (!ids.ok())
    return ids.status();
  for (int64_t id : *ids)
    if (id < 0)
      return fieldError(field, detail::cat("holds ", id, ", which is not a token id "
                                                     "(ids are non-negative)"));
  return ids;
}

absl::StatusOr<std::optional<JsonConfig>>
JsonConfig::getOptionalObject(std::string_view field) const {
  const Json *v = lookup(field);
  if (!v)
    return std::optional<JsonConfig>();
  if (!v->is_object())
    return typeError(field, "an object", *v);
  return std::optional<JsonConfig>(
      JsonConfig(fileName_, detail::cat(prefix_, field, "."),
                 std::make_shared<const Json>(*v)));
}

} // namespace qeff::hf
