//===- HostWeightsTest.cpp - Weights laid out once, f16 weights kept f16 ---===//
//
// Through whole models on the host device: a MatMul by a constant matrix
// (f32 inline, f16 and bf16 from external data, B folded from a Transpose,
// A of rank 1 to 3; used in place by the first product, laid out from the
// second on, or laid out at load with prepackWeights) gives the reference
// product, and the products of one A fused into one node keep the bits of
// the products run one by one; an f16 or bf16 weight read by Gather stays
// 2 bytes (rows widened), one read by another op is widened at load; a
// weight that is also a graph output survives packing.
//
//===----------------------------------------------------------------------===//

#include "test/unit/Runtime/ModelBuilder.h"

#include <gmock/gmock.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>

using namespace qeff::runtime;
using namespace qeff::runtime::test;

namespace {

std::vector<float> randomHalfValues(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (auto &x : v)
    x = roundToHalf(d(rng));
  return v;
}

void anyShape(ModelBuilder &b, const std::string &name, bool isOutput, int type = F32) {
  if (isOutput)
    b.output(name, type, {});
  else
    b.input(name, type, {});
  auto *v = isOutput ? b.graph()->mutable_output()->rbegin().operator->()
                     : b.graph()->mutable_input()->rbegin().operator->();
  v->mutable_type()->mutable_tensor_type()->clear_shape();
}

std::vector<float> randomBF16Values(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (auto &x : v)
    x = bfloat16ToFloat(floatToBFloat16(d(rng)));
  return v;
}

/// An f16 (or bf16) initializer stored in `dir`/weights.bin at `offset`
/// (appended).
void externalHalf(ModelBuilder &b, const TempDir &dir, const std::string &name,
                  const std::vector<int64_t> &dims, const std::vector<float> &values,
                  bool bf16 = false) {
  std::string path = dir.file("weights.bin");
  std::ofstream f(path, std::ios::binary | std::ios::app);
  f.seekp(0, std::ios::end);
  int64_t offset = f.tellp();
  for (float v : values) {
    uint16_t h = bf16 ? floatToBFloat16(v) : floatToHalf(v);
    f.write(reinterpret_cast<const char *>(&h), 2);
  }
  auto *t = b.graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(bf16 ? onnx::TensorProto::BFLOAT16 : F16);
  for (auto d : dims)
    t->add_dims(d);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto kv = [&](const char *k, const std::string &v) {
    auto *e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  kv("location", "weights.bin");
  kv("offset", std::to_string(offset));
  kv("length", std::to_string(values.size() * 2));
}

std::vector<double> product(const std::vector<float> &a, const std::vector<float> &w, int64_t m,
                            int64_t k, int64_t n) {
  std::vector<double> y(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p)
        y[i * n + j] += double(a[i * k + p]) * w[p * n + j];
  return y;
}

void expectNear(const std::vector<float> &got, const std::vector<double> &want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol) << "at " << i;
}

TEST(HostWeights, ConstantMatMulsMatchTheReference) {
  const int64_t k = 70, n = 45;
  for (int threads : {1, 2})
  for (bool prepack : {false, true}) {
    TempDir dir;
    auto w = randomHalfValues(k * n, 1), wt(w);
    for (int64_t p = 0; p < k; ++p) // wt = w^T stored [n, k]
      for (int64_t j = 0; j < n; ++j)
        wt[j * k + p] = w[p * n + j];
    ModelBuilder b;
    anyShape(b, "A", false);
    b.initF32("W32", {k, n}, w);
    externalHalf(b, dir, "W16", {k, n}, w);
    b.initF32("WT", {n, k}, wt);
    b.node("MatMul", {"A", "W32"}, {"Y32"});
    b.node("MatMul", {"A", "W16"}, {"Y16"});
    externalHalf(b, dir, "W16c", {k, n}, w); // the exporter's f16 form: Cast to float
    attr(b.node("Cast", {"W16c"}, {"W16cf"}), "to", F32);
    b.node("MatMul", {"A", "W16cf"}, {"Y16c"});
    auto wb = randomBF16Values(k * n, 9); // the exporter's bf16 form
    externalHalf(b, dir, "WB", {k, n}, wb, /*bf16=*/true);
    attr(b.node("Cast", {"WB"}, {"WBf"}), "to", F32);
    b.node("MatMul", {"A", "WBf"}, {"YB"});
    auto &tr = b.node("Transpose", {"WT"}, {"WTT"});
    attrs(tr, "perm", {1, 0});
    b.node("MatMul", {"A", "WTT"}, {"YT"});
    for (const char *y : {"Y32", "Y16", "Y16c", "YT", "YB"})
      anyShape(b, y, true);
    anyShape(b, "W32", true); // also an output: must survive packing
    SessionOptions opts;
    opts.numThreads = threads;
    opts.prepackWeights = prepack;
    auto s = Session::open(b.save(dir), DeviceKind::Host, opts);
    ASSERT_TRUE(s.ok()) << s.error();
    // The same model with each product alone (the decode-step fusions off).
    setenv("QEFF_HOST_UNFUSED_DECODE", "1", 1);
    auto plain = Session::open(b.save(dir), DeviceKind::Host, opts);
    unsetenv("QEFF_HOST_UNFUSED_DECODE");
    ASSERT_TRUE(plain.ok()) << plain.error();
    for (Shape shape : {Shape{k}, Shape{3, k}, Shape{2, 9, k}, Shape{k}, Shape{2, 3, k}}) {
      int64_t m = numElements(shape) / k;
      auto a = randomHalfValues(m * k, 2 + m);
      ASSERT_TRUE(s->run({{"A", Tensor::fromFloat(shape, a)}}).ok());
      ASSERT_TRUE(plain->run({{"A", Tensor::fromFloat(shape, a)}}).ok());
      Shape outShape = shape;
      outShape.back() = n;
      auto want = product(a, w, m, k, n);
      for (const char *y : {"Y32", "Y16", "Y16c", "YT", "YB"}) {
        auto out = s->getOutput(y);
        ASSERT_TRUE(out.ok()) << y;
        EXPECT_EQ(out->shape(), outShape) << y;
        expectNear(floats(*out), std::string(y) == "YB" ? product(a, wb, m, k, n) : want, 1e-5);
        EXPECT_EQ(floats(*out), floats(*plain->getOutput(y))) << y << ": fused != one by one";
      }
      EXPECT_EQ(floats(*s->getOutput("W32")), w);
    }
  }
}

TEST(HostWeights, HalfWeightsReadByOtherOpsAreWidenedOrGathered) {
  TempDir dir;
  const int64_t vocab = 300, d = 256; // 76800 elements: kept f16 at load
  auto e = randomHalfValues(vocab * d, 3), bias = randomHalfValues(vocab * d, 4);
  ModelBuilder b;
  b.input("ids", I64, {"n"});
  anyShape(b, "X", false);
  externalHalf(b, dir, "E", {vocab, d}, e);
  externalHalf(b, dir, "Bias", {vocab, d}, bias);
  b.node("Gather", {"E", "ids"}, {"Rows"});
  attr(b.node("Cast", {"E"}, {"Ef"}), "to", F32);
  b.node("Gather", {"Ef", "ids"}, {"RowsCast"});
  attr(b.node("Cast", {"Bias"}, {"BiasF"}), "to", F32);
  b.node("Add", {"X", "BiasF"}, {"Sum"});
  anyShape(b, "Rows", true);
  anyShape(b, "RowsCast", true);
  anyShape(b, "Sum", true);
  auto s = Session::open(b.save(dir), DeviceKind::Host);
  ASSERT_TRUE(s.ok()) << s.error();
  std::vector<float> x(vocab * d, 0.5f);
  ASSERT_TRUE(s->run({{"ids", Tensor::fromInt64({3}, {7, 0, 299})},
                      {"X", Tensor::fromFloat({vocab, d}, x)}})
                  .ok());
  auto rows = s->getOutput("Rows");
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->dtype(), DType::Float32);
  EXPECT_EQ(rows->shape(), Shape({3, d}));
  auto r = floats(*rows);
  for (int64_t j = 0; j < d; ++j) {
    EXPECT_EQ(r[j], e[7 * d + j]);
    EXPECT_EQ(r[d + j], e[j]);
    EXPECT_EQ(r[2 * d + j], e[299 * d + j]);
  }
  EXPECT_EQ(floats(*s->getOutput("RowsCast")), r);
  auto sum = floats(*s->getOutput("Sum"));
  for (int64_t i = 0; i < vocab * d; ++i)
    ASSERT_EQ(sum[i], 0.5f + bias[i]) << i;
}

/// A weight leaves the MatMul's inputs; with the inf/nan check on, a weight
/// holding inf still excuses the MatMul, and one overflowing from finite
/// values is still blamed (f32 and f16 weights, used in place and laid out).
TEST(HostWeights, FoldedWeightsKeepTheInfNanCheck) {
  const float inf = std::numeric_limits<float>::infinity();
  const int64_t k = 40, n = 33;
  for (bool f16 : {false, true})
    for (bool hasInf : {true, false})
    for (int64_t rows : {2, 20}) {
      TempDir dir;
      std::vector<float> w(k * n, 0.5f);
      w[7 * n + 3] = hasInf ? inf : 60000.f; // 60000 x 10 x 40 rows: overflows in f16 emulation
      ModelBuilder b;
      anyShape(b, "A", false);
      if (f16)
        externalHalf(b, dir, "W", {k, n}, w);
      else
        b.initF32("W", {k, n}, w);
      b.node("MatMul", {"A", "W"}, {"Y"}, "product");
      anyShape(b, "Y", true);
      SessionOptions opts;
      opts.numerics = Numerics::FP16; // rounds outputs to f16: 2.4e6 is inf there
      auto s = Session::open(b.save(dir), DeviceKind::Host, opts);
      ASSERT_TRUE(s.ok()) << s.error();
      for (int product = 0; product < 2; ++product) { // in place, laid out
        Status st =
            s->run({{"A", Tensor::fromFloat({rows, k}, std::vector<float>(rows * k, 10.f))}});
        if (hasInf) {
          ASSERT_TRUE(st.ok()) << st.error();
          EXPECT_EQ(floats(*s->getOutput("Y"))[3], inf);
        } else {
          ASSERT_FALSE(st.ok());
          EXPECT_THAT(st.error(), ::testing::HasSubstr("node 'product' (MatMul) produced "
                                                       "inf/nan from finite inputs"));
        }
      }
    }
}

} // namespace
