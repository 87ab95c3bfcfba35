//===- PackedMatMul.cpp - MatMul against a weight laid out once -----------===//
//
// The executor replaces a MatMul whose B is a constant matrix by this
// kernel at load time (HostPlan.cpp, packWeights): B is packed into panels
// once (Gemm.h), f16 weights stay f16, and every leading dim of A folds into
// the rows of one product.
//
//===----------------------------------------------------------------------===//

#include "runtime/host/Gemm.h"
#include "runtime/host/Kernel.h"

namespace qeff::runtime::host {
namespace {

class PackedMatMulKernel : public Kernel {
public:
  explicit PackedMatMulKernel(std::shared_ptr<const gemm::PackedB> b) : b_(std::move(b)) {}
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    check(present(in, 0), "needs A");
    const Tensor &a = in[0];
    requireFloat(a, "A");
    check(a.rank() >= 1, "MatMul of a scalar");
    int64_t k = a.shape().back();
    check(k == b_->k(), "shapes " + shapeString(a.shape()) + " and " +
                            shapeString({b_->k(), b_->n()}) + " do not match");
    Shape shape = a.shape();
    shape.back() = b_->n();
    if (a.rank() == 1)
      shape = {b_->n()};
    int64_t m = a.rank() == 1 ? 1 : a.numElements() / std::max<int64_t>(k, 1);
    if (k == 0) // rows of an empty A: the leading dims alone
      m = numElements(Shape(a.shape().begin(), a.shape().end() - 1));
    Tensor res = ctx.allocate(DType::Float32, shape);
    gemm::gemm(ctx, m, a.data<float>(), k, *b_, res.data<float>(), b_->n());
    out[0] = std::move(res);
  }

private:
  std::shared_ptr<const gemm::PackedB> b_;
};

} // namespace

std::unique_ptr<Kernel> makePackedMatMulKernel(std::shared_ptr<const gemm::PackedB> b) {
  return std::make_unique<PackedMatMulKernel>(std::move(b));
}

} // namespace qeff::runtime::host
