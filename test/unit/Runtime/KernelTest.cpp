//===- KernelTest.cpp - Host device kernels against hand-computed values ---===//

#include "test/unit/Runtime/ModelBuilder.h"

#include <gmock/gmock.h>

#include <cmath>
#include <limits>

using namespace qeff::runtime;
using namespace qeff::runtime::test;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

namespace {

MATCHER_P(FloatsNear, expected, "") {
  std::vector<float> e = expected;
  if (arg.size() != e.size()) {
    *result_listener << "size " << arg.size() << " != " << e.size();
    return false;
  }
  for (size_t i = 0; i < e.size(); ++i)
    if (!(std::fabs(arg[i] - e[i]) <= 1e-5f + 1e-5f * std::fabs(e[i]))) {
      *result_listener << "at " << i << ": " << arg[i] << " != " << e[i];
      return false;
    }
  return true;
}

/// A one-node model: inputs X0.. of the given types, one output Y.
ModelBuilder oneOp(const std::string &op, const std::vector<std::pair<std::string, int>> &inputs,
                   int outType, size_t numOutputs = 1) {
  ModelBuilder b;
  std::vector<std::string> names;
  for (const auto &[name, type] : inputs) {
    if (!name.empty())
      b.input(name, type, {});
    names.push_back(name);
  }
  // Inputs are declared rank-0 above; drop the shape so any rank is accepted.
  for (auto &in : *b.graph()->mutable_input())
    in.mutable_type()->mutable_tensor_type()->clear_shape();
  std::vector<std::string> outs;
  for (size_t i = 0; i < numOutputs; ++i) {
    outs.push_back("Y" + std::to_string(i));
    b.output(outs.back(), outType, {});
    b.graph()->mutable_output()->rbegin()->mutable_type()->mutable_tensor_type()->clear_shape();
  }
  b.node(op, names, outs, "the_" + op);
  return b;
}

onnx::NodeProto &theNode(ModelBuilder &b) { return *b.graph()->mutable_node(0); }

TEST(Kernels, AddBroadcastsNumpyStyle) {
  auto b = oneOp("Add", {{"A", F32}, {"B", F32}}, F32);
  auto out = runModel(b, {{"A", Tensor::fromFloat({2, 3}, {1, 2, 3, 4, 5, 6})},
                          {"B", Tensor::fromFloat({3}, {10, 20, 30})}});
  EXPECT_EQ(out["Y0"].shape(), Shape({2, 3}));
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(11, 22, 33, 14, 25, 36));
}

TEST(Kernels, SubBroadcastsBothSides) {
  auto b = oneOp("Sub", {{"A", F32}, {"B", F32}}, F32);
  auto out = runModel(b, {{"A", Tensor::fromFloat({2, 1}, {10, 20})},
                          {"B", Tensor::fromFloat({1, 3}, {1, 2, 3})}});
  EXPECT_EQ(out["Y0"].shape(), Shape({2, 3}));
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(9, 8, 7, 19, 18, 17));
}

TEST(Kernels, MulScalarAndDivInt) {
  auto b = oneOp("Mul", {{"A", F32}, {"B", F32}}, F32);
  auto out = runModel(b, {{"A", Tensor::fromFloat({2, 2}, {1, 2, 3, 4})},
                          {"B", Tensor::fromFloat({}, {0.5f})}});
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(0.5, 1, 1.5, 2));
  auto d = oneOp("Div", {{"A", I64}, {"B", I64}}, I64);
  out = runModel(d, {{"A", Tensor::fromInt64({3}, {7, -7, 9})},
                     {"B", Tensor::fromInt64({1}, {2})}});
  EXPECT_THAT(ints(out["Y0"]), ElementsAre(3, -3, 4));
}

TEST(Kernels, IntegerDivisionByZeroIsAnError) {
  auto d = oneOp("Div", {{"A", I64}, {"B", I64}}, I64);
  TempDir dir;
  auto s = Session::open(d.save(dir), DeviceKind::Host);
  ASSERT_TRUE(s.ok()) << s.error();
  Status st = s->run({{"A", Tensor::fromInt64({1}, {1})}, {"B", Tensor::fromInt64({1}, {0})}});
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error(), HasSubstr("node 'the_Div' (Div)"));
  EXPECT_THAT(st.error(), HasSubstr("division by zero"));
}

TEST(Kernels, PowSqrtReciprocalNeg) {
  auto b = oneOp("Pow", {{"A", F32}, {"B", F32}}, F32);
  auto out = runModel(b, {{"A", Tensor::fromFloat({3}, {1, 2, 3})},
                          {"B", Tensor::fromFloat({}, {2})}});
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(1, 4, 9));
  out = runModel(b, {{"A", Tensor::fromFloat({2}, {2, 3})}, {"B", Tensor::fromFloat({2}, {3, 0.5f})}});
  EXPECT_THAT(floats(out["Y0"]), FloatsNear(std::vector<float>{8, std::sqrt(3.f)}));
  for (auto [op, fn] : std::vector<std::pair<std::string, float (*)(float)>>{
           {"Sqrt", [](float x) { return std::sqrt(x); }},
           {"Reciprocal", [](float x) { return 1 / x; }},
           {"Neg", [](float x) { return -x; }},
           {"Exp", [](float x) { return std::exp(x); }},
           {"Tanh", [](float x) { return std::tanh(x); }},
           {"Erf", [](float x) { return std::erf(x); }},
           {"Sigmoid", [](float x) { return 1 / (1 + std::exp(-x)); }},
           {"Relu", [](float x) { return x > 0 ? x : 0; }},
           {"Sin", [](float x) { return std::sin(x); }},
           {"Cos", [](float x) { return std::cos(x); }}}) {
    auto u = oneOp(op, {{"X", F32}}, F32);
    std::vector<float> xs = {0.25f, 1.5f, 3.f, -0.5f};
    if (op == "Sqrt")
      xs[3] = 4.f;
    auto r = runModel(u, {{"X", Tensor::fromFloat({4}, xs)}});
    std::vector<float> want;
    for (float x : xs)
      want.push_back(fn(x));
    EXPECT_THAT(floats(r["Y0"]), FloatsNear(want)) << op;
  }
}

TEST(Kernels, SoftmaxOfAMaskedRow) {
  auto b = oneOp("Softmax", {{"X", F32}}, F32);
  attr(theNode(b), "axis", -1);
  float neg = -3.4028e38f; // finfo(float32).min, as causal masks use
  auto out = runModel(b, {{"X", Tensor::fromFloat({2, 3}, {0, neg, 0, neg, 5, neg})}});
  EXPECT_THAT(floats(out["Y0"]), FloatsNear(std::vector<float>{0.5, 0, 0.5, 0, 1, 0}));
  auto c = oneOp("Softmax", {{"X", F32}}, F32);
  attr(theNode(c), "axis", 0);
  out = runModel(c, {{"X", Tensor::fromFloat({2, 2}, {0, 1, 0, 1})}});
  EXPECT_THAT(floats(out["Y0"]), FloatsNear(std::vector<float>{0.5, 0.5, 0.5, 0.5}));
}

TEST(Kernels, Reductions) {
  auto mean = oneOp("ReduceMean", {{"X", F32}}, F32);
  attrs(theNode(mean), "axes", {-1});
  auto out = runModel(mean, {{"X", Tensor::fromFloat({2, 2}, {1, 3, 5, 9})}});
  EXPECT_EQ(out["Y0"].shape(), Shape({2, 1}));
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(2, 7));

  auto sum = oneOp("ReduceSum", {{"X", F32}, {"axes", I64}}, F32);
  attr(theNode(sum), "keepdims", 0);
  out = runModel(sum, {{"X", Tensor::fromFloat({2, 3}, {1, 2, 3, 4, 5, 6})},
                       {"axes", Tensor::fromInt64({1}, {0})}});
  EXPECT_EQ(out["Y0"].shape(), Shape({3}));
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(5, 7, 9));

  auto mx = oneOp("ReduceMax", {{"X", F32}}, F32);
  out = runModel(mx, {{"X", Tensor::fromFloat({2, 2}, {1, -3, 5, 2})}});
  EXPECT_EQ(out["Y0"].shape(), Shape({1, 1}));
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(5));
}

TEST(Kernels, GatherWithNegativeIndices) {
  auto b = oneOp("Gather", {{"D", F32}, {"I", I64}}, F32);
  attr(theNode(b), "axis", 1);
  auto out = runModel(b, {{"D", Tensor::fromFloat({2, 3}, {1, 2, 3, 4, 5, 6})},
                          {"I", Tensor::fromInt64({2}, {-1, 0})}});
  EXPECT_EQ(out["Y0"].shape(), Shape({2, 2}));
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(3, 1, 6, 4));
  auto e = oneOp("Gather", {{"D", F32}, {"I", I64}}, F32);
  out = runModel(e, {{"D", Tensor::fromFloat({3, 2}, {1, 2, 3, 4, 5, 6})},
                     {"I", Tensor::fromInt64({1, 2}, {2, -3})}});
  EXPECT_EQ(out["Y0"].shape(), Shape({1, 2, 2}));
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(5, 6, 1, 2));
}

TEST(Kernels, GatherOutOfRangeIsAnErrorNamingTheNode) {
  auto b = oneOp("Gather", {{"D", F32}, {"I", I64}}, F32);
  TempDir dir;
  auto s = Session::open(b.save(dir), DeviceKind::Host);
  ASSERT_TRUE(s.ok());
  Status st = s->run({{"D", Tensor::fromFloat({2}, {1, 2})}, {"I", Tensor::fromInt64({1}, {2})}});
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error(), HasSubstr("node 'the_Gather' (Gather)"));
  EXPECT_THAT(st.error(), HasSubstr("out of range"));
}

TEST(Kernels, GatherNDAndGatherElements) {
  auto b = oneOp("GatherND", {{"D", F32}, {"I", I64}}, F32);
  auto out = runModel(b, {{"D", Tensor::fromFloat({2, 2}, {1, 2, 3, 4})},
                          {"I", Tensor::fromInt64({2, 1}, {1, 0})}});
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(3, 4, 1, 2));
  out = runModel(b, {{"D", Tensor::fromFloat({2, 2}, {1, 2, 3, 4})},
                     {"I", Tensor::fromInt64({2, 2}, {0, 1, -1, 0})}});
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(2, 3));
  auto e = oneOp("GatherElements", {{"D", F32}, {"I", I64}}, F32);
  attr(theNode(e), "axis", 1);
  out = runModel(e, {{"D", Tensor::fromFloat({2, 2}, {1, 2, 3, 4})},
                     {"I", Tensor::fromInt64({2, 2}, {0, 0, 1, 0})}});
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(1, 1, 4, 3));
}

TEST(Kernels, ScatterNDWithNegativeIndex) {
  auto b = oneOp("ScatterND", {{"D", F32}, {"I", I64}, {"U", F32}}, F32);
  auto out = runModel(b, {{"D", Tensor::fromFloat({4, 2}, {0, 0, 0, 0, 0, 0, 0, 0})},
                          {"I", Tensor::fromInt64({2, 1}, {-1, 1})},
                          {"U", Tensor::fromFloat({2, 2}, {7, 8, 5, 6})}});
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(0, 0, 5, 6, 0, 0, 7, 8));
  auto add = oneOp("ScatterND", {{"D", F32}, {"I", I64}, {"U", F32}}, F32);
  attrS(theNode(add), "reduction", "add");
  out = runModel(add, {{"D", Tensor::fromFloat({3}, {1, 1, 1})},
                       {"I", Tensor::fromInt64({2, 1}, {0, 0})},
                       {"U", Tensor::fromFloat({2}, {2, 3})}});
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(6, 1, 1));
}

TEST(Kernels, ScatterElements) {
  auto b = oneOp("ScatterElements", {{"D", F32}, {"I", I64}, {"U", F32}}, F32);
  attr(theNode(b), "axis", 1);
  auto out = runModel(b, {{"D", Tensor::fromFloat({1, 5}, {1, 2, 3, 4, 5})},
                          {"I", Tensor::fromInt64({1, 2}, {1, -2})},
                          {"U", Tensor::fromFloat({1, 2}, {9, 8})}});
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(1, 9, 3, 8, 5));
}

TEST(Kernels, ReshapeCopiesZeroAndInfersMinusOne) {
  auto b = oneOp("Reshape", {{"D", F32}, {"S", I64}}, F32);
  std::vector<float> v(24);
  for (int i = 0; i < 24; ++i)
    v[i] = i;
  auto out = runModel(b, {{"D", Tensor::fromFloat({2, 3, 4}, v)},
                          {"S", Tensor::fromInt64({3}, {0, -1, 2})}});
  EXPECT_EQ(out["Y0"].shape(), Shape({2, 6, 2}));
  EXPECT_EQ(floats(out["Y0"]), v);
  auto z = oneOp("Reshape", {{"D", F32}, {"S", I64}}, F32);
  attr(theNode(z), "allowzero", 1);
  out = runModel(z, {{"D", Tensor::fromFloat({0, 3}, {})}, {"S", Tensor::fromInt64({2}, {3, 0})}});
  EXPECT_EQ(out["Y0"].shape(), Shape({3, 0}));
}

/// Found by ArtifactFuzzer: a shape whose known dims multiply past int64
/// (the product wrapped: UBSan signed-integer-overflow).
TEST(Kernels, ReshapeToAnOverflowingShapeIsAnError) {
  auto b = oneOp("Reshape", {{"D", F32}, {"S", I64}}, F32);
  TempDir dir;
  auto s = Session::open(b.save(dir), DeviceKind::Host);
  ASSERT_TRUE(s.ok()) << s.error();
  Status st = s->run({{"D", Tensor::fromFloat({4}, {1, 2, 3, 4})},
                      {"S", Tensor::fromInt64({3}, {int64_t(1) << 62, 4, -1})}});
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error(), HasSubstr("node 'the_Reshape' (Reshape)"));
  EXPECT_THAT(st.error(), HasSubstr("more elements than int64 holds"));
}

/// Found by ArtifactFuzzer: a broadcast whose output is empty divided by
/// its zero dim when it set up the (no) rows to visit.
TEST(Kernels, BroadcastToAnEmptyOutput) {
  auto b = oneOp("Add", {{"A", F32}, {"B", F32}}, F32);
  auto out = runModel(b, {{"A", Tensor::fromFloat({2, 0, 3}, {})},
                          {"B", Tensor::fromFloat({1, 1, 3}, {1, 2, 3})}});
  EXPECT_EQ(out["Y0"].shape(), Shape({2, 0, 3}));
  auto w = oneOp("Where", {{"C", BOOL}, {"A", F32}, {"B", F32}}, F32);
  out = runModel(w, {{"C", Tensor::zeros(DType::Bool, {3, 1})},
                     {"A", Tensor::fromFloat({1, 0}, {})},
                     {"B", Tensor::fromFloat({3, 1}, {1, 2, 3})}});
  EXPECT_EQ(out["Y0"].shape(), Shape({3, 0}));
}

/// Found by ArtifactFuzzer: a Flatten node with no input read the input
/// vector of the previous node (heap-use-after-free); nodes without their
/// required inputs or without an output are refused at load.
TEST(Kernels, NodesWithoutRequiredInputsAreRefusedAtLoad) {
  auto f = oneOp("Flatten", {}, F32);
  TempDir dir;
  auto s = Session::open(f.save(dir), DeviceKind::Host);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error(), HasSubstr("node 'the_Flatten' (Flatten)"));
  EXPECT_THAT(s.error(), HasSubstr("0 input(s); Flatten takes at least 1"));

  auto w = oneOp("Where", {{"C", BOOL}, {"", F32}, {"B", F32}}, F32);
  TempDir dir2;
  s = Session::open(w.save(dir2), DeviceKind::Host);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error(), HasSubstr("input 1 of Where is required but has no name"));

  auto r = oneOp("Relu", {{"X", F32}}, F32, /*numOutputs=*/0);
  TempDir dir3;
  s = Session::open(r.save(dir3), DeviceKind::Host);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error(), HasSubstr("no output"));
}

/// Found by ArtifactFuzzer (UBSan: signed overflow in ReduceSum of int32):
/// integer arithmetic wraps in two's complement, as ONNX Runtime and numpy
/// compute it, in every kernel that adds or multiplies integers.
TEST(Kernels, IntegerArithmeticWraps) {
  const int64_t big = std::numeric_limits<int64_t>::max();
  auto add = oneOp("Add", {{"A", I64}, {"B", I64}}, I64);
  auto out = runModel(add, {{"A", Tensor::fromInt64({2}, {big, -big})},
                            {"B", Tensor::fromInt64({2}, {1, -2})}});
  EXPECT_THAT(ints(out["Y0"]), ElementsAre(std::numeric_limits<int64_t>::min(), big));
  auto mul = oneOp("Mul", {{"A", I64}, {"B", I64}}, I64);
  out = runModel(mul, {{"A", Tensor::fromInt64({1}, {int64_t(1) << 62})},
                       {"B", Tensor::fromInt64({1}, {4})}});
  EXPECT_THAT(ints(out["Y0"]), ElementsAre(0));
  auto sub = oneOp("Sub", {{"A", I64}, {"B", I64}}, I64);
  out = runModel(sub, {{"A", Tensor::fromInt64({1}, {std::numeric_limits<int64_t>::min()})},
                       {"B", Tensor::fromInt64({1}, {1})}});
  EXPECT_THAT(ints(out["Y0"]), ElementsAre(big));

  auto sum = oneOp("ReduceSum", {{"X", I32}, {"axes", I64}}, I32);
  out = runModel(sum, {{"X", Tensor::fromInt32({2}, {2139095040, 1077936128})},
                       {"axes", Tensor::fromInt64({1}, {0})}});
  ASSERT_EQ(out["Y0"].numElements(), 1);
  EXPECT_EQ(out["Y0"].data<int32_t>()[0], int32_t(uint32_t(2139095040u + 1077936128u)));
  auto cum = oneOp("CumSum", {{"X", I64}, {"axis", I64}}, I64);
  out = runModel(cum, {{"X", Tensor::fromInt64({2}, {big, 1})},
                       {"axis", Tensor::fromInt64({}, {0})}});
  EXPECT_THAT(ints(out["Y0"]), ElementsAre(big, std::numeric_limits<int64_t>::min()));
}

/// Range's element count is computed without overflow: extreme bounds give
/// a clear error instead of a wrapped or undefined count.
TEST(Kernels, RangeOfTooManyElementsIsAnError) {
  auto r = oneOp("Range", {{"a", I64}, {"b", I64}, {"c", I64}}, I64);
  TempDir dir;
  auto s = Session::open(r.save(dir), DeviceKind::Host);
  ASSERT_TRUE(s.ok()) << s.error();
  Status st = s->run({{"a", Tensor::fromInt64({}, {std::numeric_limits<int64_t>::min()})},
                      {"b", Tensor::fromInt64({}, {std::numeric_limits<int64_t>::max()})},
                      {"c", Tensor::fromInt64({}, {1})}});
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error(), HasSubstr("Range of more than 2^48 elements"));
  auto out = runModel(r, {{"a", Tensor::fromInt64({}, {std::numeric_limits<int64_t>::max() - 2})},
                          {"b", Tensor::fromInt64({}, {std::numeric_limits<int64_t>::max()})},
                          {"c", Tensor::fromInt64({}, {1})}});
  EXPECT_THAT(ints(out["Y0"]), ElementsAre(std::numeric_limits<int64_t>::max() - 2,
                                           std::numeric_limits<int64_t>::max() - 1));
}

/// Found by ArtifactFuzzer (out of memory: an Expand of 537 MB from a
/// 126 KB model): SessionOptions::maxTensorBytes bounds every tensor a run
/// allocates, naming the node.
TEST(Kernels, MaxTensorBytesBoundsWhatARunAllocates) {
  auto e = oneOp("Expand", {{"X", F32}, {"S", I64}}, F32);
  TempDir dir;
  SessionOptions options;
  options.maxTensorBytes = 1 << 20;
  auto s = Session::open(e.save(dir), DeviceKind::Host, options);
  ASSERT_TRUE(s.ok()) << s.error();
  Status st = s->run({{"X", Tensor::fromFloat({1}, {1})},
                      {"S", Tensor::fromInt64({2}, {1024, 1024})}});
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error(), HasSubstr("node 'the_Expand' (Expand)"));
  EXPECT_THAT(st.error(), HasSubstr("4194304 bytes is over the session's limit of 1048576"));
  // Within the limit it runs.
  st = s->run({{"X", Tensor::fromFloat({1}, {1})}, {"S", Tensor::fromInt64({2}, {256, 256})}});
  EXPECT_TRUE(st.ok()) << st.error();
}

/// Found by ArtifactFuzzer (UBSan: a reference into an empty index list):
/// GatherND's index tuples have length 1 .. rank - batch_dims.
TEST(Kernels, GatherNDWithEmptyIndexTuplesIsAnError) {
  auto g = oneOp("GatherND", {{"D", F32}, {"I", I64}}, F32);
  TempDir dir;
  auto s = Session::open(g.save(dir), DeviceKind::Host);
  ASSERT_TRUE(s.ok()) << s.error();
  Status st = s->run({{"D", Tensor::fromFloat({2, 2}, {1, 2, 3, 4})},
                      {"I", Tensor::fromInt64({1, 0}, {})}});
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error(), HasSubstr("node 'the_GatherND' (GatherND)"));
  EXPECT_THAT(st.error(), HasSubstr("indices' last dim 0"));
}

/// Found by ArtifactFuzzer (UBSan: an offset into the empty shape of a
/// rank-0 tensor): no op taking an axis accepts a scalar (ONNX: the axis is
/// in [-r, r)), so Gather and the others give an error naming the node.
TEST(Kernels, AnAxisOfAScalarIsAnError) {
  struct Case {
    const char *op;
    std::vector<std::pair<std::string, int>> inputs;
  };
  for (const Case &c : std::vector<Case>{{"Gather", {{"X", F32}, {"I", I64}}},
                                        {"Softmax", {{"X", F32}}},
                                        {"ArgMax", {{"X", F32}}},
                                        {"Concat", {{"X", F32}}},
                                        {"Split", {{"X", F32}}}}) {
    auto g = oneOp(c.op, c.inputs, std::string(c.op) == "ArgMax" ? I64 : F32);
    auto *node = g.graph()->mutable_node(0);
    if (std::string(c.op) != "Gather")
      attr(*node, "axis", 0);
    TempDir dir;
    auto s = Session::open(g.save(dir), DeviceKind::Host);
    ASSERT_TRUE(s.ok()) << c.op << ": " << s.error();
    TensorMap in{{"X", Tensor::fromFloat({}, {1})}};
    if (c.inputs.size() > 1)
      in.emplace("I", Tensor::fromInt64({1}, {0}));
    Status st = s->run(in);
    ASSERT_FALSE(st.ok()) << c.op;
    EXPECT_THAT(st.error(), HasSubstr(std::string("(") + c.op + ")"));
    EXPECT_THAT(st.error(), HasSubstr("axis 0 out of range for rank 0"));
  }
}

/// Found by ArtifactFuzzer (UBSan: a dim read of a rank-0 tensor): CumSum
/// of a scalar is an error (ONNX requires rank >= 1).
TEST(Kernels, CumSumOfAScalarIsAnError) {
  auto c = oneOp("CumSum", {{"X", F32}, {"axis", I64}}, F32);
  TempDir dir;
  auto s = Session::open(c.save(dir), DeviceKind::Host);
  ASSERT_TRUE(s.ok()) << s.error();
  Status st = s->run({{"X", Tensor::fromFloat({}, {1})}, {"axis", Tensor::fromInt64({}, {0})}});
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error(), HasSubstr("CumSum of a scalar"));
}

TEST(Kernels, TransposeConcatSplit) {
  auto t = oneOp("Transpose", {{"X", F32}}, F32);
  attrs(theNode(t), "perm", {1, 0});
  auto out = runModel(t, {{"X", Tensor::fromFloat({2, 3}, {1, 2, 3, 4, 5, 6})}});
  EXPECT_EQ(out["Y0"].shape(), Shape({3, 2}));
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(1, 4, 2, 5, 3, 6));

  auto c = oneOp("Concat", {{"A", F32}, {"B", F32}}, F32);
  attr(theNode(c), "axis", -1);
  out = runModel(c, {{"A", Tensor::fromFloat({2, 1}, {1, 2})},
                     {"B", Tensor::fromFloat({2, 2}, {3, 4, 5, 6})}});
  EXPECT_EQ(out["Y0"].shape(), Shape({2, 3}));
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(1, 3, 4, 2, 5, 6));

  auto s = oneOp("Split", {{"X", F32}, {"S", I64}}, F32, 2);
  attr(theNode(s), "axis", -1);
  out = runModel(s, {{"X", Tensor::fromFloat({2, 3}, {1, 2, 3, 4, 5, 6})},
                     {"S", Tensor::fromInt64({2}, {1, 2})}});
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(1, 4));
  EXPECT_THAT(floats(out["Y1"]), ElementsAre(2, 3, 5, 6));
  auto e = oneOp("Split", {{"X", F32}}, F32, 2);
  out = runModel(e, {{"X", Tensor::fromFloat({4}, {1, 2, 3, 4})}});
  EXPECT_THAT(floats(out["Y1"]), ElementsAre(3, 4));
}

TEST(Kernels, SliceWithNegativeStartsAndSteps) {
  auto b = oneOp("Slice", {{"X", F32}, {"s", I64}, {"e", I64}, {"a", I64}, {"t", I64}}, F32);
  std::vector<float> v = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  auto out = runModel(b, {{"X", Tensor::fromFloat({3, 4}, v)},
                          {"s", Tensor::fromInt64({2}, {-1, 1})},
                          {"e", Tensor::fromInt64({2}, {INT64_MIN, 1000})},
                          {"a", Tensor::fromInt64({2}, {0, -1})},
                          {"t", Tensor::fromInt64({2}, {-2, 2})}});
  EXPECT_EQ(out["Y0"].shape(), Shape({2, 2}));
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(9, 11, 1, 3));
  auto c = oneOp("Slice", {{"X", F32}, {"s", I64}, {"e", I64}}, F32);
  out = runModel(c, {{"X", Tensor::fromFloat({3, 4}, v)},
                     {"s", Tensor::fromInt64({1}, {1})},
                     {"e", Tensor::fromInt64({1}, {-1})}});
  EXPECT_EQ(out["Y0"].shape(), Shape({1, 4}));
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(4, 5, 6, 7));
}

TEST(Kernels, SqueezeUnsqueezeExpand) {
  auto u = oneOp("Unsqueeze", {{"X", F32}, {"A", I64}}, F32);
  auto out = runModel(u, {{"X", Tensor::fromFloat({2, 3}, {1, 2, 3, 4, 5, 6})},
                          {"A", Tensor::fromInt64({2}, {0, -1})}});
  EXPECT_EQ(out["Y0"].shape(), Shape({1, 2, 3, 1}));
  auto s = oneOp("Squeeze", {{"X", F32}, {"A", I64}}, F32);
  out = runModel(s, {{"X", Tensor::fromFloat({1, 2, 1}, {1, 2})},
                     {"A", Tensor::fromInt64({1}, {-1})}});
  EXPECT_EQ(out["Y0"].shape(), Shape({1, 2}));
  auto e = oneOp("Expand", {{"X", F32}, {"S", I64}}, F32);
  out = runModel(e, {{"X", Tensor::fromFloat({3, 1}, {1, 2, 3})},
                     {"S", Tensor::fromInt64({3}, {2, 1, 2})}});
  EXPECT_EQ(out["Y0"].shape(), Shape({2, 3, 2}));
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3));
}

TEST(Kernels, WhereComparisonsAndLogic) {
  auto w = oneOp("Where", {{"C", BOOL}, {"X", F32}, {"Y", F32}}, F32);
  auto out = runModel(w, {{"C", Tensor::fromBool({2, 1}, {true, false})},
                          {"X", Tensor::fromFloat({2}, {1, 2})},
                          {"Y", Tensor::fromFloat({}, {-1})}});
  EXPECT_EQ(out["Y0"].shape(), Shape({2, 2}));
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(1, 2, -1, -1));
  std::vector<std::pair<std::string, std::vector<float>>> cmps = {
      {"Equal", {0, 1, 0}}, {"Less", {1, 0, 0}}, {"Greater", {0, 0, 1}},
      {"LessOrEqual", {1, 1, 0}}, {"GreaterOrEqual", {0, 1, 1}}};
  for (const auto &[op, want] : cmps) {
    auto c = oneOp(op, {{"A", I64}, {"B", I64}}, BOOL);
    out = runModel(c, {{"A", Tensor::fromInt64({3}, {1, 2, 3})},
                       {"B", Tensor::fromInt64({}, {2})}});
    EXPECT_EQ(out["Y0"].dtype(), DType::Bool);
    EXPECT_EQ(floats(out["Y0"]), want) << op;
  }
  auto n = oneOp("Not", {{"X", BOOL}}, BOOL);
  out = runModel(n, {{"X", Tensor::fromBool({2}, {true, false})}});
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(0, 1));
  auto a = oneOp("And", {{"A", BOOL}, {"B", BOOL}}, BOOL);
  out = runModel(a, {{"A", Tensor::fromBool({2}, {true, true})},
                     {"B", Tensor::fromBool({2}, {true, false})}});
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(1, 0));
}

TEST(Kernels, CastClipMinMax) {
  auto c = oneOp("Cast", {{"X", F32}}, I64);
  attr(theNode(c), "to", I64);
  auto out = runModel(c, {{"X", Tensor::fromFloat({3}, {1.7f, -2.5f, 3})}});
  EXPECT_THAT(ints(out["Y0"]), ElementsAre(1, -2, 3));
  auto h = oneOp("Cast", {{"X", F32}}, F16);
  attr(theNode(h), "to", F16);
  out = runModel(h, {{"X", Tensor::fromFloat({3}, {1.0001f, 70000.f, 0.1f})}});
  EXPECT_EQ(out["Y0"].dtype(), DType::Float16); // declared float16 output
  auto hv = floats(out["Y0"]);
  EXPECT_EQ(hv[0], 1.f);
  EXPECT_TRUE(std::isinf(hv[1]));
  EXPECT_EQ(hv[2], roundToHalf(0.1f));
  auto bl = oneOp("Cast", {{"X", I64}}, BOOL);
  attr(theNode(bl), "to", BOOL);
  out = runModel(bl, {{"X", Tensor::fromInt64({3}, {0, 5, -1})}});
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(0, 1, 1));

  auto clip = oneOp("Clip", {{"X", F32}, {"lo", F32}, {"hi", F32}}, F32);
  out = runModel(clip, {{"X", Tensor::fromFloat({3}, {-5, 0.5f, 5})},
                        {"lo", Tensor::fromFloat({}, {-1})},
                        {"hi", Tensor::fromFloat({}, {1})}});
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(-1, 0.5, 1));
  auto clipHi = oneOp("Clip", {{"X", F32}, {"", F32}, {"hi", F32}}, F32);
  out = runModel(clipHi, {{"X", Tensor::fromFloat({2}, {-5, 5})}, {"hi", Tensor::fromFloat({}, {1})}});
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(-5, 1));

  auto mn = oneOp("Min", {{"A", F32}, {"B", F32}, {"C", F32}}, F32);
  out = runModel(mn, {{"A", Tensor::fromFloat({2}, {1, 5})}, {"B", Tensor::fromFloat({}, {3})},
                      {"C", Tensor::fromFloat({2, 1}, {0, 9})}});
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(0, 0, 1, 3));
  auto mx = oneOp("Max", {{"A", I64}, {"B", I64}}, I64);
  out = runModel(mx, {{"A", Tensor::fromInt64({2}, {1, 5})}, {"B", Tensor::fromInt64({}, {3})}});
  EXPECT_THAT(ints(out["Y0"]), ElementsAre(3, 5));
}

TEST(Kernels, RangeShapeConstantOfShapeConstant) {
  auto r = oneOp("Range", {{"a", I64}, {"b", I64}, {"c", I64}}, I64);
  auto out = runModel(r, {{"a", Tensor::fromInt64({}, {1})}, {"b", Tensor::fromInt64({}, {8})},
                          {"c", Tensor::fromInt64({}, {3})}});
  EXPECT_THAT(ints(out["Y0"]), ElementsAre(1, 4, 7));
  auto rf = oneOp("Range", {{"a", F32}, {"b", F32}, {"c", F32}}, F32);
  out = runModel(rf, {{"a", Tensor::fromFloat({}, {1})}, {"b", Tensor::fromFloat({}, {0})},
                      {"c", Tensor::fromFloat({}, {-0.5f})}});
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(1, 0.5));

  auto sh = oneOp("Shape", {{"X", F32}}, I64);
  attr(theNode(sh), "start", -2);
  out = runModel(sh, {{"X", Tensor::zeros(DType::Float32, {2, 3, 4})}});
  EXPECT_THAT(ints(out["Y0"]), ElementsAre(3, 4));

  auto cs = oneOp("ConstantOfShape", {{"S", I64}}, I64);
  attrT(theNode(cs), "value", ModelBuilder::tensorI64("v", {1}, {7}));
  out = runModel(cs, {{"S", Tensor::fromInt64({2}, {2, 2})}});
  EXPECT_EQ(out["Y0"].shape(), Shape({2, 2}));
  EXPECT_THAT(ints(out["Y0"]), ElementsAre(7, 7, 7, 7));

  ModelBuilder k;
  k.input("X", F32, {"2"}).output("Y", F32, {"2"});
  attrT(k.node("Constant", {}, {"c"}), "value", ModelBuilder::tensorF32("c", {2}, {1, 2}));
  attrF(k.node("Constant", {}, {"d"}), "value_float", 10.f);
  k.node("Add", {"X", "c"}, {"t"});
  k.node("Mul", {"t", "d"}, {"Y"});
  out = runModel(k, {{"X", Tensor::fromFloat({2}, {1, 1})}});
  EXPECT_THAT(floats(out["Y"]), ElementsAre(20, 30));
}

TEST(Kernels, ArgMaxTopK) {
  auto a = oneOp("ArgMax", {{"X", F32}}, I64);
  attr(theNode(a), "axis", -1);
  attr(theNode(a), "keepdims", 0);
  auto out = runModel(a, {{"X", Tensor::fromFloat({2, 3}, {1, 5, 5, 7, 0, 2})}});
  EXPECT_EQ(out["Y0"].shape(), Shape({2}));
  EXPECT_THAT(ints(out["Y0"]), ElementsAre(1, 0));

  auto t = oneOp("TopK", {{"X", F32}, {"K", I64}}, F32, 2);
  (*t.graph()->mutable_output())[1].mutable_type()->mutable_tensor_type()->set_elem_type(I64);
  out = runModel(t, {{"X", Tensor::fromFloat({2, 4}, {1, 9, 3, 9, 4, 2, 8, 6})},
                     {"K", Tensor::fromInt64({1}, {2})}});
  EXPECT_EQ(out["Y0"].shape(), Shape({2, 2}));
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(9, 9, 8, 6));
  EXPECT_THAT(ints(out["Y1"]), ElementsAre(1, 3, 2, 3));
  auto s = oneOp("TopK", {{"X", F32}, {"K", I64}}, F32, 2);
  attr(theNode(s), "largest", 0);
  (*s.graph()->mutable_output())[1].mutable_type()->mutable_tensor_type()->set_elem_type(I64);
  out = runModel(s, {{"X", Tensor::fromFloat({4}, {4, 2, 8, 6})}, {"K", Tensor::fromInt64({1}, {1})}});
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(2));
  EXPECT_THAT(ints(out["Y1"]), ElementsAre(1));
}

TEST(Kernels, TriluCumSumLayerNorm) {
  auto t = oneOp("Trilu", {{"X", F32}, {"k", I64}}, F32);
  attr(theNode(t), "upper", 0);
  auto out = runModel(t, {{"X", Tensor::fromFloat({3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1})},
                          {"k", Tensor::fromInt64({}, {0})}});
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(1, 0, 0, 1, 1, 0, 1, 1, 1));
  auto u = oneOp("Trilu", {{"X", F32}}, F32);
  out = runModel(u, {{"X", Tensor::fromFloat({2, 2}, {1, 2, 3, 4})}});
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(1, 2, 0, 4));

  auto c = oneOp("CumSum", {{"X", I64}, {"axis", I64}}, I64);
  out = runModel(c, {{"X", Tensor::fromInt64({2, 3}, {1, 2, 3, 4, 5, 6})},
                     {"axis", Tensor::fromInt64({}, {-1})}});
  EXPECT_THAT(ints(out["Y0"]), ElementsAre(1, 3, 6, 4, 9, 15));
  auto ce = oneOp("CumSum", {{"X", F32}, {"axis", I64}}, F32);
  attr(theNode(ce), "exclusive", 1);
  attr(theNode(ce), "reverse", 1);
  out = runModel(ce, {{"X", Tensor::fromFloat({3}, {1, 2, 3})}, {"axis", Tensor::fromInt64({}, {0})}});
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(5, 3, 0));

  auto ln = oneOp("LayerNormalization", {{"X", F32}, {"S", F32}, {"B", F32}}, F32);
  attrF(theNode(ln), "epsilon", 0.f);
  out = runModel(ln, {{"X", Tensor::fromFloat({2, 2}, {1, 3, 2, 2 + 1e-3f})},
                      {"S", Tensor::fromFloat({2}, {1, 2})},
                      {"B", Tensor::fromFloat({2}, {0, 10})}});
  auto y = floats(out["Y0"]);
  EXPECT_NEAR(y[0], -1, 1e-5);
  EXPECT_NEAR(y[1], 12, 1e-5);
  EXPECT_NEAR(y[2], -1, 1e-2);
  EXPECT_NEAR(y[3], 12, 2e-2);
}

TEST(Kernels, MatMulAndGemm) {
  auto m = oneOp("MatMul", {{"A", F32}, {"B", F32}}, F32);
  auto out = runModel(m, {{"A", Tensor::fromFloat({2, 2}, {1, 2, 3, 4})},
                          {"B", Tensor::fromFloat({2, 3}, {1, 0, 1, 0, 1, 1})}});
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(1, 2, 3, 3, 4, 7));
  // Batched, with the batch of B broadcast against A's.
  out = runModel(m, {{"A", Tensor::fromFloat({2, 1, 1, 2}, {1, 2, 3, 4})},
                     {"B", Tensor::fromFloat({1, 2, 2, 1}, {1, 1, 2, 0})}});
  EXPECT_EQ(out["Y0"].shape(), Shape({2, 2, 1, 1}));
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(3, 2, 7, 6));
  // Folded batch (B without batch dims) and vector operands.
  out = runModel(m, {{"A", Tensor::fromFloat({2, 1, 2}, {1, 2, 3, 4})},
                     {"B", Tensor::fromFloat({2}, {1, 1})}});
  EXPECT_EQ(out["Y0"].shape(), Shape({2, 1}));
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(3, 7));
  out = runModel(m, {{"A", Tensor::fromFloat({2}, {1, 2})},
                     {"B", Tensor::fromFloat({2, 2}, {1, 2, 3, 4})}});
  EXPECT_EQ(out["Y0"].shape(), Shape({2}));
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(7, 10));

  auto g = oneOp("Gemm", {{"A", F32}, {"B", F32}, {"C", F32}}, F32);
  attr(theNode(g), "transB", 1);
  attrF(theNode(g), "alpha", 2.f);
  out = runModel(g, {{"A", Tensor::fromFloat({1, 2}, {1, 2})},
                     {"B", Tensor::fromFloat({3, 2}, {1, 0, 0, 1, 1, 1})},
                     {"C", Tensor::fromFloat({3}, {100, 200, 300})}});
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(102, 204, 306));
}

TEST(Kernels, ModelLocalFunctionsAreInlined) {
  ModelBuilder b;
  b.input("X", F32, {"2"}).output("Y", F32, {"2"});
  auto *op = b.model.add_opset_import();
  op->set_domain("qeff.local");
  op->set_version(1);
  auto *f = b.model.add_functions();
  f->set_name("AddScaled");
  f->set_domain("qeff.local");
  f->add_input("a");
  f->add_output("r");
  f->add_attribute("k");
  *f->add_opset_import() = b.model.opset_import(0);
  auto *c = f->add_node();
  c->set_op_type("Constant");
  c->add_output("kk");
  auto *ref = c->add_attribute();
  ref->set_name("value_float");
  ref->set_type(onnx::AttributeProto::FLOAT);
  ref->set_ref_attr_name("k");
  auto *mul = f->add_node();
  mul->set_op_type("Mul");
  mul->set_name("mul");
  mul->add_input("a");
  mul->add_input("kk");
  mul->add_output("r");
  auto &call1 = b.node("AddScaled", {"X"}, {"t"}, "layer0");
  call1.set_domain("qeff.local");
  attrF(call1, "k", 3.f);
  auto &call2 = b.node("AddScaled", {"t"}, {"Y"}, "layer1");
  call2.set_domain("qeff.local");
  attrF(call2, "k", -1.f);
  auto out = runModel(b, {{"X", Tensor::fromFloat({2}, {1, 2})}});
  EXPECT_THAT(floats(out["Y"]), ElementsAre(-3, -6));
}

TEST(Kernels, UnsupportedOpIsALoadErrorNamingTheNode) {
  ModelBuilder b;
  b.input("X", F32, {"2"}).output("Y", F32, {"2"});
  b.node("Relu", {"X"}, {"t"}, "fine");
  b.node("HardSwishy", {"t"}, {"Y"}, "/model/layers.0/weird");
  TempDir dir;
  auto s = Session::open(b.save(dir), DeviceKind::Host);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error(), HasSubstr("node '/model/layers.0/weird' (HardSwishy)"));
  EXPECT_THAT(s.error(), HasSubstr("unsupported operator"));
}

TEST(Kernels, UnsupportedAttributeValueIsALoadError) {
  auto b = oneOp("ScatterND", {{"D", F32}, {"I", I64}, {"U", F32}}, F32);
  attrS(theNode(b), "reduction", "median");
  TempDir dir;
  auto s = Session::open(b.save(dir), DeviceKind::Host);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error(), HasSubstr("node 'the_ScatterND' (ScatterND)"));
  EXPECT_THAT(s.error(), HasSubstr("median"));
  auto c = oneOp("Cast", {{"X", F32}}, F32);
  attr(theNode(c), "to", onnx::TensorProto::COMPLEX64);
  s = Session::open(c.save(dir), DeviceKind::Host);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error(), HasSubstr("node 'the_Cast' (Cast)"));
  EXPECT_THAT(s.error(), HasSubstr("COMPLEX64"));
}

TEST(Kernels, ExternalDataIsMappedFromTheDataFile) {
  TempDir dir;
  // W at offset 0 (aligned: used in place), B at offset 18 (unaligned: copied),
  // H float16 at offset 26.
  std::string data(40, '\0');
  float w[4] = {1, 2, 3, 4}, bias[2] = {10, 20};
  std::memcpy(&data[0], w, 16);
  std::memcpy(&data[18], bias, 8);
  uint16_t h[2] = {floatToHalf(0.5f), floatToHalf(-2.f)};
  std::memcpy(&data[26], h, 4);
  dir.write("model.onnx.data", data);
  ModelBuilder b;
  b.input("X", F32, {"1", "2"}).output("Y", F32, {"1", "2"});
  auto ext = [&](const std::string &name, int type, std::vector<int64_t> dims, int off, int len) {
    auto *t = b.graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    for (auto d : dims)
      t->add_dims(d);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const char *k, const std::string &v) {
      auto *e = t->add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    add("location", "model.onnx.data");
    add("offset", std::to_string(off));
    add("length", std::to_string(len));
  };
  ext("W", F32, {2, 2}, 0, 16);
  ext("B", F32, {2}, 18, 8);
  ext("H", F16, {2}, 26, 4);
  b.node("MatMul", {"X", "W"}, {"xw"});
  b.node("Add", {"xw", "B"}, {"xb"});
  b.node("Mul", {"xb", "H"}, {"Y"});
  b.save(dir);
  auto s = Session::open(dir.path(), DeviceKind::Host);
  ASSERT_TRUE(s.ok()) << s.error();
  ASSERT_TRUE(s->run({{"X", Tensor::fromFloat({1, 2}, {1, 1})}}).ok());
  EXPECT_THAT(floats(*s->getOutput("Y")), ElementsAre(7, -52));

  // Bytes outside the file: a load error naming the initializer.
  ext("Bad", F32, {4}, 32, 16);
  b.save(dir);
  auto bad = Session::open(dir.path(), DeviceKind::Host);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error(), HasSubstr("'Bad'"));
}

} // namespace
