//===- FuzzUtil.h - helpers of the libFuzzer targets ------------*- C++ -*-===//
//
// Part of qeff. Targets whose API reads files get the input as a file in a
// per-process scratch directory (under /dev/shm when present).
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_TEST_FUZZ_FUZZUTIL_H
#define QEFF_TEST_FUZZ_FUZZUTIL_H

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include <sys/stat.h>
#include <unistd.h>

namespace qeff::fuzz {

/// A scratch directory of this process.
inline const std::string &scratchDir() {
  static const std::string dir = [] {
    std::string base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    std::string d = base + "/qeff-fuzz-" + std::to_string(getpid());
    mkdir(d.c_str(), 0700);
    return d;
  }();
  return dir;
}

/// Writes `bytes` to scratchDir()/name and returns the path.
inline std::string writeScratch(const std::string &name, std::string_view bytes) {
  std::string path = scratchDir() + "/" + name;
  if (FILE *f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  }
  return path;
}

/// The input split at the first "\n----\n" (two documents), else all/empty.
inline std::pair<std::string_view, std::string_view> splitTwo(const uint8_t *data,
                                                              size_t size) {
  std::string_view all(reinterpret_cast<const char *>(data), size);
  size_t at = all.find("\n----\n");
  if (at == std::string_view::npos)
    return {all, {}};
  return {all.substr(0, at), all.substr(at + 6)};
}

} // namespace qeff::fuzz

#endif // QEFF_TEST_FUZZ_FUZZUTIL_H
