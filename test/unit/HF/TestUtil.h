//===- TestUtil.h - Helpers for the HF reader unit tests --------*- C++ -*-===//
//
// A temporary directory per test and raw file writers for malformed inputs.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_TEST_UNIT_HF_TESTUTIL_H
#define QEFF_TEST_UNIT_HF_TESTUTIL_H

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

namespace qeff::hf::test {

inline std::string goldenDir(const std::string &model) {
  return std::string(QEFF_TEST_DATA_DIR) + "/golden/" + model;
}

/// A fresh directory removed with its content at the end of the test.
class TempDir {
public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "qeff-hf-XXXXXX").string();
    char *made = ::mkdtemp(pattern.data());
    EXPECT_NE(made, nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string &path() const { return path_; }
  std::string file(const std::string &name) const { return path_ + "/" + name; }

  /// Writes `content` to `<dir>/<name>` and returns the path.
  std::string write(const std::string &name, const std::string &content) const {
    std::string p = file(name);
    std::ofstream out(p, std::ios::binary);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    return p;
  }

private:
  std::string path_;
};

/// The bytes of a safetensors file: length prefix (or `lengthOverride`),
/// `header` verbatim, `dataBytes` zero bytes.
inline std::string rawSafeTensors(const std::string &header, size_t dataBytes,
                                  std::optional<uint64_t> lengthOverride = {}) {
  uint64_t n = lengthOverride.value_or(header.size());
  std::string bytes;
  for (int i = 0; i < 8; ++i)
    bytes.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  bytes += header;
  bytes.append(dataBytes, '\0');
  return bytes;
}

inline const absl::Status &statusOf(const absl::Status &s) { return s; }
template <typename T> const absl::Status &statusOf(const absl::StatusOr<T> &s) {
  return s.status();
}

/// Matches a non-OK status whose message contains every given substring.
MATCHER_P(StatusHasMessage, substring, "") {
  const absl::Status &status = statusOf(arg);
  if (status.ok()) {
    *result_listener << "status is OK";
    return false;
  }
  std::string message(status.message());
  *result_listener << "message: " << message;
  return message.find(substring) != std::string::npos;
}

} // namespace qeff::hf::test

#endif // QEFF_TEST_UNIT_HF_TESTUTIL_H
