//===- QuantUtil.h - internal helpers of frontend/Quant ---------*- C++ -*-===//
//
// Part of qeff. Internal to QEffQuant and QEffGGUF.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_QUANT_QUANTUTIL_H
#define QEFF_FRONTEND_QUANT_QUANTUTIL_H

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

#include <string>
#include <string_view>

#define QEFF_QUANT_CONCAT_INNER(a, b) a##b
#define QEFF_QUANT_CONCAT(a, b) QEFF_QUANT_CONCAT_INNER(a, b)
/// `lhs = value of expr` or return its status.
#define QEFF_QUANT_ASSIGN(lhs, expr)                                           \
  QEFF_QUANT_ASSIGN_IMPL(QEFF_QUANT_CONCAT(statusOr_, __LINE__), lhs, expr)
#define QEFF_QUANT_ASSIGN_IMPL(tmp, lhs, expr)                                 \
  auto tmp = (expr);                                                           \
  if (!tmp.ok())                                                               \
    return tmp.status();                                                       \
  lhs = std::move(*tmp)

namespace qeff::quant {
/// Debian's Abseil has its own string_view: absl::StrCat that also takes
/// std::string_view.
inline absl::string_view toAbsl(std::string_view s) { return {s.data(), s.size()}; }
template <typename T> const T &toAbsl(const T &v) { return v; }
template <typename... Args> std::string cat(const Args &...args) {
  return absl::StrCat(toAbsl(args)...);
}
} // namespace qeff::quant

#endif // QEFF_FRONTEND_QUANT_QUANTUTIL_H
