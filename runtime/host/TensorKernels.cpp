//===- TensorKernels.cpp - Shape manipulation, copies, constants -----------===//
//
// Reshape/Squeeze/Unsqueeze/Flatten (zero-copy views), Transpose, Concat,
// Split, Slice, Expand, Range, Shape, ConstantOfShape, Constant, Trilu. Most
// are dtype-agnostic byte moves. Gather and Scatter: IndexKernels.cpp.
//
//===----------------------------------------------------------------------===//

#include "runtime/host/Broadcast.h"
#include "runtime/host/Kernel.h"
#include "support/CheckedMath.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>

namespace qeff::runtime::host {
namespace {

class ReshapeKernel : public Kernel {
public:
  explicit ReshapeKernel(bool allowZero) : allowZero_(allowZero) {}
  void run(Context &, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0) && present(in, 1), "needs data and shape");
    auto spec = indexValues(in[1], "shape");
    Shape shape(spec.size());
    int64_t known = 1, infer = -1;
    for (size_t i = 0; i < spec.size(); ++i) {
      int64_t d = spec[i];
      if (d == 0 && !allowZero_) {
        QEFF_CHECK(static_cast<int64_t>(i) < in[0].rank(),
              "shape " + shapeString(spec) + " copies dim " + std::to_string(i) +
                  " of an input of rank " + std::to_string(in[0].rank()));
        d = in[0].dim(i);
      }
      if (d == -1) {
        QEFF_CHECK(infer < 0, "shape " + shapeString(spec) + " has two -1");
        infer = i;
        continue;
      }
      QEFF_CHECK(d >= 0, "invalid dim " + std::to_string(d) + " in shape " + shapeString(spec));
      shape[i] = d;
      QEFF_CHECK(support::checkedMul(known, d, known),
            "shape " + shapeString(spec) + " has more elements than int64 holds");
    }
    int64_t n = in[0].numElements();
    if (infer >= 0) {
      QEFF_CHECK(known != 0 && n % known == 0,
            "cannot reshape " + shapeString(in[0].shape()) + " to " + shapeString(spec));
      shape[infer] = n / known;
    }
    QEFF_CHECK(numElements(shape) == n, "cannot reshape " + shapeString(in[0].shape()) +
                                       " to " + shapeString(spec));
    out[0] = in[0].reshaped(shape);
  }

private:
  bool allowZero_;
};

/// Squeeze / Unsqueeze with axes from the attribute (opset < 13) or input.
class SqueezeKernel : public Kernel {
public:
  SqueezeKernel(bool unsqueeze, std::vector<int64_t> attrAxes, bool hasAttr)
      : unsqueeze_(unsqueeze), attrAxes_(std::move(attrAxes)), hasAttr_(hasAttr) {}
  void run(Context &, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0), "missing data");
    std::vector<int64_t> axes = attrAxes_;
    if (present(in, 1))
      axes = indexValues(in[1], "axes");
    else
      QEFF_CHECK(hasAttr_ || !unsqueeze_, "Unsqueeze needs axes");
    const Shape &s = in[0].shape();
    Shape shape;
    if (unsqueeze_) {
      int64_t r = in[0].rank() + static_cast<int64_t>(axes.size());
      std::vector<bool> isNew(r, false);
      for (int64_t a : axes) {
        int64_t n = normalizeAxis(a, r);
        QEFF_CHECK(!isNew[n], "repeated axis in Unsqueeze");
        isNew[n] = true;
      }
      size_t k = 0;
      for (int64_t i = 0; i < r; ++i)
        shape.push_back(isNew[i] ? 1 : s[k++]);
    } else {
      std::vector<bool> drop(s.size(), false);
      if (axes.empty()) {
        for (size_t i = 0; i < s.size(); ++i)
          drop[i] = s[i] == 1;
      }
      for (int64_t a : axes) {
        int64_t n = normalizeAxis(a, in[0].rank());
        QEFF_CHECK(s[n] == 1, "cannot squeeze dim " + std::to_string(a) + " of shape " +
                             shapeString(s));
        drop[n] = true;
      }
      for (size_t i = 0; i < s.size(); ++i)
        if (!drop[i])
          shape.push_back(s[i]);
    }
    out[0] = in[0].reshaped(shape);
  }

private:
  bool unsqueeze_;
  std::vector<int64_t> attrAxes_;
  bool hasAttr_;
};

class FlattenKernel : public Kernel {
public:
  explicit FlattenKernel(int64_t axis) : axis_(axis) {}
  void run(Context &, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    int64_t r = in[0].rank();
    int64_t a = axis_ < 0 ? axis_ + r : axis_;
    QEFF_CHECK(a >= 0 && a <= r, "axis out of range");
    out[0] = in[0].reshaped({prod(in[0].shape(), 0, a), prod(in[0].shape(), a, r)});
  }

private:
  int64_t axis_;
};

template <typename T>
void transposeTyped(const T *src, T *dst, const Shape &outShape,
                    const std::vector<int64_t> &srcStrides) {
  size_t r = outShape.size();
  if (r && srcStrides[r - 1] == 1) {
    // The innermost axis is kept: copy contiguous runs.
    int64_t inner = outShape[r - 1];
    Shape outer(outShape.begin(), outShape.end() - 1);
    std::vector<int64_t> os(srcStrides.begin(), srcStrides.end() - 1);
    forEachIndex(outer, {os}, [&](int64_t i, const int64_t *offs) {
      std::memcpy(dst + i * inner, src + offs[0], inner * sizeof(T));
    });
    return;
  }
  forEachIndex(outShape, {srcStrides},
               [&](int64_t i, const int64_t *offs) { dst[i] = src[offs[0]]; });
}

class TransposeKernel : public Kernel {
public:
  explicit TransposeKernel(std::vector<int64_t> perm) : perm_(std::move(perm)) {}
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0), "missing data");
    const Tensor &x = in[0];
    int64_t r = x.rank();
    std::vector<int64_t> perm = perm_;
    if (perm.empty())
      for (int64_t i = r - 1; i >= 0; --i)
        perm.push_back(i);
    QEFF_CHECK(static_cast<int64_t>(perm.size()) == r,
          "perm of size " + std::to_string(perm.size()) + " for rank " + std::to_string(r));
    std::vector<bool> seen(r, false);
    for (auto &p : perm) {
      p = normalizeAxis(p, r, "perm entry");
      QEFF_CHECK(!seen[p], "perm is not a permutation");
      seen[p] = true;
    }
    Shape shape(r);
    auto is = stridesOf(x.shape());
    std::vector<int64_t> ss(r);
    for (int64_t i = 0; i < r; ++i) {
      shape[i] = x.dim(perm[i]);
      ss[i] = is[perm[i]];
    }
    Tensor res = ctx.allocate(x.dtype(), shape);
    if (res.numElements())
      switch (dtypeSize(x.dtype())) {
      case 1: transposeTyped(x.data<uint8_t>(), res.data<uint8_t>(), shape, ss); break;
      case 4: transposeTyped(x.data<uint32_t>(), res.data<uint32_t>(), shape, ss); break;
      case 8: transposeTyped(x.data<uint64_t>(), res.data<uint64_t>(), shape, ss); break;
      default: fail("unsupported element size");
      }
    out[0] = std::move(res);
  }

private:
  std::vector<int64_t> perm_;
};

class ConcatKernel : public Kernel {
public:
  explicit ConcatKernel(int64_t axis) : axis_(axis) {}
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(!in.empty() && present(in, 0), "needs inputs");
    const Tensor &first = in[0];
    int64_t r = first.rank();
    int64_t axis = normalizeAxis(axis_, r);
    Shape shape = first.shape();
    shape[axis] = 0;
    for (size_t k = 0; k < in.size(); ++k) {
      QEFF_CHECK(present(in, k), "missing input");
      QEFF_CHECK(in[k].dtype() == first.dtype(), "inputs of different types");
      QEFF_CHECK(in[k].rank() == r, "inputs of different ranks");
      for (int64_t d = 0; d < r; ++d)
        QEFF_CHECK(d == axis || in[k].dim(d) == first.dim(d),
              "input shapes " + shapeString(first.shape()) + " and " +
                  shapeString(in[k].shape()) + " differ outside axis " +
                  std::to_string(axis_));
      shape[axis] += in[k].dim(axis);
    }
    Tensor res = ctx.allocate(first.dtype(), shape);
    int64_t outer = prod(shape, 0, axis);
    size_t es = dtypeSize(first.dtype());
    size_t outRow = prod(shape, axis, r) * es;
    size_t pos = 0;
    for (auto &t : in) {
      size_t row = prod(t.shape(), axis, r) * es;
      for (int64_t o = 0; o < outer; ++o)
        std::memcpy(bytes(res) + o * outRow + pos, bytes(t) + o * row, row);
      pos += row;
    }
    out[0] = std::move(res);
  }

private:
  int64_t axis_;
};

class SplitKernel : public Kernel {
public:
  SplitKernel(int64_t axis, std::vector<int64_t> split)
      : axis_(axis), split_(std::move(split)) {}
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0), "missing input");
    const Tensor &x = in[0];
    int64_t axis = normalizeAxis(axis_, x.rank());
    int64_t dim = x.dim(axis);
    std::vector<int64_t> sizes = split_;
    if (present(in, 1))
      sizes = indexValues(in[1], "split");
    int64_t n = static_cast<int64_t>(out.size());
    if (sizes.empty()) {
      int64_t chunk = (dim + n - 1) / n;
      for (int64_t i = 0; i < n; ++i)
        sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
    }
    QEFF_CHECK(static_cast<int64_t>(sizes.size()) == n,
          std::to_string(sizes.size()) + " split sizes for " + std::to_string(n) + " outputs");
    int64_t total = 0;
    for (int64_t s : sizes)
      QEFF_CHECK(s >= 0 && support::checkedAdd(total, s, total),
            "split size " + std::to_string(s) + " is negative or the sizes overflow");
    QEFF_CHECK(total == dim, "split sizes sum to " + std::to_string(total) +
                            ", the axis has " + std::to_string(dim));
    int64_t outer = prod(x.shape(), 0, axis);
    size_t es = dtypeSize(x.dtype());
    size_t inner = prod(x.shape(), axis + 1, x.rank()) * es;
    size_t inRow = dim * inner;
    size_t pos = 0;
    for (int64_t k = 0; k < n; ++k) {
      Shape shape = x.shape();
      shape[axis] = sizes[k];
      Tensor res = ctx.allocate(x.dtype(), shape);
      size_t row = sizes[k] * inner;
      for (int64_t o = 0; o < outer; ++o)
        std::memcpy(bytes(res) + o * row, bytes(x) + o * inRow + pos, row);
      pos += row;
      out[k] = std::move(res);
    }
  }

private:
  int64_t axis_;
  std::vector<int64_t> split_;
};

class SliceKernel : public Kernel {
public:
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0) && present(in, 1) && present(in, 2), "needs data, starts, ends");
    const Tensor &x = in[0];
    int64_t r = x.rank();
    auto starts = indexValues(in[1], "starts");
    auto ends = indexValues(in[2], "ends");
    std::vector<int64_t> axes, steps;
    if (present(in, 3))
      axes = indexValues(in[3], "axes");
    else
      for (size_t i = 0; i < starts.size(); ++i)
        axes.push_back(i);
    if (present(in, 4))
      steps = indexValues(in[4], "steps");
    else
      steps.assign(starts.size(), 1);
    QEFF_CHECK(ends.size() == starts.size() && axes.size() == starts.size() &&
              steps.size() == starts.size(),
          "starts, ends, axes and steps differ in length");
    Shape shape = x.shape();
    std::vector<int64_t> begin(r, 0), step(r, 1);
    std::vector<bool> seen(r, false);
    for (size_t i = 0; i < starts.size(); ++i) {
      int64_t a = normalizeAxis(axes[i], r);
      QEFF_CHECK(!seen[a], "repeated axis in Slice");
      seen[a] = true;
      int64_t dim = x.dim(a), st = steps[i];
      QEFF_CHECK(st != 0, "step 0 in Slice");
      int64_t s = starts[i], e = ends[i];
      if (s < 0) s += dim;
      if (e < 0) e += dim;
      if (st > 0) {
        s = std::clamp<int64_t>(s, 0, dim);
        e = std::clamp<int64_t>(e, 0, dim);
      } else {
        s = std::clamp<int64_t>(s, 0, dim - 1);
        e = std::clamp<int64_t>(e, -1, dim - 1);
      }
      int64_t count = st > 0 ? (e - s + st - 1) / st : (s - e + (-st) - 1) / (-st);
      shape[a] = std::max<int64_t>(0, count);
      begin[a] = s;
      step[a] = st;
    }
    Tensor res = ctx.allocate(x.dtype(), shape);
    auto is = stridesOf(x.shape());
    int64_t base = 0;
    std::vector<int64_t> ss(r);
    for (int64_t d = 0; d < r; ++d) {
      base += begin[d] * is[d];
      ss[d] = is[d] * step[d];
    }
    size_t es = dtypeSize(x.dtype());
    if (res.numElements()) {
      if (r && step[r - 1] == 1) {
        int64_t inner = shape[r - 1];
        Shape outer(shape.begin(), shape.end() - 1);
        std::vector<int64_t> os(ss.begin(), ss.end() - 1);
        forEachIndex(outer, {os}, [&](int64_t i, const int64_t *offs) {
          std::memcpy(bytes(res) + i * inner * es, bytes(x) + (base + offs[0]) * es,
                      inner * es);
        });
      } else {
        forEachIndex(shape, {ss}, [&](int64_t i, const int64_t *offs) {
          std::memcpy(bytes(res) + i * es, bytes(x) + (base + offs[0]) * es, es);
        });
      }
    }
    out[0] = std::move(res);
  }
};

class ExpandKernel : public Kernel {
public:
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0) && present(in, 1), "needs input and shape");
    const Tensor &x = in[0];
    auto spec = indexValues(in[1], "shape");
    Shape shape = broadcastShapes(x.shape(), spec);
    if (shape == x.shape()) {
      out[0] = x;
      return;
    }
    Tensor res = ctx.allocate(x.dtype(), shape);
    BroadcastPlan plan(shape, {&x.shape()});
    size_t es = dtypeSize(x.dtype());
    int64_t inner = plan.inner;
    bool contiguous = plan.innerStride[0] != 0;
    plan.forEachRow(0, plan.rows, [&](int64_t o, const int64_t *offs) {
      if (contiguous) {
        std::memcpy(bytes(res) + o * es, bytes(x) + offs[0] * es, inner * es);
      } else {
        for (int64_t i = 0; i < inner; ++i)
          std::memcpy(bytes(res) + (o + i) * es, bytes(x) + offs[0] * es, es);
      }
    });
    out[0] = std::move(res);
  }
};

class RangeKernel : public Kernel {
public:
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0) && present(in, 1) && present(in, 2), "needs start, limit, delta");
    DType dt = in[0].dtype();
    QEFF_CHECK(in[1].dtype() == dt && in[2].dtype() == dt, "inputs of different types");
    for (int k = 0; k < 3; ++k)
      QEFF_CHECK(in[k].numElements() == 1, "inputs must be scalars");
    dispatchType(dt, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, uint8_t>) {
        fail("Range of bool");
      } else {
        T start = in[0].data<T>()[0], limit = in[1].data<T>()[0], delta = in[2].data<T>()[0];
        QEFF_CHECK(delta != 0, "delta is 0");
        // ceil((limit - start) / delta), exactly for integers (in 128 bits:
        // limit - start can overflow T) and in double for floats; a count
        // past 2^48 (or NaN) is an error, not a wrapped or undefined value.
        constexpr int64_t kMaxCount = kMaxTensorBytes; // 2^48
        int64_t n = 0;
        if constexpr (std::is_integral_v<T>) {
          __int128 d = static_cast<__int128>(limit) - start, q = d / delta;
          if (d % delta != 0 && (d > 0) == (delta > 0))
            ++q;
          QEFF_CHECK(q <= kMaxCount, "Range of more than 2^48 elements");
          n = q > 0 ? static_cast<int64_t>(q) : 0;
        } else {
          double count = std::ceil((double(limit) - double(start)) / double(delta));
          QEFF_CHECK(!std::isnan(count) && count <= double(kMaxCount),
                "Range of more than 2^48 elements (or of a NaN bound)");
          n = count > 0 ? static_cast<int64_t>(count) : 0;
        }
        Tensor res = ctx.allocate(dt, {n});
        for (int64_t i = 0; i < n; ++i)
          res.data<T>()[i] = wrapAdd(start, wrapMul(T(i), delta));
        out[0] = std::move(res);
      }
    });
  }
};

class ShapeKernel : public Kernel {
public:
  ShapeKernel(int64_t start, std::optional<int64_t> end) : start_(start), end_(end) {}
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0), "missing input");
    int64_t r = in[0].rank();
    auto clampAxis = [r](int64_t a) { return std::clamp<int64_t>(a < 0 ? a + r : a, 0, r); };
    int64_t s = clampAxis(start_), e = end_ ? clampAxis(*end_) : r;
    int64_t n = std::max<int64_t>(0, e - s);
    Tensor res = ctx.allocate(DType::Int64, {n});
    for (int64_t i = 0; i < n; ++i)
      res.data<int64_t>()[i] = in[0].dim(s + i);
    out[0] = std::move(res);
  }

private:
  int64_t start_;
  std::optional<int64_t> end_;
};

class ConstantOfShapeKernel : public Kernel {
public:
  explicit ConstantOfShapeKernel(Tensor value) : value_(std::move(value)) {}
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0), "missing shape");
    auto spec = indexValues(in[0], "shape");
    for (int64_t d : spec)
      QEFF_CHECK(d >= 0, "negative dim in shape " + shapeString(spec));
    Tensor res = ctx.allocate(value_.dtype(), spec);
    size_t es = dtypeSize(value_.dtype());
    for (int64_t i = 0; i < res.numElements(); ++i)
      std::memcpy(bytes(res) + i * es, value_.rawData(), es);
    out[0] = std::move(res);
  }

private:
  Tensor value_;
};

class ConstantKernel : public Kernel {
public:
  explicit ConstantKernel(Tensor value) : value_(std::move(value)) {}
  void run(Context &, std::vector<Tensor> &, std::vector<Tensor> &out) override {
    out[0] = value_;
  }
  const Tensor &value() const { return value_; }

private:
  Tensor value_;
};

class TriluKernel : public Kernel {
public:
  explicit TriluKernel(bool upper) : upper_(upper) {}
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0), "missing input");
    Tensor &x = in[0];
    QEFF_CHECK(x.rank() >= 2, "input must have rank >= 2");
    int64_t k = 0;
    if (present(in, 1)) {
      QEFF_CHECK(in[1].numElements() == 1, "k must be a scalar");
      k = indexValues(in[1], "k")[0];
    }
    int64_t rows = x.dim(-2), cols = x.dim(-1);
    int64_t mats = x.numElements() / std::max<int64_t>(1, rows * cols);
    Tensor res = ctx.reuseOrAllocate(x, x.dtype(), x.shape());
    size_t es = dtypeSize(x.dtype());
    if (res.rawData() != x.rawData() && x.byteSize())
      std::memcpy(res.rawData(), x.rawData(), x.byteSize());
    for (int64_t m = 0; m < mats; ++m)
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) {
          bool keep = upper_ ? j - i >= k : j - i <= k;
          if (!keep)
            std::memset(bytes(res) + ((m * rows + i) * cols + j) * es, 0, es);
        }
    out[0] = std::move(res);
  }

private:
  bool upper_;
};


} // namespace

Tensor constantFromNode(const onnx::NodeProto &node); // in HostDevice.cpp

void registerTensorKernels(KernelRegistry &r) {
  r["Reshape"] = [](const onnx::NodeProto &, const Attrs &a) -> std::unique_ptr<Kernel> {
    a.allowOnly({"allowzero"});
    int64_t z = a.getInt("allowzero", 0);
    QEFF_CHECK(z == 0 || z == 1, "allowzero must be 0 or 1");
    return std::make_unique<ReshapeKernel>(z == 1);
  };
  r["Squeeze"] = [](const onnx::NodeProto &, const Attrs &a) -> std::unique_ptr<Kernel> {
    a.allowOnly({"axes"});
    return std::make_unique<SqueezeKernel>(false, a.getInts("axes"), a.has("axes"));
  };
  r["Unsqueeze"] = [](const onnx::NodeProto &, const Attrs &a) -> std::unique_ptr<Kernel> {
    a.allowOnly({"axes"});
    return std::make_unique<SqueezeKernel>(true, a.getInts("axes"), a.has("axes"));
  };
  r["Flatten"] = [](const onnx::NodeProto &, const Attrs &a) -> std::unique_ptr<Kernel> {
    a.allowOnly({"axis"});
    return std::make_unique<FlattenKernel>(a.getInt("axis", 1));
  };
  r["Transpose"] = [](const onnx::NodeProto &, const Attrs &a) -> std::unique_ptr<Kernel> {
    a.allowOnly({"perm"});
    return std::make_unique<TransposeKernel>(a.getInts("perm"));
  };
  r["Concat"] = [](const onnx::NodeProto &, const Attrs &a) -> std::unique_ptr<Kernel> {
    a.allowOnly({"axis"});
    QEFF_CHECK(a.has("axis"), "missing attribute 'axis'");
    return std::make_unique<ConcatKernel>(a.getInt("axis", 0));
  };
  r["Split"] = [](const onnx::NodeProto &, const Attrs &a) -> std::unique_ptr<Kernel> {
    a.allowOnly({"axis", "split", "num_outputs"});
    return std::make_unique<SplitKernel>(a.getInt("axis", 0), a.getInts("split"));
  };
  r["Slice"] = [](const onnx::NodeProto &, const Attrs &a) -> std::unique_ptr<Kernel> {
    a.allowOnly({});
    return std::make_unique<SliceKernel>();
  };
  r["Expand"] = [](const onnx::NodeProto &, const Attrs &a) -> std::unique_ptr<Kernel> {
    a.allowOnly({});
    return std::make_unique<ExpandKernel>();
  };
  r["Range"] = [](const onnx::NodeProto &, const Attrs &a) -> std::unique_ptr<Kernel> {
    a.allowOnly({});
    return std::make_unique<RangeKernel>();
  };
  r["Shape"] = [](const onnx::NodeProto &, const Attrs &a) -> std::unique_ptr<Kernel> {
    a.allowOnly({"start", "end"});
    std::optional<int64_t> end;
    if (a.has("end"))
      end = a.getInt("end", 0);
    return std::make_unique<ShapeKernel>(a.getInt("start", 0), end);
  };
  r["ConstantOfShape"] = [](const onnx::NodeProto &, const Attrs &a) -> std::unique_ptr<Kernel> {
    a.allowOnly({"value"});
    Tensor v = Tensor::zeros(DType::Float32, {1});
    if (const auto *t = a.getTensor("value")) {
      v = tensorFromProto(*t);
      QEFF_CHECK(v.numElements() == 1, "value must have one element");
    }
    return std::make_unique<ConstantOfShapeKernel>(v);
  };
  r["Constant"] = [](const onnx::NodeProto &node, const Attrs &) -> std::unique_ptr<Kernel> {
    return std::make_unique<ConstantKernel>(constantFromNode(node));
  };
  r["Trilu"] = [](const onnx::NodeProto &, const Attrs &a) -> std::unique_ptr<Kernel> {
    a.allowOnly({"upper"});
    return std::make_unique<TriluKernel>(a.getInt("upper", 1) != 0);
  };
}

} // namespace qeff::runtime::host
