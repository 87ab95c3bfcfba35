//===- JsonConfig.h - Typed access to a JSON config -------------*- C++ -*-===//
//
// A parsed JSON object (config.json, generation_config.json) with getters that
// check the JSON type and return an absl::Status naming the file and the field
// on mismatch: "config.json: field 'num_attention_heads' must be a positive
// integer, got \"4\"". Absent fields and JSON null give the default (as Python
// None does in Hugging Face configs). Family importers read their own fields
// through it (`n_embd`, `multi_query`, `alibi`, ...).
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_HF_JSONCONFIG_H
#define QEFF_FRONTEND_HF_JSONCONFIG_H

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qeff::hf {

class JsonConfig {
public:
  /// Reads and parses `path`; the file must hold a JSON object.
  static absl::StatusOr<JsonConfig> read(const std::string &path);
  /// Parses `text`; `fileName` is used in messages only.
  static absl::StatusOr<JsonConfig> parse(std::string_view text,
                                          std::string fileName);

  /// The name used in messages (the path given to read()).
  const std::string &fileName() const { return fileName_; }
  /// The whole object, for fields no getter covers. Include
  /// <nlohmann/json.hpp> to use it; never use throwing accessors on it.
  const nlohmann::json &json() const { return *json_; }

  /// Present and not null.
  bool has(std::string_view field) const;

  /// Any JSON integer (int64 range).
  absl::StatusOr<int64_t> getInt(std::string_view field,
                                 int64_t defaultValue) const;
  absl::StatusOr<std::optional<int64_t>>
  getOptionalInt(std::string_view field) const;
  /// A positive integer; absent/null gives `defaultValue`, or a "missing
  /// required field" error when there is no default.
  absl::StatusOr<int64_t>
  getPositiveInt(std::string_view field,
                 std::optional<int64_t> defaultValue = std::nullopt) const;
  /// Any JSON number (integers are accepted for float fields).
  absl::StatusOr<double> getFloat(std::string_view field,
                                  double defaultValue) const;
  absl::StatusOr<std::optional<double>>
  getOptionalFloat(std::string_view field) const;
  absl::StatusOr<bool> getBool(std::string_view field, bool defaultValue) const;
  absl::StatusOr<std::string> getString(std::string_view field,
                                        std::string defaultValue) const;
  absl::StatusOr<std::optional<std::string>>
  getOptionalString(std::string_view field) const;
  /// An integer or a list of integers (e.g. eos_token_id); absent/null gives
  /// `defaultValue`.
  absl::StatusOr<std::vector<int64_t>>
  getIntOrIntList(std::string_view field,
                  std::vector<int64_t> defaultValue = {}) const;
  /// getIntOrIntList of token ids: each one a non-negative integer (what
  /// eos_token_id must hold for generation to use it).
  absl::StatusOr<std::vector<int64_t>>
  getTokenIds(std::string_view field, std::vector<int64_t> defaultValue = {}) const;
  /// A nested object as a JsonConfig (messages name "<file>: field
  /// '<field>.<sub>'"); std::nullopt when absent or null.
  absl::StatusOr<std::optional<JsonConfig>>
  getOptionalObject(std::string_view field) const;

  /// InvalidArgument "<file>: field '<field>' <message>".
  absl::Status fieldError(std::string_view field,
                          std::string_view message) const;

private:
  JsonConfig(std::string fileName, std::string prefix,
             std::shared_ptr<const nlohmann::json> json)
      : fileName_(std::move(fileName)), prefix_(std::move(prefix)),
        json_(std::move(json)) {}
  /// The member or nullptr when absent or null.
  const nlohmann::json *lookup(std::string_view field) const;
  absl::Status typeError(std::string_view field, std::string_view expected,
                         const nlohmann::json &got) const;

  std::string fileName_;
  std::string prefix_; ///< "rope_scaling." for nested objects
  std::shared_ptr<const nlohmann::json> json_;
};

} // namespace qeff::hf

#endif // QEFF_FRONTEND_HF_JSONCONFIG_H
