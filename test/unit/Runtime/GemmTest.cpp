//===- GemmTest.cpp - The host GEMM against the reference loop ------------===//
//
// Packed-B products (f32 and f16 panels, B given plain or transposed) and
// products with B used in place (gemmInPlace, B plain) on the vector and the
// portable microkernel, 1 and 2 threads, against the plain loop: edge tiles
// (rows not a multiple of 8, columns not a multiple of 32, k past one panel
// block, m past one row block), empty sizes, and inf/NaN propagation; one
// row bitwise as a row of a many-row product; a
// weight (WeightB) used in place by its first product and laid out by the
// next.
//
//===----------------------------------------------------------------------===//

#include "runtime/host/Gemm.h"
#include "test/unit/Runtime/ModelBuilder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace qeff::runtime;
using namespace qeff::runtime::host;
using qeff::runtime::test::randomFloats;

namespace {

struct GemmEnv {
  std::shared_ptr<Arena> arena = std::make_shared<Arena>();
  Context ctx(int threads) { return Context{arena.get(), threads}; }
};

/// C from packing `b` ([k, n] values) as requested and running gemm, or with
/// `inPlace` from gemmInPlace on `b` as it is (in a vector of exactly k * n
/// elements: a read past them is an ASan finding).
std::vector<float> run(Context &ctx, int64_t m, int64_t n, int64_t k, const std::vector<float> &a,
                       const std::vector<float> &b, bool f16, bool transposed, gemm::Impl impl,
                       bool inPlace = false) {
  std::vector<float> bt(b.size());
  if (transposed)
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j)
        bt[j * k + p] = b[p * n + j];
  const std::vector<float> &src = transposed ? bt : b;
  std::shared_ptr<gemm::PackedB> packed;
  std::vector<uint16_t> half(src.size());
  if (f16)
    for (size_t i = 0; i < src.size(); ++i)
      half[i] = floatToHalf(src[i]);
  const void *raw = f16 ? static_cast<const void *>(half.data()) : src.data();
  auto elem = f16 ? gemm::Elem::F16 : gemm::Elem::F32;
  if (!inPlace)
    packed = gemm::PackedB::pack(ctx, raw, elem, k, n, transposed, elem);
  // C has a wider row stride than n, poisoned: only [0, n) may be written.
  int64_t ldc = n + 5;
  std::vector<float> c(std::max<int64_t>(m, 1) * ldc, -7777.f);
  if (inPlace)
    gemm::gemmInPlace(ctx, m, a.data(), k, raw, elem, k, n, c.data(), ldc, impl);
  else
    gemm::gemm(ctx, m, a.data(), k, *packed, c.data(), ldc, impl);
  std::vector<float> out(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < ldc; ++j) {
      if (j < n)
        out[i * n + j] = c[i * ldc + j];
      else
        EXPECT_EQ(c[i * ldc + j], -7777.f) << "wrote past column n at row " << i;
    }
  return out;
}

TEST(HostGemm, MatchesTheReferenceLoopOnEdgeTiles) {
  GemmEnv s;
  const int64_t ms[] = {1, 3, 8, 9, 17, 200};
  const int64_t ns[] = {1, 31, 32, 33, 70};
  const int64_t ks[] = {1, 7, 256, 300};
  unsigned seed = 1;
  for (auto impl : {gemm::Impl::Auto, gemm::Impl::Portable})
    for (int threads : {1, 2})
      for (int64_t m : ms)
        for (int64_t n : ns)
          for (int64_t k : ks)
            for (bool f16 : {false, true})
              for (bool inPlace : {false, true}) {
                bool transposed = !inPlace && (seed % 3) == 0;
                Context ctx = s.ctx(threads);
                auto a = randomFloats(m * k, seed++), b = randomFloats(k * n, seed++);
                if (f16) // the reference sees the values the f16 panel holds
                  for (auto &x : b)
                    x = roundToHalf(x);
                std::vector<float> want(m * n);
                gemm::referenceGemm(m, n, k, a.data(), b.data(), want.data());
                auto got = run(ctx, m, n, k, a, b, f16, transposed, impl, inPlace);
                for (int64_t i = 0; i < m * n; ++i) {
                  // |a|, |b| <= 1: the sums' rounding differs by order only.
                  ASSERT_NEAR(got[i], want[i], 2e-6 * k)
                      << "m " << m << " n " << n << " k " << k << " f16 " << f16
                      << " in place " << inPlace << " threads " << threads << " portable "
                      << (impl == gemm::Impl::Portable) << " at " << i;
                }
              }
}

// Decode's one-row products run two panels at a time (detail::gemvAvx512);
// a row must come out with the same bits as in a product of many rows, so
// that a prompt's tokens do not depend on what else is in the batch.
TEST(HostGemm, OneRowIsBitwiseARowOfAManyRowProduct) {
  GemmEnv s;
  unsigned seed = 900;
  for (int threads : {1, 2})
    for (bool f16 : {false, true})
      for (int64_t n : {33, 70, 96, 130})
        for (int64_t k : {300, 600}) {
          Context ctx = s.ctx(threads);
          const int64_t m = 9;
          auto a = randomFloats(m * k, seed++), b = randomFloats(k * n, seed++);
          auto all = run(ctx, m, n, k, a, b, f16, false, gemm::Impl::Auto);
          for (int64_t i = 0; i < m; ++i) {
            std::vector<float> row(a.begin() + i * k, a.begin() + (i + 1) * k);
            auto one = run(ctx, 1, n, k, row, b, f16, false, gemm::Impl::Auto);
            for (int64_t j = 0; j < n; ++j)
              ASSERT_EQ(one[j], all[i * n + j])
                  << "row " << i << " col " << j << " n " << n << " k " << k << " f16 " << f16
                  << " threads " << threads;
          }
        }
}

TEST(HostGemm, EmptySizes) {
  GemmEnv s;
  Context ctx = s.ctx(2);
  // k = 0: C is zeros; m = 0 or n = 0: nothing written.
  for (bool inPlace : {false, true}) {
    auto c = run(ctx, 3, 5, 0, {}, {}, false, false, gemm::Impl::Auto, inPlace);
    EXPECT_EQ(c, std::vector<float>(15, 0.f));
    EXPECT_TRUE(run(ctx, 0, 5, 4, {}, std::vector<float>(20, 1.f), false, false,
                    gemm::Impl::Auto, inPlace)
                    .empty());
    EXPECT_TRUE(run(ctx, 2, 0, 4, std::vector<float>(8, 1.f), {}, true, false,
                    gemm::Impl::Auto, inPlace)
                    .empty());
  }
}

TEST(HostGemm, PropagatesInfAndNaNAsTheReferenceLoop) {
  GemmEnv s;
  const float inf = std::numeric_limits<float>::infinity();
  const int64_t m = 11, n = 37, k = 300;
  for (auto impl : {gemm::Impl::Auto, gemm::Impl::Portable})
    for (bool f16 : {false, true})
    for (bool inPlace : {false, true}) {
      Context ctx = s.ctx(2);
      auto a = randomFloats(m * k, 5), b = randomFloats(k * n, 6);
      for (auto &x : a)
        x = std::fabs(x) + 0.25f; // positive: no inf - inf from the data itself
      for (auto &x : b)
        x = roundToHalf(std::fabs(x) + 0.25f);
      a[2 * k + 17] = NAN;      // row 2: all NaN
      b[260 * n + 33] = inf;    // column 33 (last panel, past k block 1): inf ...
      a[5 * k + 260] = 0.f;     // ... but NaN in row 5 (0 x inf)
      b[3 * n + 4] = -inf;      // column 4: -inf ...
      b[9 * n + 4] = inf;       // ... + inf: NaN
      std::vector<float> want(m * n);
      gemm::referenceGemm(m, n, k, a.data(), b.data(), want.data());
      auto got = run(ctx, m, n, k, a, b, f16, false, impl, inPlace);
      int nans = 0, infs = 0;
      for (int64_t i = 0; i < m * n; ++i) {
        ASSERT_EQ(std::isnan(got[i]), std::isnan(want[i])) << i;
        ASSERT_EQ(std::isinf(got[i]), std::isinf(want[i])) << i;
        if (std::isinf(want[i]))
          ASSERT_EQ(got[i], want[i]) << i;
        nans += std::isnan(want[i]);
        infs += std::isinf(want[i]);
      }
      EXPECT_EQ(nans, n + m - 1 + 1);  // row 2, column 4, (5, 33)
      EXPECT_EQ(infs, m - 2);          // column 33 but rows 2 and 5
    }
}

TEST(HostGemm, HeadProductsMatchTheReferenceLoop) {
  // Few rows (decode: dot products along B^T's rows up to kDotRows, the
  // microkernels on B's strips in place up to 8 rows when B is dense) and
  // more (packed per call), B plain or transposed, B rows padded (ldb > row
  // length), k past and short of the 16-lane vectors.
  std::vector<float> scratch;
  unsigned seed = 100;
  for (int64_t m : {int64_t(1), int64_t(5), int64_t(8), int64_t(9), gemm::kDotRows,
                    gemm::kDotRows + 1})
    for (int64_t n : {1, 33, 64})
      for (int64_t k : {1, 9, 64, 130})
        for (bool transB : {false, true})
          for (int64_t pad : {0, 3}) {
            auto a = randomFloats(m * k, seed++), b = randomFloats(k * n, seed++);
            std::vector<float> want(m * n);
            gemm::referenceGemm(m, n, k, a.data(), b.data(), want.data());
            int64_t cols = transB ? k : n, rows = transB ? n : k, ldb = cols + pad;
            std::vector<float> stored(rows * ldb, NAN); // padding never read
            for (int64_t p = 0; p < k; ++p)
              for (int64_t j = 0; j < n; ++j)
                stored[transB ? j * ldb + p : p * ldb + j] = b[p * n + j];
            std::vector<float> c(m * n, -1.f);
            gemm::headGemm(m, n, k, a.data(), k, stored.data(), ldb, transB, c.data(), n, scratch);
            for (int64_t i = 0; i < m * n; ++i)
              ASSERT_NEAR(c[i], want[i], 2e-6 * k) << m << " " << n << " " << k << " " << transB;
          }
}

TEST(HostGemm, HeadProductsPropagateInfAndNaNAsTheReferenceLoop) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> scratch;
  const int64_t n = 21, k = 35;
  for (int64_t m : {int64_t(1), int64_t(6), gemm::kDotRows + 2})
    for (bool transB : {false, true}) {
      auto a = randomFloats(m * k, 300 + m), b = randomFloats(k * n, 400 + m);
      for (auto &x : a)
        x = std::fabs(x) + 0.25f; // positive: no inf - inf from the data itself
      for (auto &x : b)
        x = std::fabs(x) + 0.25f;
      a[0 * k + 20] = NAN;   // row 0: all NaN
      b[33 * n + 5] = inf;   // column 5 (in the vectors' tail): inf ...
      if (m > 1)
        a[1 * k + 33] = 0.f; // ... but NaN in row 1 (0 x inf)
      b[3 * n + 7] = -inf;   // column 7: -inf ...
      b[9 * n + 7] = inf;    // ... + inf: NaN
      std::vector<float> want(m * n), stored(k * n), c(m * n, -1.f);
      gemm::referenceGemm(m, n, k, a.data(), b.data(), want.data());
      for (int64_t p = 0; p < k; ++p)
        for (int64_t j = 0; j < n; ++j)
          stored[transB ? j * k + p : p * n + j] = b[p * n + j];
      gemm::headGemm(m, n, k, a.data(), k, stored.data(), transB ? k : n, transB, c.data(), n,
                     scratch);
      for (int64_t i = 0; i < m * n; ++i) {
        if (std::isnan(want[i]) || std::isinf(want[i]))
          ASSERT_EQ(std::isnan(c[i]), std::isnan(want[i])) << m << " " << transB << " at " << i;
        if (std::isinf(want[i]))
          ASSERT_EQ(c[i], want[i]) << m << " " << transB << " at " << i;
        if (std::isfinite(want[i]))
          ASSERT_NEAR(c[i], want[i], 2e-6 * k) << m << " " << transB << " at " << i;
      }
    }
}

TEST(HostWeightB, FirstProductInPlaceThenLaidOutOnce) {
  GemmEnv s;
  Context ctx = s.ctx(2);
  const int64_t k = 70, n = 45;
  for (bool f16 : {false, true})
    for (int64_t firstRows : {int64_t(3), int64_t(40)}) {
      auto w = randomFloats(k * n, 7);
      Tensor b = Tensor::fromFloat({k, n}, w);
      if (f16) {
        std::vector<uint16_t> h(w.size());
        for (size_t i = 0; i < w.size(); ++i) {
          h[i] = floatToHalf(w[i]);
          w[i] = halfToFloat(h[i]);
        }
        b = Tensor::zeros(DType::Float16, {k, n});
        std::memcpy(b.rawData(), h.data(), h.size() * 2);
      }
      std::vector<std::pair<const void *, size_t>> released;
      WeightB weight(b, false, "w", [&](const void *p, size_t bytes) {
        released.emplace_back(p, bytes);
      });
      int64_t products = 0;
      for (int64_t m : {firstRows, int64_t(1), int64_t(2)}) {
        auto a = randomFloats(m * k, 8 + m);
        std::vector<float> want(m * n), got(m * n, -1.f);
        gemm::referenceGemm(m, n, k, a.data(), w.data(), want.data());
        weight.multiply(ctx, m, a.data(), got.data());
        for (int64_t i = 0; i < m * n; ++i)
          ASSERT_NEAR(got[i], want[i], 2e-6 * k) << "m " << m << " f16 " << f16;
        // The first product (of any size) leaves it in place, the second
        // lays it out; its pages released exactly once.
        bool expectPacked = ++products > 1;
        EXPECT_EQ(weight.packed(), expectPacked) << "after m " << m;
        ASSERT_EQ(released.size(), expectPacked ? 1u : 0u);
        if (expectPacked) {
          EXPECT_EQ(released[0].first, b.rawData());
          EXPECT_EQ(released[0].second, b.byteSize());
        }
      }
    }
}

} // namespace
