//===- Attention.cpp - Attention over the valid key positions -------------===//
//
// The executor fuses the attention's three kernels into this one at load
// (HostPlan.cpp, fusePlan): the scores S = Q x K^T (a MatMul reading B^T,
// plain or grouped: GroupedMatMul.cpp), P = Softmax(Where(cond, S * scale,
// fill)) (the fused masked softmax) and O = P x V. A decode step's cache
// holds ctx_len positions of which only those up to the row's position (or
// in its window) are valid; the retained-state contract lets the host leave
// the others' values unread. So, when each key/value head serves few query
// rows (the dot-product and in-place paths of gemm::headGemm, as in decode):
//
//  - the scores are computed only at the key positions some row of the head
//    keeps (cond true), in runs of consecutive positions; every other score
//    is replaced by `fill` in the softmax anyway;
//  - the masked softmax runs on the whole rows as before;
//  - P x V skips the blocks of gemm::kKCInPlace key positions in which every
//    P of the head is exactly 0 (exp underflow of the masked fill), the
//    runs of blocks added as the blocks of the full product are; in a block
//    with some such positions, their rows of V are read as zeros from a
//    copy (the block's partial sums are the same for finite values).
//
// A prefill (more query rows per head) computes the scores below the last
// key position any row keeps and P x V below the last position with some P
// not 0, one product per head from position 0: the full product's blocks,
// the positions left out adding exact zeros there.
//
// Each computed score is the same dot product as in the full product, and
// a skipped position adds exactly what it adds there (fma(0, v, acc) =
// acc), so the output has the bits of the three kernels run as written,
// except where a skipped (masked) position of V holds inf or NaN: the full
// product would spread 0 x inf = NaN, this leaves it unread. Anything else (more rows per
// head, other layouts, no vector kernels) runs the three kernels as written.
//
//===----------------------------------------------------------------------===//

#include "runtime/host/Gemm.h"
#include "runtime/host/Kernel.h"
#include "runtime/host/VectorMath.h"

#include <algorithm>
#include <cstring>

namespace qeff::runtime::host {
namespace {

/// A plain batched product A [batch.., m, k] x B [batch.., k, n] (B^T
/// [batch.., n, k] with transB), the same batch dims on both, more than one
/// matrix and nothing empty: the case the MatMul kernel runs as one
/// gemm::headGemm per matrix (NNKernels.cpp).
std::optional<GroupedProduct> plainProduct(DType aType, const Shape &as, const Tensor &b,
                                           bool transB) {
  int64_t rank = static_cast<int64_t>(as.size());
  if (aType != DType::Float32 || b.dtype() != DType::Float32 || rank < 3 ||
      rank != b.rank() || numElements(as) == 0 || b.numElements() == 0 ||
      !std::equal(as.begin(), as.end() - 2, b.shape().begin()))
    return std::nullopt;
  GroupedProduct g;
  g.k = as.back();
  g.n = transB ? b.dim(-2) : b.dim(-1);
  if ((transB ? b.dim(-1) : b.dim(-2)) != g.k)
    return std::nullopt;
  g.groups = prod(as, 0, rank - 2);
  if (g.groups < 2)
    return std::nullopt;
  g.rows = as[rank - 2];
  g.ldb = transB ? g.k : g.n;
  g.shape = as;
  g.shape.back() = g.n;
  return g;
}

/// One past the last column of `rows` x `c` floats where some value is not
/// +-0 (NaN included); 0 when all are. The rows from the last (the one
/// that sees most of a causal chunk), each tail past the bound so far
/// tested as a vectorisable OR of magnitude bits before it is searched.
int64_t lastNonZero(const float *p, int64_t rows, int64_t c) {
  int64_t used = 0;
  for (int64_t i = rows - 1; i >= 0; --i) {
    const float *row = p + i * c;
    uint32_t any = 0;
    for (int64_t j = used; j < c; ++j) {
      uint32_t bits;
      std::memcpy(&bits, row + j, 4);
      any |= bits & 0x7fffffffu;
    }
    if (!any)
      continue;
    for (int64_t j = c - 1; j >= used; --j)
      if (row[j] != 0.f) { // NaN too
        used = j + 1;
        break;
      }
  }
  return used;
}

/// One past the last key position any row of cond [.., c] keeps.
int64_t keptEndOfRows(const Tensor &cond, int64_t c) {
  const uint8_t *pc = cond.data<uint8_t>();
  int64_t rows = cond.numElements() / c, end = 0;
  for (int64_t i = 0; i < rows; ++i)
    end = std::max(end, vec::keptEnd(pc + i * c, c));
  return end;
}

class AttentionKernel : public Kernel {
public:
  AttentionKernel(std::unique_ptr<Kernel> scores, size_t kInputs, std::unique_ptr<Kernel> softmax,
                  std::unique_ptr<Kernel> values, size_t vInputs, bool transK)
      : scores_(std::move(scores)), softmax_(std::move(softmax)), values_(std::move(values)),
        kIn_(kInputs), vIn_(vInputs), transK_(transK) {}

  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(in.size() == 4 + kIn_ + vIn_, "attention needs " +
                                                 std::to_string(4 + kIn_ + vIn_) +
                                                 " inputs (internal error)");
    if (prefillBlocks(ctx, in, out))
      return;
    Tensor p = scoresAndSoftmax(ctx, in);
    std::vector<Tensor> vin{std::move(p)};
    for (size_t i = 0; i < vIn_; ++i)
      vin.push_back(in[4 + kIn_ + i]);
    if (!validValues(ctx, vin, out))
      values_->run(ctx, vin, out);
  }

private:
  std::optional<GroupedProduct> product(const std::vector<Tensor> &in, size_t first, size_t count,
                                        const Tensor &a, bool transB) const {
    return product(in, first, count, a.dtype(), a.shape(), transB);
  }
  /// The same for an A of `as` not computed yet.
  std::optional<GroupedProduct> product(const std::vector<Tensor> &in, size_t first, size_t count,
                                        DType aType, const Shape &as, bool transB) const {
    for (size_t i = 0; i < count; ++i)
      if (!present(in, first + i))
        return std::nullopt;
    if (count == 1)
      return plainProduct(aType, as, in[first], transB);
    return groupedProduct(aType, as, in[first], in[first + 1], in[first + 2], transB);
  }

  /// A prefill chunk (more than kDotRows query rows per head), kBlockRows
  /// rows of a head at a time: the block's scores over the key positions up
  /// to the last one its rows keep (K^T packed once per head), their masked
  /// softmax, and P x V up to the last position with some P not exactly 0
  /// in the block. The chunk's scores and P are never written out whole
  /// (a block's stay in cache), and a causal chunk's blocks compute only
  /// their part of the triangle. Each output is the same sum as the three
  /// kernels' (gemm's bits do not depend on the rows or columns of a call;
  /// the positions left out add exact zeros there). false (nothing
  /// written) when the shapes or kernels do not allow it.
  bool prefillBlocks(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) {
    const size_t iScale = 1 + kIn_, iCond = 2 + kIn_, iFill = 3 + kIn_, iV = 4 + kIn_;
    if (!gemm::fastKernels() || !transK_ || !present(in, 0) || !present(in, iScale) ||
        !present(in, iCond) || !present(in, iFill))
      return false;
    const Tensor &q = in[0], &scale = in[iScale], &cond = in[iCond], &fill = in[iFill];
    if (cond.dtype() != DType::Bool || scale.dtype() != DType::Float32 ||
        fill.dtype() != DType::Float32 || scale.numElements() != 1 || fill.numElements() != 1)
      return false;
    auto gk = product(in, 1, kIn_, q, true);
    if (!gk || gk->rows <= gemm::kDotRows || gk->ldb != gk->k)
      return false;
    const Shape &ss = gk->shape;
    int64_t rank = static_cast<int64_t>(ss.size()), c = gk->n;
    if (c % 8 != 0 || !maskedSoftmaxOverLastAxis(*softmax_, rank))
      return false;
    auto gv = product(in, iV, vIn_, DType::Float32, ss, false);
    if (!gv || gv->groups != gk->groups || gv->rows != gk->rows || gv->k != c ||
        gv->ldb != gv->n || gv->n == 0)
      return false;
    std::vector<int64_t> cstride;
    if (!condStrides(ss, cond.shape(), cstride))
      return false;
    const uint8_t *pc = cond.data<uint8_t>();
    // The cond row of score row i of group gi.
    auto condRow = [&](int64_t gi, int64_t i) {
      int64_t t = gi * gk->rows + i, off = 0;
      for (int64_t d = rank - 2; d >= 0; --d) {
        off += (t % ss[d]) * cstride[d];
        t /= ss[d];
      }
      return pc + off;
    };
    int64_t usedAll = keptEndOfRows(cond, c); // for K^T's packing
    Tensor o = ctx.allocate(DType::Float32, gv->shape);
    const float *pq = q.data<float>(), *pk = in[1].data<float>(), *pv = in[iV].data<float>();
    float *po = o.data<float>();
    float k = scale.data<float>()[0], f = fill.data<float>()[0];
    int64_t rows = gk->rows, hd = gk->k, dv = gv->n;
    // Whole blocks; the last takes the remainder (so no block has few rows).
    int64_t blocks = std::max<int64_t>(1, rows / kBlockRows);
    parallelFor(ctx, gk->groups * blocks, 1, [&](int64_t t0, int64_t t1) {
      thread_local std::vector<float> kScratch, vScratch, sBlock;
      std::vector<const uint8_t *> crow;
      Context serial{nullptr, 1};
      std::shared_ptr<gemm::PackedB> kt;
      int64_t ktGroup = -1;
      for (int64_t t = t0; t < t1; ++t) {
        int64_t gi = t / blocks, b = t % blocks;
        int64_t r0 = b * kBlockRows, r1 = b + 1 == blocks ? rows : r0 + kBlockRows, nb = r1 - r0;
        if (gi != ktGroup && usedAll > 0) {
          kt = gemm::PackedB::pack(serial, pk + gi * c * hd, gemm::Elem::F32, hd, usedAll,
                                   /*transposed=*/true, gemm::Elem::F32, &kScratch);
          ktGroup = gi;
        }
        crow.resize(nb);
        int64_t used = 0;
        for (int64_t i = 0; i < nb; ++i) {
          crow[i] = condRow(gi, r0 + i);
          used = std::max(used, vec::keptEnd(crow[i], c));
        }
        sBlock.resize(nb * c);
        float *sb = sBlock.data();
        if (used > 0)
          gemm::gemmColumns(serial, nb, pq + (gi * rows + r0) * hd, hd, *kt, used, sb, c);
        for (int64_t i = 0; i < nb; ++i)
          maskedSoftmaxRow(crow[i], sb + i * c, sb + i * c, c, k, f);
        int64_t usedV = lastNonZero(sb, nb, c);
        float *ob = po + (gi * rows + r0) * dv;
        if (usedV == 0) { // every P is 0: the full product's sums are +0
          std::fill(ob, ob + nb * dv, 0.f);
          continue;
        }
        auto vt = gemm::PackedB::pack(serial, pv + gi * c * dv, gemm::Elem::F32, usedV, dv,
                                      /*transposed=*/false, gemm::Elem::F32, &vScratch);
        gemm::gemm(serial, nb, sb, c, *vt, ob, dv);
      }
    });
    out[0] = std::move(o);
    return true;
  }

  /// Strides of cond's elements along the scores' dims `ss` (0 where cond
  /// broadcasts); false unless cond has their rank, each dim equal or 1,
  /// and the key position axis whole.
  static bool condStrides(const Shape &ss, const Shape &cs, std::vector<int64_t> &cstride) {
    int64_t r = static_cast<int64_t>(ss.size());
    if (static_cast<int64_t>(cs.size()) != r || r == 0 || cs.back() != ss.back())
      return false;
    cstride.assign(r, 0);
    int64_t step = 1;
    for (int64_t d = r - 1; d >= 0; --d) {
      if (cs[d] != ss[d] && cs[d] != 1)
        return false;
      cstride[d] = cs[d] == 1 ? 0 : step;
      step *= cs[d];
    }
    return true;
  }

  /// Query rows of a head per block of prefillBlocks: the block's scores
  /// and P (32 x ctx_len floats) stay in cache.
  static constexpr int64_t kBlockRows = 32;

  /// P: the scores at the positions the mask keeps, then the masked softmax.
  Tensor scoresAndSoftmax(Context &ctx, std::vector<Tensor> &in) {
    const size_t iScale = 1 + kIn_, iCond = 2 + kIn_, iFill = 3 + kIn_;
    Tensor s;
    if (!validScores(ctx, in, s)) {
      std::vector<Tensor> sin(in.begin(), in.begin() + 1 + kIn_), sout(1);
      scores_->run(ctx, sin, sout);
      s = std::move(sout[0]);
    }
    std::vector<Tensor> min{std::move(s), in[iScale], in[iCond], in[iFill]}, mout(1);
    softmax_->run(ctx, min, mout);
    return std::move(mout[0]);
  }

  /// The scores of the kept positions into `s` (the others 0: the softmax
  /// replaces them by `fill`); false (nothing computed) when the shapes or
  /// kernels do not allow it.
  bool validScores(Context &ctx, std::vector<Tensor> &in, Tensor &s) {
    const Tensor &q = in[0], &cond = in[2 + kIn_];
    if (!gemm::fastKernels() || !transK_ || !present(in, 0) || !present(in, 2 + kIn_) ||
        cond.dtype() != DType::Bool)
      return false;
    auto g = product(in, 1, kIn_, q, true);
    if (!g)
      return false;
    if (g->rows > gemm::kDotRows)
      return prefixScores(ctx, in, *g, s);
    // cond broadcasts to the scores' shape along its size-1 dims, with a
    // key position axis of its own.
    const Shape &ss = g->shape;
    int64_t r = static_cast<int64_t>(ss.size()), c = g->n;
    std::vector<int64_t> cstride;
    if (!condStrides(ss, cond.shape(), cstride))
      return false;
    s = ctx.allocate(DType::Float32, ss);
    const uint8_t *pc = cond.data<uint8_t>();
    const float *pq = q.data<float>(), *pk = in[1].data<float>();
    float *ps = s.data<float>();
    int64_t rows = g->rows, k = g->k, ldb = g->ldb;
    parallelFor(ctx, g->groups, 1, [&](int64_t g0, int64_t g1) {
      thread_local std::vector<float> scratch;
      std::vector<uint8_t> keep(c);
      for (int64_t gi = g0; gi < g1; ++gi) {
        // Positions some row of this head keeps.
        std::fill(keep.begin(), keep.end(), 0);
        for (int64_t i = 0; i < rows; ++i) {
          int64_t t = gi * rows + i, off = 0;
          for (int64_t d = r - 2; d >= 0; --d) {
            off += (t % ss[d]) * cstride[d];
            t /= ss[d];
          }
          for (int64_t j = 0; j < c; ++j)
            keep[j] |= pc[off + j * cstride[r - 1]];
        }
        float *sg = ps + gi * rows * c;
        for (int64_t i = 0; i < rows; ++i)
          std::fill(sg + i * c, sg + (i + 1) * c, 0.f);
        for (int64_t j0 = 0; j0 < c;) {
          if (!keep[j0]) {
            ++j0;
            continue;
          }
          int64_t j1 = j0;
          while (j1 < c && keep[j1])
            ++j1;
          gemm::headGemm(rows, j1 - j0, k, pq + gi * rows * k, k, pk + gi * c * ldb + j0 * ldb,
                         ldb, true, sg + j0, c, scratch);
          j0 = j1;
        }
      }
    });
    return true;
  }

  /// The scores of a prefill (many query rows per head): only key
  /// positions below the last one any row keeps (the cache past the chunk
  /// is masked for every row), as one product per head; the rest 0.
  bool prefixScores(Context &ctx, std::vector<Tensor> &in, const GroupedProduct &g, Tensor &s) {
    const Tensor &q = in[0], &cond = in[2 + kIn_];
    int64_t c = g.n;
    if (cond.shape().empty() || cond.shape().back() != c)
      return false;
    // One bound for every row of every head: cond broadcasts to the
    // scores, so its own rows are all the rows there are.
    int64_t used = keptEndOfRows(cond, c);
    s = ctx.allocate(DType::Float32, g.shape);
    const float *pq = q.data<float>(), *pk = in[1].data<float>();
    float *ps = s.data<float>();
    int64_t rows = g.rows, k = g.k, ldb = g.ldb;
    parallelFor(ctx, g.groups, 1, [&](int64_t g0, int64_t g1) {
      thread_local std::vector<float> scratch;
      for (int64_t gi = g0; gi < g1; ++gi) {
        float *sg = ps + gi * rows * c;
        gemm::headGemm(rows, used, k, pq + gi * rows * k, k, pk + gi * c * ldb, ldb, true, sg, c,
                       scratch);
        for (int64_t i = 0; i < rows; ++i)
          std::fill(sg + i * c + used, sg + (i + 1) * c, 0.f);
      }
    });
    return true;
  }

  /// O = P x V of a prefill over the key positions below the last one with
  /// some P not exactly 0 (NaN included) in the head: the full product's
  /// blocks of kKC positions from 0, the later ones adding exact zeros.
  void prefixValues(Context &ctx, const Tensor &p, const Tensor &v, const GroupedProduct &g,
                    Tensor &o) {
    const float *pp = p.data<float>(), *pv = v.data<float>();
    float *po = o.data<float>();
    int64_t rows = g.rows, c = g.k, d = g.n;
    parallelFor(ctx, g.groups, 1, [&](int64_t g0, int64_t g1) {
      thread_local std::vector<float> scratch;
      for (int64_t gi = g0; gi < g1; ++gi) {
        const float *pg = pp + gi * rows * c;
        int64_t used = lastNonZero(pg, rows, c);
        float *og = po + gi * rows * d;
        if (used == 0) // every P is 0: the full product's sums are +0
          std::fill(og, og + rows * d, 0.f);
        else
          gemm::headGemm(rows, d, used, pg, c, pv + gi * c * d, d, false, og, d, scratch);
      }
    });
  }

  /// O = P x V over the blocks of key positions where P is not all zero;
  /// false (nothing written) when the shapes or kernels do not allow it.
  bool validValues(Context &ctx, std::vector<Tensor> &vin, std::vector<Tensor> &out) {
    if (!gemm::fastKernels() || !present(vin, 0))
      return false;
    const Tensor &p = vin[0];
    auto g = product(vin, 1, vIn_, p, false);
    constexpr int64_t kBlock = gemm::kKCInPlace;
    if (!g || g->ldb != g->n || g->n == 0)
      return false;
    Tensor o = ctx.allocate(DType::Float32, g->shape);
    if (g->rows > 8) {
      prefixValues(ctx, p, vin[1], *g, o);
      out[0] = std::move(o);
      return true;
    }
    const float *pp = p.data<float>(), *pv = vin[1].data<float>();
    float *po = o.data<float>();
    int64_t rows = g->rows, c = g->k, d = g->n;
    int64_t blocks = (c + kBlock - 1) / kBlock;
    parallelFor(ctx, g->groups, 1, [&](int64_t g0, int64_t g1) {
      std::vector<uint8_t> used(c);
      std::vector<float> tile(kBlock * d);
      for (int64_t gi = g0; gi < g1; ++gi) {
        const float *pg = pp + gi * rows * c, *vg = pv + gi * c * d;
        float *og = po + gi * rows * d;
        // A position is used when some P of it is not exactly 0 (NaN
        // included).
        for (int64_t j = 0; j < c; ++j) {
          bool any = false;
          for (int64_t i = 0; i < rows && !any; ++i)
            any = pg[i * c + j] != 0.f;
          used[j] = any;
        }
        bool first = true;
        // Blocks [b0, b1) of V read where they lie, added in order.
        auto product = [&](const float *v, int64_t j0, int64_t j1) {
          gemm::gemmInPlace(Context{nullptr, 1}, rows, pg + j0, c, v, gemm::Elem::F32, j1 - j0, d,
                            og, d, gemm::Impl::Auto, !first);
          first = false;
        };
        int64_t run = -1; // first position of the run of whole blocks
        for (int64_t b = 0; b <= blocks; ++b) {
          int64_t j0 = b * kBlock, j1 = std::min(c, j0 + kBlock);
          int64_t count = b < blocks ? std::count(used.begin() + j0, used.begin() + j1, 1) : 0;
          if (count == j1 - j0 && b < blocks) {
            if (run < 0)
              run = j0;
            continue;
          }
          if (run >= 0)
            product(vg + run * d, run, std::min(c, j0));
          run = -1;
          if (count == 0)
            continue;
          // A block with unused positions: their rows of V read as zeros
          // (0 x 0 adds what 0 x v adds for a finite v, and they stay unread).
          for (int64_t j = j0; j < j1; ++j)
            if (used[j])
              std::copy(vg + j * d, vg + (j + 1) * d, tile.begin() + (j - j0) * d);
            else
              std::fill(tile.begin() + (j - j0) * d, tile.begin() + (j - j0 + 1) * d, 0.f);
          product(tile.data(), j0, j1);
        }
        if (first) // every P is 0: the full product's sums are +0
          std::fill(og, og + rows * d, 0.f);
      }
    });
    out[0] = std::move(o);
    return true;
  }

  std::unique_ptr<Kernel> scores_, softmax_, values_;
  size_t kIn_, vIn_;
  bool transK_;
};

} // namespace

std::unique_ptr<Kernel> makeAttentionKernel(std::unique_ptr<Kernel> scores, size_t kInputs,
                                            std::unique_ptr<Kernel> softmax,
                                            std::unique_ptr<Kernel> values, size_t vInputs,
                                            bool transK) {
  return std::make_unique<AttentionKernel>(std::move(scores), kInputs, std::move(softmax),
                                           std::move(values), vInputs, transK);
}

} // namespace qeff::runtime::host
