//===- GoldenArtifact.h - golden checkpoints compiled for the host --------===//
//
// Part of qeff. What the runtime tests that compile a golden checkpoint
// share: its directory under the test data, and "compile with these options
// (no qaic-compile), then open the artifact on the host device", with any
// failure reported to GoogleTest.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_TEST_UNIT_RUNTIME_GOLDENARTIFACT_H
#define QEFF_TEST_UNIT_RUNTIME_GOLDENARTIFACT_H

#include "qeff/compile/Compile.h"
#include "qeff/runtime/Session.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace qeff::runtime::test {

/// The directory of golden checkpoint `name` in the test data.
inline std::string goldenDir(const std::string &name) {
  return std::string(QEFF_TEST_DATA_DIR) + "/golden/" + name;
}

/// `options` compiled (qaic-compile off) and its output opened on the host
/// with `sessionOptions`; nullopt, with a test failure, when either fails.
inline std::optional<Session> compileAndOpenOnHost(qeff::compile::Options options,
                                                   const SessionOptions &sessionOptions) {
  options.runQAic = false;
  auto compiled = qeff::compile::compileCheckpoint(options);
  EXPECT_TRUE(compiled) << compiled.message;
  if (!compiled)
    return std::nullopt;
  auto s = Session::open(options.outputDir, DeviceKind::Host, sessionOptions);
  EXPECT_TRUE(s.ok()) << s.error();
  if (!s.ok())
    return std::nullopt;
  return std::move(*s);
}

} // namespace qeff::runtime::test

#endif // QEFF_TEST_UNIT_RUNTIME_GOLDENARTIFACT_H
