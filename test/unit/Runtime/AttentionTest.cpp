//===- AttentionTest.cpp - Attention over the valid key positions ---------===//
//
// The host device fuses Softmax(Where(mask, (Q x K^T) * scale, fill)) x V
// into one kernel that, in a decode step, reads only the key positions the
// mask keeps (runtime/host/Attention.cpp). Through whole models, fused
// against the three kernels as before (QEFF_HOST_UNFUSED_DECODE=1, the other
// fusions on): the same bits, for plain and grouped-query heads, one query row and
// chunks of four, 1 and 2 threads, masks of continuous batching (rows at
// different positions, a spare row with none), a sliding window inside the
// cache and a rolling buffer's wrapped window, and a fill that does not
// underflow; and prefill chunks of many rows per head, which read the
// positions up to the last kept one. Inf and NaN in the masked positions of
// K and V that are not read change nothing.
//
//===----------------------------------------------------------------------===//

#include "runtime/host/Gemm.h"
#include "test/unit/Runtime/ModelBuilder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>

using namespace qeff::runtime;
using namespace qeff::runtime::test;
namespace host = qeff::runtime::host;

namespace {

struct Dims {
  int64_t batch, groups, rep, rows, ctx, dim;
  int64_t heads() const { return groups * rep; }
};

/// Q [b, g*rep, rows, dim], K and V [b, g, ctx, dim] (repeated as HF's
/// repeat_kv writes it when rep > 1), Mask [b, 1, rows, ctx] bool.
ModelBuilder attention(const Dims &d, float fill) {
  ModelBuilder b;
  b.input("Q", F32, {"b", "h", "s", "d"});
  b.input("K", F32, {"b", "g", "c", "d"});
  b.input("V", F32, {"b", "g", "c", "d"});
  b.input("Mask", BOOL, {"b", "1", "s", "c"});
  b.initF32("scale", {}, {1.f / std::sqrt(float(d.dim))});
  b.initF32("fill", {}, {fill});
  std::string k = "K", v = "V";
  if (d.rep > 1) {
    b.initI64("axes", {1}, {2});
    b.initI64("expand", {5}, {d.batch, d.groups, d.rep, d.ctx, d.dim});
    b.initI64("reshape", {4}, {d.batch, d.heads(), d.ctx, d.dim});
    for (std::string *x : {&k, &v}) {
      b.node("Unsqueeze", {*x, "axes"}, {*x + "5"});
      b.node("Expand", {*x + "5", "expand"}, {*x + "e"});
      b.node("Reshape", {*x + "e", "reshape"}, {*x + "r"});
      *x += "r";
    }
  }
  attrs(b.node("Transpose", {k}, {"Kt"}), "perm", {0, 1, 3, 2});
  b.node("MatMul", {"Q", "Kt"}, {"S"});
  b.node("Mul", {"S", "scale"}, {"Ss"});
  b.node("Where", {"Mask", "Ss", "fill"}, {"W"});
  attr(b.node("Softmax", {"W"}, {"P"}), "axis", -1);
  b.node("MatMul", {"P", v}, {"Out"});
  b.output("Out", F32, {"b", "h", "s", "d"});
  return b;
}

/// keep(row, query, position): the mask.
using MaskFn = std::function<bool(int64_t, int64_t, int64_t)>;

struct Case {
  Dims d;
  MaskFn keep;
  float fill = std::numeric_limits<float>::lowest();
  /// Whether P x V skips blocks (up to 8 query rows per key/value head).
  bool skipsValues = true;
};

std::vector<float> run(const Case &c, int threads, bool fuse, bool poisonMasked) {
  const Dims &d = c.d;
  auto q = randomFloats(d.batch * d.heads() * d.rows * d.dim, 11);
  auto k = randomFloats(d.batch * d.groups * d.ctx * d.dim, 12);
  auto v = randomFloats(d.batch * d.groups * d.ctx * d.dim, 13);
  std::vector<bool> mask(d.batch * d.rows * d.ctx);
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t i = 0; i < d.rows; ++i)
      for (int64_t j = 0; j < d.ctx; ++j)
        mask[(b * d.rows + i) * d.ctx + j] = c.keep(b, i, j);
  if (poisonMasked) {
    // Positions no query row of the batch row keeps: never read. (A row
    // that keeps none, a spare row of continuous batching, averages all of
    // V: not poisoned.)
    const float inf = std::numeric_limits<float>::infinity();
    for (int64_t b = 0; b < d.batch; ++b)
      for (int64_t j = 0; j < d.ctx; ++j) {
        bool kept = false, any = false;
        for (int64_t i = 0; i < d.rows; ++i)
          for (int64_t x = 0; x < d.ctx; ++x) {
            kept |= x == j && c.keep(b, i, j);
            any |= c.keep(b, i, x);
          }
        if (kept || !any)
          continue;
        for (int64_t g = 0; g < d.groups; ++g)
          for (int64_t e = 0; e < d.dim; ++e) {
            size_t at = ((b * d.groups + g) * d.ctx + j) * d.dim + e;
            k[at] = e % 2 ? NAN : inf;
            v[at] = e % 2 ? -inf : NAN;
          }
      }
  }
  SessionOptions opts;
  opts.numThreads = threads;
  TempDir dir;
  if (!fuse)
    setenv("QEFF_HOST_UNFUSED_DECODE", "1", 1);
  auto s = Session::open(attention(d, c.fill).save(dir), DeviceKind::Host, opts);
  unsetenv("QEFF_HOST_UNFUSED_DECODE");
  EXPECT_TRUE(s.ok()) << s.error();
  if (!s.ok())
    return {};
  Status st = s->run({{"Q", Tensor::fromFloat({d.batch, d.heads(), d.rows, d.dim}, q)},
                      {"K", Tensor::fromFloat({d.batch, d.groups, d.ctx, d.dim}, k)},
                      {"V", Tensor::fromFloat({d.batch, d.groups, d.ctx, d.dim}, v)},
                      {"Mask", Tensor::fromBool({d.batch, 1, d.rows, d.ctx}, mask)}});
  EXPECT_TRUE(st.ok()) << st.error();
  if (!st.ok())
    return {};
  return floats(*s->getOutput("Out"));
}

/// Fused == as written, bit for bit; with every unread position poisoned
/// too when the fill underflows (a masked P is then exactly 0) and the
/// values product skips.
void expectSameBits(const Case &c, const char *what) {
  bool underflows = c.fill < -1e30f && c.skipsValues;
  for (int threads : {1, 2}) {
    SCOPED_TRACE(::testing::Message() << what << ", threads " << threads);
    auto want = run(c, threads, false, false);
    ASSERT_FALSE(want.empty());
    for (bool poison : {false, true}) {
      if (poison && !underflows)
        continue;
      auto got = run(c, threads, true, poison);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        uint32_t a, b;
        std::memcpy(&a, &got[i], 4);
        std::memcpy(&b, &want[i], 4);
        ASSERT_EQ(a, b) << "output " << i << ": " << got[i] << " fused, " << want[i]
                        << " as written" << (poison ? " (masked positions poisoned)" : "");
      }
    }
  }
}

TEST(HostAttention, DecodeReadsOnlyTheValidPositionsWithTheSameBits) {
  if (!host::gemm::fastKernels())
    GTEST_SKIP() << "the vector kernels are off (QEFF_HOST_KERNELS=portable or no AVX2): "
                    "the attention runs as written";
  // Continuous batching: each row at its own position; the last one a spare
  // row with no valid position (position -1).
  const int64_t pos[] = {5, 17, 36, -1};
  for (int64_t rep : {1, 4}) {
    Case cb{{4, 2, rep, 1, 37, 20}, [&](int64_t b, int64_t, int64_t j) { return j <= pos[b]; }};
    expectSameBits(cb, rep > 1 ? "continuous batching, grouped" : "continuous batching");
  }
  // A sliding window of 12 inside the cache (positions 9..20).
  Case sliding{{2, 2, 2, 1, 40, 16},
               [](int64_t b, int64_t, int64_t j) { return j <= 20 - b && j > 8 - b; }};
  expectSameBits(sliding, "sliding window");
  // A rolling buffer of 16 slots that has wrapped: slots 12..15 and 0..3
  // hold the window (two runs), the rest older positions.
  Case rolling{{1, 3, 1, 1, 16, 24}, [](int64_t, int64_t, int64_t j) { return j >= 12 || j < 4; }};
  expectSameBits(rolling, "rolling buffer");
  // A prefill chunk of 4 causal rows at positions 7..10 (the union of their
  // positions is read; 8 rows per head group, then 16: the scores only).
  for (int64_t rep : {2, 4}) {
    Case chunk{{2, 2, rep, 4, 29, 12},
               [](int64_t, int64_t i, int64_t j) { return j <= 7 + i; }};
    chunk.skipsValues = rep * 4 <= 8;
    expectSameBits(chunk, "chunk of 4");
  }
  // A fill that does not underflow in the softmax: masked P are not 0, so
  // every block is read (the same bits still).
  Case soft{{2, 2, 1, 1, 30, 8}, [](int64_t, int64_t, int64_t j) { return j < 6; }, -4.f};
  expectSameBits(soft, "fill -4");
}

TEST(HostAttention, PrefillReadsUpToTheLastKeptPositionWithTheSameBits) {
  if (!host::gemm::fastKernels())
    GTEST_SKIP() << "the vector kernels are off (QEFF_HOST_KERNELS=portable or no AVX2): "
                    "the attention runs as written";
  // More query rows per head than the decode paths take: one product per
  // head over the positions below the last kept one. Causal chunks whose
  // kept positions cross the 256-position block of the values product,
  // plain and grouped; what lies past them is poisoned and never read.
  Case plain{{1, 2, 1, 24, 520, 16}, [](int64_t, int64_t i, int64_t j) { return j <= 280 + i; }};
  expectSameBits(plain, "prefill, 24 rows per head");
  Case grouped{{2, 2, 4, 16, 300, 8}, [](int64_t, int64_t i, int64_t j) { return j <= 100 + i; }};
  expectSameBits(grouped, "prefill, grouped, 64 rows per head group");
  // A sliding window (positions before it are read, as P = 0 there), a
  // padded query row that keeps nothing (its P averages all of V, so every
  // position is read) and a fill that does not underflow: the same bits,
  // nothing poisoned.
  Case window{{1, 2, 2, 24, 90, 12},
              [](int64_t, int64_t i, int64_t j) { return j <= 40 + i && j > 24 + i; }};
  window.skipsValues = false;
  expectSameBits(window, "prefill, sliding window");
  Case padded{{1, 1, 2, 20, 64, 8},
              [](int64_t, int64_t i, int64_t j) { return i < 18 && j <= 10 + i; }};
  padded.skipsValues = false;
  expectSameBits(padded, "prefill, padded rows");
  Case soft{{1, 2, 1, 20, 40, 8}, [](int64_t, int64_t i, int64_t j) { return j <= i; }, -4.f};
  expectSameBits(soft, "prefill, fill -4");
  // Blocks of 32 rows of a head group (scores, softmax and P x V a block at
  // a time, each block over its own part of the triangle): a causal chunk
  // from position 0 of 180 rows per group (the last block takes the 20
  // left over), a block whose rows all keep nothing, and a chunk where no
  // row keeps anything.
  Case blocks{{1, 2, 4, 45, 128, 16}, [](int64_t, int64_t i, int64_t j) { return j <= i; }};
  expectSameBits(blocks, "prefill, causal from 0, blocks of rows");
  Case emptyBlock{{1, 1, 1, 70, 64, 8},
                  [](int64_t, int64_t i, int64_t j) { return i < 30 && j <= 10 + i; }};
  emptyBlock.skipsValues = false;
  expectSameBits(emptyBlock, "prefill, a block of rows keeping nothing");
  Case nothing{{1, 1, 2, 20, 32, 8}, [](int64_t, int64_t, int64_t) { return false; }};
  nothing.skipsValues = false;
  expectSameBits(nothing, "prefill, no row keeps anything");
}

} // namespace
