//===- SessionTest.cpp - Session: specializations, retained state, fp16 ----===//

#include "test/unit/Runtime/ModelBuilder.h"

#include <gmock/gmock.h>

#include <cmath>

using namespace qeff::runtime;
using namespace qeff::runtime::test;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

/// What the toy models share: E[v] = (v, 10 v); upd = E[input_ids] as
/// [B, 1, S, 2]; pos = position_ids as [B, 1, S, 1]; z = zeros like pos.
void addToyUpdate(ModelBuilder &b) {
  std::vector<float> e;
  for (int v = 0; v < 16; ++v) {
    e.push_back(v);
    e.push_back(10.f * v);
  }
  b.initF32("E", {16, 2}, e);
  b.initI64("axes13", {2}, {1, 3});
  b.initI64("axis1", {1}, {1});
  b.initI64("axis2", {1}, {2});
  b.initI64("zero", {}, {0});
  b.node("Gather", {"E", "input_ids"}, {"emb"});
  b.node("Unsqueeze", {"emb", "axis1"}, {"upd"});
  b.node("Unsqueeze", {"position_ids", "axes13"}, {"pos"});
  b.node("Mul", {"pos", "zero"}, {"z"});
}

/// A toy KV-cache model following the device contract:
///   emb   = Gather(E, input_ids)                       [1, S, 2], E[v] = (v, 10 v)
///   idx   = (0, 0, position_ids) per token              [1, 1, S, 3]
///   past_key.0_RetainedState = ScatterND(past_key.0, idx, emb) [1, 1, ctx_len, 2]
///   logits = ReduceSum(past_key.0_RetainedState, axis 2)      [1, 1, 2]
/// so logits is the sum of everything cached so far.
ModelBuilder cacheModel() {
  ModelBuilder b;
  b.input("input_ids", I64, {"batch_size", "seq_len"});
  b.input("position_ids", I64, {"batch_size", "seq_len"});
  b.input("past_key.0", F32, {"batch_size", "1", "ctx_len", "2"});
  b.output("logits", F32, {"batch_size", "1", "2"});
  b.output("past_key.0_RetainedState", F32, {"batch_size", "1", "ctx_len", "2"});
  addToyUpdate(b);
  attr(b.node("Concat", {"z", "z", "pos"}, {"idx"}), "axis", -1);
  b.node("ScatterND", {"past_key.0", "idx", "upd"}, {"past_key.0_RetainedState"}, "write_back");
  b.node("ReduceSum", {"past_key.0_RetainedState", "axis2"}, {"logits"});
  return b;
}

const char *kSpecs = R"({"specializations":[
  {"name":"Prefill","symbols":{"batch_size":"1","seq_len":"4","ctx_len":"8"}},
  {"name":"Chunk","symbols":{"batch_size":"1","seq_len":"2","ctx_len":"8"}},
  {"name":"Decode","symbols":{"batch_size":"1","seq_len":"1","ctx_len":"8"}}]})";

TensorMap step(std::vector<int64_t> ids, std::vector<int64_t> pos) {
  int64_t n = static_cast<int64_t>(ids.size());
  return {{"input_ids", Tensor::fromInt64({1, n}, ids)},
          {"position_ids", Tensor::fromInt64({1, n}, pos)}};
}

struct CacheArtifact {
  TempDir dir;
  CacheArtifact() {
    cacheModel().save(dir);
    dir.write("specializations.json", kSpecs);
  }
};

std::vector<float> logits(const Session &s) {
  auto t = s.getOutput("logits");
  EXPECT_TRUE(t.ok()) << t.error();
  return t.ok() ? floats(*t) : std::vector<float>{};
}

TEST(Session, RetainedStatePersistsBetweenRunsAndResetClearsIt) {
  CacheArtifact a;
  auto s = Session::open(a.dir.path(), DeviceKind::Host);
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_THAT(s->stateNames(), ElementsAre("past_key.0"));
  ASSERT_TRUE(s->run(step({1, 2, 3, 4}, {0, 1, 2, 3})).ok());
  EXPECT_EQ(s->lastSpecialization(), "Prefill");
  EXPECT_THAT(logits(*s), ElementsAre(10, 100));
  // The retained output is not an ordinary output; readState copies it.
  EXPECT_FALSE(s->getOutput("past_key.0_RetainedState").ok());
  EXPECT_EQ(s->outputs().count("past_key.0_RetainedState"), 0u);
  auto st = s->readState("past_key.0");
  ASSERT_TRUE(st.ok()) << st.error();
  EXPECT_EQ(st->shape(), Shape({1, 1, 8, 2}));
  EXPECT_THAT(floats(*st), ElementsAre(1, 10, 2, 20, 3, 30, 4, 40, 0, 0, 0, 0, 0, 0, 0, 0));

  ASSERT_TRUE(s->run(step({5}, {4})).ok());
  EXPECT_EQ(s->lastSpecialization(), "Decode");
  EXPECT_THAT(logits(*s), ElementsAre(15, 150));
  ASSERT_TRUE(s->run(step({6}, {5})).ok());
  EXPECT_THAT(logits(*s), ElementsAre(21, 210));
  // The copy handed out earlier is not affected by later runs.
  EXPECT_EQ(floats(*st)[8], 0.f);

  s->reset();
  EXPECT_THAT(floats(*s->readState("past_key.0_RetainedState")), ElementsAreArray(std::vector<float>(16, 0.f)));
  ASSERT_TRUE(s->run(step({7}, {0})).ok());
  EXPECT_THAT(logits(*s), ElementsAre(7, 70));
}

TEST(Session, MaxTensorBytesBoundsTheRetainedState) {
  CacheArtifact a;
  SessionOptions options;
  options.maxTensorBytes = 32; // past_key.0 is [1, 1, 8, 2] f32: 64 bytes
  auto s = Session::open(a.dir.path(), DeviceKind::Host, options);
  ASSERT_TRUE(s.ok()) << s.error();
  Status st = s->run(step({1, 2, 3, 4}, {0, 1, 2, 3}));
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error(), HasSubstr("retained-state input 'past_key.0' [1, 1, 8, 2] needs 64 "
                                    "bytes, more than the session's limit of 32"));
}

TEST(Session, ChunkedPrefillEqualsOneRun) {
  CacheArtifact a;
  auto whole = Session::open(a.dir.path(), DeviceKind::Host);
  auto chunked = Session::open(a.dir.path(), DeviceKind::Host);
  ASSERT_TRUE(whole.ok() && chunked.ok());
  ASSERT_TRUE(whole->run(step({3, 1, 4, 1}, {0, 1, 2, 3})).ok());
  ASSERT_TRUE(chunked->run(step({3, 1}, {0, 1})).ok());
  EXPECT_EQ(chunked->lastSpecialization(), "Chunk");
  ASSERT_TRUE(chunked->run(step({4, 1}, {2, 3})).ok());
  EXPECT_EQ(logits(*whole), logits(*chunked));
  EXPECT_EQ(floats(*whole->readState("past_key.0")), floats(*chunked->readState("past_key.0")));
  // And decoding continues identically.
  ASSERT_TRUE(whole->run(step({9}, {4})).ok());
  ASSERT_TRUE(chunked->run(step({9}, {4})).ok());
  EXPECT_EQ(logits(*whole), logits(*chunked));
}

TEST(Session, PaddedPositionWritesTheLastSlotLikeONNX) {
  // position -1 (padding) indexes from the end, as ONNX ScatterND allows.
  CacheArtifact a;
  auto s = Session::open(a.dir.path(), DeviceKind::Host);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(s->run(step({1, 2, 5, 5}, {0, 1, -1, -1})).ok());
  auto st = floats(*s->readState("past_key.0"));
  EXPECT_EQ(st[14], 5.f);
  EXPECT_EQ(st[2], 2.f);
}

/// The toy cache model with continuous batching: `batch_index` [batch, 1]
/// picks the cache row (of full_batch_size) each batch row writes and reads;
/// logits[b] sums cache row batch_index[b].
ModelBuilder continuousCacheModel() {
  ModelBuilder b;
  b.input("input_ids", I64, {"batch_size", "seq_len"});
  b.input("position_ids", I64, {"batch_size", "seq_len"});
  b.input("batch_index", I64, {"batch_size", "1"});
  b.input("past_key.0", F32, {"full_batch_size", "1", "ctx_len", "2"});
  b.output("logits", F32, {"batch_size", "1", "2"});
  b.output("past_key.0_RetainedState", F32, {"full_batch_size", "1", "ctx_len", "2"});
  addToyUpdate(b);
  b.initI64("flat", {1}, {-1});
  b.node("Unsqueeze", {"batch_index", "axes13"}, {"bi4"});
  b.node("Add", {"z", "bi4"}, {"rows"});
  attr(b.node("Concat", {"rows", "z", "pos"}, {"idx"}), "axis", -1);
  b.node("ScatterND", {"past_key.0", "idx", "upd"}, {"past_key.0_RetainedState"});
  b.node("Reshape", {"batch_index", "flat"}, {"bflat"});
  b.node("Gather", {"past_key.0_RetainedState", "bflat"}, {"mine"});
  b.node("ReduceSum", {"mine", "axis2"}, {"logits"});
  return b;
}

TEST(Session, ContinuousBatchingKeepsOneCacheRowPerSequence) {
  TempDir dir;
  continuousCacheModel().save(dir);
  dir.write("specializations.json", R"({"specializations":[
    {"name":"Prefill","symbols":{"batch_size":"1","seq_len":"2","ctx_len":"8","full_batch_size":"3"}},
    {"name":"Decode","symbols":{"batch_size":"3","seq_len":"1","ctx_len":"8","full_batch_size":"3"}}]})");
  auto s = Session::open(dir.path(), DeviceKind::Host);
  ASSERT_TRUE(s.ok()) << s.error();
  // Prefill one sequence into cache row 2: the state has full_batch_size
  // rows whatever the step's batch, and only row 2 changes.
  TensorMap prefill = step({1, 2}, {0, 1});
  prefill["batch_index"] = Tensor::fromInt64({1, 1}, {2});
  ASSERT_TRUE(s->run(prefill).ok());
  EXPECT_EQ(s->lastSpecialization(), "Prefill");
  EXPECT_THAT(logits(*s), ElementsAre(3, 30));
  auto st = s->readState("past_key.0");
  ASSERT_TRUE(st.ok()) << st.error();
  EXPECT_EQ(st->shape(), Shape({3, 1, 8, 2}));
  std::vector<float> want(48, 0.f);
  want[32] = 1, want[33] = 10, want[34] = 2, want[35] = 20;
  EXPECT_EQ(floats(*st), want);
  // Decode every row at once: the same retained state, batch 3.
  TensorMap decode = {{"input_ids", Tensor::fromInt64({3, 1}, {5, 6, 7})},
                      {"position_ids", Tensor::fromInt64({3, 1}, {0, 0, 2})},
                      {"batch_index", Tensor::fromInt64({3, 1}, {0, 1, 2})}};
  ASSERT_TRUE(s->run(decode).ok());
  EXPECT_EQ(s->lastSpecialization(), "Decode");
  EXPECT_THAT(logits(*s), ElementsAre(5, 50, 6, 60, 10, 100));
}

TEST(Session, ShapesMatchingNoSpecializationListTheAllowedOnes) {
  CacheArtifact a;
  auto s = Session::open(a.dir.path(), DeviceKind::Host);
  ASSERT_TRUE(s.ok());
  Status st = s->run(step({1, 2, 3}, {0, 1, 2}));
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error(), HasSubstr("match no specialization"));
  EXPECT_THAT(st.error(), HasSubstr("Prefill: input_ids [1, 4], position_ids [1, 4]"));
  EXPECT_THAT(st.error(), HasSubstr("Decode: input_ids [1, 1], position_ids [1, 1]"));
  st = s->run({{"input_ids", Tensor::fromInt64({1, 1}, {1})},
               {"position_ids", Tensor::fromInt64({1, 2}, {1, 2})}});
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error(), HasSubstr("symbol 'seq_len'"));
  st = s->run({{"input_ids", Tensor::fromInt64({1, 1}, {1})}});
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error(), HasSubstr("missing input 'position_ids'"));
  st = s->run({{"inputs_ids", Tensor::fromInt64({1, 1}, {1})}});
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error(), HasSubstr("unknown input 'inputs_ids'"));
  auto out = s->getOutput("logits");
  EXPECT_FALSE(out.ok());
}

TEST(Session, WithoutSpecializationsPastInputsMustBeGiven) {
  TempDir dir;
  cacheModel().save(dir);
  auto s = Session::open(dir.path(), DeviceKind::Host);
  ASSERT_TRUE(s.ok());
  Status st = s->run(step({1}, {0}));
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error(), HasSubstr("past_key.0"));
  EXPECT_THAT(st.error(), HasSubstr("no specializations.json"));
  TensorMap in = step({1, 2}, {0, 1});
  in["past_key.0"] = Tensor::zeros(DType::Float32, {1, 1, 3, 2});
  ASSERT_TRUE(s->run(in).ok());
  EXPECT_THAT(logits(*s), ElementsAre(3, 30));
  // The given past is not written (the session keeps its own state).
  EXPECT_THAT(floats(in["past_key.0"]), ElementsAreArray(std::vector<float>(6, 0.f)));
  // Once created, the state is retained for the next run.
  ASSERT_TRUE(s->run(step({4}, {2})).ok());
  EXPECT_THAT(logits(*s), ElementsAre(7, 70));
}

TEST(Session, BadSpecializationsAndQaicAreErrors) {
  TempDir dir;
  cacheModel().save(dir);
  dir.write("specializations.json", R"({"specializations":[{"name":"P","symbols":{"seq_len":"x"}}]})");
  auto s = Session::open(dir.path(), DeviceKind::Host);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error(), HasSubstr("non-integer"));
  auto q = Session::open(dir.path(), DeviceKind::Qaic);
  ASSERT_FALSE(q.ok());
  std::string why;
  if (qaicDeviceAvailable(&why))
    EXPECT_THAT(q.error(), HasSubstr("non-integer")); // specializations first
  else
    EXPECT_THAT(q.error(), HasSubstr("qaic is unavailable: " + why + "; use the host device"));
  auto missing = Session::open(dir.file("nope"), DeviceKind::Host);
  ASSERT_FALSE(missing.ok());
  auto legacy = parseSpecializations(R"({"specializations":[{"batch_size":"1","seq_len":"32"}]})", "x");
  ASSERT_TRUE(legacy.ok()) << legacy.error();
  EXPECT_EQ(legacy->at(0).symbols.at("seq_len"), 32);
}

/// y = x * x ("square"), z = y / 1000 ("scale").
ModelBuilder overflowModel() {
  ModelBuilder b;
  b.input("x", F32, {"2"}).output("z", F32, {"2"});
  b.initF32("k", {}, {1000.f});
  b.node("Mul", {"x", "x"}, {"y"}, "square");
  b.node("Div", {"y", "k"}, {"z"}, "scale");
  return b;
}

TEST(Session, Fp16EmulationReportsTheOverflowingNode) {
  TempDir dir;
  overflowModel().save(dir);
  TensorMap in = {{"x", Tensor::fromFloat({2}, {300.f, 2.f})}};
  // fp32: fine.
  auto fp32 = Session::open(dir.path(), DeviceKind::Host);
  ASSERT_TRUE(fp32.ok());
  ASSERT_TRUE(fp32->run(in).ok());
  EXPECT_THAT(floats(*fp32->getOutput("z")), ElementsAre(90.f, 0.004f));

  SessionOptions fp16;
  fp16.numerics = Numerics::FP16;
  auto s = Session::open(dir.path(), DeviceKind::Host, fp16);
  ASSERT_TRUE(s.ok());
  Status st = s->run(in);
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error(), HasSubstr("node 'square' (Mul)"));
  EXPECT_THAT(st.error(), HasSubstr("inf/nan"));

  fp16.fp32Nodes = {"square"};
  auto kept = Session::open(dir.path(), DeviceKind::Host, fp16);
  ASSERT_TRUE(kept.ok());
  st = kept->run(in);
  ASSERT_TRUE(st.ok()) << st.error();
  // 90 is exact in fp16; 0.004 is rounded to the nearest fp16 value.
  EXPECT_THAT(floats(*kept->getOutput("z")), ElementsAre(90.f, roundToHalf(0.004f)));
  EXPECT_NE(roundToHalf(0.004f), 0.004f);
}

// A precision list naming what the model does not have would leave the node
// it meant in fp16 without a word: an error at open naming each such name.
// Node names, their last path component and first outputs all match.
TEST(Session, Fp32NodesNotInTheModelAreAnError) {
  TempDir dir;
  overflowModel().save(dir);
  SessionOptions fp16;
  fp16.numerics = Numerics::FP16;
  fp16.fp32Nodes = {"square", "z", "no_such_node", "other"};
  auto bad = Session::open(dir.path(), DeviceKind::Host, fp16);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error(), HasSubstr("node_precision.yaml"));
  EXPECT_THAT(bad.error(), HasSubstr("'no_such_node', 'other', which are neither a node"));
  EXPECT_THAT(bad.error(), Not(HasSubstr("'square'")));
  EXPECT_THAT(bad.error(), Not(HasSubstr("'z'")));
  fp16.fp32Nodes = {"square", "z"};
  EXPECT_TRUE(Session::open(dir.path(), DeviceKind::Host, fp16).ok());
}

TEST(Session, Fp16EmulationRoundsEveryNodeOutput) {
  ModelBuilder b;
  b.input("x", F32, {"1"}).output("y", F32, {"1"});
  b.initF32("one", {}, {1.f});
  b.initF32("tiny", {}, {1e-4f});
  b.node("Add", {"one", "tiny"}, {"t"}); // 1.0001 -> 1 in fp16
  b.node("Sub", {"t", "one"}, {"d"});
  b.node("Add", {"d", "x"}, {"y"});
  TensorMap in = {{"x", Tensor::fromFloat({1}, {0.f})}};
  EXPECT_NEAR(floats(runModel(b, in)["y"])[0], 1e-4f, 1e-7);
  SessionOptions fp16;
  fp16.numerics = Numerics::FP16;
  EXPECT_EQ(floats(runModel(b, in, fp16)["y"])[0], 0.f);
}

TEST(Session, LegitimateInfinitiesAreNotReported) {
  // A -inf mask constant flowing through Where and Softmax is not an overflow.
  ModelBuilder b;
  b.input("c", BOOL, {"3"}).input("x", F32, {"3"}).output("p", F32, {"3"});
  b.initF32("ninf", {}, {-INFINITY});
  b.node("Where", {"c", "x", "ninf"}, {"m"});
  b.node("Softmax", {"m"}, {"p"});
  SessionOptions fp16;
  fp16.numerics = Numerics::FP16;
  auto out = runModel(b, {{"c", Tensor::fromBool({3}, {true, false, true})},
                          {"x", Tensor::fromFloat({3}, {1, 1, 1})}}, fp16);
  EXPECT_THAT(floats(out["p"]), ElementsAre(0.5, 0, 0.5));
}

TEST(Session, Float16InputsAndOutputs) {
  ModelBuilder b;
  b.input("x", F16, {"2"}).output("y", F16, {"2"});
  b.node("Add", {"x", "x"}, {"y"});
  auto out = runModel(b, {{"x", Tensor::fromHalf({2}, {1.5f, -3.f})}});
  EXPECT_EQ(out["y"].dtype(), DType::Float16);
  EXPECT_THAT(floats(out["y"]), ElementsAre(3.f, -6.f));
}

TEST(Session, RepeatedRunsReuseBuffersAndStayCorrect) {
  CacheArtifact a;
  auto s = Session::open(a.dir.path(), DeviceKind::Host);
  ASSERT_TRUE(s.ok());
  float sum = 0;
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(s->run(step({i + 1}, {i})).ok());
    sum += i + 1;
    EXPECT_THAT(logits(*s), ElementsAre(sum, 10 * sum));
  }
}

} // namespace

// The device group of an N-device artifact: exactly N distinct ids, or by
// default qaicDeviceId .. qaicDeviceId + N - 1.
TEST(Session, DeviceGroupMustNameExactlyTheArtifactsDevices) {
  SessionOptions options;
  auto defaulted = resolveDeviceGroup(options, 4);
  ASSERT_TRUE(defaulted) << defaulted.error();
  EXPECT_THAT(*defaulted, ElementsAre(0, 1, 2, 3));
  options.qaicDeviceId = 2;
  auto shifted = resolveDeviceGroup(options, 2);
  ASSERT_TRUE(shifted) << shifted.error();
  EXPECT_THAT(*shifted, ElementsAre(2, 3));

  options.deviceGroup = {5, 1};
  auto given = resolveDeviceGroup(options, 2);
  ASSERT_TRUE(given) << given.error();
  EXPECT_THAT(*given, ElementsAre(5, 1));

  auto few = resolveDeviceGroup(options, 4);
  ASSERT_FALSE(few);
  EXPECT_THAT(few.error(), HasSubstr("names 2 devices but the artifact was "
                                     "compiled for 4 (qeff compile "
                                     "--num-devices 4)"));
  options.deviceGroup = {1, 1};
  EXPECT_THAT(resolveDeviceGroup(options, 2).error(),
              HasSubstr("names device 1 twice"));
  options.deviceGroup = {-1, 0};
  EXPECT_THAT(resolveDeviceGroup(options, 2).error(),
              HasSubstr("negative device id -1"));
  EXPECT_THAT(resolveDeviceGroup(SessionOptions{}, 0).error(),
              HasSubstr("num_devices must be at least 1"));
}
