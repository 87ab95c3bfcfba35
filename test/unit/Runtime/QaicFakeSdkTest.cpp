//===- QaicFakeSdkTest.cpp - The fake Platform SDK behaves as documented --===//
//
// Pins the behaviours of FakeQaicSdk that the qaic device tests rely on, each
// taken from a public source or marked a guess in QAicApi.hpp: getAvailable
// blocks until a handle is put back; buffers are checked against the dims
// known when they are set; skipping a binding without isPartialBufferAllowed,
// a wrong element size or dims outside the allowed shapes fail the
// inference; a multi-device program needs programProperties.devMapping.
//
//===----------------------------------------------------------------------===//

#include "test/unit/Runtime/QaicTestSupport.h"

#include <atomic>
#include <thread>

using namespace qeff::runtime::test;
using ::testing::Contains;
using ::testing::HasSubstr;

namespace {

using DimsList = std::vector<std::pair<uint32_t, std::vector<uint32_t>>>;

struct FakeCard {
  QaicArtifact artifact;
  qaic::rt::shContext context;
  qaic::rt::shQpc qpc;
  explicit FakeCard(const std::string &qpcText = kQpc) : artifact(qpcText) {
    context = qaic::rt::Context::Factory(nullptr, {0});
    qpc = qaic::rt::Qpc::Factory(artifact.dir.file("qpc"));
  }
  qaic::rt::shInferenceSet set(uint32_t setSize = 1) {
    return qaic::rt::InferenceSet::Factory(context, qpc, 0, setSize, 1);
  }
};

/// Decode dims for kQpc: position_ids, past_key.0, logits, input_ids,
/// past_key.0_RetainedState.
DimsList decodeDims(uint32_t pastElem = 2) {
  return {{8, {1, 1}}, {pastElem, {0}}, {4, {1, 1, 2}}, {8, {1, 1}}, {2, {0}}};
}

struct DecodeBuffers {
  int64_t pos = 0, ids = 1;
  float logits[2] = {};
  std::vector<QBuffer> in() {
    return {{8, reinterpret_cast<uint8_t *>(&pos)}, {0, nullptr},
            {8, reinterpret_cast<uint8_t *>(&ids)}};
  }
  std::vector<QBuffer> out() {
    return {{8, reinterpret_cast<uint8_t *>(logits)}, {0, nullptr}};
  }
};

TEST_F(QaicTest, FakeGetAvailableBlocksUntilAHandleIsPutBack) {
  FakeCard card;
  auto set = card.set(1);
  qaic::rt::shInferenceHandle first, second;
  ASSERT_EQ(set->getAvailable(first), QS_SUCCESS);
  std::atomic<bool> put{false};
  std::thread putter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    put = true;
    set->putCompleted(std::move(first));
  });
  EXPECT_EQ(set->getAvailable(second), QS_SUCCESS);
  EXPECT_TRUE(put) << "getAvailable returned before a handle was put back";
  putter.join();
  // Nothing put back: the real call never returns; the fake records a hang.
  fakeqaic::setHangDeadlineMs(50);
  qaic::rt::shInferenceHandle third;
  EXPECT_EQ(set->getAvailable(third), QS_TIMEDOUT);
  EXPECT_THAT(fakeqaic::hangs(), Contains(HasSubstr("getAvailable")));
  fakeqaic::hangs().clear(); // expected here
}

TEST_F(QaicTest, FakeChecksBuffersAgainstTheDimsKnownWhenSet) {
  FakeCard card;
  auto set = card.set();
  qaic::rt::shInferenceHandle h;
  ASSERT_EQ(set->getAvailable(h), QS_SUCCESS);
  DecodeBuffers b;
  // A fresh handle knows the full (prefill) dims: decode buffers are refused.
  EXPECT_EQ(h->setInputBuffers(b.in()), QS_INVAL);
  EXPECT_EQ(set->submit(h, 0), QS_INVAL) << "buffers not set";
  ASSERT_EQ(h->setBufferDimensions(decodeDims()), QS_SUCCESS);
  ASSERT_EQ(h->setInputBuffers(b.in()), QS_SUCCESS);
  ASSERT_EQ(h->setOutputBuffers(b.out()), QS_SUCCESS);
  ASSERT_EQ(set->submit(h, 7), QS_SUCCESS);
  qaic::rt::shInferenceHandle done;
  EXPECT_EQ(set->getCompletedId(done, 7), QS_SUCCESS);
  EXPECT_TRUE(done);
}

TEST_F(QaicTest, FakeFailsSkippedNonPartialBuffersAndWrongElementSizes) {
  for (bool partial : {false, true}) {
    SCOPED_TRACE(partial);
    std::string qpc = partial ? std::string(kQpc)
                              : qpcWith(kQpc,
                                        "\"name\": \"past_key.0\", \"dir\": \"in\", \"type\": "
                                        "\"float16\", \"partial\": true",
                                        "\"name\": \"past_key.0\", \"dir\": \"in\", \"type\": "
                                        "\"float16\"");
    FakeCard card(qpc);
    auto set = card.set();
    qaic::rt::shInferenceHandle h, done;
    ASSERT_EQ(set->getAvailable(h), QS_SUCCESS);
    DecodeBuffers b;
    ASSERT_EQ(h->setBufferDimensions(decodeDims()), QS_SUCCESS);
    ASSERT_EQ(h->setInputBuffers(b.in()), QS_SUCCESS);
    ASSERT_EQ(h->setOutputBuffers(b.out()), QS_SUCCESS);
    ASSERT_EQ(set->submit(h, 0), QS_SUCCESS);
    EXPECT_EQ(set->getCompletedId(done, 0), partial ? QS_SUCCESS : QS_INVAL);
    if (!partial)
      EXPECT_THAT(fakeqaic::log(), Contains("Partial buffer not allowed for past_key.0"));
  }
  // The element size must be the binding type's (8 for int64).
  FakeCard card;
  auto set = card.set();
  qaic::rt::shInferenceHandle h, done;
  ASSERT_EQ(set->getAvailable(h), QS_SUCCESS);
  DimsList dims = decodeDims();
  dims[kIds].first = 4;
  DecodeBuffers b;
  ASSERT_EQ(h->setBufferDimensions(dims), QS_SUCCESS);
  ASSERT_EQ(h->setInputBuffers(b.in()), QS_SUCCESS);
  ASSERT_EQ(h->setOutputBuffers(b.out()), QS_SUCCESS);
  ASSERT_EQ(set->submit(h, 0), QS_SUCCESS);
  EXPECT_EQ(set->getCompletedId(done, 0), QS_INVAL);
  EXPECT_THAT(fakeqaic::log().back(), HasSubstr("'input_ids': element size 4"));
}

TEST_F(QaicTest, FakeMultiDeviceProgramsNeedDevMapping) {
  std::string qpc = qpcWith(kQpc, "{\"buffers\": [", "{\"num_devices\": 2, \"buffers\": [");
  QaicArtifact artifact(qpc);
  auto context = qaic::rt::Context::Factory(nullptr, {0, 1});
  auto program = qaic::rt::Qpc::Factory(artifact.dir.file("qpc"));
  EXPECT_THROW(qaic::rt::InferenceSet::Factory(context, program, 0, 1, 1),
               qaic::rt::CoreExceptionInit);
  qaic::rt::InferenceSetProperties properties;
  properties.programProperties.devMapping = "0:2";
  EXPECT_THROW(qaic::rt::InferenceSet::Factory(context, program, 0, 1, 1, &properties),
               qaic::rt::CoreExceptionInit)
      << "device 2 is not in the context";
  properties.programProperties.devMapping = "0:1";
  EXPECT_NO_THROW(qaic::rt::InferenceSet::Factory(context, program, 0, 1, 1, &properties));
  // A single-device program takes no devMapping.
  FakeCard single;
  properties.programProperties.devMapping = "0:1";
  EXPECT_THROW(qaic::rt::InferenceSet::Factory(single.context, single.qpc, 0, 1, 1,
                                               &properties),
               qaic::rt::CoreExceptionInit);
}

} // namespace
