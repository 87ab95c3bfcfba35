//===- QaicDeviceTest.cpp - The qaic device against a fake Platform SDK ---===//
//
// runtime/qaic/QaicDevice.cpp and runtime/Session.cpp compiled with
// QEFF_HAVE_QAIC=1 against FakeQaicSdk (a simulated card that behaves as the
// public sources describe the runtime, see FakeQaicControl.h): what the
// device binds and in which order, how it keeps the KV cache on the card,
// how it picks the allowed shape, how SDK failures, timeouts and a withheld
// handle come back, multi-device programs and MXINT8 storage. What the real
// SDK and card do is not tested here (docs/device.md, "QAIC device").
// QaicFakeSdkTest.cpp pins the fake's own behaviour.
//
//===----------------------------------------------------------------------===//

#include "test/unit/Runtime/QaicTestSupport.h"

using namespace qeff::runtime;
using namespace qeff::runtime::test;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

TEST_F(QaicTest, IsAvailableInThisBuild) {
  std::string why = "unset";
  EXPECT_TRUE(qaicDeviceAvailable(&why));
  EXPECT_EQ(why, "");
}

TEST_F(QaicTest, BindsByNameAndKeepsTheCacheOnTheCard) {
  QaicArtifact a;
  SessionOptions options;
  options.qaicDeviceId = 3;
  auto s = a.open(options);
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_THAT(fakeqaic::contextDevices(), ElementsAre(3));
  EXPECT_THAT(s->stateNames(), ElementsAre("past_key.0"));
  EXPECT_EQ(s->inputInfos()[2].dtype, DType::Float16); // what the QPC binds

  // The card's memory starts as garbage; the first run binds zeros.
  ASSERT_TRUE(s->run(step({1, 2, 3, 4}, {0, 1, 2, 3})).ok());
  EXPECT_THAT(logits(*s), ElementsAre(10.f, 100.f));
  EXPECT_EQ(s->lastSpecialization(), "Prefill");
  ASSERT_TRUE(s->run(step({5}, {4})).ok());
  EXPECT_THAT(logits(*s), ElementsAre(15.f, 150.f));
  EXPECT_EQ(s->lastSpecialization(), "Decode");

  const auto &sub = fakeqaic::submissions();
  ASSERT_EQ(sub.size(), 2u);
  // Inputs in QPC order: position_ids, past_key.0, input_ids; outputs:
  // logits, past_key.0_RetainedState (never bound: it stays on the card).
  EXPECT_THAT(sub[0].inputSizes, ElementsAre(32, 32, 32));
  EXPECT_THAT(sub[0].outputSizes, ElementsAre(8, 0));
  EXPECT_EQ(sub[0].dims[kPast], (Dims{2, {1, 1, 8, 2}}));
  EXPECT_EQ(sub[0].dims[kOut], (Dims{2, {0}}));
  EXPECT_EQ(sub[0].dims[kIds], (Dims{8, {1, 4}}));
  EXPECT_EQ(sub[0].dims[kLogits], (Dims{4, {1, 1, 2}}));
  // Afterwards the past input is skipped too: the state is the card's.
  EXPECT_THAT(sub[1].inputSizes, ElementsAre(8, 0, 8));
  EXPECT_EQ(sub[1].dims[kPast], (Dims{2, {0}}));
  EXPECT_EQ(sub[1].dims[kPos], (Dims{8, {1, 1}}));
}

// The SDK checks buffers against the dims it knows when they are set (the
// public LLM example sets the dims first): a decode after a prefill binds
// smaller buffers, which only pass once the dims say so. Every call's status
// is checked.
TEST_F(QaicTest, SetsDimsBeforeBuffersOnEveryRun) {
  QaicArtifact a;
  auto s = a.open();
  ASSERT_TRUE(s.ok()) << s.error();
  ASSERT_TRUE(s->run(step({1, 2, 3, 4}, {0, 1, 2, 3})).ok());
  ASSERT_TRUE(s->run(step({5}, {4})).ok()) << fakeqaic::log().back();
  ASSERT_TRUE(s->run(step({6, 7}, {5, 6})).ok());
  std::vector<std::string> names;
  for (const auto &[call, status] : fakeqaic::calls()) {
    names.push_back(call);
    EXPECT_EQ(status, QS_SUCCESS) << call;
  }
  std::vector<std::string> perRun = {"setBufferDimensions", "setInputBuffers",
                                     "setOutputBuffers", "submit"};
  std::vector<std::string> want;
  for (int run = 0; run < 3; ++run)
    want.insert(want.end(), perRun.begin(), perRun.end());
  EXPECT_EQ(names, want);
  EXPECT_THAT(logits(*s), ElementsAre(28.f, 280.f));
}

TEST_F(QaicTest, ASetterFailureNamesTheCallAndKeepsTheHandle) {
  QaicArtifact a;
  auto s = a.open();
  ASSERT_TRUE(s.ok()) << s.error();
  for (const char *call : {"setBufferDimensions", "setInputBuffers", "setOutputBuffers"}) {
    fakeqaic::failNext(call, QS_NOMEM);
    Status st = s->run(step({1}, {0}));
    ASSERT_FALSE(st.ok()) << call;
    EXPECT_THAT(st.error(), HasSubstr(std::string(call) + " failed: QS_NOMEM"));
    EXPECT_THAT(st.error(), HasSubstr("input_ids [1, 1]"));
  }
  EXPECT_TRUE(fakeqaic::submissions().empty());
  ASSERT_TRUE(s->run(step({1}, {0})).ok());
  EXPECT_THAT(logits(*s), ElementsAre(1.f, 10.f));
}

TEST_F(QaicTest, ResetZeroesTheCardStateOnTheNextRunOnly) {
  QaicArtifact a;
  auto s = a.open();
  ASSERT_TRUE(s.ok()) << s.error();
  ASSERT_TRUE(s->run(step({1, 2, 3, 4}, {0, 1, 2, 3})).ok());
  s->reset();
  ASSERT_TRUE(s->run(step({2}, {0})).ok());
  EXPECT_THAT(logits(*s), ElementsAre(2.f, 20.f));
  ASSERT_TRUE(s->run(step({3}, {1})).ok());
  EXPECT_THAT(logits(*s), ElementsAre(5.f, 50.f));
  const auto &sub = fakeqaic::submissions();
  ASSERT_EQ(sub.size(), 3u);
  EXPECT_EQ(sub[1].dims[kPast], (Dims{2, {1, 1, 8, 2}}));
  EXPECT_EQ(sub[1].inputSizes[1], 32u);
  EXPECT_EQ(sub[2].dims[kPast], (Dims{2, {0}}));
}

TEST_F(QaicTest, ChunkedPrefillEqualsOneRun) {
  QaicArtifact a;
  auto s = a.open();
  ASSERT_TRUE(s.ok()) << s.error();
  ASSERT_TRUE(s->run(step({1, 2}, {0, 1})).ok());
  EXPECT_EQ(s->lastSpecialization(), "Chunk");
  ASSERT_TRUE(s->run(step({3, 4}, {2, 3})).ok());
  EXPECT_THAT(logits(*s), ElementsAre(10.f, 100.f));
}

TEST_F(QaicTest, AGivenPastInputReplacesTheCardState) {
  QaicArtifact a;
  auto s = a.open();
  ASSERT_TRUE(s.ok()) << s.error();
  TensorMap in = step({1}, {0});
  in["past_key.0"] = Tensor::fromFloat({1, 1, 8, 2}, std::vector<float>(16, 1.f));
  ASSERT_TRUE(s->run(in).ok());
  // Seven slots of ones, slot 0 overwritten with (1, 10).
  EXPECT_THAT(logits(*s), ElementsAre(8.f, 17.f));
  EXPECT_EQ(fakeqaic::submissions()[0].dims[kPast], (Dims{2, {1, 1, 8, 2}}));
}

TEST_F(QaicTest, StateIsNotReadBack) {
  QaicArtifact a;
  auto s = a.open();
  ASSERT_TRUE(s.ok()) << s.error();
  ASSERT_TRUE(s->run(step({1}, {0})).ok());
  auto st = s->readState("past_key.0_RetainedState");
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error(), HasSubstr("stays on the AI 100 card"));
  EXPECT_THAT(s->getOutput("past_key.0_RetainedState").error(), HasSubstr("readState"));
}

TEST_F(QaicTest, ShapesOutsideTheQpcListTheAllowedOnes) {
  QaicArtifact withSpecs;
  auto s = withSpecs.open();
  ASSERT_TRUE(s.ok()) << s.error();
  auto st = s->run(step({1, 2, 3}, {0, 1, 2}));
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error(), HasSubstr("match no specialization"));

  // Without specializations.json the QPC's allowed shapes decide.
  QaicArtifact bare(kQpc, /*specs=*/false);
  auto b = bare.open();
  ASSERT_TRUE(b.ok()) << b.error();
  st = b->run(step({1, 2, 3}, {0, 1, 2}));
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error(), HasSubstr("match no allowed shape of the QPC. Allowed; #0: "
                                    "input_ids [1, 4] position_ids [1, 4]; #1:"));
  EXPECT_TRUE(fakeqaic::submissions().empty());
  ASSERT_TRUE(b->run(step({1, 2}, {0, 1})).ok());
  EXPECT_THAT(logits(*b), ElementsAre(3.f, 30.f));
}

TEST_F(QaicTest, SdkFailuresAreErrorsAndResetTheState) {
  QaicArtifact a;
  auto s = a.open();
  ASSERT_TRUE(s.ok()) << s.error();
  ASSERT_TRUE(s->run(step({1, 2, 3, 4}, {0, 1, 2, 3})).ok());

  fakeqaic::failNext("getCompletedId", QS_DEV_ERROR);
  Status st = s->run(step({5}, {4}));
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error(), HasSubstr("the inference failed: QS_DEV_ERROR (device error)"));
  EXPECT_THAT(st.error(), HasSubstr("input_ids [1, 1]"));

  fakeqaic::failNext("getAvailable", QS_NOMEM);
  st = s->run(step({5}, {4}));
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error(), HasSubstr("getAvailable gave no inference handle: QS_NOMEM"));

  // A failed run resets the state: zeros are bound again.
  ASSERT_TRUE(s->run(step({5}, {4})).ok());
  EXPECT_THAT(logits(*s), ElementsAre(5.f, 50.f));
  EXPECT_EQ(fakeqaic::submissions().back().dims[kPast], (Dims{2, {1, 1, 8, 2}}));
}

// Fault injection: a failing submit, a completion that times out and a
// withheld handle each give a clear error at once; a new open works.
TEST_F(QaicTest, AFailingSubmitKeepsTheHandle) {
  QaicArtifact a;
  auto s = a.open();
  ASSERT_TRUE(s.ok()) << s.error();
  fakeqaic::failNext("submit", QS_BUSY);
  Status st = s->run(step({1}, {0}));
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error(), HasSubstr("submitting the inference failed: QS_BUSY"));
  ASSERT_TRUE(s->run(step({1}, {0})).ok()) << "the unsubmitted handle is reused";
  EXPECT_THAT(logits(*s), ElementsAre(1.f, 10.f));
}

TEST_F(QaicTest, ATimeoutIsTheProgramsDataPathTimeout) {
  QaicArtifact a;
  {
    auto s = a.open();
    ASSERT_TRUE(s.ok()) << s.error();
    ASSERT_EQ(fakeqaic::setsCreated().size(), 1u);
    EXPECT_EQ(fakeqaic::setsCreated()[0].dataPathTimeoutMs, 60000u) << "QEfficient's 60 s";
    EXPECT_EQ(fakeqaic::setsCreated()[0].devMapping, "") << "one device: no devMapping";
  }
  SessionOptions options;
  options.qaicTimeoutMs = 1500;
  auto s = a.open(options);
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_EQ(fakeqaic::setsCreated().back().dataPathTimeoutMs, 1500u);
  fakeqaic::hangNextInference();
  auto start = std::chrono::steady_clock::now();
  Status st = s->run(step({1}, {0}));
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error(), HasSubstr("QS_TIMEDOUT (timeout), status 9; the data-path timeout "
                                    "is 1500 ms (--qaic-timeout-ms)"));
  EXPECT_LT(seconds, 1.0); // 1500 ms at the fake's time scale 0.001
  ASSERT_TRUE(s->run(step({1}, {0})).ok()) << "the handle came back";

  options.qaicTimeoutMs = 0;
  auto bad = a.open(options);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error(), HasSubstr("--qaic-timeout-ms) must be 1..86400000 ms, got 0"));
}

TEST_F(QaicTest, AWithheldHandleBreaksTheSessionNotTheNextOpen) {
  QaicArtifact a;
  auto s = a.open();
  ASSERT_TRUE(s.ok()) << s.error();
  ASSERT_TRUE(s->run(step({1}, {0})).ok());
  fakeqaic::withholdNextHandle(QS_DEV_ERROR);
  Status st = s->run(step({2}, {1}));
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error(), HasSubstr("failed with QS_DEV_ERROR (device error), status 300 and "
                                    "the SDK did not hand its inference handle back"));
  EXPECT_THAT(st.error(), HasSubstr("open the artifact again"));
  // No getAvailable that would wait forever: the same error at once.
  auto start = std::chrono::steady_clock::now();
  Status again = s->run(step({2}, {1}));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error(), st.error());
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
            0.5);
  size_t submitted = fakeqaic::submissions().size();
  EXPECT_EQ(submitted, 2u);
  // A new session has an inference set of its own.
  auto fresh = a.open();
  ASSERT_TRUE(fresh.ok()) << fresh.error();
  ASSERT_TRUE(fresh->run(step({2}, {0})).ok());
  EXPECT_THAT(logits(*fresh), ElementsAre(2.f, 20.f));
}

// Retained state is skipped (dims {0}) on every run, which the runtime
// allows only for bindings with isPartialBufferAllowed.
TEST_F(QaicTest, RetainedStateBindingsMustAllowPartialBuffers) {
  QaicArtifact a(qpcWith(kQpc, "\"name\": \"past_key.0_RetainedState\", \"dir\": \"out\", "
                                "\"type\": \"float16\", \"partial\": true",
                         "\"name\": \"past_key.0_RetainedState\", \"dir\": \"out\", "
                         "\"type\": \"float16\", \"partial\": false"));
  auto s = a.open();
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error(), HasSubstr("QPC buffer 'past_key.0_RetainedState'"));
  EXPECT_THAT(s.error(), HasSubstr("does not allow partial buffers"));
  EXPECT_THAT(s.error(), HasSubstr("-retained-state"));
}

// --num-devices 4 --mxint8-kv: the program's devMapping names the group and
// a reset binds a zero buffer of the binding's own size (MXINT8 storage is
// not dims x element size).
TEST_F(QaicTest, FourDevicesWithMxint8KVOpenAndRun) {
  std::string qpc = qpcWith(kQpc, "{\"buffers\": [", "{\"num_devices\": 4, \"buffers\": [");
  qpc = qpcWith(qpc, "\"name\": \"past_key.0\", \"dir\": \"in\", \"type\": \"float16\"",
                "\"name\": \"past_key.0\", \"dir\": \"in\", \"type\": \"int8q\", \"size\": 17");
  qpc = qpcWith(qpc,
                "\"name\": \"past_key.0_RetainedState\", \"dir\": \"out\", \"type\": \"float16\"",
                "\"name\": \"past_key.0_RetainedState\", \"dir\": \"out\", \"type\": "
                "\"int8q\", \"size\": 17");
  QaicArtifact a(qpc.c_str(), true, /*numDevices=*/4);
  SessionOptions options;
  options.deviceGroup = {4, 5, 6, 7};
  auto s = a.open(options);
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_THAT(fakeqaic::contextDevices(), ElementsAre(4, 5, 6, 7));
  ASSERT_EQ(fakeqaic::setsCreated().size(), 1u);
  EXPECT_EQ(fakeqaic::setsCreated()[0].devMapping, "4:5:6:7");
  EXPECT_EQ(fakeqaic::setsCreated()[0].device, 4);
  EXPECT_EQ(fakeqaic::setsCreated()[0].dataPathTimeoutMs, 60000u);

  ASSERT_TRUE(s->run(step({1, 2, 3, 4}, {0, 1, 2, 3})).ok()) << fakeqaic::log().back();
  EXPECT_THAT(logits(*s), ElementsAre(10.f, 100.f));
  ASSERT_TRUE(s->run(step({5}, {4})).ok());
  EXPECT_THAT(logits(*s), ElementsAre(15.f, 150.f));
  s->reset();
  ASSERT_TRUE(s->run(step({2}, {0})).ok());
  EXPECT_THAT(logits(*s), ElementsAre(2.f, 20.f));
  const auto &sub = fakeqaic::submissions();
  ASSERT_EQ(sub.size(), 3u);
  EXPECT_EQ(sub[0].inputSizes[kPast], 17u);
  EXPECT_EQ(sub[0].dims[kPast], (Dims{1, {1, 1, 8, 2}}));
  EXPECT_EQ(sub[1].dims[kPast], (Dims{1, {0}}));
  EXPECT_EQ(sub[2].inputSizes[kPast], 17u);

  // qeff cannot write MXINT8 storage itself.
  TensorMap in = step({1}, {0});
  in["past_key.0"] = Tensor::fromFloat({1, 1, 8, 2}, std::vector<float>(16, 1.f));
  Status st = s->run(in);
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error(), HasSubstr("'past_key.0' is bound to quantized storage"));
}

TEST_F(QaicTest, AMultiDeviceQpcNeedsTheWholeGroup) {
  QaicArtifact a(qpcWith(kQpc, "{\"buffers\": [", "{\"num_devices\": 2, \"buffers\": [").c_str(),
                 true, /*numDevices=*/2);
  SessionOptions options;
  options.deviceGroup = {1, 3};
  auto s = a.open(options);
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_EQ(fakeqaic::setsCreated()[0].devMapping, "1:3");
  ASSERT_TRUE(s->run(step({1}, {0})).ok());
}

/// kQpc with logits of another buffer type.
std::string qpcWithLogits(const std::string &type) {
  return qpcWith(kQpc, "\"name\": \"logits\", \"dir\": \"out\", \"type\": \"float32\"",
                 "\"name\": \"logits\", \"dir\": \"out\", \"type\": \"" + type + "\"");
}

TEST_F(QaicTest, BFloat16BuffersAreConverted) {
  QaicArtifact a(qpcWithLogits("bfloat16"));
  auto s = a.open();
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_EQ(s->outputInfos()[0].dtype, DType::Float32);
  ASSERT_TRUE(s->run(step({1, 2, 3, 4}, {0, 1, 2, 3})).ok());
  EXPECT_THAT(logits(*s), ElementsAre(10.f, 100.f));
  EXPECT_EQ(fakeqaic::submissions()[0].dims[kLogits], (Dims{2, {1, 1, 2}}));
  EXPECT_EQ(fakeqaic::submissions()[0].outputSizes[0], 4u);
}

TEST_F(QaicTest, OpaqueStorageIsForRetainedStateOnly) {
  QaicArtifact a(qpcWithLogits("float64c"));
  auto s = a.open();
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error(), HasSubstr("QPC buffer 'logits' has quantized or complex storage"));
}

TEST_F(QaicTest, OpenErrorsNameTheCause) {
  {
    QaicArtifact a;
    fakeqaic::failNext("Qpc::Factory");
    auto s = a.open();
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.error(), HasSubstr("qaic: opening"));
    EXPECT_THAT(s.error(), HasSubstr("Qpc::Factory: injected failure"));
  }
  {
    QaicArtifact a;
    fakeqaic::failNext("InferenceSet::Factory");
    auto s = a.open();
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.error(), HasSubstr("loading the QPC on device 0"));
  }
  {
    QaicArtifact a;
    std::filesystem::remove(a.dir.file("qpc/programqpc.bin"));
    auto s = a.open();
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.error(), HasSubstr("has no QPC"));
    EXPECT_THAT(s.error(), HasSubstr("qaic-compile.sh"));
  }
  {
    QaicArtifact a(R"({"buffers": [
      {"name": "input_ids", "dir": "in", "type": "int64", "shapes": [[1, 4]]},
      {"name": "position_ids", "dir": "in", "type": "int64", "shapes": [[1, 4]]},
      {"name": "past_key.0", "dir": "in", "type": "float16", "shapes": [[1, 1, 8, 2]], "partial": true},
      {"name": "past_key.0_RetainedState", "dir": "out", "type": "float16", "shapes": [[1, 1, 8, 2]], "partial": true}]})");
    auto s = a.open();
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.error(), HasSubstr("the QPC has no output buffer 'logits'"));
  }
  {
    QaicArtifact a;
    SessionOptions fp16;
    fp16.numerics = Numerics::FP16;
    auto s = a.open(fp16);
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.error(), HasSubstr("host-device options"));
  }
  {
    QaicArtifact a;
    auto s = Session::open(a.dir.file("qeff-manifest.json"), DeviceKind::Qaic);
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.error(), HasSubstr("is not a directory"));
  }
}

} // namespace
