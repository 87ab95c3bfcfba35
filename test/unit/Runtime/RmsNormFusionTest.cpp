//===- RmsNormFusionTest.cpp - RMSNorm's five nodes as one kernel ---------===//
//
// The host device fuses Div(x, Sqrt(Add(ReduceMean(Mul(x, x), axes = [-1]),
// eps))) (how the exporter writes RMSNorm) into one pass over x
// (runtime/host/HostPlan.cpp, ElementwiseKernels.cpp). Through whole
// models, against the nodes as written (QEFF_HOST_UNFUSED_DECODE=1): the
// same bits for several shapes, eps on either side of the Add, inf and NaN
// in x, 1 and 2 threads; other ReduceMean axes are not fused (the same
// results), and an empty axis is the same error.
//
//===----------------------------------------------------------------------===//

#include "test/unit/Runtime/ModelBuilder.h"

#include <gmock/gmock.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

using namespace qeff::runtime;
using namespace qeff::runtime::test;

namespace {

ModelBuilder rmsNorm(bool epsFirst, std::vector<int64_t> axes) {
  ModelBuilder b;
  b.input("X", F32, {});
  b.graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  b.initF32("eps", {}, {1e-5f});
  b.node("Mul", {"X", "X"}, {"Sq"});
  auto &rm = b.node("ReduceMean", {"Sq"}, {"Ms"});
  attrs(rm, "axes", axes);
  attr(rm, "keepdims", 1);
  b.node("Add", epsFirst ? std::vector<std::string>{"eps", "Ms"}
                         : std::vector<std::string>{"Ms", "eps"},
         {"T"});
  b.node("Sqrt", {"T"}, {"R"});
  b.node("Div", {"X", "R"}, {"Y"});
  b.output("Y", F32, {});
  b.graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  return b;
}

/// Y from a session (fused unless `unfused`), or the error.
std::pair<std::vector<float>, std::string> run(const ModelBuilder &b, const Tensor &x,
                                               int threads, bool unfused) {
  TempDir dir;
  SessionOptions opts;
  opts.numThreads = threads;
  if (unfused)
    setenv("QEFF_HOST_UNFUSED_DECODE", "1", 1);
  auto s = Session::open(b.save(dir), DeviceKind::Host, opts);
  unsetenv("QEFF_HOST_UNFUSED_DECODE");
  EXPECT_TRUE(s.ok()) << s.error();
  if (!s.ok())
    return {};
  Status st = s->run({{"X", x}});
  if (!st.ok())
    return {{}, st.error()};
  return {floats(*s->getOutput("Y")), ""};
}

void expectSameBits(const std::vector<float> &got, const std::vector<float> &want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    uint32_t a, b;
    std::memcpy(&a, &got[i], 4);
    std::memcpy(&b, &want[i], 4);
    ASSERT_EQ(a, b) << "at " << i << ": " << got[i] << " fused, " << want[i] << " as written";
  }
}

TEST(HostRmsNorm, FusedKeepsTheBitsOfTheNodes) {
  unsigned seed = 40;
  for (bool epsFirst : {false, true})
    for (int threads : {1, 2})
      for (Shape shape : {Shape{5}, Shape{3, 7, 33}, Shape{2, 2048}, Shape{300, 64}}) {
        auto v = randomFloats(numElements(shape), seed++);
        for (auto &x : v)
          x *= 40.f;
        if (shape.size() > 1) { // a row with inf, one with NaN, one of zeros
          v[1] = std::numeric_limits<float>::infinity();
          v[shape.back() + 2] = NAN;
          if (shape[0] > 2)
            std::fill(v.begin() + 2 * shape.back(), v.begin() + 3 * shape.back(), 0.f);
        }
        SCOPED_TRACE(::testing::Message() << shapeString(shape) << " threads " << threads
                                          << " eps first " << epsFirst);
        ModelBuilder b = rmsNorm(epsFirst, {-1});
        Tensor x = Tensor::fromFloat(shape, v);
        auto fused = run(b, x, threads, false), plain = run(b, x, threads, true);
        ASSERT_EQ(fused.second, "");
        ASSERT_EQ(plain.second, "");
        expectSameBits(fused.first, plain.first);
      }
}

TEST(HostRmsNorm, OtherAxesAndEmptyRowsAsWritten) {
  // axes = [0]: not the fused form; the nodes' results either way.
  ModelBuilder b = rmsNorm(false, {0});
  Tensor x = Tensor::fromFloat({4, 3}, randomFloats(12, 7));
  auto fused = run(b, x, 2, false), plain = run(b, x, 2, true);
  ASSERT_EQ(fused.second, "");
  expectSameBits(fused.first, plain.first);
  // An empty last axis: ReduceMean's error, fused or not.
  ModelBuilder e = rmsNorm(false, {-1});
  Tensor empty = Tensor::fromFloat({3, 0}, {});
  auto fe = run(e, empty, 1, false), pe = run(e, empty, 1, true);
  EXPECT_THAT(fe.second, ::testing::HasSubstr("ReduceMean over an empty axis"));
  EXPECT_THAT(pe.second, ::testing::HasSubstr("ReduceMean over an empty axis"));
}

} // namespace
