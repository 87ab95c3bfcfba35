//===- NNKernels.cpp - MatMul, Gemm, Softmax, reductions, normalisation ----===//
//
// Matrix products go through OpenBLAS (cblas_sgemm); a batched MatMul whose B
// has no batch dims is one sgemm over the folded batch. With the AVX-512
// kernels (Gemm.h), the per-head products of a batched MatMul run one head
// per task on the pool; a MatMul by a constant weight is replaced at load by
// the packed kernel (PackedMatMul.cpp).
//
//===----------------------------------------------------------------------===//

#include "runtime/host/Broadcast.h"
#include "runtime/host/Gemm.h"
#include "runtime/host/Kernel.h"
#include "runtime/host/VectorMath.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <type_traits>

namespace qeff::runtime::host {
namespace {

void sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
           int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
  if (m == 0 || n == 0)
    return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        c[i * ldc + j] = beta == 0.f ? 0.f : beta * c[i * ldc + j];
    return;
  }
  if (m == 1 && !ta) {
    // Row vector times matrix: sgemv on B (B^T x when B is not transposed).
    cblas_sgemv(CblasRowMajor, tb ? CblasNoTrans : CblasTrans, tb ? n : k, tb ? k : n,
                alpha, b, ldb, a, 1, beta, c, 1);
    return;
  }
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

/// MatMul; with transB, B is given with its last two dims swapped (the input
/// of a Transpose the executor folded into this node), read as B^T by sgemm.
class MatMulKernel : public Kernel {
public:
  explicit MatMulKernel(bool transB = false) : transB_(transB) {}
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0) && present(in, 1), "needs A and B");
    const Tensor &a = in[0], &b = in[1];
    requireFloat(a, "A");
    requireFloat(b, "B");
    Shape as = a.shape(), bs = b.shape();
    QEFF_CHECK(!as.empty() && !bs.empty(), "MatMul of a scalar");
    QEFF_CHECK(!transB_ || bs.size() >= 2, "transposed B of rank < 2 (internal error)");
    if (transB_)
      std::swap(bs[bs.size() - 1], bs[bs.size() - 2]);
    bool vecA = as.size() == 1, vecB = bs.size() == 1;
    if (vecA) as.insert(as.begin(), 1);
    if (vecB) bs.push_back(1);
    int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
    QEFF_CHECK(bs[bs.size() - 2] == k, "shapes " + shapeString(a.shape()) + " and " +
                                      shapeString(bs) + " do not match");
    // B^T stored as [.., n, k]: leading dimension k.
    int64_t ldb = transB_ ? k : n;
    Shape aBatch(as.begin(), as.end() - 2), bBatch(bs.begin(), bs.end() - 2);
    Shape batch = broadcastShapes(aBatch, bBatch);
    Shape shape = batch;
    if (!vecA) shape.push_back(m);
    if (!vecB) shape.push_back(n);
    Tensor res = ctx.allocate(DType::Float32, shape);
    const float *pa = a.data<float>(), *pb = b.data<float>();
    float *pc = res.data<float>();
    int64_t batches = numElements(batch);
    if (numElements(bBatch) == 1 && aBatch == batch) {
      sgemm(false, transB_, m * batches, n, k, 1.f, pa, k, pb, ldb, 0.f, pc, n);
    } else if (batches > 1 && gemm::fastKernels()) {
      // The attention's per-head products: one head per task on the pool
      // (instead of one multithreaded OpenBLAS call per head).
      auto sa = broadcastStrides(aBatch, batch), sb = broadcastStrides(bBatch, batch);
      std::vector<int64_t> offA(batches), offB(batches);
      forEachIndex(batch, {sa, sb}, [&](int64_t i, const int64_t *offs) {
        offA[i] = offs[0];
        offB[i] = offs[1];
      });
      parallelFor(ctx, batches, 1, [&](int64_t b0, int64_t b1) {
        thread_local std::vector<float> scratch;
        for (int64_t i = b0; i < b1; ++i)
          gemm::headGemm(m, n, k, pa + offA[i] * m * k, k, pb + offB[i] * k * n, ldb, transB_,
                         pc + i * m * n, n, scratch);
      });
    } else {
      auto sa = broadcastStrides(aBatch, batch), sb = broadcastStrides(bBatch, batch);
      forEachIndex(batch, {sa, sb}, [&](int64_t i, const int64_t *offs) {
        sgemm(false, transB_, m, n, k, 1.f, pa + offs[0] * m * k, k, pb + offs[1] * k * n,
              ldb, 0.f, pc + i * m * n, n);
      });
    }
    out[0] = std::move(res);
  }

private:
  bool transB_;
};

class GemmKernel : public Kernel {
public:
  GemmKernel(float alpha, float beta, bool ta, bool tb)
      : alpha_(alpha), beta_(beta), ta_(ta), tb_(tb) {}
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0) && present(in, 1), "needs A and B");
    const Tensor &a = in[0], &b = in[1];
    requireFloat(a, "A");
    requireFloat(b, "B");
    QEFF_CHECK(a.rank() == 2 && b.rank() == 2, "A and B must be matrices");
    int64_t m = ta_ ? a.dim(1) : a.dim(0), k = ta_ ? a.dim(0) : a.dim(1);
    int64_t kb = tb_ ? b.dim(1) : b.dim(0), n = tb_ ? b.dim(0) : b.dim(1);
    QEFF_CHECK(k == kb, "shapes " + shapeString(a.shape()) + " and " + shapeString(b.shape()) +
                       " do not match");
    Tensor res = ctx.allocate(DType::Float32, {m, n});
    float beta = 0.f;
    if (present(in, 2) && beta_ != 0.f) {
      const Tensor &c = in[2];
      requireFloat(c, "C");
      Shape cs = broadcastShapes(c.shape(), {m, n});
      QEFF_CHECK(cs == Shape({m, n}), "C does not broadcast to " + shapeString({m, n}));
      BroadcastPlan plan({m, n}, {&c.shape()});
      float *pr = res.data<float>();
      const float *pc = c.data<float>();
      int64_t s = plan.innerStride[0];
      plan.forEachRow(0, plan.rows, [&](int64_t o, const int64_t *offs) {
        for (int64_t i = 0; i < plan.inner; ++i)
          pr[o + i] = beta_ * pc[offs[0] + i * s];
      });
      beta = 1.f;
    }
    sgemm(ta_, tb_, m, n, k, alpha_, a.data<float>(), a.dim(1), b.data<float>(), b.dim(1),
          beta, res.data<float>(), n);
    out[0] = std::move(res);
  }

private:
  float alpha_, beta_;
  bool ta_, tb_;
};

class SoftmaxKernel : public Kernel {
public:
  SoftmaxKernel(int64_t axis, bool log) : axis_(axis), log_(log) {}
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0), "missing input");
    Tensor &x = in[0];
    requireFloat(x, "input");
    int64_t axis = normalizeAxis(axis_, x.rank());
    int64_t outer = prod(x.shape(), 0, axis), n = x.dim(axis),
            inner = prod(x.shape(), axis + 1, x.rank());
    Tensor res = ctx.reuseOrAllocate(x, DType::Float32, x.shape());
    const float *p = x.data<float>();
    float *q = res.data<float>();
    bool logMode = log_;
    parallelFor(ctx, outer * inner, std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1)),
                [&](int64_t b, int64_t e) {
      if (inner == 1) { // the usual case: contiguous rows
        for (int64_t line = b; line < e; ++line)
          vec::softmaxRow(p + line * n, q + line * n, n, logMode);
        return;
      }
      for (int64_t line = b; line < e; ++line) {
        int64_t o = line / inner, i = line % inner;
        const float *src = p + o * n * inner + i;
        float *dst = q + o * n * inner + i;
        float mx = -std::numeric_limits<float>::infinity();
        for (int64_t j = 0; j < n; ++j)
          mx = std::max(mx, src[j * inner]);
        float sum = 0.f;
        for (int64_t j = 0; j < n; ++j) {
          float v = std::exp(src[j * inner] - mx);
          if (!logMode)
            dst[j * inner] = v;
          sum += v;
        }
        if (logMode) {
          float l = std::log(sum);
          for (int64_t j = 0; j < n; ++j)
            dst[j * inner] = src[j * inner] - mx - l;
        } else {
          float inv = 1.f / sum;
          for (int64_t j = 0; j < n; ++j)
            dst[j * inner] *= inv;
        }
      }
    });
    out[0] = std::move(res);
  }

private:
  int64_t axis_;
  bool log_;
};

/// Softmax(Where(cond, S * scale, fill)) with scale and fill single-element
/// constants: the attention's scale, mask and softmax, fused by the executor
/// (fp32 numerics only) so that the scores are read and written once instead
/// of three times. Same float operations as the three nodes.
class MaskedSoftmaxKernel : public Kernel {
public:
  MaskedSoftmaxKernel(int64_t axis, bool log) : softmax_(axis, log), axis_(axis), log_(log) {}
  /// Whether it is a Softmax over the last of `rank` dims (what
  /// maskedSoftmaxRow computes, row by row).
  bool lastAxisSoftmax(int64_t rank) const {
    return !log_ && rank > 0 && normalizeAxis(axis_, rank) == rank - 1;
  }
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0) && present(in, 1) && present(in, 2) && present(in, 3),
          "needs scores, scale, condition and fill");
    Tensor &sc = in[0];
    const Tensor &scale = in[1], &cond = in[2], &fill = in[3];
    requireFloat(sc, "scores");
    requireFloat(scale, "scale");
    requireFloat(fill, "fill");
    QEFF_CHECK(cond.dtype() == DType::Bool, "condition must be bool");
    QEFF_CHECK(scale.numElements() == 1 && fill.numElements() == 1,
          "scale and fill must have one element (internal error)");
    Shape shape = broadcastShapes(broadcastShapes(cond.shape(),
                                                  broadcastShapes(sc.shape(), scale.shape())),
                                  fill.shape());
    Tensor w = sc.shape() == shape ? ctx.reuseOrAllocate(sc, DType::Float32, shape)
                                   : ctx.allocate(DType::Float32, shape);
    BroadcastPlan plan(shape, {&cond.shape(), &sc.shape()});
    const uint8_t *pc = cond.data<uint8_t>();
    const float *ps = sc.data<float>();
    float *pw = w.data<float>();
    float k = scale.data<float>()[0], f = fill.data<float>()[0];
    int64_t inner = plan.inner, icn = plan.innerStride[0], isc = plan.innerStride[1];
    int64_t grainRows = std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(inner, 1));
    int64_t len = shape.empty() ? 0 : shape.back();
    if (!log_ && icn == 1 && isc == 1 && len > 0 && len % 8 == 0 && inner % len == 0 &&
        normalizeAxis(axis_, static_cast<int64_t>(shape.size())) ==
            static_cast<int64_t>(shape.size()) - 1) {
      // Rows of a prefill chunk against a longer cache: each row's softmax
      // over the positions up to its last kept one, rounded up to 8 (the
      // vector lanes and no scalar tail, so every partial sum is as over
      // the whole row), when the fill past them is exactly 0 after exp: the
      // whole row's maximum and sums, the rest written 0 as it would be.
      parallelFor(ctx, plan.rows, std::max<int64_t>(1, grainRows), [&](int64_t r0, int64_t r1) {
        plan.forEachRow(r0, r1, [&](int64_t o, const int64_t *offs) {
          for (int64_t s = 0; s < inner; s += len)
            maskedSoftmaxRow(pc + offs[0] + s, ps + offs[1] + s, pw + o + s, len, k, f);
        });
      });
      out[0] = std::move(w);
      sc = Tensor();
      return;
    }
    parallelFor(ctx, plan.rows, grainRows, [&](int64_t r0, int64_t r1) {
      plan.forEachRow(r0, r1, [&](int64_t o, const int64_t *offs) {
        const uint8_t *c = pc + offs[0];
        const float *x = ps + offs[1];
        float *z = pw + o;
        if (icn && isc) {
          for (int64_t i = 0; i < inner; ++i)
            z[i] = c[i] ? x[i] * k : f;
        } else {
          for (int64_t i = 0; i < inner; ++i)
            z[i] = c[i * icn] ? x[i * isc] * k : f;
        }
      });
    });
    std::vector<Tensor> softIn{std::move(w)};
    sc = Tensor();
    softmax_.run(ctx, softIn, out);
  }

private:
  SoftmaxKernel softmax_;
  int64_t axis_;
  bool log_;
};

enum class Red { Sum, Mean, Max, Min, Prod };

class ReduceKernel : public Kernel {
public:
  ReduceKernel(Red op, std::vector<int64_t> axes, bool hasAttrAxes, bool keepDims,
               bool noopWithEmpty)
      : op_(op), attrAxes_(std::move(axes)), hasAttrAxes_(hasAttrAxes), keep_(keepDims),
        noop_(noopWithEmpty) {}
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0), "missing input");
    const Tensor &x = in[0];
    std::vector<int64_t> axes = attrAxes_;
    if (!hasAttrAxes_ && present(in, 1))
      axes = indexValues(in[1], "axes");
    int64_t r = x.rank();
    if (axes.empty() && noop_) {
      out[0] = x;
      return;
    }
    std::vector<bool> red(r, axes.empty());
    for (int64_t a : axes)
      red[normalizeAxis(a, r)] = true;
    Shape full = x.shape(), shape;
    for (int64_t d = 0; d < r; ++d) {
      if (red[d]) {
        full[d] = 1;
        if (keep_)
          shape.push_back(1);
      } else {
        shape.push_back(x.dim(d));
      }
    }
    int64_t count = 1;
    for (int64_t d = 0; d < r; ++d)
      if (red[d])
        count *= x.dim(d);
    // ONNX: an empty reduction gives the op's identity (0, 1, -inf / the
    // type's lowest for Max, +inf / its highest for Min); only the mean of
    // nothing is undefined.
    QEFF_CHECK(count > 0 || op_ != Red::Mean, "ReduceMean over an empty axis");
    Tensor res = ctx.allocate(x.dtype(), shape);
    // A suffix of reduced dims is the common case (norms over the hidden dim).
    int64_t firstRed = r;
    while (firstRed > 0 && red[firstRed - 1])
      --firstRed;
    bool suffix = true;
    for (int64_t d = 0; d < firstRed; ++d)
      suffix &= !red[d];
    dispatchType(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      constexpr bool isBool = std::is_same_v<T, uint8_t>;
      if (isBool && op_ != Red::Max && op_ != Red::Min) {
        fail("reduction of bool (only ReduceMax and ReduceMin take bool)");
      } else {
        using Acc = std::conditional_t<std::is_floating_point_v<T>, float, T>;
        Acc init = op_ == Red::Max ? std::numeric_limits<Acc>::lowest()
                   : op_ == Red::Min ? std::numeric_limits<Acc>::max()
                   : op_ == Red::Prod ? Acc(1) : Acc(0);
        if constexpr (isBool) // any / all: false and true are the identities
          init = op_ == Red::Min ? Acc(1) : Acc(0);
        if constexpr (std::is_floating_point_v<T>) {
          if (op_ == Red::Max)
            init = -std::numeric_limits<float>::infinity();
          else if (op_ == Red::Min)
            init = std::numeric_limits<float>::infinity();
        }
        auto step = [this](Acc a, T v) -> Acc {
          switch (op_) {
          case Red::Sum: case Red::Mean: return wrapAdd<Acc>(a, v);
          case Red::Max: return std::max<Acc>(a, v);
          case Red::Min: return std::min<Acc>(a, v);
          case Red::Prod: return wrapMul<Acc>(a, v);
          }
          return a;
        };
        const T *p = x.data<T>();
        T *q = res.data<T>();
        int64_t outN = res.numElements();
        if (suffix) {
          for (int64_t o = 0; o < outN; ++o) {
            Acc a = init;
            const T *row = p + o * count;
            for (int64_t j = 0; j < count; ++j)
              a = step(a, row[j]);
            q[o] = T(op_ == Red::Mean ? a / Acc(count) : a);
          }
        } else {
          std::vector<Acc> acc(outN, init);
          auto os = broadcastStrides(full, x.shape());
          forEachIndex(x.shape(), {os}, [&](int64_t i, const int64_t *offs) {
            acc[offs[0]] = step(acc[offs[0]], p[i]);
          });
          for (int64_t o = 0; o < outN; ++o)
            q[o] = T(op_ == Red::Mean ? acc[o] / Acc(count) : acc[o]);
        }
      }
    });
    out[0] = std::move(res);
  }

private:
  Red op_;
  std::vector<int64_t> attrAxes_;
  bool hasAttrAxes_, keep_, noop_;
};

class ArgMaxKernel : public Kernel {
public:
  ArgMaxKernel(bool isMax, int64_t axis, bool keep, bool last)
      : max_(isMax), axis_(axis), keep_(keep), last_(last) {}
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0), "missing input");
    const Tensor &x = in[0];
    int64_t axis = normalizeAxis(axis_, x.rank());
    int64_t outer = prod(x.shape(), 0, axis), n = x.dim(axis),
            inner = prod(x.shape(), axis + 1, x.rank());
    QEFF_CHECK(n > 0, "ArgMax over an empty axis");
    Shape shape = x.shape();
    if (keep_) shape[axis] = 1;
    else shape.erase(shape.begin() + axis);
    Tensor res = ctx.allocate(DType::Int64, shape);
    dispatchType(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T *p = x.data<T>();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          const T *src = p + o * n * inner + i;
          int64_t best = 0;
          for (int64_t j = 1; j < n; ++j) {
            T v = src[j * inner], b = src[best * inner];
            bool better = max_ ? (last_ ? v >= b : v > b) : (last_ ? v <= b : v < b);
            if (better)
              best = j;
          }
          res.data<int64_t>()[o * inner + i] = best;
        }
    });
    out[0] = std::move(res);
  }

private:
  bool max_;
  int64_t axis_;
  bool keep_, last_;
};

class TopKKernel : public Kernel {
public:
  TopKKernel(int64_t axis, bool largest, bool sorted)
      : axis_(axis), largest_(largest), sorted_(sorted) {}
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0) && present(in, 1), "needs X and K");
    const Tensor &x = in[0];
    QEFF_CHECK(in[1].numElements() == 1, "K must have one element");
    int64_t k = indexValues(in[1], "K")[0];
    int64_t axis = normalizeAxis(axis_, x.rank());
    int64_t outer = prod(x.shape(), 0, axis), n = x.dim(axis),
            inner = prod(x.shape(), axis + 1, x.rank());
    QEFF_CHECK(k >= 0 && k <= n, "K = " + std::to_string(k) + " exceeds the axis size " +
                                std::to_string(n));
    Shape shape = x.shape();
    shape[axis] = k;
    Tensor vals = ctx.allocate(x.dtype(), shape);
    Tensor idxs = ctx.allocate(DType::Int64, shape);
    dispatchType(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T *p = x.data<T>();
      std::vector<int64_t> order(n);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          const T *src = p + o * n * inner + i;
          std::iota(order.begin(), order.end(), 0);
          auto cmp = [&](int64_t l, int64_t r) {
            T a = src[l * inner], b = src[r * inner];
            if (a != b)
              return largest_ ? a > b : a < b;
            return l < r;
          };
          std::partial_sort(order.begin(), order.begin() + k, order.end(), cmp);
          for (int64_t j = 0; j < k; ++j) {
            int64_t pos = (o * k + j) * inner + i;
            vals.data<T>()[pos] = src[order[j] * inner];
            idxs.data<int64_t>()[pos] = order[j];
          }
        }
    });
    (void)sorted_;
    out[0] = std::move(vals);
    if (out.size() > 1)
      out[1] = std::move(idxs);
  }

private:
  int64_t axis_;
  bool largest_, sorted_;
};

class CumSumKernel : public Kernel {
public:
  CumSumKernel(bool exclusive, bool reverse) : exclusive_(exclusive), reverse_(reverse) {}
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0) && present(in, 1), "needs x and axis");
    const Tensor &x = in[0];
    QEFF_CHECK(x.rank() >= 1, "CumSum of a scalar (ONNX: rank >= 1)");
    QEFF_CHECK(in[1].numElements() == 1, "axis must be a scalar");
    int64_t axis = normalizeAxis(indexValues(in[1], "axis")[0], x.rank());
    int64_t outer = prod(x.shape(), 0, axis), n = x.dim(axis),
            inner = prod(x.shape(), axis + 1, x.rank());
    Tensor res = ctx.allocate(x.dtype(), x.shape());
    dispatchType(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, uint8_t>) {
        fail("CumSum of bool");
      } else {
        const T *p = x.data<T>();
        T *q = res.data<T>();
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t i = 0; i < inner; ++i) {
            T acc = 0;
            for (int64_t jj = 0; jj < n; ++jj) {
              int64_t j = reverse_ ? n - 1 - jj : jj;
              int64_t pos = (o * n + j) * inner + i;
              if (exclusive_) {
                q[pos] = acc;
                acc = wrapAdd(acc, p[pos]);
              } else {
                acc = wrapAdd(acc, p[pos]);
                q[pos] = acc;
              }
            }
          }
      }
    });
    out[0] = std::move(res);
  }

private:
  bool exclusive_, reverse_;
};

class LayerNormKernel : public Kernel {
public:
  LayerNormKernel(int64_t axis, float eps) : axis_(axis), eps_(eps) {}
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0) && present(in, 1), "needs X and Scale");
    const Tensor &x = in[0], &scale = in[1];
    requireFloat(x, "X");
    requireFloat(scale, "Scale");
    int64_t axis = normalizeAxis(axis_, x.rank());
    int64_t rows = prod(x.shape(), 0, axis), n = prod(x.shape(), axis, x.rank());
    Shape normShape(x.shape().begin() + axis, x.shape().end());
    auto checkParam = [&](const Tensor &t, const char *what) {
      QEFF_CHECK(broadcastShapes(t.shape(), normShape) == normShape,
            std::string(what) + " of shape " + shapeString(t.shape()) +
                " does not broadcast to " + shapeString(normShape));
    };
    checkParam(scale, "Scale");
    std::vector<float> sc(n), bias(n, 0.f);
    {
      auto expand = [&](const Tensor &t, std::vector<float> &dst) {
        BroadcastPlan plan(normShape, {&t.shape()});
        int64_t s = plan.innerStride[0];
        plan.forEachRow(0, plan.rows, [&](int64_t o, const int64_t *offs) {
          for (int64_t i = 0; i < plan.inner; ++i)
            dst[o + i] = t.data<float>()[offs[0] + i * s];
        });
      };
      expand(scale, sc);
      if (present(in, 2)) {
        requireFloat(in[2], "B");
        checkParam(in[2], "B");
        expand(in[2], bias);
      }
    }
    Shape statShape = x.shape();
    for (int64_t d = axis; d < x.rank(); ++d)
      statShape[d] = 1;
    Tensor res = ctx.allocate(DType::Float32, x.shape());
    Tensor mean = ctx.allocate(DType::Float32, statShape);
    Tensor inv = ctx.allocate(DType::Float32, statShape);
    const float *p = x.data<float>();
    float *q = res.data<float>();
    for (int64_t r = 0; r < rows; ++r) {
      const float *row = p + r * n;
      double s = 0;
      for (int64_t j = 0; j < n; ++j)
        s += row[j];
      float mu = static_cast<float>(s / n);
      double v = 0;
      for (int64_t j = 0; j < n; ++j)
        v += double(row[j] - mu) * double(row[j] - mu);
      float is = 1.f / std::sqrt(static_cast<float>(v / n) + eps_);
      for (int64_t j = 0; j < n; ++j)
        q[r * n + j] = (row[j] - mu) * is * sc[j] + bias[j];
      mean.data<float>()[r] = mu;
      inv.data<float>()[r] = is;
    }
    out[0] = std::move(res);
    if (out.size() > 1)
      out[1] = std::move(mean);
    if (out.size() > 2)
      out[2] = std::move(inv);
  }

private:
  int64_t axis_;
  float eps_;
};

std::unique_ptr<Kernel> makeReduce(Red op, const Attrs &a) {
  a.allowOnly({"axes", "keepdims", "noop_with_empty_axes"});
  return std::make_unique<ReduceKernel>(op, a.getInts("axes"), a.has("axes"),
                                        a.getInt("keepdims", 1) != 0,
                                        a.getInt("noop_with_empty_axes", 0) != 0);
}

} // namespace

std::unique_ptr<Kernel> makeMatMulKernel(bool transB) {
  return std::make_unique<MatMulKernel>(transB);
}

void maskedSoftmaxRow(const uint8_t *c, const float *x, float *z, int64_t len, float scale,
                      float fill) {
  int64_t kept = vec::keptEnd(c, len);
  int64_t n = kept == 0 ? len : std::min(len, (kept + 7) / 8 * 8);
  bool nan = false;
  float mx = vec::maskedScale(c, x, z, n, scale, fill, nan);
  if (n < len) {
    // A NaN makes the whole row's sum NaN, and with it every output.
    float probe[2] = {mx, fill}, p[2];
    vec::softmaxRow(probe, p, 2, false);
    if (nan || !(mx >= fill) || p[1] != 0.f) {
      vec::maskedScale(c + n, x + n, z + n, len - n, scale, fill, nan);
      n = len;
    }
  }
  vec::softmaxRow(z, z, n, false);
  std::fill(z + n, z + len, 0.f);
}

bool maskedSoftmaxOverLastAxis(const Kernel &k, int64_t rank) {
  auto *m = dynamic_cast<const MaskedSoftmaxKernel *>(&k);
  return m && m->lastAxisSoftmax(rank);
}

std::unique_ptr<Kernel> makeMaskedSoftmaxKernel(int64_t axis, bool log) {
  return std::make_unique<MaskedSoftmaxKernel>(axis, log);
}

void registerNNKernels(KernelRegistry &r) {
  r["MatMul"] = [](const onnx::NodeProto &, const Attrs &a) -> std::unique_ptr<Kernel> {
    a.allowOnly({});
    return std::make_unique<MatMulKernel>();
  };
  r["Gemm"] = [](const onnx::NodeProto &, const Attrs &a) -> std::unique_ptr<Kernel> {
    a.allowOnly({"alpha", "beta", "transA", "transB"});
    return std::make_unique<GemmKernel>(a.getFloat("alpha", 1.f), a.getFloat("beta", 1.f),
                                        a.getInt("transA", 0) != 0,
                                        a.getInt("transB", 0) != 0);
  };
  r["Softmax"] = [](const onnx::NodeProto &, const Attrs &a) -> std::unique_ptr<Kernel> {
    a.allowOnly({"axis"});
    return std::make_unique<SoftmaxKernel>(a.getInt("axis", -1), false);
  };
  r["LogSoftmax"] = [](const onnx::NodeProto &, const Attrs &a) -> std::unique_ptr<Kernel> {
    a.allowOnly({"axis"});
    return std::make_unique<SoftmaxKernel>(a.getInt("axis", -1), true);
  };
  r["ReduceSum"] = [](const onnx::NodeProto &, const Attrs &a) { return makeReduce(Red::Sum, a); };
  r["ReduceMean"] = [](const onnx::NodeProto &, const Attrs &a) { return makeReduce(Red::Mean, a); };
  r["ReduceMax"] = [](const onnx::NodeProto &, const Attrs &a) { return makeReduce(Red::Max, a); };
  r["ReduceMin"] = [](const onnx::NodeProto &, const Attrs &a) { return makeReduce(Red::Min, a); };
  r["ReduceProd"] = [](const onnx::NodeProto &, const Attrs &a) { return makeReduce(Red::Prod, a); };
  for (bool isMax : {true, false})
    r[isMax ? "ArgMax" : "ArgMin"] = [isMax](const onnx::NodeProto &,
                                             const Attrs &a) -> std::unique_ptr<Kernel> {
      a.allowOnly({"axis", "keepdims", "select_last_index"});
      return std::make_unique<ArgMaxKernel>(isMax, a.getInt("axis", 0),
                                            a.getInt("keepdims", 1) != 0,
                                            a.getInt("select_last_index", 0) != 0);
    };
  r["TopK"] = [](const onnx::NodeProto &, const Attrs &a) -> std::unique_ptr<Kernel> {
    a.allowOnly({"axis", "largest", "sorted"});
    return std::make_unique<TopKKernel>(a.getInt("axis", -1), a.getInt("largest", 1) != 0,
                                        a.getInt("sorted", 1) != 0);
  };
  r["CumSum"] = [](const onnx::NodeProto &, const Attrs &a) -> std::unique_ptr<Kernel> {
    a.allowOnly({"exclusive", "reverse"});
    return std::make_unique<CumSumKernel>(a.getInt("exclusive", 0) != 0,
                                          a.getInt("reverse", 0) != 0);
  };
  r["LayerNormalization"] = [](const onnx::NodeProto &,
                               const Attrs &a) -> std::unique_ptr<Kernel> {
    a.allowOnly({"axis", "epsilon", "stash_type"});
    int64_t stash = a.getInt("stash_type", 1);
    QEFF_CHECK(stash == 1, "stash_type " + std::to_string(stash) + " (only 1 = float)");
    return std::make_unique<LayerNormKernel>(a.getInt("axis", -1), a.getFloat("epsilon", 1e-5f));
  };
}

} // namespace qeff::runtime::host
