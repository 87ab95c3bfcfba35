//===- OnnxSemanticsTest.cpp - Host kernels follow the ONNX spec's edge cases -===//
//
// Cases from the ONNX operator specification and its node tests where the
// host device used to differ: Clip with min > max, Mod with fmod = 1 on
// integers, Pow with an integer base and a float (or other integer)
// exponent, ReduceMax / ReduceMin of bool and over empty axes. Expected
// values are the spec's (numpy) results.
//
//===----------------------------------------------------------------------===//

#include "test/unit/Runtime/ModelBuilder.h"

#include <gmock/gmock.h>

#include <cmath>
#include <limits>

using namespace qeff::runtime;
using namespace qeff::runtime::test;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

/// One node, inputs of any rank, outputs Y0.. of `outType` of any rank.
ModelBuilder op(const std::string &opType, const std::vector<std::pair<std::string, int>> &inputs,
                int outType) {
  ModelBuilder b;
  std::vector<std::string> names;
  for (const auto &[name, type] : inputs) {
    b.input(name, type, {});
    b.graph()->mutable_input()->rbegin()->mutable_type()->mutable_tensor_type()->clear_shape();
    names.push_back(name);
  }
  b.output("Y0", outType, {});
  b.graph()->mutable_output()->rbegin()->mutable_type()->mutable_tensor_type()->clear_shape();
  b.node(opType, names, {"Y0"}, "the_" + opType);
  return b;
}

onnx::NodeProto &theNode(ModelBuilder &b) { return *b.graph()->mutable_node(0); }

std::vector<bool> bools(const Tensor &t) {
  std::vector<bool> v;
  for (int64_t i = 0; i < t.numElements(); ++i)
    v.push_back(t.data<uint8_t>()[i] != 0);
  return v;
}

TEST(OnnxSemantics, ClipWithMinAboveMaxGivesMax) {
  // test_clip_min_greater_than_max: x [-2, 0, 6], min 2, max 1 -> [1, 1, 1].
  auto b = op("Clip", {{"X", F32}, {"Lo", F32}, {"Hi", F32}}, F32);
  auto out = runModel(b, {{"X", Tensor::fromFloat({3}, {-2, 0, 6})},
                          {"Lo", Tensor::fromFloat({}, {2})},
                          {"Hi", Tensor::fromFloat({}, {1})}});
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(1, 1, 1));
  // Long enough for the vector path; NaN stays NaN.
  std::vector<float> x(37, -5.f);
  x[3] = 7.f;
  x[20] = NAN;
  out = runModel(b, {{"X", Tensor::fromFloat({37}, x)},
                     {"Lo", Tensor::fromFloat({}, {2})},
                     {"Hi", Tensor::fromFloat({}, {1})}});
  auto y = floats(out["Y0"]);
  ASSERT_EQ(y.size(), 37u);
  for (size_t i = 0; i < y.size(); ++i)
    if (i == 20)
      EXPECT_TRUE(std::isnan(y[i]));
    else
      EXPECT_EQ(y[i], 1.f) << i;
  auto bi = op("Clip", {{"X", I64}, {"Lo", I64}, {"Hi", I64}}, I64);
  out = runModel(bi, {{"X", Tensor::fromInt64({3}, {-2, 0, 6})},
                      {"Lo", Tensor::fromInt64({}, {2})},
                      {"Hi", Tensor::fromInt64({}, {1})}});
  EXPECT_THAT(ints(out["Y0"]), ElementsAre(1, 1, 1));
  // The attribute form (opset < 11).
  auto ba = op("Clip", {{"X", F32}}, F32);
  attrF(theNode(ba), "min", 2);
  attrF(theNode(ba), "max", 1);
  out = runModel(ba, {{"X", Tensor::fromFloat({3}, {-2, 0, 6})}});
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(1, 1, 1));
}

TEST(OnnxSemantics, ModOfIntegersFollowsFmod) {
  const std::vector<int64_t> x{-4, 7, 5, 4, -7, 8}, y{2, -3, 8, -2, 3, 5};
  // test_mod_mixed_sign_int64 (fmod = 0): the divisor's sign.
  auto b = op("Mod", {{"A", I64}, {"B", I64}}, I64);
  auto out = runModel(b, {{"A", Tensor::fromInt64({6}, x)}, {"B", Tensor::fromInt64({6}, y)}});
  EXPECT_THAT(ints(out["Y0"]), ElementsAre(0, -2, 5, 0, 2, 3));
  // test_mod_int64_fmod (fmod = 1): the dividend's sign (np.fmod).
  auto f = op("Mod", {{"A", I64}, {"B", I64}}, I64);
  attr(theNode(f), "fmod", 1);
  out = runModel(f, {{"A", Tensor::fromInt64({6}, x)}, {"B", Tensor::fromInt64({6}, y)}});
  EXPECT_THAT(ints(out["Y0"]), ElementsAre(0, 1, 5, 0, -1, 3));
  auto f32 = op("Mod", {{"A", I32}, {"B", I32}}, I32);
  attr(theNode(f32), "fmod", 1);
  out = runModel(f32, {{"A", Tensor::fromInt32({6}, {-4, 7, 5, 4, -7, 8})},
                       {"B", Tensor::fromInt32({6}, {2, -3, 8, -2, 3, 5})}});
  EXPECT_THAT(ints(out["Y0"]), ElementsAre(0, 1, 5, 0, -1, 3));
  // The lowest value modulo -1 is 0 (the machine instruction would trap).
  const int64_t lo = std::numeric_limits<int64_t>::min();
  for (auto *m : {&b, &f}) {
    out = runModel(*m, {{"A", Tensor::fromInt64({2}, {lo, 5})},
                        {"B", Tensor::fromInt64({2}, {-1, -1})}});
    EXPECT_THAT(ints(out["Y0"]), ElementsAre(0, 0));
  }
  // test_mod_mixed_sign_float32 (fmod = 1).
  auto ff = op("Mod", {{"A", F32}, {"B", F32}}, F32);
  attr(theNode(ff), "fmod", 1);
  out = runModel(ff, {{"A", Tensor::fromFloat({6}, {-4.3f, 7.2f, 5.0f, 4.3f, -7.2f, 8.0f})},
                      {"B", Tensor::fromFloat({6}, {2.1f, -3.4f, 8.0f, -2.1f, 3.4f, 5.0f})}});
  auto v = floats(out["Y0"]);
  std::vector<float> want{std::fmod(-4.3f, 2.1f), std::fmod(7.2f, -3.4f), 5.f,
                          std::fmod(4.3f, -2.1f), std::fmod(-7.2f, 3.4f), 3.f};
  EXPECT_EQ(v, want);
  // fmod is 0 or 1.
  auto bad = op("Mod", {{"A", I64}, {"B", I64}}, I64);
  attr(theNode(bad), "fmod", 2);
  TempDir dir;
  auto s = Session::open(bad.save(dir), DeviceKind::Host);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error(), HasSubstr("fmod must be 0 or 1"));
}

TEST(OnnxSemantics, IntegerDivisionOfLowestByMinusOneWraps) {
  auto b = op("Div", {{"A", I64}, {"B", I64}}, I64);
  const int64_t lo = std::numeric_limits<int64_t>::min();
  auto out = runModel(b, {{"A", Tensor::fromInt64({2}, {lo, 6})},
                          {"B", Tensor::fromInt64({2}, {-1, -1})}});
  EXPECT_THAT(ints(out["Y0"]), ElementsAre(lo, -6));
}

TEST(OnnxSemantics, PowOfMixedTypes) {
  // test_pow_types_int64_float32 / int32_float32: the result has the base's type.
  auto b = op("Pow", {{"X", I64}, {"Y", F32}}, I64);
  auto out = runModel(b, {{"X", Tensor::fromInt64({3}, {1, 2, 3})},
                          {"Y", Tensor::fromFloat({3}, {4, 5, 6})}});
  EXPECT_EQ(out["Y0"].dtype(), DType::Int64);
  EXPECT_THAT(ints(out["Y0"]), ElementsAre(1, 32, 729));
  auto b32 = op("Pow", {{"X", I32}, {"Y", F32}}, I32);
  out = runModel(b32, {{"X", Tensor::fromInt32({4}, {1, 2, 3, 9})},
                       {"Y", Tensor::fromFloat({4}, {4, 5, 6, 0.5f})}});
  EXPECT_EQ(out["Y0"].dtype(), DType::Int32);
  EXPECT_THAT(ints(out["Y0"]), ElementsAre(1, 32, 729, 3));
  // Out of range saturates, truncation toward zero, NaN gives 0.
  out = runModel(b32, {{"X", Tensor::fromInt32({3}, {10, 2, 2})},
                       {"Y", Tensor::fromFloat({3}, {20, -1, NAN})}});
  EXPECT_THAT(ints(out["Y0"]), ElementsAre(std::numeric_limits<int32_t>::max(), 0, 0));
  // test_pow_types_float32_int64 / float32_int32.
  auto f = op("Pow", {{"X", F32}, {"Y", I64}}, F32);
  out = runModel(f, {{"X", Tensor::fromFloat({3}, {1, 2, 3})},
                     {"Y", Tensor::fromInt64({3}, {4, 5, 6})}});
  EXPECT_THAT(floats(out["Y0"]), ElementsAre(1, 32, 729));
  // test_pow_types_int64_int64 and int32 base with an int64 exponent,
  // broadcast; a huge exponent is computed by squaring (no loop of e steps).
  auto ii = op("Pow", {{"X", I64}, {"Y", I64}}, I64);
  out = runModel(ii, {{"X", Tensor::fromInt64({3}, {1, 2, 3})},
                      {"Y", Tensor::fromInt64({3}, {4, 5, 6})}});
  EXPECT_THAT(ints(out["Y0"]), ElementsAre(1, 32, 729));
  out = runModel(ii, {{"X", Tensor::fromInt64({3}, {1, -1, 0})},
                      {"Y", Tensor::fromInt64({}, {(int64_t(1) << 62) + 1})}});
  EXPECT_THAT(ints(out["Y0"]), ElementsAre(1, -1, 0));
  auto i32i64 = op("Pow", {{"X", I32}, {"Y", I64}}, I32);
  out = runModel(i32i64, {{"X", Tensor::fromInt32({3}, {1, 2, -3})},
                          {"Y", Tensor::fromInt64({1}, {3})}});
  EXPECT_THAT(ints(out["Y0"]), ElementsAre(1, 8, -27));
  // Integers to a negative integer power are refused, as numpy does.
  TempDir dir;
  auto s = Session::open(ii.save(dir), DeviceKind::Host);
  ASSERT_TRUE(s.ok()) << s.error();
  Status st = s->run({{"X", Tensor::fromInt64({1}, {2})}, {"Y", Tensor::fromInt64({1}, {-1})}});
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error(), HasSubstr("negative integer power"));
}

TEST(OnnxSemantics, ReduceMaxMinOfBool) {
  // test_reduce_max_bool_inputs / test_reduce_min_bool_inputs: axes [1], keepdims 1.
  std::vector<bool> x{true, true, true, false, false, true, false, false};
  for (bool isMax : {true, false}) {
    auto b = op(isMax ? "ReduceMax" : "ReduceMin", {{"X", BOOL}}, BOOL);
    attrs(theNode(b), "axes", {1});
    auto out = runModel(b, {{"X", Tensor::fromBool({4, 2}, x)}});
    EXPECT_EQ(out["Y0"].shape(), Shape({4, 1}));
    if (isMax)
      EXPECT_THAT(bools(out["Y0"]), ElementsAre(true, true, true, false));
    else
      EXPECT_THAT(bools(out["Y0"]), ElementsAre(true, false, false, false));
    // Over the first axis (not a suffix of dims).
    auto c = op(isMax ? "ReduceMax" : "ReduceMin", {{"X", BOOL}}, BOOL);
    attrs(theNode(c), "axes", {0});
    attr(theNode(c), "keepdims", 0);
    out = runModel(c, {{"X", Tensor::fromBool({4, 2}, x)}});
    EXPECT_EQ(out["Y0"].shape(), Shape({2}));
    if (isMax)
      EXPECT_THAT(bools(out["Y0"]), ElementsAre(true, true));
    else
      EXPECT_THAT(bools(out["Y0"]), ElementsAre(false, false));
  }
  // Other reductions of bool stay refused, naming the node.
  auto s = op("ReduceSum", {{"X", BOOL}}, BOOL);
  TempDir dir;
  auto session = Session::open(s.save(dir), DeviceKind::Host);
  ASSERT_TRUE(session.ok()) << session.error();
  Status st = session->run({{"X", Tensor::fromBool({2}, {true, false})}});
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error(), HasSubstr("reduction of bool"));
}

TEST(OnnxSemantics, EmptyReductionsGiveTheIdentity) {
  // test_reduce_max_empty_set / test_reduce_min_empty_set: data [2, 0, 4],
  // axes [1], keepdims 1 -> [2, 1, 4] of -inf / +inf; sum 0, prod 1.
  struct Case {
    const char *op;
    float want;
  } cases[] = {{"ReduceMax", -kInf}, {"ReduceMin", kInf}, {"ReduceSum", 0}, {"ReduceProd", 1}};
  for (const auto &c : cases) {
    for (auto axes : {std::vector<int64_t>{1}, std::vector<int64_t>{0, 1}}) {
      auto b = op(c.op, {{"X", F32}}, F32);
      attrs(theNode(b), "axes", axes);
      auto out = runModel(b, {{"X", Tensor::fromFloat({2, 0, 4}, {})}});
      Shape want = axes.size() == 1 ? Shape{2, 1, 4} : Shape{1, 1, 4};
      EXPECT_EQ(out["Y0"].shape(), want) << c.op;
      for (float v : floats(out["Y0"]))
        EXPECT_EQ(v, c.want) << c.op;
    }
  }
  // Integers: the type's lowest / highest value; bool: false / true.
  auto mx = op("ReduceMax", {{"X", I64}}, I64);
  attrs(theNode(mx), "axes", {1});
  auto out = runModel(mx, {{"X", Tensor::fromInt64({2, 0}, {})}});
  EXPECT_THAT(ints(out["Y0"]), ElementsAre(std::numeric_limits<int64_t>::lowest(),
                                           std::numeric_limits<int64_t>::lowest()));
  auto mn = op("ReduceMin", {{"X", BOOL}}, BOOL);
  attrs(theNode(mn), "axes", {1});
  out = runModel(mn, {{"X", Tensor::fromBool({2, 0}, {})}});
  EXPECT_THAT(bools(out["Y0"]), ElementsAre(true, true));
  // The mean of nothing stays an error naming the node.
  auto mean = op("ReduceMean", {{"X", F32}}, F32);
  attrs(theNode(mean), "axes", {1});
  TempDir dir;
  auto s = Session::open(mean.save(dir), DeviceKind::Host);
  ASSERT_TRUE(s.ok()) << s.error();
  Status st = s->run({{"X", Tensor::fromFloat({2, 0}, {})}});
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error(), HasSubstr("node 'the_ReduceMean' (ReduceMean)"));
}

} // namespace
