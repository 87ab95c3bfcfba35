//===- Result.h - Error-or-value result type of the runtime API -*- C++ -*-===//
//
// Every fallible call of the runtime API returns a Result<T>: either a value or
// an error message. Nothing aborts and no exception escapes the API.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_RESULT_H
#define QEFF_RUNTIME_RESULT_H

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace qeff::runtime {

/// An error: a one-line, human-readable message naming what is wrong.
struct Error {
  std::string message;
};

/// A value of type T or an Error.
template <typename T> class [[nodiscard]] Result {
public:
  Result(T value) : value_(std::move(value)) {}
  Result(Error error) : error_(std::move(error.message)) {}

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }

  /// The error message; empty when ok().
  const std::string &error() const { return error_; }

  T &value() & {
    assert(ok());
    return *value_;
  }
  const T &value() const & {
    assert(ok());
    return *value_;
  }
  T &&value() && {
    assert(ok());
    return std::move(*value_);
  }
  T &operator*() & { return value(); }
  const T &operator*() const & { return value(); }
  T *operator->() { return &value(); }
  const T *operator->() const { return &value(); }

private:
  std::optional<T> value_;
  std::string error_;
};

/// Success or an Error.
template <> class [[nodiscard]] Result<void> {
public:
  Result() = default;
  Result(Error error) : failed_(true), error_(std::move(error.message)) {}

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const std::string &error() const { return error_; }

private:
  bool failed_ = false;
  std::string error_;
};

using Status = Result<void>;

inline Error makeError(std::string message) { return Error{std::move(message)}; }

} // namespace qeff::runtime

#endif // QEFF_RUNTIME_RESULT_H
