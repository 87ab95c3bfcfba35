//===- IndexKernels.cpp - Gather and Scatter kernels ----------------------===//
//
// Gather, GatherND, GatherElements, ScatterND and ScatterElements. Every
// index is checked against its dimension (the message is built only on
// failure: these run per index); Scatter validates all indices before it
// writes, since the write may be in place over its data input.
//
//===----------------------------------------------------------------------===//

#include "runtime/host/Broadcast.h"
#include "runtime/host/Kernel.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace qeff::runtime::host {
namespace {

int64_t normalizeIndex(int64_t i, int64_t dim, const char *what) {
  int64_t j = i < 0 ? i + dim : i;
  if (j < 0 || j >= dim) // the message only on failure: this runs per index
    fail(std::string(what) + " index " + std::to_string(i) +
         " out of range for a dimension of size " + std::to_string(dim));
  return j;
}

/// Byte copy of `t` into a fresh or reused buffer (for ops writing into data).
Tensor writableCopy(Context &ctx, Tensor &t) {
  if (t.uniquelyOwned())
    return t; // in place: the executor handed the last reference over
  Tensor r = ctx.allocate(t.dtype(), t.shape());
  if (t.byteSize())
    std::memcpy(r.rawData(), t.rawData(), t.byteSize());
  return r;
}

class GatherKernel : public Kernel {
public:
  explicit GatherKernel(int64_t axis) : axis_(axis) {}
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0) && present(in, 1), "needs data and indices");
    const Tensor &data = in[0];
    auto idx = indexValues(in[1], "indices");
    int64_t axis = normalizeAxis(axis_, data.rank());
    Shape shape(data.shape().begin(), data.shape().begin() + axis);
    shape.insert(shape.end(), in[1].shape().begin(), in[1].shape().end());
    shape.insert(shape.end(), data.shape().begin() + axis + 1, data.shape().end());
    int64_t n = data.dim(axis);
    for (auto &i : idx)
      i = normalizeIndex(i, n, "Gather");
    int64_t outer = prod(data.shape(), 0, axis);
    int64_t m = static_cast<int64_t>(idx.size());
    if (data.dtype() == DType::Float16 || data.dtype() == DType::BFloat16) {
      // A 2-byte weight kept in place (an embedding table): the rows it
      // copies are widened.
      Tensor r = ctx.allocate(DType::Float32, shape);
      int64_t inner = prod(data.shape(), axis + 1, data.rank());
      bool bf16 = data.dtype() == DType::BFloat16;
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < m; ++j) {
          const uint16_t *s = data.data<uint16_t>() + (o * n + idx[j]) * inner;
          float *d = r.data<float>() + (o * m + j) * inner;
          for (int64_t e = 0; e < inner; ++e)
            d[e] = bf16 ? bfloat16ToFloat(s[e]) : halfToFloat(s[e]);
        }
      out[0] = std::move(r);
      return;
    }
    Tensor r = ctx.allocate(data.dtype(), shape);
    size_t inner = prod(data.shape(), axis + 1, data.rank()) * dtypeSize(data.dtype());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < m; ++j)
        std::memcpy(bytes(r) + (o * m + j) * inner, bytes(data) + (o * n + idx[j]) * inner,
                    inner);
    out[0] = std::move(r);
  }

private:
  int64_t axis_;
};

class GatherNDKernel : public Kernel {
public:
  explicit GatherNDKernel(int64_t batchDims) : b_(batchDims) {}
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0) && present(in, 1), "needs data and indices");
    const Tensor &data = in[0];
    const Shape &is = in[1].shape();
    auto idx = indexValues(in[1], "indices");
    QEFF_CHECK(!is.empty(), "indices must have rank >= 1");
    int64_t m = is.back(), r = data.rank(), b = b_;
    // ONNX: the tuple length m is 1 .. r - b (m = 0 read an empty tuple list).
    QEFF_CHECK(m >= 1 && b >= 0 && b < std::min<int64_t>(r, is.size()) && b + m <= r,
          "indices' last dim " + std::to_string(m) + " and batch_dims " +
              std::to_string(b) + " do not fit data of rank " + std::to_string(r));
    for (int64_t i = 0; i < b; ++i)
      QEFF_CHECK(is[i] == data.dim(i), "batch dims of data and indices differ");
    Shape shape(is.begin(), is.end() - 1);
    shape.insert(shape.end(), data.shape().begin() + b + m, data.shape().end());
    Tensor res = ctx.allocate(data.dtype(), shape);
    size_t slice = prod(data.shape(), b + m, r) * dtypeSize(data.dtype());
    int64_t batches = prod(is, 0, b);
    int64_t perBatch = prod(is, b, is.size() - 1);
    auto ds = stridesOf(data.shape());
    int64_t batchStride = b ? ds[b - 1] : 0;
    for (int64_t bi = 0; bi < batches; ++bi)
      for (int64_t t = 0; t < perBatch; ++t) {
        const int64_t *tuple = &idx[(bi * perBatch + t) * m];
        int64_t off = bi * batchStride;
        for (int64_t k = 0; k < m; ++k)
          off += normalizeIndex(tuple[k], data.dim(b + k), "GatherND") * ds[b + k];
        std::memcpy(bytes(res) + (bi * perBatch + t) * slice,
                    bytes(data) + off * dtypeSize(data.dtype()), slice);
      }
    out[0] = std::move(res);
  }

private:
  int64_t b_;
};

/// Offsets into `data` for each position of `indices` along `axis`
/// (GatherElements / ScatterElements).
template <typename F>
void forEachElementIndex(const Shape &dataShape, const Tensor &indices, int64_t axis,
                         const char *what, F &&fn) {
  auto idx = indexValues(indices, "indices");
  QEFF_CHECK(indices.rank() == static_cast<int64_t>(dataShape.size()),
        "indices must have the rank of data");
  auto ds = stridesOf(dataShape);
  std::vector<int64_t> strides = ds;
  strides[axis] = 0;
  forEachIndex(indices.shape(), {strides}, [&](int64_t i, const int64_t *offs) {
    fn(i, offs[0] + normalizeIndex(idx[i], dataShape[axis], what) * ds[axis]);
  });
}

class GatherElementsKernel : public Kernel {
public:
  explicit GatherElementsKernel(int64_t axis) : axis_(axis) {}
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0) && present(in, 1), "needs data and indices");
    const Tensor &data = in[0];
    int64_t axis = normalizeAxis(axis_, data.rank());
    for (int64_t d = 0; d < data.rank() && d < in[1].rank(); ++d)
      QEFF_CHECK(d == axis || in[1].dim(d) <= data.dim(d), "indices larger than data");
    Tensor r = ctx.allocate(data.dtype(), in[1].shape());
    size_t es = dtypeSize(data.dtype());
    forEachElementIndex(data.shape(), in[1], axis, "GatherElements",
                        [&](int64_t i, int64_t off) {
                          std::memcpy(bytes(r) + i * es, bytes(data) + off * es, es);
                        });
    out[0] = std::move(r);
  }

private:
  int64_t axis_;
};

enum class Reduction { None, Add, Mul, Max, Min };

Reduction parseReduction(const Attrs &a) {
  std::string s = a.getString("reduction", "none");
  if (s == "none") return Reduction::None;
  if (s == "add") return Reduction::Add;
  if (s == "mul") return Reduction::Mul;
  if (s == "max") return Reduction::Max;
  if (s == "min") return Reduction::Min;
  fail("unsupported reduction '" + s + "' (none, add, mul, max, min)");
}

/// dst[0..n) (op)= src[0..n) for elements of type T.
template <typename T>
void combine(T *dst, const T *src, int64_t n, Reduction red) {
  for (int64_t i = 0; i < n; ++i) {
    switch (red) {
    case Reduction::None: dst[i] = src[i]; break;
    case Reduction::Add: dst[i] = T(dst[i] + src[i]); break;
    case Reduction::Mul: dst[i] = T(dst[i] * src[i]); break;
    case Reduction::Max: dst[i] = std::max(dst[i], src[i]); break;
    case Reduction::Min: dst[i] = std::min(dst[i], src[i]); break;
    }
  }
}

class ScatterNDKernel : public Kernel {
public:
  explicit ScatterNDKernel(Reduction red) : red_(red) {}
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0) && present(in, 1) && present(in, 2),
          "needs data, indices and updates");
    const Tensor &upd = in[2];
    const Shape &is = in[1].shape();
    QEFF_CHECK(!is.empty(), "indices must have rank >= 1");
    QEFF_CHECK(in[0].dtype() == upd.dtype(), "data and updates of different types");
    auto idx = indexValues(in[1], "indices");
    int64_t m = is.back(), r = in[0].rank();
    QEFF_CHECK(m <= r, "indices' last dim exceeds data's rank");
    Shape want(is.begin(), is.end() - 1);
    want.insert(want.end(), in[0].shape().begin() + m, in[0].shape().end());
    QEFF_CHECK(upd.shape() == want, "updates have shape " + shapeString(upd.shape()) +
                                   ", expected " + shapeString(want));
    Shape dataShape = in[0].shape();
    // Validate every index before writing (the write may be in place).
    auto ds = stridesOf(dataShape);
    int64_t tuples = prod(is, 0, is.size() - 1);
    std::vector<int64_t> offsets(tuples);
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t off = 0;
      for (int64_t k = 0; k < m; ++k)
        off += normalizeIndex(idx[t * m + k], dataShape[k], "ScatterND") * ds[k];
      offsets[t] = off;
    }
    Tensor res = writableCopy(ctx, in[0]);
    int64_t slice = prod(dataShape, m, r);
    size_t es = dtypeSize(res.dtype());
    if (red_ == Reduction::None) {
      for (int64_t t = 0; t < tuples; ++t)
        std::memcpy(bytes(res) + offsets[t] * es, bytes(upd) + t * slice * es, slice * es);
    } else {
      dispatchType(res.dtype(), [&](auto tag) {
        using T = decltype(tag);
        for (int64_t t = 0; t < tuples; ++t)
          combine(res.data<T>() + offsets[t], upd.data<T>() + t * slice, slice, red_);
      });
    }
    out[0] = std::move(res);
  }

private:
  Reduction red_;
};

class ScatterElementsKernel : public Kernel {
public:
  ScatterElementsKernel(int64_t axis, Reduction red) : axis_(axis), red_(red) {}
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0) && present(in, 1) && present(in, 2),
          "needs data, indices and updates");
    QEFF_CHECK(in[1].shape() == in[2].shape(), "indices and updates differ in shape");
    QEFF_CHECK(in[0].dtype() == in[2].dtype(), "data and updates of different types");
    int64_t axis = normalizeAxis(axis_, in[0].rank());
    std::vector<int64_t> offsets(in[1].numElements());
    forEachElementIndex(in[0].shape(), in[1], axis, "ScatterElements",
                        [&](int64_t i, int64_t off) { offsets[i] = off; });
    Tensor res = writableCopy(ctx, in[0]);
    dispatchType(res.dtype(), [&](auto tag) {
      using T = decltype(tag);
      for (size_t i = 0; i < offsets.size(); ++i)
        combine(res.data<T>() + offsets[i], in[2].data<T>() + i, 1, red_);
    });
    out[0] = std::move(res);
  }

private:
  int64_t axis_;
  Reduction red_;
};
} // namespace

void registerIndexKernels(KernelRegistry &r) {
  r["Gather"] = [](const onnx::NodeProto &, const Attrs &a) -> std::unique_ptr<Kernel> {
    a.allowOnly({"axis"});
    return std::make_unique<GatherKernel>(a.getInt("axis", 0));
  };
  r["GatherND"] = [](const onnx::NodeProto &, const Attrs &a) -> std::unique_ptr<Kernel> {
    a.allowOnly({"batch_dims"});
    return std::make_unique<GatherNDKernel>(a.getInt("batch_dims", 0));
  };
  r["GatherElements"] = [](const onnx::NodeProto &, const Attrs &a) -> std::unique_ptr<Kernel> {
    a.allowOnly({"axis"});
    return std::make_unique<GatherElementsKernel>(a.getInt("axis", 0));
  };
  r["ScatterND"] = [](const onnx::NodeProto &, const Attrs &a) -> std::unique_ptr<Kernel> {
    a.allowOnly({"reduction"});
    return std::make_unique<ScatterNDKernel>(parseReduction(a));
  };
  r["ScatterElements"] = [](const onnx::NodeProto &, const Attrs &a) -> std::unique_ptr<Kernel> {
    a.allowOnly({"axis", "reduction"});
    return std::make_unique<ScatterElementsKernel>(a.getInt("axis", 0), parseReduction(a));
  };
}

} // namespace qeff::runtime::host
