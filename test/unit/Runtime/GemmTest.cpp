//===- GemmTest.cpp - The host GEMM against the reference loop ------------===//
//
// Packed-B products (f32, f16 and bf16 panels, B given plain or transposed)
// and products with B used in place (gemmInPlace, B plain) on every
// microkernel family (portable, AVX2, AVX-512: a family this CPU lacks is
// skipped with a message), 1 and 2 threads, against the plain loop: edge
// tiles (rows not a multiple of 8, columns not a multiple of 32, k past one
// panel block, m past one row block), empty sizes, and inf/NaN propagation;
// one row bitwise as a row of a many-row product; several products of one
// A in one hand-off bitwise as one by one; the AVX2 kernels bitwise the
// AVX-512 ones; the attention's per-head products; a weight (WeightB)
// used in place by its first product and laid out by the next.
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

using gemm::Elem;
using gemm::Impl;

struct GemmEnv {
  std::shared_ptr<Arena> arena = std::make_shared<Arena>();
  Context ctx(int threads) { return Context{arena.get(), threads}; }
};

const char *elemName(Elem e) { return e == Elem::F32 ? "f32" : e == Elem::F16 ? "f16" : "bf16"; }

/// x as the element type holds it.
float roundTo(float x, Elem e) {
  if (e == Elem::F16)
    return roundToHalf(x);
  if (e == Elem::BF16)
    return bfloat16ToFloat(floatToBFloat16(x));
  return x;
}

/// C from packing `b` ([k, n] values, exactly representable in `elem`) as
/// requested and running gemm, or with `inPlace` from gemmInPlace on `b` as
/// it is (in a vector of exactly k * n elements: a read past them is an
/// ASan finding).
std::vector<float> run(Context &ctx, int64_t m, int64_t n, int64_t k, const std::vector<float> &a,
                       const std::vector<float> &b, Elem elem, bool transposed, Impl impl,
                       bool inPlace = false) {
  std::vector<float> bt(b.size());
  if (transposed)
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j)
        bt[j * k + p] = b[p * n + j];
  const std::vector<float> &src = transposed ? bt : b;
  std::shared_ptr<gemm::PackedB> packed;
  std::vector<uint16_t> half(src.size());
  for (size_t i = 0; i < src.size() && elem != Elem::F32; ++i)
    half[i] = elem == Elem::F16 ? floatToHalf(src[i]) : floatToBFloat16(src[i]);
  const void *raw = elem != Elem::F32 ? static_cast<const void *>(half.data()) : src.data();
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

/// The tests below run once per microkernel family.
class HostGemmPath : public ::testing::TestWithParam<Impl> {
protected:
  void SetUp() override {
    if (!gemm::implAvailable(GetParam()))
      GTEST_SKIP() << "this CPU lacks the " << gemm::implName(GetParam())
                   << " kernels: their tests are skipped on this machine";
  }
};

std::string pathName(const ::testing::TestParamInfo<Impl> &info) {
  return gemm::implName(info.param);
}

TEST_P(HostGemmPath, MatchesTheReferenceLoopOnEdgeTiles) {
  GemmEnv s;
  Impl impl = GetParam();
  const int64_t ms[] = {1, 3, 8, 9, 17, 200};
  const int64_t ns[] = {1, 7, 31, 32, 33, 70};
  const int64_t ks[] = {1, 7, 256, 300};
  unsigned seed = 1;
  for (int threads : {1, 2})
    for (int64_t m : ms)
      for (int64_t n : ns)
        for (int64_t k : ks)
          for (Elem elem : {Elem::F32, Elem::F16, Elem::BF16})
            for (bool inPlace : {false, true}) {
              bool transposed = !inPlace && (seed % 3) == 0;
              Context ctx = s.ctx(threads);
              auto a = randomFloats(m * k, seed++), b = randomFloats(k * n, seed++);
              for (auto &x : b) // the reference sees the values the panel holds
                x = roundTo(x, elem);
              std::vector<float> want(m * n);
              gemm::referenceGemm(m, n, k, a.data(), b.data(), want.data());
              auto got = run(ctx, m, n, k, a, b, elem, transposed, impl, inPlace);
              for (int64_t i = 0; i < m * n; ++i) {
                // |a|, |b| <= 1: the sums' rounding differs by order only.
                ASSERT_NEAR(got[i], want[i], 2e-6 * k)
                    << "m " << m << " n " << n << " k " << k << " " << elemName(elem)
                    << " in place " << inPlace << " transposed " << transposed << " threads "
                    << threads << " at " << i;
              }
            }
}

// Decode's one-row products run two panels at a time (detail::gemvAvx512,
// gemvAvx2); a row must come out with the same bits as in a product of many
// rows, so that a prompt's tokens do not depend on what else is in the
// batch.
TEST_P(HostGemmPath, OneRowIsBitwiseARowOfAManyRowProduct) {
  GemmEnv s;
  unsigned seed = 900;
  for (int threads : {1, 2})
    for (Elem elem : {Elem::F32, Elem::F16, Elem::BF16})
      for (int64_t n : {33, 70, 96, 130})
        for (int64_t k : {300, 600}) {
          Context ctx = s.ctx(threads);
          const int64_t m = 9;
          auto a = randomFloats(m * k, seed++), b = randomFloats(k * n, seed++);
          for (auto &x : b)
            x = roundTo(x, elem);
          auto all = run(ctx, m, n, k, a, b, elem, false, GetParam());
          for (int64_t i = 0; i < m; ++i) {
            std::vector<float> row(a.begin() + i * k, a.begin() + (i + 1) * k);
            auto one = run(ctx, 1, n, k, row, b, elem, false, GetParam());
            for (int64_t j = 0; j < n; ++j)
              ASSERT_EQ(one[j], all[i * n + j])
                  << "row " << i << " col " << j << " n " << n << " k " << k << " "
                  << elemName(elem) << " threads " << threads;
          }
        }
}

TEST_P(HostGemmPath, EmptySizes) {
  GemmEnv s;
  Context ctx = s.ctx(2);
  Impl impl = GetParam();
  // k = 0: C is zeros; m = 0 or n = 0: nothing written.
  for (bool inPlace : {false, true}) {
    auto c = run(ctx, 3, 5, 0, {}, {}, Elem::F32, false, impl, inPlace);
    EXPECT_EQ(c, std::vector<float>(15, 0.f));
    EXPECT_TRUE(
        run(ctx, 0, 5, 4, {}, std::vector<float>(20, 1.f), Elem::BF16, false, impl, inPlace)
            .empty());
    EXPECT_TRUE(run(ctx, 2, 0, 4, std::vector<float>(8, 1.f), {}, Elem::F16, false, impl, inPlace)
                    .empty());
  }
}

TEST_P(HostGemmPath, PropagatesInfAndNaNAsTheReferenceLoop) {
  GemmEnv s;
  const float inf = std::numeric_limits<float>::infinity();
  const int64_t m = 11, n = 37, k = 300;
  for (Elem elem : {Elem::F32, Elem::F16, Elem::BF16})
    for (bool inPlace : {false, true}) {
      Context ctx = s.ctx(2);
      auto a = randomFloats(m * k, 5), b = randomFloats(k * n, 6);
      for (auto &x : a)
        x = std::fabs(x) + 0.25f; // positive: no inf - inf from the data itself
      for (auto &x : b)
        x = roundTo(roundToHalf(std::fabs(x) + 0.25f), elem);
      a[2 * k + 17] = NAN;      // row 2: all NaN
      b[260 * n + 33] = inf;    // column 33 (last panel, past k block 1): inf ...
      a[5 * k + 260] = 0.f;     // ... but NaN in row 5 (0 x inf)
      b[3 * n + 4] = -inf;      // column 4: -inf ...
      b[9 * n + 4] = inf;       // ... + inf: NaN
      std::vector<float> want(m * n);
      gemm::referenceGemm(m, n, k, a.data(), b.data(), want.data());
      auto got = run(ctx, m, n, k, a, b, elem, false, GetParam(), inPlace);
      int nans = 0, infs = 0;
      for (int64_t i = 0; i < m * n; ++i) {
        ASSERT_EQ(std::isnan(got[i]), std::isnan(want[i])) << elemName(elem) << " " << i;
        ASSERT_EQ(std::isinf(got[i]), std::isinf(want[i])) << elemName(elem) << " " << i;
        if (std::isinf(want[i]))
          ASSERT_EQ(got[i], want[i]) << i;
        nans += std::isnan(want[i]);
        infs += std::isinf(want[i]);
      }
      EXPECT_EQ(nans, n + m - 1 + 1);  // row 2, column 4, (5, 33)
      EXPECT_EQ(infs, m - 2);          // column 33 but rows 2 and 5
    }
}

TEST_P(HostGemmPath, HeadProductsMatchTheReferenceLoop) {
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
            gemm::headGemm(m, n, k, a.data(), k, stored.data(), ldb, transB, c.data(), n, scratch,
                           GetParam());
            for (int64_t i = 0; i < m * n; ++i)
              ASSERT_NEAR(c[i], want[i], 2e-6 * k) << m << " " << n << " " << k << " " << transB;
          }
}

TEST_P(HostGemmPath, HeadProductsPropagateInfAndNaNAsTheReferenceLoop) {
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
                     scratch, GetParam());
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

// Several products of one A in one hand-off: each C has the bits of its
// own gemm call, whatever the split of the panels between threads.
TEST_P(HostGemmPath, ProductsOfOneAInOneHandOffKeepTheirBits) {
  GemmEnv s;
  unsigned seed = 3000;
  for (int threads : {1, 2, 3})
    for (int64_t m : {1, 4, 9})
      for (int64_t k : {17, 300}) {
        Context ctx = s.ctx(threads);
        auto a = randomFloats(m * k, seed++);
        const int64_t ns[] = {70, 1, 33, 0, 96};
        const Elem elems[] = {Elem::F32, Elem::F16, Elem::BF16, Elem::F32, Elem::BF16};
        std::vector<std::shared_ptr<gemm::PackedB>> packed;
        std::vector<const gemm::PackedB *> bs;
        std::vector<std::vector<float>> multi, single;
        std::vector<float *> cs;
        for (int i = 0; i < 5; ++i) {
          auto b = randomFloats(k * ns[i], seed++);
          std::vector<uint16_t> half(b.size());
          for (size_t e = 0; e < b.size(); ++e)
            half[e] = elems[i] == Elem::F16 ? floatToHalf(b[e]) : floatToBFloat16(b[e]);
          const void *raw = elems[i] == Elem::F32 ? static_cast<const void *>(b.data())
                                                  : static_cast<const void *>(half.data());
          packed.push_back(gemm::PackedB::pack(ctx, raw, elems[i], k, ns[i], false, elems[i]));
          bs.push_back(packed.back().get());
          multi.emplace_back(m * ns[i], -1.f);
          single.emplace_back(m * ns[i], -2.f);
          gemm::gemm(ctx, m, a.data(), k, *packed.back(), single.back().data(), ns[i],
                     GetParam());
        }
        for (auto &c : multi)
          cs.push_back(c.data());
        gemm::gemmMulti(ctx, m, a.data(), k, bs, cs, GetParam());
        for (int i = 0; i < 5; ++i)
          ASSERT_EQ(multi[i], single[i]) << "product " << i << " m " << m << " k " << k
                                         << " threads " << threads;
      }
}

INSTANTIATE_TEST_SUITE_P(Kernels, HostGemmPath,
                         ::testing::Values(Impl::Portable, Impl::Avx2, Impl::Avx512), pathName);

// The AVX2 microkernels keep each element's FMA chain of the AVX-512 ones
// (one panel at a time, and two at once from 16 rows): the same bits, packed
// and in place, one row and many, a last pair of panels full or partial.
TEST(HostGemm, Avx2IsBitwiseAvx512) {
  if (!gemm::implAvailable(Impl::Avx2) || !gemm::implAvailable(Impl::Avx512))
    GTEST_SKIP() << "this CPU lacks AVX2 or AVX-512: the comparison needs both";
  GemmEnv s;
  Context ctx = s.ctx(2);
  unsigned seed = 2000;
  for (int64_t m : {1, 5, 9, 200})
    for (int64_t n : {13, 50, 64, 70, 100})
      for (int64_t k : {9, 300})
        for (Elem elem : {Elem::F32, Elem::F16, Elem::BF16})
          for (bool inPlace : {false, true}) {
            auto a = randomFloats(m * k, seed++), b = randomFloats(k * n, seed++);
            for (auto &x : b)
              x = roundTo(x, elem);
            auto v2 = run(ctx, m, n, k, a, b, elem, false, Impl::Avx2, inPlace);
            auto v5 = run(ctx, m, n, k, a, b, elem, false, Impl::Avx512, inPlace);
            for (int64_t i = 0; i < m * n; ++i)
              ASSERT_EQ(v2[i], v5[i]) << "m " << m << " n " << n << " k " << k << " "
                                      << elemName(elem) << " in place " << inPlace << " at " << i;
          }
}

TEST(HostGemm, ActiveFamilyIsAvailable) {
  // Whatever QEFF_HOST_KERNELS asks for, the family in use runs here.
  EXPECT_TRUE(gemm::implAvailable(gemm::activeImpl())) << gemm::implName(gemm::activeImpl());
  EXPECT_NE(gemm::activeImpl(), Impl::Auto);
  EXPECT_EQ(gemm::fastKernels(), gemm::activeImpl() != Impl::Portable);
}

TEST(HostWeightB, FirstProductInPlaceThenLaidOutOnce) {
  GemmEnv s;
  Context ctx = s.ctx(2);
  const int64_t k = 70, n = 45;
  for (Elem elem : {Elem::F32, Elem::F16, Elem::BF16})
    for (int64_t firstRows : {int64_t(3), int64_t(40)}) {
      auto w = randomFloats(k * n, 7);
      Tensor b = Tensor::fromFloat({k, n}, w);
      if (elem != Elem::F32) {
        std::vector<uint16_t> h(w.size());
        for (size_t i = 0; i < w.size(); ++i) {
          h[i] = elem == Elem::F16 ? floatToHalf(w[i]) : floatToBFloat16(w[i]);
          w[i] = elem == Elem::F16 ? halfToFloat(h[i]) : bfloat16ToFloat(h[i]);
        }
        b = Tensor::zeros(elem == Elem::F16 ? DType::Float16 : DType::BFloat16, {k, n});
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
          ASSERT_NEAR(got[i], want[i], 2e-6 * k) << "m " << m << " " << elemName(elem);
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
