//===- RowSelectTest.cpp - The kept rows taken before the last layer's tail -===//
//
// RowSelect.cpp: when the graph keeps some rows of the last hidden state
// (GatherElements by the ArgMax of the positions), the row-wise tail before
// that gather runs on those rows only. Checked: the outputs have the bits
// of the plan without it (QEFF_HOST_UNFUSED_DECODE=1), the plan did take the
// rows early (QEFF_HOST_PROFILE names the node), and what must stop the
// tail does (a tail value that is also a graph output, a node that is not
// row-wise), with padded rows of continuous batching, k > 1 rows and a
// value entering the tail that broadcasts along the rows.
//
//===----------------------------------------------------------------------===//

#include "test/unit/Runtime/ModelBuilder.h"

#include "runtime/host/Gemm.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

using namespace qeff::runtime;
using namespace qeff::runtime::test;

namespace {

constexpr int64_t kB = 2, kS = 24, kN = 64, kM = 96;

struct Variant {
  bool tailValueIsOutput = false; ///< t4 also a graph output
  bool softmaxInTail = false;     ///< a node that is not row-wise before the gather
  int64_t keep = 1;               ///< rows kept per sequence
  int64_t shift = 0;              ///< added to every kept row's index
};

/// An MLP block and a norm over hidden H [B, S, N] with residual R, then the
/// rows of the last positions: Y [B, keep, N]. R is read outside the tail
/// too (Z = R + R).
ModelBuilder tailModel(const Variant &v) {
  ModelBuilder b;
  b.input("H", F32, {"b", "s", "n"});
  b.input("R", F32, {"b", "s", "n"});
  b.input("position_ids", I64, {"b", "s"});
  b.input("Sc", F32, {"1", "1", "n"});
  b.initF32("W1", {kN, kM}, randomFloats(kN * kM, 11));
  b.initF32("W2", {kN, kM}, randomFloats(kN * kM, 12));
  b.initF32("W3", {kM, kN}, randomFloats(kM * kN, 13));
  b.initF32("g", {kN}, randomFloats(kN, 14));
  b.initF32("eps", {}, {1e-5f});
  b.initF32("lo", {}, {-3.f});
  b.initF32("hi", {}, {3.f});
  b.initI64("axes2", {1}, {2});
  b.initI64("axesLast", {1}, {-1});
  b.initI64("expand", {3}, {1, 1, kN});
  b.node("MatMul", {"H", "W1"}, {"gate"});
  b.node("MatMul", {"H", "W2"}, {"up"});
  b.node("Sigmoid", {"gate"}, {"sg"});
  b.node("Mul", {"gate", "sg"}, {"silu"});
  b.node("Mul", {"silu", "up"}, {"act"});
  b.node("MatMul", {"act", "W3"}, {"down"});
  b.node("Add", {"R", "down"}, {"t4"});
  b.node("Clip", {"t4", "lo", "hi"}, {"t5"});
  std::string x = "t5";
  if (v.softmaxInTail) {
    auto &sm = b.node("Softmax", {"t5"}, {"t5s"});
    attr(sm, "axis", 1); // across rows: must stop the tail
    x = "t5s";
  }
  b.node("Mul", {x, x}, {"sq"});
  auto &rm = b.node("ReduceMean", {"sq", "axesLast"}, {"ms"});
  attr(rm, "keepdims", 1);
  b.node("Add", {"ms", "eps"}, {"mse"});
  b.node("Sqrt", {"mse"}, {"rms"});
  b.node("Div", {x, "rms"}, {"normed"});
  b.node("Mul", {"normed", "g"}, {"scaled"});
  // A value from outside the tail that broadcasts along the rows.
  b.node("Mul", {"scaled", "Sc"}, {"hidden"});
  auto &am = b.node("ArgMax", {"position_ids"}, {"last"});
  attr(am, "axis", 1);
  attr(am, "keepdims", 1);
  std::string rows = "last";
  if (v.keep > 1 || v.shift) {
    // The speculative target's k rows ending at the last position.
    b.initI64("offsets", {1, v.keep}, [&] {
      std::vector<int64_t> o;
      for (int64_t i = 0; i < v.keep; ++i)
        o.push_back(i - (v.keep - 1) + v.shift);
      return o;
    }());
    b.node("Add", {"last", "offsets"}, {"rowsk"});
    rows = "rowsk";
  }
  b.node("Unsqueeze", {rows, "axes2"}, {"u"});
  b.node("Expand", {"u", "expand"}, {"idx"});
  auto &ge = b.node("GatherElements", {"hidden", "idx"}, {"Y"});
  attr(ge, "axis", 1);
  b.node("Add", {"R", "R"}, {"Z"});
  b.output("Y", F32, {"b", "k", "n"});
  b.output("Z", F32, {"b", "s", "n"});
  if (v.tailValueIsOutput)
    b.output("t4", F32, {"b", "s", "n"});
  return b;
}

struct Result {
  TensorMap out;
  std::string profile;
};

Result runTail(const Variant &v, bool early, int threads) {
  if (!early)
    setenv("QEFF_HOST_UNFUSED_DECODE", "1", 1);
  setenv("QEFF_HOST_PROFILE", "1", 1);
  // Row 0 a prefill chunk at positions 0..S-1; row 1 padded after 10 tokens.
  std::vector<int64_t> pos;
  for (int64_t b = 0; b < kB; ++b)
    for (int64_t s = 0; s < kS; ++s)
      pos.push_back(b == 1 && s >= 10 ? -1 : s + 3 * b);
  SessionOptions opts;
  opts.numThreads = threads;
  Result r;
  ::testing::internal::CaptureStderr();
  r.out = runModel(tailModel(v),
                   {{"H", Tensor::fromFloat({kB, kS, kN}, randomFloats(kB * kS * kN, 1))},
                    {"R", Tensor::fromFloat({kB, kS, kN}, randomFloats(kB * kS * kN, 2))},
                    {"position_ids", Tensor::fromInt64({kB, kS}, pos)},
                    {"Sc", Tensor::fromFloat({1, 1, kN}, randomFloats(kN, 3))}},
                   opts);
  r.profile = ::testing::internal::GetCapturedStderr();
  unsetenv("QEFF_HOST_PROFILE");
  unsetenv("QEFF_HOST_UNFUSED_DECODE");
  return r;
}

void expectSameBits(const Tensor &got, const Tensor &want, const std::string &what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  auto a = floats(got), b = floats(want);
  for (size_t i = 0; i < a.size(); ++i) {
    uint32_t x, y;
    std::memcpy(&x, &a[i], 4);
    std::memcpy(&y, &b[i], 4);
    ASSERT_EQ(x, y) << what << ": element " << i << ": " << a[i] << " vs " << b[i];
  }
}

bool tookRowsEarly(const Result &r) {
  return r.profile.find("GatherElements(rows taken early)") != std::string::npos;
}

TEST(HostRowSelect, TheTailRunsOnTheKeptRowsWithTheSameBits) {
  for (int64_t keep : {1, 3})
    for (int threads : {1, 2}) {
      SCOPED_TRACE(::testing::Message() << "keep " << keep << ", threads " << threads);
      Variant v;
      v.keep = keep;
      Result early = runTail(v, true, threads), plain = runTail(v, false, threads);
      ASSERT_FALSE(early.out.empty());
      ASSERT_FALSE(plain.out.empty());
      EXPECT_EQ(early.out["Y"].shape(), Shape({kB, keep, kN}));
      expectSameBits(early.out["Y"], plain.out["Y"], "Y");
      expectSameBits(early.out["Z"], plain.out["Z"], "Z (R read outside the tail)");
      EXPECT_FALSE(tookRowsEarly(plain)) << plain.profile;
      // The weight products join the tail only as packed weight kernels.
      if (qeff::runtime::host::gemm::fastKernels())
        EXPECT_TRUE(tookRowsEarly(early)) << early.profile;
    }
}

TEST(HostRowSelect, WhatIsNotRowWiseOrIsAnOutputStopsTheTail) {
  // t4 is a graph output: it keeps all S rows, and the nodes before it run
  // on every row; the norm after it still takes the rows early.
  Variant out;
  out.tailValueIsOutput = true;
  Result early = runTail(out, true, 1), plain = runTail(out, false, 1);
  ASSERT_FALSE(early.out.empty());
  EXPECT_EQ(early.out["t4"].shape(), Shape({kB, kS, kN}));
  expectSameBits(early.out["t4"], plain.out["t4"], "t4");
  expectSameBits(early.out["Y"], plain.out["Y"], "Y, t4 an output");
  EXPECT_TRUE(tookRowsEarly(early)) << early.profile; // at the clamp after t4
  // A softmax across the rows: everything before it needs every row.
  Variant across;
  across.softmaxInTail = true;
  early = runTail(across, true, 1);
  plain = runTail(across, false, 1);
  ASSERT_FALSE(early.out.empty());
  expectSameBits(early.out["Y"], plain.out["Y"], "Y, softmax across rows");
}

TEST(HostRowSelect, AnIndexOutOfRangeIsStillAnError) {
  // Rows before the sequence's start (past -S): GatherElements' error,
  // whether the rows are taken early or not, never a read past the rows.
  Variant v;
  v.keep = 2;
  v.shift = -(2 * kS + 5); // last position S - 1: rows -S - 7 and -S - 6
  for (bool early : {true, false}) {
    SCOPED_TRACE(early ? "taken early" : "as written");
    if (!early)
      setenv("QEFF_HOST_UNFUSED_DECODE", "1", 1);
    TempDir dir;
    auto s = Session::open(tailModel(v).save(dir), DeviceKind::Host, {});
    unsetenv("QEFF_HOST_UNFUSED_DECODE");
    ASSERT_TRUE(s.ok()) << s.error();
    std::vector<int64_t> pos;
    for (int64_t i = 0; i < kB * kS; ++i)
      pos.push_back(i % kS);
    Status st = s->run({{"H", Tensor::fromFloat({kB, kS, kN}, randomFloats(kB * kS * kN, 1))},
                        {"R", Tensor::fromFloat({kB, kS, kN}, randomFloats(kB * kS * kN, 2))},
                        {"position_ids", Tensor::fromInt64({kB, kS}, pos)},
                        {"Sc", Tensor::fromFloat({1, 1, kN}, randomFloats(kN, 3))}});
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.error().find("out of range"), std::string::npos) << st.error();
  }
}

} // namespace
