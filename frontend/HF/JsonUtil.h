//===- JsonUtil.h - Non-throwing JSON helpers -------------------*- C++ -*-===//
//
// Internal to QEffHFCheckpoint. nlohmann-json used without exceptions: parse
// with allow_exceptions=false, check types before get<>, never operator[] on a
// missing key. Duplicate object keys (which nlohmann silently collapses) are
// detected with a parser callback.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_HF_JSONUTIL_H
#define QEFF_FRONTEND_HF_JSONUTIL_H

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "absl/strings/str_cat.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#define QEFF_HF_CONCAT_INNER(a, b) a##b
#define QEFF_HF_CONCAT(a, b) QEFF_HF_CONCAT_INNER(a, b)
/// `lhs = value of expr` or return its status. Internal to the HF reader.
#define QEFF_HF_ASSIGN_OR_RETURN(lhs, expr)                                    \
  QEFF_HF_ASSIGN_OR_RETURN_IMPL(QEFF_HF_CONCAT(statusOr_, __LINE__), lhs, expr)
#define QEFF_HF_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr)                          \
  auto tmp = (expr);                                                           \
  if (!tmp.ok())                                                               \
    return tmp.status();                                                       \
  lhs = std::move(*tmp)

namespace qeff::hf::detail {

using Json = nlohmann::json;

/// Debian's Abseil has its own absl::string_view: adapt std::string_view.
inline absl::string_view toAbsl(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}
template <typename T> const T &toAbsl(const T &v) { return v; }

/// absl::StrCat that also takes std::string_view.
template <typename... Args> std::string cat(const Args &...args) {
  return absl::StrCat(toAbsl(args)...);
}

/// Parses `text`. Errors name `fileName`: invalid JSON (with the parser's
/// position), or a duplicate key. A duplicate key of the top-level object is
/// reported as "duplicate <topLevelKeyNoun> 'k'", a nested one as
/// "duplicate key 'k' in 'parent'".
absl::StatusOr<Json> parseJson(std::string_view text, std::string_view fileName,
                               std::string_view what,
                               std::string_view topLevelKeyNoun);

/// Reads a whole (small) file; errors name the path. Files larger than
/// `maxSize` are refused.
absl::StatusOr<std::string> readSmallFile(const std::string &path,
                                          uint64_t maxSize);

/// Short rendering of a JSON value for "got ..." in messages.
std::string describe(const Json &value);

/// The value as int64 when it is a JSON integer in range; std::nullopt for
/// floats, strings, out-of-range integers, etc.
std::optional<int64_t> asInt64(const Json &value);
/// The value as uint64 when it is a non-negative JSON integer.
std::optional<uint64_t> asUInt64(const Json &value);
/// The value as double when it is any JSON number.
std::optional<double> asDouble(const Json &value);

/// Whether `path` names an existing regular file.
bool isRegularFile(const std::string &path);

} // namespace qeff::hf::detail

#endif // QEFF_FRONTEND_HF_JSONUTIL_H
