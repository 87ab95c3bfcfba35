//===- Kernel.h - Host device kernels: interface and helpers ----*- C++ -*-===//
//
// One Kernel per ONNX node, created at load time from the NodeProto (all
// attributes validated then: an unsupported value throws KernelError, which
// the loader reports naming the node). At run time a kernel gets its inputs
// (invalid Tensor for an omitted optional input) and fills its outputs,
// computing shapes from the concrete input shapes.
//
// Internally every float is float32 (float16 data is converted at the
// boundary); the element types are Float32, Int64, Int32 and Bool (uint8).
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_HOST_KERNEL_H
#define QEFF_RUNTIME_HOST_KERNEL_H

#include "qeff/runtime/Tensor.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace qeff::runtime::host {

/// The product of dims [b, e) of `s` (1 for an empty range).
inline int64_t prod(const Shape &s, size_t b, size_t e) {
  int64_t p = 1;
  for (size_t i = b; i < e && i < s.size(); ++i)
    p *= s[i];
  return p;
}

/// A tensor's data as bytes.
inline char *bytes(Tensor &t) { return static_cast<char *>(t.rawData()); }
inline const char *bytes(const Tensor &t) {
  return static_cast<const char *>(t.rawData());
}

/// A user-facing error inside the host device (bad attribute, shape mismatch).
struct KernelError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void fail(const std::string &message);

} // namespace qeff::runtime::host

/// Fails with the message (a std::string expression) unless the condition
/// holds. A macro so that the message, which often formats shapes, is only
/// built on failure: kernels run for every node of every decode step.
#define QEFF_CHECK(condition, ...)                                                          \
  do {                                                                                     \
    if (!(condition))                                                                      \
      ::qeff::runtime::host::fail(__VA_ARGS__);                                            \
  } while (false)

namespace qeff::runtime::host {

/// A pool of 64-byte aligned buffers. Released tensors return their buffer to
/// the pool, so steady-state runs do not allocate.
class Arena : public std::enable_shared_from_this<Arena> {
public:
  ~Arena();
  Tensor allocate(DType dtype, Shape shape);
  size_t pooledBytes() const { return pooledBytes_; }
  /// allocate() refuses tensors of more bytes than this (0: no limit but
  /// byteSize's own).
  void setMaxBytes(uint64_t bytes) { maxBytes_ = bytes; }

private:
  void release(void *p, size_t capacity);

  std::mutex mutex_;
  std::multimap<size_t, void *> free_;
  size_t pooledBytes_ = 0;
  uint64_t maxBytes_ = 0;
};

/// What a kernel sees of the executor.
struct Context {
  Arena *arena = nullptr;
  int numThreads = 1;

  Tensor allocate(DType dtype, Shape shape) {
    return arena->allocate(dtype, std::move(shape));
  }
  /// `input`'s buffer under a new shape when the executor handed it over
  /// (last use, writable, same byte size); a fresh buffer otherwise. The
  /// returned tensor aliases `input` in the first case: write only what the
  /// kernel has already read.
  Tensor reuseOrAllocate(const Tensor &input, DType dtype, Shape shape);
};

class Kernel {
public:
  virtual ~Kernel() = default;
  virtual void run(Context &ctx, std::vector<Tensor> &inputs,
                   std::vector<Tensor> &outputs) = 0;
};

/// Attribute access with ONNX defaults; wrong attribute types throw.
class Attrs {
public:
  explicit Attrs(const onnx::NodeProto &node);
  bool has(const std::string &name) const;
  int64_t getInt(const std::string &name, int64_t dflt) const;
  float getFloat(const std::string &name, float dflt) const;
  std::string getString(const std::string &name, const std::string &dflt) const;
  std::vector<int64_t> getInts(const std::string &name) const;
  const onnx::TensorProto *getTensor(const std::string &name) const;
  /// Throws when the node has an attribute not in `known`.
  void allowOnly(std::initializer_list<const char *> known) const;

private:
  const onnx::AttributeProto *find(const std::string &name) const;
  const onnx::NodeProto &node_;
};

using KernelFactory =
    std::function<std::unique_ptr<Kernel>(const onnx::NodeProto &, const Attrs &)>;
using KernelRegistry = std::map<std::string, KernelFactory>;

void registerElementwiseKernels(KernelRegistry &registry);
void registerTensorKernels(KernelRegistry &registry);
void registerIndexKernels(KernelRegistry &registry);
void registerNNKernels(KernelRegistry &registry);
const KernelRegistry &kernelRegistry();
/// MatMul reading B with its last two dims swapped (a folded Transpose).
std::unique_ptr<Kernel> makeMatMulKernel(bool transB);
class WeightB;
/// MatMul of its one input A by a constant B (a MatMul whose B is a constant
/// matrix): used in place, laid out once by the first long product (Gemm.h).
std::unique_ptr<Kernel> makeWeightMatMulKernel(std::shared_ptr<WeightB> b);
/// The products of one A by several constant matrices (one output each), in
/// one hand-off to the pool (the q/k/v, gate/up projections).
std::unique_ptr<Kernel> makeWeightsMatMulKernel(std::vector<std::shared_ptr<WeightB>> bs);
/// MatMul(A, Reshape(Expand(X, s), r)) of inputs (A, X, s, r), with transB
/// as makeMatMulKernel's: grouped-query attention's repeated key/value heads
/// read where they lie (GroupedMatMul.cpp); `expand` and `reshape` are the
/// fused nodes' kernels, run as written when the shapes do not allow that.
std::unique_ptr<Kernel> makeGroupedMatMulKernel(bool transB, std::unique_ptr<Kernel> expand,
                                                std::unique_ptr<Kernel> reshape);
/// The shape of a grouped product A x Reshape(Expand(X, expandShape),
/// reshapeShape) read where X lies: `groups` products of `rows` consecutive
/// rows of A ([rows, k] each) by one [k, n] matrix of X (B^T [n, k] with
/// transB; rows `ldb` apart), the result of `shape`. nullopt when the shapes
/// do not allow it (GroupedMatMul.cpp).
struct GroupedProduct {
  int64_t groups = 0, rows = 0, k = 0, n = 0, ldb = 0;
  Shape shape;
};
std::optional<GroupedProduct> groupedProduct(DType aType, const Shape &aShape, const Tensor &x,
                                             const Tensor &expandShape,
                                             const Tensor &reshapeShape, bool transB);
/// The attention Softmax(Where(cond, (Q x K^T) * scale, fill)) x V of
/// inputs (Q, K.., scale, cond, fill, V..), K and V each one input (a
/// MatMul's B) or three (X, Expand's shape, Reshape's shape: a grouped
/// product), run by the three fused kernels as written, or, in a decode
/// step, over only the key positions the mask leaves (Attention.cpp).
std::unique_ptr<Kernel> makeAttentionKernel(std::unique_ptr<Kernel> scores, size_t kInputs,
                                            std::unique_ptr<Kernel> softmax,
                                            std::unique_ptr<Kernel> values, size_t vInputs,
                                            bool transK);
/// x * sigmoid(x) of one input (a fused Sigmoid + Mul).
std::unique_ptr<Kernel> makeSiluKernel();
/// x * cos + Concat(-x2, x1) * sin of inputs (x, cos, sin), x1 and x2 the
/// halves of x along `axis` (the rotary embedding's Split, Neg, Concat, two
/// Muls and Add), each operation rounded as the nodes round it; `half`
/// the Split's constant size of each half (-1: none given).
std::unique_ptr<Kernel> makeRotateHalfKernel(int64_t half, int64_t axis);
/// Div(x, Sqrt(Add(ReduceMean(Mul(x, x), axes = [-1], keepdims = 1), eps)))
/// of inputs (x, eps), eps one element: a fused RMSNorm, the nodes' bits.
std::unique_ptr<Kernel> makeRmsNormKernel();
/// (Log)Softmax(Where(cond, S * scale, fill)) of inputs (S, scale, cond, fill),
/// scale and fill single-element (a fused Mul + Where + Softmax).
std::unique_ptr<Kernel> makeMaskedSoftmaxKernel(int64_t axis, bool log);
/// One row of that kernel's Softmax over the last axis, z =
/// softmax(c ? x * scale : fill) over `len` positions (len % 8 == 0; z may
/// be x): over the positions up to the last kept one rounded up to 8 (the
/// vector lanes, so every partial sum is as over the whole row) when the
/// fill past them is exactly 0 after exp, the rest written 0. x must be
/// readable over the row; its values are used only where c is true.
void maskedSoftmaxRow(const uint8_t *c, const float *x, float *z, int64_t len, float scale,
                      float fill);
/// Whether `k` is a makeMaskedSoftmaxKernel kernel over the last of `rank`
/// dims, not LogSoftmax (rows maskedSoftmaxRow computes).
bool maskedSoftmaxOverLastAxis(const Kernel &k, int64_t rank);

/// ONNX TensorProto data type -> runtime dtype (Float16 for FLOAT16,
/// BFloat16 for BFLOAT16); throws for anything else.
DType dtypeFromOnnx(int onnxType);
/// Decodes a TensorProto without external data into a runtime tensor
/// (float16 and bfloat16 converted to float32).
Tensor tensorFromProto(const onnx::TensorProto &proto);

//===----------------------------------------------------------------------===//
// Helpers shared by the kernel files
//===----------------------------------------------------------------------===//

/// Axis in [-rank, rank) normalised to [0, rank); throws otherwise.
int64_t normalizeAxis(int64_t axis, int64_t rank, const char *what = "axis");
/// numpy broadcast of two shapes; throws when incompatible.
Shape broadcastShapes(const Shape &a, const Shape &b);
/// Row-major strides.
std::vector<int64_t> stridesOf(const Shape &shape);
/// Strides of `shape` broadcast to `out` (0 on broadcast dims), left-padded.
std::vector<int64_t> broadcastStrides(const Shape &shape, const Shape &out);
inline bool present(const std::vector<Tensor> &in, size_t i) {
  return i < in.size() && in[i].valid() && (in[i].rawData() || in[i].numElements() == 0);
}
/// Int64/Int32 tensor as int64 values.
std::vector<int64_t> indexValues(const Tensor &t, const char *what);
void requireFloat(const Tensor &t, const char *what);

/// Runs fn(begin, end) over [0, n) on up to ctx.numThreads threads (a
/// persistent pool; inline when the pool is busy) when n is large enough to
/// pay for it.
void parallelFor(const Context &ctx, int64_t n, int64_t grain,
                 const std::function<void(int64_t, int64_t)> &fn);
/// parallelFor over independent iterations in up to `perThread` chunks per
/// thread, each taken by whichever thread is free: the caller starts at
/// once and takes the chunks a worker woken late has not reached (with one
/// chunk per thread, the caller waited for the worker's wake-up on every
/// call: the decode step's weight products are ~0.1-0.4 ms each).
void parallelForBalanced(const Context &ctx, int64_t n,
                         const std::function<void(int64_t, int64_t)> &fn,
                         int64_t perThread = 8);

/// a + b, a - b, a * b as ONNX computes integers: wrapping in two's
/// complement (signed overflow is undefined in C++); plain for floats.
template <typename T> T wrapAdd(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}
template <typename T> T wrapSub(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
  } else {
    return a - b;
  }
}
template <typename T> T wrapMul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else {
    return a * b;
  }
}

/// Calls fn(T{}) with T the C++ type of `dtype` (float, int64_t, int32_t,
/// uint8_t for Bool).
template <typename F> void dispatchType(DType dtype, F &&fn) {
  switch (dtype) {
  case DType::Float32: fn(float{}); return;
  case DType::Int64: fn(int64_t{}); return;
  case DType::Int32: fn(int32_t{}); return;
  case DType::Bool: fn(uint8_t{}); return;
  case DType::Float16: break;
  case DType::BFloat16: break;
  }
  fail(std::string(dtypeName(dtype)) + " tensor reached a kernel (internal error)");
}

} // namespace qeff::runtime::host

#endif // QEFF_RUNTIME_HOST_KERNEL_H
