//===- PackedMatMul.cpp - MatMul against a constant weight ----------------===//
//
// The executor replaces a MatMul whose B is a constant matrix by this kernel
// at load time (HostPlan.cpp, packWeights). Nothing is done to the weight at
// load (unless SessionOptions::prepackWeights). The first product reads it
// where it lies, in the external-data mapping (gemm::gemmInPlace; f16 and
// bf16 stay 2 bytes and are widened in the kernel); the second lays it out
// in panels once (Gemm.h) and releases its mapped pages. So the first token waits for no
// layout pass over the weights, while the decode steps run on the panels
// (read in order: up to 2x the in-place speed at one row, for f16). Every
// leading dim of A folds into the rows of one product.
//
//===----------------------------------------------------------------------===//

#include "runtime/host/Gemm.h"
#include "runtime/host/Kernel.h"

#include <cblas.h>

#include <algorithm>
#include <mutex>
#include <new>

namespace qeff::runtime::host {
namespace {

/// The rows of A (every leading dim folded) and C's shape for A x w.
int64_t productShape(const Tensor &a, const WeightB &w, Shape &shape) {
  requireFloat(a, "A");
  QEFF_CHECK(a.rank() >= 1, "MatMul of a scalar");
  int64_t k = a.shape().back();
  QEFF_CHECK(k == w.k(), "shapes " + shapeString(a.shape()) + " and " +
                             shapeString({w.k(), w.n()}) + " do not match");
  shape = a.shape();
  shape.back() = w.n();
  if (a.rank() == 1)
    shape = {w.n()};
  int64_t m = a.rank() == 1 ? 1 : a.numElements() / std::max<int64_t>(k, 1);
  if (k == 0) // rows of an empty A: the leading dims alone
    m = numElements(Shape(a.shape().begin(), a.shape().end() - 1));
  return m;
}

class WeightMatMulKernel : public Kernel {
public:
  explicit WeightMatMulKernel(std::shared_ptr<WeightB> w) : w_(std::move(w)) {}
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0), "needs A");
    Shape shape;
    int64_t m = productShape(in[0], *w_, shape);
    Tensor res = ctx.allocate(DType::Float32, shape);
    w_->multiply(ctx, m, in[0].data<float>(), res.data<float>());
    out[0] = std::move(res);
  }

private:
  std::shared_ptr<WeightB> w_;
};

/// Several weights' products of one A (fused at load: HostPlan.cpp), their
/// panels in one hand-off to the pool once all are laid out (gemm::gemmMulti:
/// the bits of the products one by one).
class WeightsMatMulKernel : public Kernel {
public:
  explicit WeightsMatMulKernel(std::vector<std::shared_ptr<WeightB>> ws) : ws_(std::move(ws)) {}
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0), "needs A");
    QEFF_CHECK(out.size() == ws_.size(), "one output per weight (internal error)");
    std::vector<std::shared_ptr<const gemm::PackedB>> packed;
    std::vector<const gemm::PackedB *> bs;
    std::vector<float *> cs;
    int64_t m = 0;
    for (size_t i = 0; i < ws_.size(); ++i) {
      Shape shape;
      m = productShape(in[0], *ws_[i], shape);
      out[i] = ctx.allocate(DType::Float32, shape);
      packed.push_back(ws_[i]->use(ctx));
      bs.push_back(packed.back().get());
      cs.push_back(out[i].data<float>());
    }
    const float *a = in[0].data<float>();
    if (std::all_of(bs.begin(), bs.end(), [](const gemm::PackedB *b) { return b != nullptr; })) {
      gemm::gemmMulti(ctx, m, a, ws_[0]->k(), bs, cs);
      return;
    }
    for (size_t i = 0; i < ws_.size(); ++i)
      ws_[i]->multiplyWith(ctx, packed[i], m, a, cs[i]);
  }

private:
  std::vector<std::shared_ptr<WeightB>> ws_;
};

} // namespace

WeightB::WeightB(Tensor b, bool transposed, std::string name,
                 std::function<void(const void *, size_t)> release)
    : b_(std::move(b)), transposed_(transposed), name_(std::move(name)),
      release_(std::move(release)) {
  k_ = b_.dim(transposed ? 1 : 0);
  n_ = b_.dim(transposed ? 0 : 1);
  elem_ = b_.dtype() == DType::Float16    ? gemm::Elem::F16
          : b_.dtype() == DType::BFloat16 ? gemm::Elem::BF16
                                          : gemm::Elem::F32;
}

void WeightB::layOutLocked(const Context &ctx) {
  if (packed_)
    return;
  try {
    packed_ = gemm::PackedB::pack(ctx, b_.rawData(), elem_, k_, n_, transposed_, elem_);
  } catch (const std::bad_alloc &) {
    fail("out of memory laying out weight '" + name_ + "'");
  }
  // Drop the weight's mapped pages at once: the resident size stays one
  // copy. Safe whoever still reads it: a file mapping reads them again from
  // the page cache.
  if (release_)
    release_(b_.rawData(), b_.byteSize());
}

void WeightB::layOut(const Context &ctx) {
  std::lock_guard<std::mutex> lock(mutex_);
  layOutLocked(ctx);
}

std::shared_ptr<const gemm::PackedB> WeightB::packedFor(const Context &ctx) {
  std::lock_guard<std::mutex> lock(mutex_);
  // B^T in f16 / bf16 has no in-place path: laid out at its first use.
  bool inPlace = !transposed_ || elem_ == gemm::Elem::F32;
  bool first = !used_;
  used_ = true;
  if (!first || !inPlace)
    layOutLocked(ctx);
  return packed_;
}

void WeightB::multiply(Context &ctx, int64_t m, const float *a, float *c) {
  multiplyWith(ctx, packedFor(ctx), m, a, c);
}

void WeightB::multiplyWith(Context &ctx, const std::shared_ptr<const gemm::PackedB> &packed,
                           int64_t m, const float *a, float *c) {
  if (packed) {
    gemm::gemm(ctx, m, a, k_, *packed, c, n_);
    return;
  }
  if (!transposed_) {
    gemm::gemmInPlace(ctx, m, a, k_, b_.rawData(), elem_, k_, n_, c, n_);
    return;
  }
  // f32 B^T [n, k] (a folded Transpose, e.g. tied embeddings): OpenBLAS.
  const float *b = b_.data<float>();
  if (m == 0 || n_ == 0)
    return;
  if (k_ == 0) {
    std::fill(c, c + m * n_, 0.f);
    return;
  }
  if (m == 1)
    cblas_sgemv(CblasRowMajor, CblasNoTrans, n_, k_, 1.f, b, k_, a, 1, 0.f, c, 1);
  else
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n_, k_, 1.f, a, k_, b, k_, 0.f, c,
                n_);
}

bool WeightB::packed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return packed_ != nullptr;
}

std::unique_ptr<Kernel> makeWeightMatMulKernel(std::shared_ptr<WeightB> b) {
  return std::make_unique<WeightMatMulKernel>(std::move(b));
}

std::unique_ptr<Kernel> makeWeightsMatMulKernel(std::vector<std::shared_ptr<WeightB>> bs) {
  return std::make_unique<WeightsMatMulKernel>(std::move(bs));
}

} // namespace qeff::runtime::host
