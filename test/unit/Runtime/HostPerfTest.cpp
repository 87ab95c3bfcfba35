//===- HostPerfTest.cpp - The host device's fast paths give the same values -===//
//
// Load-time fusions (Transpose folded into MatMul, Sigmoid+Mul as SiLU, the
// attention's Mul+Where+Softmax), the vectorised exp/sigmoid/softmax/clip and
// the persistent thread pool, each checked against plain reference
// computations, including the cases where a fusion must not apply.
//
//===----------------------------------------------------------------------===//

#include "test/unit/Runtime/ModelBuilder.h"

#include <gmock/gmock.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <thread>

using namespace qeff::runtime;
using namespace qeff::runtime::test;

namespace {

/// A float input or output of any shape.
void anyShape(ModelBuilder &b, const std::string &name, bool isOutput) {
  if (isOutput)
    b.output(name, F32, {});
  else
    b.input(name, F32, {});
  auto *v = isOutput ? b.graph()->mutable_output()->rbegin().operator->()
                     : b.graph()->mutable_input()->rbegin().operator->();
  v->mutable_type()->mutable_tensor_type()->clear_shape();
}

std::vector<float> randomFloats(size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto &x : v)
    x = d(rng);
  return v;
}

void expectNear(const std::vector<float> &got, const std::vector<double> &want, double rtol,
                double atol, const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_LE(std::fabs(got[i] - want[i]), atol + rtol * std::fabs(want[i]))
        << what << " at " << i << ": " << got[i] << " vs " << want[i];
}

/// Y = A x B^T per batch, B^T given as Transpose(K) with perm swapping the
/// last two dims; optionally the transposed value is also a graph output (the
/// fold must not happen then).
TEST(HostFastPaths, TransposeFoldedIntoMatMulReadsBTransposed) {
  for (bool alsoOutput : {false, true})
    for (int64_t m : {1, 3}) {
      const int64_t batch = 2, k = 4, n = 5;
      ModelBuilder b;
      anyShape(b, "A", false);
      anyShape(b, "K", false);
      auto &t = b.node("Transpose", {"K"}, {"Kt"});
      attrs(t, "perm", {0, 2, 1});
      b.node("MatMul", {"A", "Kt"}, {"Y"});
      anyShape(b, "Y", true);
      if (alsoOutput)
        anyShape(b, "Kt", true);
      auto a = randomFloats(batch * m * k, -1, 1, 1), kv = randomFloats(batch * n * k, -1, 1, 2);
      auto out = runModel(b, {{"A", Tensor::fromFloat({batch, m, k}, a)},
                              {"K", Tensor::fromFloat({batch, n, k}, kv)}});
      ASSERT_EQ(out["Y"].shape(), Shape({batch, m, n}));
      std::vector<double> want;
      for (int64_t bb = 0; bb < batch; ++bb)
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double s = 0;
            for (int64_t p = 0; p < k; ++p)
              s += double(a[(bb * m + i) * k + p]) * kv[(bb * n + j) * k + p];
            want.push_back(s);
          }
      expectNear(floats(out["Y"]), want, 1e-5, 1e-5,
                 "m=" + std::to_string(m) + (alsoOutput ? " (Kt also an output)" : ""));
      if (alsoOutput)
        EXPECT_EQ(out["Kt"].shape(), Shape({batch, k, n}));
    }
}

TEST(HostFastPaths, OtherTransposesBeforeMatMulStayTransposes) {
  // perm [1, 0, 2] moves the batch dim: not a B^T read.
  ModelBuilder b;
  anyShape(b, "A", false);
  anyShape(b, "K", false);
  auto &t = b.node("Transpose", {"K"}, {"Kp"});
  attrs(t, "perm", {1, 0, 2});
  b.node("MatMul", {"A", "Kp"}, {"Y"});
  anyShape(b, "Y", true);
  // K [2, 1, 2] -> Kp [1, 2, 2]; A [1, 1, 2].
  auto out = runModel(b, {{"A", Tensor::fromFloat({1, 1, 2}, {1, 2})},
                          {"K", Tensor::fromFloat({2, 1, 2}, {1, 2, 3, 4})}});
  EXPECT_THAT(floats(out["Y"]), ::testing::ElementsAre(7, 10));
}

TEST(HostFastPaths, SigmoidTimesInputIsSiluEitherOperandOrder) {
  std::vector<float> x = randomFloats(1000, -30, 30, 3);
  x[0] = 0.f;
  x[1] = 100.f;
  x[2] = -100.f;
  for (int order = 0; order < 3; ++order) {
    ModelBuilder b;
    anyShape(b, "X", false);
    b.node("Sigmoid", {"X"}, {"s"});
    if (order == 0)
      b.node("Mul", {"X", "s"}, {"Y"});
    else
      b.node("Mul", {"s", "X"}, {"Y"});
    anyShape(b, "Y", true);
    if (order == 2) // the sigmoid is read elsewhere too: no fusion, same values
      anyShape(b, "s", true);
    auto out = runModel(b, {{"X", Tensor::fromFloat({10, 100}, x)}});
    std::vector<double> want;
    for (float v : x)
      want.push_back(double(v) / (1.0 + std::exp(-double(v))));
    expectNear(floats(out["Y"]), want, 1e-6, 1e-30, "order " + std::to_string(order));
  }
}

TEST(HostFastPaths, ExpAndSigmoidMatchTheReferenceOverTheFloatRange) {
  std::vector<float> x = randomFloats(4099, -90, 90, 4);
  const float inf = std::numeric_limits<float>::infinity();
  x[0] = 0.f;
  x[1] = 88.7f;
  x[2] = 89.f; // overflows: inf
  x[3] = -inf;
  x[4] = inf;
  x[5] = -87.f;
  x[6] = -1e-8f;
  ModelBuilder b;
  anyShape(b, "X", false);
  b.node("Exp", {"X"}, {"E"});
  b.node("Sigmoid", {"X"}, {"S"});
  anyShape(b, "E", true);
  anyShape(b, "S", true);
  auto out = runModel(b, {{"X", Tensor::fromFloat({int64_t(x.size())}, x)}});
  auto e = floats(out["E"]), s = floats(out["S"]);
  for (size_t i = 0; i < x.size(); ++i) {
    double we = std::exp(double(x[i]));
    if (std::isinf(we) || we > 3.4e38) {
      EXPECT_TRUE(std::isinf(e[i]) && e[i] > 0) << x[i];
    } else {
      // 2 ulp, and values in the denormal range may flush to 0.
      EXPECT_LE(std::fabs(e[i] - we), 2.5e-7 * we + 1.2e-38) << "exp(" << x[i] << ")";
    }
    double ws = 1.0 / (1.0 + std::exp(-double(x[i])));
    EXPECT_LE(std::fabs(s[i] - ws), 3e-7 * ws + 1.2e-38) << "sigmoid(" << x[i] << ")";
  }
  // NaN propagates.
  out = runModel(b, {{"X", Tensor::fromFloat({9}, {0, 1, 2, 3, 4, 5, 6, 7, NAN})}});
  EXPECT_TRUE(std::isnan(floats(out["E"])[8]));
  EXPECT_TRUE(std::isnan(floats(out["S"])[8]));
}

TEST(HostFastPaths, SoftmaxOfLongMaskedRowsMatchesDouble) {
  const int64_t rows = 7, n = 517; // not a multiple of the vector width
  std::vector<float> x = randomFloats(rows * n, -20, 20, 5);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = r * 50; j < n; ++j)
      x[r * n + j] = -65504.f; // the device's masked score
  for (bool log : {false, true}) {
    ModelBuilder b;
    anyShape(b, "X", false);
    auto &sm = b.node(log ? "LogSoftmax" : "Softmax", {"X"}, {"Y"});
    attr(sm, "axis", -1);
    anyShape(b, "Y", true);
    auto out = runModel(b, {{"X", Tensor::fromFloat({rows, n}, x)}});
    std::vector<double> want;
    for (int64_t r = 0; r < rows; ++r) {
      double mx = -1e300, sum = 0;
      for (int64_t j = 0; j < n; ++j)
        mx = std::max(mx, double(x[r * n + j]));
      for (int64_t j = 0; j < n; ++j)
        sum += std::exp(x[r * n + j] - mx);
      for (int64_t j = 0; j < n; ++j)
        want.push_back(log ? x[r * n + j] - mx - std::log(sum) : std::exp(x[r * n + j] - mx) / sum);
    }
    expectNear(floats(out["Y"]), want, 2e-6, log ? 1e-2 : 1e-9, log ? "LogSoftmax" : "Softmax");
  }
}

/// Softmax(Where(mask, S * scale, -65504)) as the attention lowers it: the
/// fused kernel against a double reference, with the mask broadcast over
/// heads, either operand order of the Mul, a rank-4 scale, LogSoftmax, and a
/// scaled value also read elsewhere (no fusion, same result).
TEST(HostFastPaths, ScaledMaskedSoftmaxMatchesTheThreeNodes) {
  const int64_t heads = 3, q = 5, ctx = 37;
  std::vector<float> sc = randomFloats(heads * q * ctx, -6, 6, 9);
  std::vector<float> maskVals(q * ctx);
  for (int64_t i = 0; i < q; ++i)
    for (int64_t j = 0; j < ctx; ++j)
      maskVals[i * ctx + j] = j <= i + 10 ? 1.f : 0.f;
  Tensor mask = Tensor::empty(DType::Bool, {1, 1, q, ctx});
  for (int64_t i = 0; i < q * ctx; ++i)
    mask.data<uint8_t>()[i] = maskVals[i] != 0;
  for (int variant = 0; variant < 4; ++variant) {
    bool log = variant == 2, scaleFirst = variant == 1, extraReader = variant == 3;
    ModelBuilder b;
    anyShape(b, "S", false);
    b.input("M", BOOL, {});
    b.graph()->mutable_input()->rbegin()->mutable_type()->mutable_tensor_type()->clear_shape();
    b.initF32("scale", variant == 1 ? std::vector<int64_t>{1, 1, 1, 1} : std::vector<int64_t>{},
              {0.125f});
    b.initF32("fill", {}, {-65504.f});
    if (scaleFirst)
      b.node("Mul", {"scale", "S"}, {"scaled"});
    else
      b.node("Mul", {"S", "scale"}, {"scaled"});
    b.node("Where", {"M", "scaled", "fill"}, {"masked"});
    auto &sm = b.node(log ? "LogSoftmax" : "Softmax", {"masked"}, {"Y"});
    attr(sm, "axis", -1);
    anyShape(b, "Y", true);
    if (extraReader)
      anyShape(b, "scaled", true);
    auto out = runModel(b, {{"S", Tensor::fromFloat({1, heads, q, ctx}, sc)}, {"M", mask}});
    ASSERT_EQ(out["Y"].shape(), Shape({1, heads, q, ctx})) << variant;
    std::vector<double> want;
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < q; ++i) {
        std::vector<double> row(ctx);
        double mx = -1e300, sum = 0;
        for (int64_t j = 0; j < ctx; ++j) {
          row[j] = maskVals[i * ctx + j] != 0 ? double(sc[(h * q + i) * ctx + j] * 0.125f)
                                              : -65504.0;
          mx = std::max(mx, row[j]);
        }
        for (double v : row)
          sum += std::exp(v - mx);
        for (double v : row)
          want.push_back(log ? v - mx - std::log(sum) : std::exp(v - mx) / sum);
      }
    expectNear(floats(out["Y"]), want, 2e-6, log ? 1e-2 : 1e-9,
               "variant " + std::to_string(variant));
  }
}

// A prefill chunk's rows against a longer cache: the fused kernel takes each
// row's softmax up to its last kept position (rounded up to 8) when the fill
// past it is exactly 0 after exp. The same bits as the three nodes run as
// written (checkFinite keeps them unfused), for fills that underflow and one
// that does not, a row that keeps nothing and NaN scores, on 1 and 2 threads.
TEST(HostFastPaths, MaskedSoftmaxOfPrefillRowsKeepsTheBitsOfTheThreeNodes) {
  const int64_t heads = 3, q = 20, ctx = 64;
  std::vector<float> sc = randomFloats(heads * q * ctx, -6, 6, 19);
  sc[5 * ctx + 2] = NAN; // head 0, row 5: kept position 2
  Tensor mask = Tensor::empty(DType::Bool, {1, 1, q, ctx});
  for (int64_t i = 0; i < q; ++i)
    for (int64_t j = 0; j < ctx; ++j)
      mask.data<uint8_t>()[i * ctx + j] = i != 7 && j <= i + 5;
  for (float fill : {-65504.f, std::numeric_limits<float>::lowest(), -4.f})
    for (int threads : {1, 2}) {
      ModelBuilder b;
      anyShape(b, "S", false);
      b.input("M", BOOL, {});
      b.graph()->mutable_input()->rbegin()->mutable_type()->mutable_tensor_type()->clear_shape();
      b.initF32("scale", {}, {0.125f});
      b.initF32("fill", {}, {fill});
      b.node("Mul", {"S", "scale"}, {"scaled"});
      b.node("Where", {"M", "scaled", "fill"}, {"masked"});
      attr(b.node("Softmax", {"masked"}, {"Y"}), "axis", -1);
      anyShape(b, "Y", true);
      std::map<std::string, std::vector<float>> got;
      for (bool asWritten : {false, true}) {
        SessionOptions opts;
        opts.numThreads = threads;
        opts.checkFinite = asWritten;
        auto out = runModel(b, {{"S", Tensor::fromFloat({1, heads, q, ctx}, sc)}, {"M", mask}},
                            opts);
        ASSERT_EQ(out.count("Y"), 1u);
        got[asWritten ? "written" : "fused"] = floats(out["Y"]);
      }
      const auto &a = got["fused"], &w = got["written"];
      ASSERT_EQ(a.size(), w.size());
      for (size_t i = 0; i < a.size(); ++i) {
        uint32_t x, y;
        std::memcpy(&x, &a[i], 4);
        std::memcpy(&y, &w[i], 4);
        ASSERT_EQ(x, y) << "fill " << fill << ", threads " << threads << ", element " << i
                        << ": " << a[i] << " fused, " << w[i] << " as written";
      }
    }
}

/// The rotary embedding x * cos + Concat(Neg(x2), x1) * sin (Split into
/// halves) as one kernel: the bits of the six nodes (run as written with
/// checkFinite), with cos / sin broadcast over batch and heads, both axis
/// spellings, a Split with and without sizes, and NaN/inf in x. Not fused
/// (the same values still) when a half is read elsewhere or the halves differ.
TEST(HostFastPaths, RotaryEmbeddingIsOneKernelWithTheBitsOfItsSixNodes) {
  const int64_t b = 2, h = 3, s = 5, d = 8;
  std::vector<float> x = randomFloats(b * h * s * d, -4, 4, 21);
  x[3] = NAN;
  x[d + 5] = std::numeric_limits<float>::infinity();
  std::vector<float> cs = randomFloats(s * d, -1, 1, 22), sn = randomFloats(s * d, -1, 1, 23);
  struct Form {
    int64_t axis;
    std::vector<int64_t> split; ///< empty: no sizes input
    bool halfReadElsewhere;
    bool fused;
  } forms[] = {{3, {d / 2, d / 2}, false, true},
               {-1, {}, false, true},
               {3, {d / 2, d / 2}, true, false},
               {3, {d / 4, 3 * d / 4}, false, false}};
  for (const Form &f : forms) {
    SCOPED_TRACE(::testing::Message() << "axis " << f.axis << ", split " << f.split.size()
                                      << ", half read elsewhere " << f.halfReadElsewhere);
    ModelBuilder m;
    anyShape(m, "X", false);
    m.initF32("cos", {1, 1, s, d}, cs).initF32("sin", {1, 1, s, d}, sn);
    std::vector<std::string> splitIn{"X"};
    if (!f.split.empty()) {
      m.initI64("sizes", {2}, f.split);
      splitIn.push_back("sizes");
    }
    auto &sp = m.node("Split", splitIn, {"x1", "x2"});
    attr(sp, "axis", f.axis);
    if (f.split.empty())
      attr(sp, "num_outputs", 2);
    m.node("Neg", {"x2"}, {"n"});
    attr(m.node("Concat", {"n", "x1"}, {"rot"}), "axis", f.axis);
    m.node("Mul", {"cos", "X"}, {"a"});
    m.node("Mul", {"rot", "sin"}, {"bb"});
    m.node("Add", {"a", "bb"}, {"Y"});
    anyShape(m, "Y", true);
    if (f.halfReadElsewhere)
      anyShape(m, "x1", true);
    std::map<bool, std::vector<float>> got;
    std::string profile;
    for (bool asWritten : {false, true}) {
      SessionOptions opts;
      opts.checkFinite = asWritten; // fusions off, every node as written
      if (!asWritten) {
        setenv("QEFF_HOST_PROFILE", "1", 1);
        ::testing::internal::CaptureStderr();
      }
      auto out = runModel(m, {{"X", Tensor::fromFloat({b, h, s, d}, x)}}, opts);
      if (!asWritten) {
        profile = ::testing::internal::GetCapturedStderr();
        unsetenv("QEFF_HOST_PROFILE");
      }
      ASSERT_EQ(out.count("Y"), 1u);
      ASSERT_EQ(out["Y"].shape(), Shape({b, h, s, d}));
      got[asWritten] = floats(out["Y"]);
    }
    EXPECT_EQ(profile.find("Add(Mul, Mul(Concat(Neg(Split))))") != std::string::npos, f.fused)
        << profile;
    for (size_t i = 0; i < got[false].size(); ++i) {
      uint32_t p, q;
      std::memcpy(&p, &got[false][i], 4);
      std::memcpy(&q, &got[true][i], 4);
      ASSERT_EQ(p, q) << "element " << i << ": " << got[false][i] << " fused, " << got[true][i]
                      << " as written";
    }
  }
}

TEST(HostFastPaths, ClipKeepsNaNAndBounds) {
  ModelBuilder b;
  anyShape(b, "X", false);
  b.initF32("lo", {}, {-1.f}).initF32("hi", {}, {2.f});
  b.node("Clip", {"X", "lo", "hi"}, {"Y"});
  anyShape(b, "Y", true);
  std::vector<float> x = randomFloats(37, -5, 5, 6);
  x[3] = NAN;
  auto out = runModel(b, {{"X", Tensor::fromFloat({37}, x)}});
  auto y = floats(out["Y"]);
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]))
      EXPECT_TRUE(std::isnan(y[i]));
    else
      EXPECT_EQ(y[i], std::min(2.f, std::max(-1.f, x[i])));
  }
}

/// Big elementwise ops on two threads, repeatedly, and from two sessions at
/// once (one of them then runs its loops inline): same values every time.
TEST(HostFastPaths, ThreadPoolGivesTheSameValuesAlsoUnderConcurrentSessions) {
  ModelBuilder b;
  anyShape(b, "X", false);
  anyShape(b, "Z", false);
  b.node("Add", {"X", "Z"}, {"s"});
  b.node("Sigmoid", {"s"}, {"Y"});
  anyShape(b, "Y", true);
  const int64_t n = 1 << 19;
  std::vector<float> x = randomFloats(n, -8, 8, 7), z = randomFloats(n, -8, 8, 8);
  std::vector<double> want(n);
  for (int64_t i = 0; i < n; ++i)
    want[i] = 1.0 / (1.0 + std::exp(-(double(x[i] + z[i]))));
  TempDir dir;
  std::string path = b.save(dir);
  SessionOptions opts;
  opts.numThreads = 2;
  auto work = [&](int id, bool &ok) {
    auto s = Session::open(path, DeviceKind::Host, opts);
    ok = s.ok();
    for (int r = 0; r < 5 && ok; ++r) {
      ok = s->run({{"X", Tensor::fromFloat({n}, x)}, {"Z", Tensor::fromFloat({n}, z)}}).ok();
      auto y = floats(*s->getOutput("Y"));
      for (int64_t i = 0; i < n && ok; ++i)
        ok = std::fabs(y[i] - want[i]) <= 3e-7 * want[i] + 1e-30;
    }
    (void)id;
  };
  bool ok1 = false, ok2 = false;
  std::thread t([&] { work(1, ok2); });
  work(0, ok1);
  t.join();
  EXPECT_TRUE(ok1);
  EXPECT_TRUE(ok2);
}

/// Weights are not scanned for inf/nan at load any more; with the check on,
/// a node reading a non-finite weight is still not blamed for its inf/nan,
/// and a node overflowing from finite weights still is (the weights are
/// scanned when it matters, on 1 and 2 threads, long enough to split).
TEST(HostFastPaths, NonFiniteWeightsAreScannedOnlyWhenTheCheckNeedsThem) {
  const float inf = std::numeric_limits<float>::infinity();
  for (int threads : {1, 2})
    for (int64_t n : {int64_t(3), int64_t(1) << 19}) {
      std::vector<float> w(n, 1.f), v(n, 1.f), x(n, 1.f);
      w[n - 1] = inf;
      v[n - 1] = 3e38f;
      x[n - 1] = 10.f;
      SessionOptions opts;
      opts.checkFinite = true;
      opts.numThreads = threads;
      ModelBuilder b;
      anyShape(b, "X", false);
      b.initF32("W", {n}, w);
      b.node("Mul", {"X", "W"}, {"Y"}, "readsInf");
      anyShape(b, "Y", true);
      auto out = runModel(b, {{"X", Tensor::fromFloat({n}, x)}}, opts);
      ASSERT_EQ(out.count("Y"), 1u);
      EXPECT_EQ(floats(out["Y"])[n - 1], inf);
      ModelBuilder c;
      anyShape(c, "X", false);
      c.initF32("V", {n}, v);
      c.node("Mul", {"X", "V"}, {"Y"}, "overflows");
      anyShape(c, "Y", true);
      TempDir dir;
      auto s = Session::open(c.save(dir), DeviceKind::Host, opts);
      ASSERT_TRUE(s.ok()) << s.error();
      Status st = s->run({{"X", Tensor::fromFloat({n}, x)}});
      ASSERT_FALSE(st.ok());
      EXPECT_THAT(st.error(), ::testing::HasSubstr("node 'overflows' (Mul) produced inf/nan from "
                                                   "finite inputs"));
    }
}

} // namespace
