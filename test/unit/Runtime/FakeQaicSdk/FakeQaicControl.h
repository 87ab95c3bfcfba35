//===- FakeQaicControl.h - What the fake AI 100 saw, and its faults -*- C++
//-*-===//
//
// TEST ONLY. The fake SDK (QAicApi.hpp, FakeQaicSdk.cpp) records every
// submitted inference and can be told to fail a call, so that the qaic
// device's binding, retained-state and error handling can be checked.
//
// The fake QPC is a JSON file (programqpc.bin) written by the test:
//   {"buffers": [{"name": "input_ids", "dir": "in", "type": "int64",
//                 "shapes": [[1, 4], [1, 1]]}, ...]}
// buffer i has index i. The simulated card runs one toy network on the
// buffers it finds (input_ids, position_ids, past_key.0, logits,
// past_key.0_RetainedState): every token t at position p writes (t, 10 t)
// into slot p of the cache (position -1: the last slot), and logits is the
// sum of the cache over its slots. The cache stays on the card between
// inferences unless past_key.0 is bound with data.
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
};

std::vector<Submission> &submissions();
/// Devices of the contexts created.
std::vector<QID> &contextDevices();
/// The next call named `call` ("Context::Factory", "Qpc::Factory",
/// "InferenceSet::Factory", "getAvailable", "submit", "getCompletedId")
/// fails: factories throw, the rest return `status`.
void failNext(const std::string &call, QStatus status = QS_ERROR);
/// Forgets submissions, contexts and pending failures.
void clear();

} // namespace fakeqaic

#endif // QEFF_TEST_FAKE_FAKEQAICCONTROL_H
