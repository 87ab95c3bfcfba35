//===- FakeQaicControl.h - What the fake AI 100 saw, and its faults -*- C++ -*-===//
//
// TEST ONLY. The fake SDK (QAicApi.hpp, FakeQaicSdk.cpp) records what the
// code under test did and can be told to fail, so that the qaic device's
// binding, retained-state, timeout and error handling can be checked.
//
// The fake QPC is a JSON file (programqpc.bin) written by the test:
//   {"num_devices": 1,
//    "buffers": [{"name": "input_ids", "dir": "in", "type": "int64",
//                 "shapes": [[1, 4], [1, 1]], "partial": false,
//                 "size": 1234}, ...]}
// Buffer i has index i. "type" is float32, float16, bfloat16, int64, int32,
// int32q, int16q, int8, int8q, uint8, uint8q or float64c. "partial" is the
// binding's isPartialBufferAllowed (default false). "size" overrides the
// binding's byte size, for storage whose bytes are not dims x element size
// (the MXINT8 KV cache: its layout is not public, so the fake only takes an
// all-zero buffer of exactly that size). "num_devices" > 1 makes a program
// that needs programProperties.devMapping.
//
// The simulated card runs one toy network on the buffers it finds
// (input_ids, position_ids, past_key.0, logits, past_key.0_RetainedState):
// every token t at position p writes (t, 10 t) into slot p of the cache
// (position -1: the last slot), and logits is the sum of the cache over its
// slots. The cache stays on the card between inferences unless past_key.0 is
// bound with data; its memory starts as garbage (7.0), so zeroing shows.
//
// Blocking calls: getAvailable blocks until a handle is put back, and
// getCompletedId until the inference completes or the data-path timeout
// passes, as the SDK documents. Where the real call would wait forever, the
// fake gives up after a test-only deadline, records the hang in hangs() and
// returns QS_TIMEDOUT: the test fixture fails on any recorded hang, so a
// hang is a loud failure, never a stuck CI job.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_TEST_FAKE_FAKEQAICCONTROL_H
#define QEFF_TEST_FAKE_FAKEQAICCONTROL_H

#include "QAicApi.hpp"

#include <string>
#include <vector>

namespace fakeqaic {

/// One submitted inference, as the card received it.
struct Submission {
  std::vector<size_t> inputSizes, outputSizes; ///< QBuffer sizes, in order
  std::vector<std::pair<uint32_t, std::vector<uint32_t>>> dims; ///< by buffer
  QStatus result = QS_SUCCESS; ///< the status the inference completed with
};
std::vector<Submission> &submissions();

/// Devices of the contexts created.
std::vector<QID> &contextDevices();

/// One InferenceSet::Factory call that succeeded.
struct SetCreated {
  QID device = 0;
  uint32_t setSize = 0, numActivations = 0;
  bool hasProperties = false;
  std::string devMapping;
  uint32_t dataPathTimeoutMs = 0; ///< as given (0: the kernel's default)
};
std::vector<SetCreated> &setsCreated();

/// Every call of the handle setters and the set's submit, in order, with the
/// status returned: "setBufferDimensions", "setInputBuffers",
/// "setOutputBuffers", "submit".
std::vector<std::pair<std::string, QStatus>> &calls();

/// Why the card failed inferences and setters ("Partial buffer not allowed
/// for past_key.0", ...), in order.
std::vector<std::string> &log();

/// Blocking calls that would never have returned on a real card.
std::vector<std::string> &hangs();

/// The next call named `call` ("Context::Factory", "Qpc::Factory",
/// "InferenceSet::Factory", "getAvailable", "setBufferDimensions",
/// "setInputBuffers", "setOutputBuffers", "submit", "getCompletedId")
/// fails: factories throw, the rest return `status` (getCompletedId still
/// hands the handle back).
void failNext(const std::string &call, QStatus status = QS_ERROR);
/// The next submitted inference never completes: getCompletedId waits the
/// set's data-path timeout (scaled by setTimeScale) and returns QS_TIMEDOUT
/// with the handle.
void hangNextInference();
/// The next getCompletedId fails with `status` and keeps the handle: the
/// set has one handle less from then on.
void withholdNextHandle(QStatus status = QS_ERROR);

/// Real durations (the data-path timeout) are multiplied by `scale` (tests
/// use 0.001: 60000 ms become 60 ms).
void setTimeScale(double scale);
/// How long a call that would block forever waits before it is recorded in
/// hangs() (default 2000 ms).
void setHangDeadlineMs(int ms);

/// Forgets every record, pending fault and setting.
void clear();

} // namespace fakeqaic

#endif // QEFF_TEST_FAKE_FAKEQAICCONTROL_H
