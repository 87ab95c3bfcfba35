//===- MxNumericsTest.cpp - MX emulation on the host device ---------------===//
//
// SessionOptions::mx: MXFP6 weights (the constant second operands of
// MatMul/Gemm) against a float64 reference of the same quantized values,
// weight-first MatMuls left alone, MXINT8 retained-state writes and
// tensor-parallel link activations, and the --numerics spelling.
//
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

#include "runtime/host/HostDevice.h"
#include "runtime/host/numerics/MxFormat.h"

#include <gmock/gmock.h>

#include <cmath>
#include <cstring>

using namespace qeff::runtime;
using namespace qeff::runtime::test;

namespace {

/// W [K, N] quantized per column in blocks of 32 along K (or per row along
/// N), through the code path (encode, then decode in double).
std::vector<double> referenceWeights(const std::vector<float> &w, int64_t k, int64_t n,
                                     bool alongK, MxRounding r) {
  std::vector<double> q(w.size());
  int64_t lines = alongK ? n : k, len = alongK ? k : n;
  for (int64_t l = 0; l < lines; ++l)
    for (int64_t b = 0; b < len; b += mx::kBlockSize) {
      int64_t cnt = std::min<int64_t>(mx::kBlockSize, len - b);
      std::vector<float> block(cnt);
      auto at = [&](int64_t i) { return alongK ? (b + i) * n + l : l * n + b + i; };
      for (int64_t i = 0; i < cnt; ++i)
        block[i] = w[at(i)];
      uint8_t scale;
      std::vector<uint32_t> codes(cnt);
      mx::encodeBlock(mx::Element::FP6_E2M3, r, block.data(), cnt, scale, codes.data());
      for (int64_t i = 0; i < cnt; ++i)
        q[at(i)] = mx::decodeScale(scale) * mx::decodeElement(mx::Element::FP6_E2M3, codes[i]);
    }
  return q;
}

/// y = x W in float64; `bound` gets sum |x||W| per output (for float32
/// accumulation error).
std::vector<double> matmul64(const std::vector<float> &x, const std::vector<double> &w,
                             int64_t m, int64_t k, int64_t n, std::vector<double> &bound) {
  std::vector<double> y(m * n, 0.0);
  bound.assign(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t t = 0; t < k; ++t) {
        y[i * n + j] += double(x[i * k + t]) * w[t * n + j];
        bound[i * n + j] += std::fabs(double(x[i * k + t]) * w[t * n + j]);
      }
  return y;
}

void expectNear64(const std::vector<float> &got, const std::vector<double> &want,
                  const std::vector<double> &bound, int64_t k) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_LE(std::fabs(double(got[i]) - want[i]), double(k) * 0x1p-23 * bound[i] + 1e-30)
        << "output " << i << ": " << got[i] << " vs float64 " << want[i];
}

SessionOptions mxfp6(MxRounding r = MxRounding::Even,
                     MxWeightAxis axis = MxWeightAxis::Reduction) {
  SessionOptions o;
  o.mx.mxfp6Weights = true;
  o.mx.rounding = r;
  o.mx.weightAxis = axis;
  return o;
}

} // namespace

TEST(MxNumerics, MatMulWeightMatchesFloat64Reference) {
  const int64_t m = 3, k = 70, n = 5; // K: two full blocks and a short one
  std::vector<float> w = randomFloats(k * n, 1), x = randomFloats(m * k, 2);
  for (size_t i = 0; i < w.size(); i += 7)
    w[i] *= 40.0f; // outliers set some blocks' scales
  ModelBuilder b;
  b.input("x", F32, {"3", "70"}).output("y", F32, {"3", "5"});
  b.initF32("w", {k, n}, w);
  b.node("MatMul", {"x", "w"}, {"y"});
  for (MxRounding r : {MxRounding::Even, MxRounding::Nearest})
    for (MxWeightAxis axis : {MxWeightAxis::Reduction, MxWeightAxis::Output}) {
      TensorMap out = runModel(b, {{"x", Tensor::fromFloat({m, k}, x)}}, mxfp6(r, axis));
      std::vector<double> wq = referenceWeights(w, k, n, axis == MxWeightAxis::Reduction, r);
      size_t changed = 0;
      for (size_t i = 0; i < w.size(); ++i)
        changed += wq[i] != double(w[i]);
      EXPECT_GT(changed, w.size() / 2) << "the weight was not quantized";
      std::vector<double> bound;
      expectNear64(floats(out["y"]), matmul64(x, wq, m, k, n, bound), bound, k);
    }
  // Default numerics: the weight as it is.
  TensorMap plain = runModel(b, {{"x", Tensor::fromFloat({m, k}, x)}});
  std::vector<double> w64(w.begin(), w.end()), bound;
  expectNear64(floats(plain["y"]), matmul64(x, w64, m, k, n, bound), bound, k);
}

TEST(MxNumerics, GemmTransBAndWeightFirstMatMul) {
  const int64_t m = 2, k = 40, n = 3;
  std::vector<float> w = randomFloats(k * n, 3), x = randomFloats(m * k, 4);
  // Gemm(x, W^T) with transB: W stored [N, K], blocks along its axis 1.
  std::vector<float> wt(n * k);
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < n; ++j)
      wt[j * k + i] = w[i * n + j];
  ModelBuilder g;
  g.input("x", F32, {"2", "40"}).output("y", F32, {"2", "3"});
  g.initF32("wt", {n, k}, wt);
  attr(g.node("Gemm", {"x", "wt"}, {"y"}), "transB", 1);
  TensorMap out = runModel(g, {{"x", Tensor::fromFloat({m, k}, x)}}, mxfp6());
  std::vector<double> bound;
  expectNear64(floats(out["y"]),
               matmul64(x, referenceWeights(w, k, n, true, MxRounding::Even), m, k, n, bound),
               bound, k);

  // MatMul(W, x): a weight-first product is not what -mxfp6-matmul
  // compresses, so it stays exactly as without MX.
  ModelBuilder f;
  f.input("x", F32, {"40", "2"}).output("y", F32, {"3", "2"});
  f.initF32("w", {n, k}, wt);
  f.node("MatMul", {"w", "x"}, {"y"});
  std::vector<float> xt = randomFloats(k * m, 5);
  EXPECT_EQ(floats(runModel(f, {{"x", Tensor::fromFloat({k, m}, xt)}}, mxfp6())["y"]),
            floats(runModel(f, {{"x", Tensor::fromFloat({k, m}, xt)}})["y"]));
}

TEST(MxNumerics, Float16WeightThroughCastStaysExact) {
  const int64_t m = 2, k = 32, n = 4;
  std::vector<float> w = randomFloats(k * n, 6), x = randomFloats(m * k, 7);
  onnx::TensorProto t;
  t.set_name("w16");
  t.set_data_type(F16);
  t.add_dims(k);
  t.add_dims(n);
  std::string raw;
  for (float &v : w) {
    v = roundToHalf(v);
    uint16_t h = floatToHalf(v);
    raw.append(reinterpret_cast<const char *>(&h), 2);
  }
  t.set_raw_data(raw);
  ModelBuilder b;
  b.input("x", F32, {"2", "32"}).output("y", F32, {"2", "4"});
  *b.graph()->add_initializer() = t;
  attr(b.node("Cast", {"w16"}, {"w"}), "to", F32);
  b.node("MatMul", {"x", "w"}, {"y"});
  TensorMap out = runModel(b, {{"x", Tensor::fromFloat({m, k}, x)}}, mxfp6());
  std::vector<double> bound;
  expectNear64(floats(out["y"]),
               matmul64(x, referenceWeights(w, k, n, true, MxRounding::Even), m, k, n, bound),
               bound, k);
}

TEST(MxNumerics, RetainedStateWritesAreMxint8) {
  // past_key.0_RetainedState = ScatterND(past_key.0, idx, upd): the written
  // slots hold MXINT8 values (blocks of 32 along head_dim 64), the others
  // stay zero, and a reader of the state in the same step sees them.
  ModelBuilder b;
  b.input("upd", F32, {"1", "1", "2", "64"}).input("idx", I64, {"1", "1", "2", "3"});
  b.input("past_key.0", F32, {"1", "1", "4", "64"});
  b.output("past_key.0_RetainedState", F32, {"1", "1", "4", "64"});
  b.output("logits", F32, {"1", "1", "64"});
  b.initI64("axis", {1}, {2});
  b.node("ScatterND", {"past_key.0", "idx", "upd"}, {"past_key.0_RetainedState"});
  attr(b.node("ReduceSum", {"past_key.0_RetainedState", "axis"}, {"logits"}), "keepdims", 0);
  TempDir dir;
  SessionOptions o;
  o.mx.mxint8KV = true;
  auto s = Session::open(b.save(dir), DeviceKind::Host, o);
  ASSERT_TRUE(s.ok()) << s.error();
  std::vector<float> upd = randomFloats(128, 8);
  upd[5] = 30.0f; // one block with a large scale
  ASSERT_TRUE(s->run({{"upd", Tensor::fromFloat({1, 1, 2, 64}, upd)},
                      {"idx", Tensor::fromInt64({1, 1, 2, 3}, {0, 0, 3, 0, 0, -3})}})
                  .ok());
  std::vector<float> want = upd;
  mx::fakeQuantizeRow(want.data(), 64, 32, mx::Element::INT8, MxRounding::Even);
  mx::fakeQuantizeRow(want.data() + 64, 64, 32, mx::Element::INT8, MxRounding::Even);
  EXPECT_NE(want, upd);
  std::vector<float> state = floats(*s->readState("past_key.0"));
  for (int64_t d = 0; d < 64; ++d) {
    EXPECT_EQ(state[3 * 64 + d], want[d]);      // slot 3
    EXPECT_EQ(state[1 * 64 + d], want[64 + d]); // slot -3 = 1
    EXPECT_EQ(state[0 * 64 + d], 0.0f);
    EXPECT_EQ(state[2 * 64 + d], 0.0f);
    EXPECT_EQ(floats(*s->getOutput("logits"))[d], want[d] + want[64 + d]);
  }
}

TEST(MxNumerics, TensorParallelLinkActivations) {
  // /model.layers.0/Add_0(x, /model.layers.0.mlp.down_proj/MatMul_0(...)):
  // the MLP output joins the residual after the link; x does not cross it.
  ModelBuilder b;
  b.input("x", F32, {"2", "64"}).input("h", F32, {"2", "64"}).output("y", F32, {"2", "64"});
  std::vector<float> eye(64 * 64, 0.0f);
  for (int i = 0; i < 64; ++i)
    eye[i * 64 + i] = 1.0f;
  b.initF32("w", {64, 64}, eye);
  b.node("MatMul", {"h", "w"}, {"m"}, "/model.layers.0.mlp.down_proj/MatMul_0");
  b.node("Add", {"x", "m"}, {"y"}, "/model.layers.0/Add_0");
  TempDir dir;
  host::HostOptions o;
  o.mx.mxint8IO = true;
  auto device = host::loadHostDevice(b.save(dir), o);
  ASSERT_TRUE(device.ok()) << device.error();
  std::vector<float> x = randomFloats(128, 9), h = randomFloats(128, 10);
  std::vector<Tensor> in = {Tensor::fromFloat({2, 64}, x), Tensor::fromFloat({2, 64}, h)}, out;
  ASSERT_TRUE((*device)->run(in, out).ok());
  std::vector<float> hq = h;
  for (int r = 0; r < 2; ++r)
    mx::fakeQuantizeRow(hq.data() + r * 64, 64, 32, mx::Element::INT8, MxRounding::Even);
  EXPECT_NE(hq, h);
  std::vector<float> y = floats(out[0]);
  for (size_t i = 0; i < y.size(); ++i)
    EXPECT_EQ(y[i], x[i] + hq[i]) << i;

  // Through a Session, a one-device model is refused.
  SessionOptions so;
  so.mx.mxint8IO = true;
  auto s = Session::open(b.save(dir), DeviceKind::Host, so);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error(), testing::HasSubstr("compiled for one device"));
}

TEST(MxNumerics, ParseNumerics) {
  SessionOptions o;
  ASSERT_TRUE(parseNumerics("fp16+mxfp6+mxint8-kv", o).ok());
  EXPECT_EQ(o.numerics, Numerics::FP16);
  EXPECT_TRUE(o.mx.mxfp6Weights && o.mx.mxint8KV && !o.mx.mxint8IO);
  EXPECT_EQ(numericsName(o), "fp16+mxfp6+mxint8-kv");
  ASSERT_TRUE(parseNumerics("mxint8-kv+mxfp6", o).ok());
  EXPECT_EQ(numericsName(o), "fp32+mxfp6+mxint8-kv");
  ASSERT_TRUE(parseNumerics("fp32", o).ok());
  EXPECT_FALSE(o.mx.any());
  EXPECT_EQ(numericsName(o), "fp32");
  for (const char *bad : {"", "fp8", "fp16+", "+fp16", "fp16++mxfp6", "fp32+fp16",
                          "mxfp6+mxfp6"}) {
    Status st = parseNumerics(bad, o);
    EXPECT_FALSE(st.ok()) << bad;
    if (!st.ok())
      EXPECT_THAT(st.error(), testing::HasSubstr("--numerics '" + std::string(bad) + "'"));
  }
}

TEST(MxNumerics, WeightCopyReleasedAfterLayoutGivesTheSameProducts) {
  // The MXFP6 copy goes back to the system once the kernels have laid it
  // out (lazily at the second product, or at open with prepackWeights); the
  // products stay those of the first run, for a weight two MatMuls share.
  // A weight read along two different K axes (w2, also through a Transpose)
  // is not quantized, as --report-mx does not count it compressed.
  const int64_t m = 2, k = 64, n = 64;
  std::vector<float> w = randomFloats(k * n, 11), w2 = randomFloats(k * n, 13),
                     x = randomFloats(m * k, 12);
  ModelBuilder b;
  b.input("x", F32, {"2", "64"});
  for (const char *out : {"y", "y2", "z", "z2"})
    b.output(out, F32, {"2", "64"});
  b.initF32("w", {k, n}, w);
  b.initF32("w2", {k, n}, w2);
  b.node("MatMul", {"x", "w"}, {"y"});
  b.node("Neg", {"x"}, {"nx"});
  b.node("MatMul", {"nx", "w"}, {"y2"});
  b.node("MatMul", {"x", "w2"}, {"z"});
  attrs(b.node("Transpose", {"w2"}, {"w2t"}), "perm", {1, 0});
  b.node("MatMul", {"x", "w2t"}, {"z2"});
  TensorMap plain = runModel(b, {{"x", Tensor::fromFloat({m, k}, x)}});
  for (bool prepack : {false, true}) {
    TempDir dir;
    SessionOptions o = mxfp6();
    o.prepackWeights = prepack;
    auto s = Session::open(b.save(dir), DeviceKind::Host, o);
    ASSERT_TRUE(s.ok()) << s.error();
    // Lazily, the first product reads the weight in place and the later
    // ones the laid-out copy (summed in another order: last-ulp
    // differences); runs after the layout agree exactly.
    TensorMap first, second;
    for (int run = 0; run < 4; ++run) {
      ASSERT_TRUE(s->run({{"x", Tensor::fromFloat({m, k}, x)}}).ok());
      if (run == 0) {
        first = s->outputs();
        std::vector<double> bound;
        expectNear64(floats(first["y"]),
                     matmul64(x, referenceWeights(w, k, n, true, MxRounding::Even), m, k, n,
                              bound),
                     bound, k);
        for (const char *out : {"z", "z2"}) // w2: not quantized
          for (size_t i = 0; i < floats(first[out]).size(); ++i)
            EXPECT_NEAR(floats(first[out])[i], floats(plain[out])[i], 1e-5) << out;
        continue;
      }
      if (run == 1)
        second = s->outputs();
      for (const char *out : {"y", "y2", "z", "z2"}) {
        std::vector<float> now = floats(*s->getOutput(out)), was = floats(first[out]);
        EXPECT_EQ(now, floats(second[out])) << out << " run " << run << " prepack " << prepack;
        for (size_t i = 0; i < now.size(); ++i)
          EXPECT_NEAR(now[i], was[i], 1e-5) << out << " run " << run;
      }
    }
  }
}
