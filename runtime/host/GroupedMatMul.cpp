//===- GroupedMatMul.cpp - MatMul by a repeated key/value head -------------===//
//
// Grouped-query attention repeats each key/value head for the query heads
// that share it (HF's repeat_kv): Unsqueeze, Expand of the new dim, Reshape
// merging it into the head dim, then the attention products read the
// repeated cache. The executor fuses MatMul(A, Reshape(Expand(X, s), r))
// into this kernel at load (HostPlan.cpp, fusePlan): the query heads of one
// group are consecutive rows of A, so each group is one product of
// `rep * m` rows with its head of X, read where it lies, instead of copying
// the cache `rep` times per step and running `rep` one-row products on the
// copies.
//
// The shapes are only known at run time and are checked then: the fast path
// needs the Expand to repeat one size-1 dim just before the matrix dims and
// the Reshape to merge it into the dim before it, A's batch dims equal to
// the result's, no empty dims, and the vector kernels. Anything else runs
// the three nodes as written (same results, same errors).
//
//===----------------------------------------------------------------------===//

#include "runtime/host/Gemm.h"
#include "runtime/host/Kernel.h"

namespace qeff::runtime::host {
namespace {

class GroupedMatMulKernel : public Kernel {
public:
  GroupedMatMulKernel(bool transB, std::unique_ptr<Kernel> expand,
                      std::unique_ptr<Kernel> reshape)
      : transB_(transB), expand_(std::move(expand)), reshape_(std::move(reshape)),
        matmul_(makeMatMulKernel(transB)) {}

  // in: A, X (Expand's input), Expand's shape, Reshape's shape.
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(in.size() == 4, "grouped MatMul needs 4 inputs (internal error)");
    if (gemm::fastKernels() && grouped(ctx, in, out))
      return;
    std::vector<Tensor> ein{in[1], in[2]}, eout(1);
    expand_->run(ctx, ein, eout);
    std::vector<Tensor> rin{std::move(eout[0]), in[3]}, rout(1);
    reshape_->run(ctx, rin, rout);
    std::vector<Tensor> min{in[0], std::move(rout[0])};
    matmul_->run(ctx, min, out);
  }

private:
  /// The product without the copies when the shapes allow it; false (and
  /// nothing written) otherwise.
  bool grouped(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) {
    for (size_t i = 0; i < 4; ++i)
      if (!present(in, i))
        return false;
    auto g = groupedProduct(in[0].dtype(), in[0].shape(), in[1], in[2], in[3], transB_);
    if (!g)
      return false;
    Tensor res = ctx.allocate(DType::Float32, g->shape);
    const float *pa = in[0].data<float>(), *px = in[1].data<float>();
    float *pc = res.data<float>();
    int64_t rows = g->rows, k = g->k, n = g->n;
    parallelFor(ctx, g->groups, 1, [&](int64_t g0, int64_t g1) {
      thread_local std::vector<float> scratch;
      for (int64_t i = g0; i < g1; ++i)
        gemm::headGemm(rows, n, k, pa + i * rows * k, k, px + i * k * n, g->ldb, transB_,
                       pc + i * rows * n, n, scratch);
    });
    out[0] = std::move(res);
    return true;
  }

  bool transB_;
  std::unique_ptr<Kernel> expand_, reshape_, matmul_;
};

} // namespace

std::optional<GroupedProduct> groupedProduct(DType aType, const Shape &aShape, const Tensor &x,
                                             const Tensor &expandShape,
                                             const Tensor &reshapeShape, bool transB) {
  if (aType != DType::Float32 || x.dtype() != DType::Float32 ||
      expandShape.dtype() != DType::Int64 || reshapeShape.dtype() != DType::Int64 ||
      expandShape.rank() != 1 || reshapeShape.rank() != 1)
    return std::nullopt;
  // Expand: X [p.., g, 1, r0, r1] -> E [p.., g, rep, r0, r1], same rank.
  const Shape &xs = x.shape();
  size_t rank = xs.size();
  std::vector<int64_t> es = indexValues(expandShape, "shape");
  if (rank < 4 || es.size() != rank)
    return std::nullopt;
  size_t j = rank - 3;
  Shape e = xs;
  for (size_t d = 0; d < rank; ++d) {
    if (xs[d] <= 0)
      return std::nullopt;
    if (d == j) {
      if (xs[d] != 1 || es[d] < 1)
        return std::nullopt;
      e[d] = es[d];
    } else if (es[d] != 1 && es[d] != xs[d]) {
      return std::nullopt;
    }
  }
  int64_t rep = e[j];
  // Reshape: E -> R [p.., g * rep, r0, r1] (allowzero = 0: a 0 copies E's dim).
  Shape r(e.begin(), e.begin() + j - 1);
  r.push_back(e[j - 1] * rep);
  r.push_back(e[j + 1]);
  r.push_back(e[j + 2]);
  std::vector<int64_t> rs = indexValues(reshapeShape, "shape");
  if (rs.size() != r.size())
    return std::nullopt;
  int infer = 0;
  for (size_t d = 0; d < r.size(); ++d) {
    bool same = rs[d] == r[d] || (rs[d] == 0 && e[d] == r[d]);
    if (rs[d] == -1 && ++infer == 1)
      same = true; // every other dim matches and nothing is empty
    if (!same)
      return std::nullopt;
  }
  // A [p.., g * rep, m, k] times R's matrices [k, n] (or [n, k] with transB).
  const Shape &as = aShape;
  if (as.size() != r.size() || !std::equal(as.begin(), as.end() - 2, r.begin()))
    return std::nullopt;
  GroupedProduct g;
  int64_t m = as[as.size() - 2];
  g.k = as.back();
  g.n = transB ? r[r.size() - 2] : r.back();
  if ((transB ? r.back() : r[r.size() - 2]) != g.k || m == 0 || g.k == 0)
    return std::nullopt;
  g.shape.assign(r.begin(), r.end() - 2);
  g.shape.push_back(m);
  g.shape.push_back(g.n);
  g.groups = prod(xs, 0, j);
  g.rows = rep * m;
  g.ldb = transB ? g.k : g.n;
  return g;
}

std::unique_ptr<Kernel> makeGroupedMatMulKernel(bool transB, std::unique_ptr<Kernel> expand,
                                                std::unique_ptr<Kernel> reshape) {
  return std::make_unique<GroupedMatMulKernel>(transB, std::move(expand), std::move(reshape));
}

} // namespace qeff::runtime::host
