//===- QaicDeviceTest.cpp - The qaic device against a fake Platform SDK ---===//
//
// runtime/qaic/QaicDevice.cpp and runtime/Session.cpp compiled with
// QEFF_HAVE_QAIC=1 against FakeQaicSdk (a simulated card, see
// FakeQaicControl.h): what the device binds, how it keeps the KV cache on the
// card, how it picks the allowed shape and how SDK failures come back. What
// the real SDK and card do is not tested here (docs/device.md, "QAIC device").
//
//===----------------------------------------------------------------------===//

#include "FakeQaicControl.h"
#include "test/unit/Runtime/ModelBuilder.h"

#include <gmock/gmock.h>

using namespace qeff::runtime;
using namespace qeff::runtime::test;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

using Dims = std::pair<uint32_t, std::vector<uint32_t>>;

const char *kManifest = R"({"inputs": [
  {"name": "input_ids", "dtype": "int64", "shape": ["batch_size", "seq_len"]},
  {"name": "position_ids", "dtype": "int64", "shape": ["batch_size", "seq_len"]},
  {"name": "past_key.0", "dtype": "float32", "shape": ["batch_size", 1, "ctx_len", 2]}],
 "outputs": [
  {"name": "logits", "dtype": "float32", "shape": ["batch_size", 1, 2]},
  {"name": "past_key.0_RetainedState", "dtype": "float32", "shape": ["batch_size", 1, "ctx_len", 2]}]})";

const char *kSpecs = R"({"specializations":[
  {"name":"Prefill","symbols":{"batch_size":"1","seq_len":"4","ctx_len":"8"}},
  {"name":"Chunk","symbols":{"batch_size":"1","seq_len":"2","ctx_len":"8"}},
  {"name":"Decode","symbols":{"batch_size":"1","seq_len":"1","ctx_len":"8"}}]})";

/// The QPC qaic-compile would build from the toy cache model (KV in float16
/// as custom_io.yaml asks), one allowed shape per specialization. The
/// buffer order differs from the manifest's on purpose.
const char *kQpc = R"({"buffers": [
  {"name": "position_ids", "dir": "in", "type": "int64", "shapes": [[1, 4], [1, 2], [1, 1]]},
  {"name": "past_key.0", "dir": "in", "type": "float16",
   "shapes": [[1, 1, 8, 2], [1, 1, 8, 2], [1, 1, 8, 2]]},
  {"name": "logits", "dir": "out", "type": "float32", "shapes": [[1, 1, 2], [1, 1, 2], [1, 1, 2]]},
  {"name": "input_ids", "dir": "in", "type": "int64", "shapes": [[1, 4], [1, 2], [1, 1]]},
  {"name": "past_key.0_RetainedState", "dir": "out", "type": "float16",
   "shapes": [[1, 1, 8, 2], [1, 1, 8, 2], [1, 1, 8, 2]]}]})";

// QPC buffer indices of kQpc.
constexpr size_t kPos = 0, kPast = 1, kLogits = 2, kIds = 3, kOut = 4;

struct QaicArtifact {
  TempDir dir;
  explicit QaicArtifact(const char *qpc = kQpc, bool specs = true) {
    dir.write("qeff-manifest.json", kManifest);
    if (specs)
      dir.write("specializations.json", kSpecs);
    std::filesystem::create_directory(dir.file("qpc"));
    dir.write("qpc/programqpc.bin", qpc);
    fakeqaic::clear();
  }
  Result<Session> open(SessionOptions options = {}) const {
    return Session::open(dir.path(), DeviceKind::Qaic, options);
  }
};

TensorMap step(std::vector<int64_t> ids, std::vector<int64_t> pos) {
  int64_t n = static_cast<int64_t>(ids.size());
  return {{"input_ids", Tensor::fromInt64({1, n}, ids)},
          {"position_ids", Tensor::fromInt64({1, n}, pos)}};
}

std::vector<float> logits(const Session &s) {
  auto t = s.getOutput("logits");
  EXPECT_TRUE(t.ok()) << t.error();
  return t.ok() ? t->toFloatVector() : std::vector<float>{};
}

TEST(QaicDevice, IsAvailableInThisBuild) {
  std::string why = "unset";
  EXPECT_TRUE(qaicDeviceAvailable(&why));
  EXPECT_EQ(why, "");
}

TEST(QaicDevice, BindsByNameAndKeepsTheCacheOnTheCard) {
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

TEST(QaicDevice, ResetZeroesTheCardStateOnTheNextRunOnly) {
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

TEST(QaicDevice, ChunkedPrefillEqualsOneRun) {
  QaicArtifact a;
  auto s = a.open();
  ASSERT_TRUE(s.ok()) << s.error();
  ASSERT_TRUE(s->run(step({1, 2}, {0, 1})).ok());
  EXPECT_EQ(s->lastSpecialization(), "Chunk");
  ASSERT_TRUE(s->run(step({3, 4}, {2, 3})).ok());
  EXPECT_THAT(logits(*s), ElementsAre(10.f, 100.f));
}

TEST(QaicDevice, AGivenPastInputReplacesTheCardState) {
  QaicArtifact a;
  auto s = a.open();
  ASSERT_TRUE(s.ok()) << s.error();
  TensorMap in = step({1}, {0});
  in["past_key.0"] =
      Tensor::fromFloat({1, 1, 8, 2}, std::vector<float>(16, 1.f));
  ASSERT_TRUE(s->run(in).ok());
  // Seven slots of ones, slot 0 overwritten with (1, 10).
  EXPECT_THAT(logits(*s), ElementsAre(8.f, 17.f));
  EXPECT_EQ(fakeqaic::submissions()[0].dims[kPast], (Dims{2, {1, 1, 8, 2}}));
}

TEST(QaicDevice, StateIsNotReadBack) {
  QaicArtifact a;
  auto s = a.open();
  ASSERT_TRUE(s.ok()) << s.error();
  ASSERT_TRUE(s->run(step({1}, {0})).ok());
  auto st = s->readState("past_key.0_RetainedState");
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error(), HasSubstr("stays on the AI 100 card"));
  EXPECT_THAT(s->getOutput("past_key.0_RetainedState").error(),
              HasSubstr("readState"));
}

TEST(QaicDevice, ShapesOutsideTheQpcListTheAllowedOnes) {
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
  EXPECT_THAT(st.error(),
              HasSubstr("match no allowed shape of the QPC. Allowed; #0: "
                        "input_ids [1, 4] position_ids [1, 4]; #1:"));
  EXPECT_TRUE(fakeqaic::submissions().empty());
  ASSERT_TRUE(b->run(step({1, 2}, {0, 1})).ok());
  EXPECT_THAT(logits(*b), ElementsAre(3.f, 30.f));
}

TEST(QaicDevice, SdkFailuresAreErrorsAndResetTheState) {
  QaicArtifact a;
  auto s = a.open();
  ASSERT_TRUE(s.ok()) << s.error();
  ASSERT_TRUE(s->run(step({1, 2, 3, 4}, {0, 1, 2, 3})).ok());

  fakeqaic::failNext("getCompletedId", QS_TIMEDOUT);
  Status st = s->run(step({5}, {4}));
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(
      st.error(),
      HasSubstr("the inference failed: QS_TIMEDOUT (timeout), status 9"));
  EXPECT_THAT(st.error(), HasSubstr("input_ids [1, 1]"));

  fakeqaic::failNext("submit", QS_BUSY);
  st = s->run(step({5}, {4}));
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error(),
              HasSubstr("submitting the inference failed: QS_BUSY"));

  fakeqaic::failNext("getAvailable", QS_NOMEM);
  ASSERT_TRUE(s->run(step({5}, {4})).ok())
      << "the unsubmitted handle is reused";
  // A failed run resets the state: zeros were bound again.
  EXPECT_THAT(logits(*s), ElementsAre(5.f, 50.f));
  EXPECT_EQ(fakeqaic::submissions().back().dims[kPast],
            (Dims{2, {1, 1, 8, 2}}));
  fakeqaic::failNext("getAvailable", QS_NOMEM);
  st = s->run(step({6}, {5}));
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error(), HasSubstr("no inference handle available: QS_NOMEM"));
}

TEST(QaicDevice, OpenErrorsNameTheCause) {
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
      {"name": "past_key.0", "dir": "in", "type": "float16", "shapes": [[1, 1, 8, 2]]},
      {"name": "past_key.0_RetainedState", "dir": "out", "type": "float16", "shapes": [[1, 1, 8, 2]]}]})");
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
