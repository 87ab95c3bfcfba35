//===- QaicTestSupport.h - Artifacts and fixtures for the fake SDK -*- C++ -*-===//
//
// The toy artifact the qaic tests open on the fake Platform SDK (manifest,
// specializations, a fake QPC whose buffer order differs from the manifest's)
// and a fixture that fails any test during which a fake SDK call would have
// blocked forever (FakeQaicControl.h).
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_TEST_UNIT_RUNTIME_QAICTESTSUPPORT_H
#define QEFF_TEST_UNIT_RUNTIME_QAICTESTSUPPORT_H

#include "FakeQaicControl.h"
#include "test/unit/Runtime/ModelBuilder.h"

#include <gmock/gmock.h>

#include <chrono>
#include <string>

namespace qeff::runtime::test {

using Dims = std::pair<uint32_t, std::vector<uint32_t>>;

inline const char *kManifest = R"({"inputs": [
  {"name": "input_ids", "dtype": "int64", "shape": ["batch_size", "seq_len"]},
  {"name": "position_ids", "dtype": "int64", "shape": ["batch_size", "seq_len"]},
  {"name": "past_key.0", "dtype": "float32", "shape": ["batch_size", 1, "ctx_len", 2]}],
 "outputs": [
  {"name": "logits", "dtype": "float32", "shape": ["batch_size", 1, 2]},
  {"name": "past_key.0_RetainedState", "dtype": "float32", "shape": ["batch_size", 1, "ctx_len", 2]}])";

inline const char *kSpecs = R"({"specializations":[
  {"name":"Prefill","symbols":{"batch_size":"1","seq_len":"4","ctx_len":"8"}},
  {"name":"Chunk","symbols":{"batch_size":"1","seq_len":"2","ctx_len":"8"}},
  {"name":"Decode","symbols":{"batch_size":"1","seq_len":"1","ctx_len":"8"}}]})";

/// The QPC qaic-compile would build from the toy cache model (KV in float16
/// as custom_io.yaml asks, its bindings partial as -retained-state makes
/// them), one allowed shape per specialization. The buffer order differs
/// from the manifest's on purpose.
inline const char *kQpc = R"({"buffers": [
  {"name": "position_ids", "dir": "in", "type": "int64", "shapes": [[1, 4], [1, 2], [1, 1]]},
  {"name": "past_key.0", "dir": "in", "type": "float16", "partial": true,
   "shapes": [[1, 1, 8, 2], [1, 1, 8, 2], [1, 1, 8, 2]]},
  {"name": "logits", "dir": "out", "type": "float32", "shapes": [[1, 1, 2], [1, 1, 2], [1, 1, 2]]},
  {"name": "input_ids", "dir": "in", "type": "int64", "shapes": [[1, 4], [1, 2], [1, 1]]},
  {"name": "past_key.0_RetainedState", "dir": "out", "type": "float16", "partial": true,
   "shapes": [[1, 1, 8, 2], [1, 1, 8, 2], [1, 1, 8, 2]]}]})";

// QPC buffer indices of kQpc.
constexpr size_t kPos = 0, kPast = 1, kLogits = 2, kIds = 3, kOut = 4;

/// `qpc` with `from` replaced by `to` (which must occur).
inline std::string qpcWith(const std::string &qpc, const std::string &from,
                           const std::string &to) {
  size_t at = qpc.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at == std::string::npos)
    return qpc;
  return qpc.substr(0, at) + to + qpc.substr(at + from.size());
}

struct QaicArtifact {
  TempDir dir;
  explicit QaicArtifact(const std::string &qpc = kQpc, bool specs = true,
                        int numDevices = 1) {
    std::string manifest = kManifest;
    if (numDevices > 1)
      manifest.insert(1, "\"num_devices\": " + std::to_string(numDevices) + ", ");
    dir.write("qeff-manifest.json", manifest + "}");
    if (specs)
      dir.write("specializations.json", kSpecs);
    std::filesystem::create_directory(dir.file("qpc"));
    dir.write("qpc/programqpc.bin", qpc);
  }
  Result<Session> open(SessionOptions options = {}) const {
    return Session::open(dir.path(), DeviceKind::Qaic, options);
  }
};

inline TensorMap step(std::vector<int64_t> ids, std::vector<int64_t> pos) {
  int64_t n = static_cast<int64_t>(ids.size());
  return {{"input_ids", Tensor::fromInt64({1, n}, ids)},
          {"position_ids", Tensor::fromInt64({1, n}, pos)}};
}

inline std::vector<float> logits(const Session &s) {
  auto t = s.getOutput("logits");
  EXPECT_TRUE(t.ok()) << t.error();
  return t.ok() ? t->toFloatVector() : std::vector<float>{};
}

/// Fresh fake state for each test, durations scaled down 1000 times, and a
/// loud failure when a call would have blocked forever on a real card.
class QaicTest : public ::testing::Test {
protected:
  void SetUp() override {
    fakeqaic::clear();
    fakeqaic::setTimeScale(0.001);
    fakeqaic::setHangDeadlineMs(2000);
  }
  void TearDown() override {
    EXPECT_THAT(fakeqaic::hangs(), ::testing::IsEmpty())
        << "a call into the SDK would have blocked forever";
  }
};

} // namespace qeff::runtime::test

#endif // QEFF_TEST_UNIT_RUNTIME_QAICTESTSUPPORT_H
