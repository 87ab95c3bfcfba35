//===- Gemm.h - Matrix products with a B laid out once ----------*- C++ -*-===//
//
// The host device's own GEMM for the weight products: B (a constant weight)
// is laid out once, when the session first uses it, in panels of kPanel
// columns (each panel K rows of kPanel consecutive elements, zero-padded past
// N), stored as f32 or as f16 (2-byte weights stay 2 bytes and are widened
// in the kernel). C = A x B then runs register-blocked microkernels over the
// panels (AVX-512F, chosen at run time; a portable loop otherwise), split
// between threads by panel, accumulating in f32 with FMA in k order.
//
// Also the per-call forms the attention uses (B not constant): a product of
// one A row with a B or B^T of any layout, and the per-head batch on the
// pool.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_HOST_GEMM_H
#define QEFF_RUNTIME_HOST_GEMM_H

#include "runtime/host/Kernel.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace qeff::runtime::host::gemm {

enum class Elem : uint8_t { F32, F16 };

/// B [K, N] in panels (see the file comment).
class PackedB {
public:
  static constexpr int64_t kPanel = 32;

  /// Lays out `src` ([k, n] row-major, or [n, k] when `transposed`), of
  /// element type `srcElem` (f16 as raw IEEE half bits), stored as `store`
  /// (f16 -> f32 widens; f32 -> f16 is refused). Parallel on ctx's pool.
  /// The panels go to fresh memory, or into `scratch` (grown as needed; it
  /// must outlive the result) for a B used once.
  static std::shared_ptr<PackedB> pack(const Context &ctx, const void *src, Elem srcElem,
                                       int64_t k, int64_t n, bool transposed, Elem store,
                                       std::vector<float> *scratch = nullptr);
  ~PackedB();

  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  int64_t panels() const { return (n_ + kPanel - 1) / kPanel; }
  Elem elem() const { return elem_; }
  /// Panel p: k() * kPanel elements.
  const void *panel(int64_t p) const {
    return static_cast<const char *>(data_) + p * k_ * kPanel * (elem_ == Elem::F32 ? 4 : 2);
  }
  size_t bytes() const { return bytes_; }

private:
  PackedB() = default;
  int64_t k_ = 0, n_ = 0;
  Elem elem_ = Elem::F32;
  void *data_ = nullptr;
  size_t bytes_ = 0;
  bool owned_ = true;
};

enum class Impl : uint8_t { Auto, Portable };

/// C[m, n] = A[m, k] x B: A rows `lda` floats apart, C rows `ldc` apart.
/// Threads over panels on ctx's pool. `impl` = Portable forces the portable
/// microkernel (tests).
void gemm(const Context &ctx, int64_t m, const float *a, int64_t lda, const PackedB &b,
          float *c, int64_t ldc, Impl impl = Impl::Auto);

/// C[m, n] = A[m, k] x B with B [k, n] row-major used where it lies (f32,
/// or f16 as raw IEEE half bits: a weight in the external-data mapping), for
/// a product that should not wait for B to be laid out (a weight's first).
/// Threads split B's 32-column strips. Up to one tile of rows (8), the
/// microkernels read each strip with B's row stride (a partial last strip
/// through a zero-padded copy), each thread its part of every row of B in
/// order; with more rows, each 32 KiB block of a strip is copied into a
/// panel block once and used by all of them.
void gemmInPlace(const Context &ctx, int64_t m, const float *a, int64_t lda, const void *b,
                 Elem elem, int64_t k, int64_t n, float *c, int64_t ldc, Impl impl = Impl::Auto);

/// Rows up to which headGemm multiplies by B^T with dot products.
constexpr int64_t kDotRows = 16;

/// One product of a batch on the calling thread (the attention's per-head
/// products, run on the pool one head per task): C[m, n] = A[m, k] x B, B
/// [k, n] with rows `ldb` apart, or with `transB` B^T stored as [n, k].
/// Few rows read B in place: with the vector kernels, up to kDotRows rows
/// by B^T are dot products along B's rows (detail::dotsAvx512) and up to 8
/// rows by a dense B run the microkernels on its strips (gemmInPlace);
/// without them, one row is a dot / axpy loop. Otherwise B is packed into
/// `scratch` and the microkernels run on the panels.
void headGemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b,
              int64_t ldb, bool transB, float *c, int64_t ldc, std::vector<float> &scratch);

/// True when the vector microkernels are in use (AVX-512F on this CPU and
/// QEFF_HOST_NO_SIMD unset). Without them f32 weights stay with OpenBLAS;
/// f16 weights use the portable loop.
bool fastKernels();

/// The plain reference loop for tests: C = A x B, B [k, n] row-major f32,
/// f32 sums in k order.
void referenceGemm(int64_t m, int64_t n, int64_t k, const float *a, const float *b, float *c);

namespace detail {
/// Microkernels: C tile (mr <= 8 rows, cols <= kPanel valid) = A rows x one
/// panel over kc rows of B starting at row k0 (A already offset by k0), the
/// panel's rows `ldp` elements apart (kPanel when packed; all kPanel columns
/// of each row are read); `accumulate` adds to C instead of overwriting it.
void microAvx512(int64_t mr, int64_t kc, const float *a, int64_t lda, const void *panel,
                 int64_t ldp, Elem elem, float *c, int64_t ldc, int64_t cols, bool accumulate);
bool cpuHasAvx512();
/// C[0, cols) = one row of A x np (1 or 2) consecutive packed panels of B
/// (k rows each; cols <= np * kPanel valid columns), sums restarted every
/// kKC rows of B as gemm's blocks do: the same bits as np one-row
/// microkernel calls.
void gemvAvx512(int64_t np, int64_t k, int64_t kKC, const float *a, const void *panels,
                Elem elem, float *c, int64_t cols);
/// C[m, n] = A[m, k] x B^T with B stored as [n, k] (rows `ldb` apart): one
/// dot product per element, each row of B loaded once for four rows of A,
/// sums of 16 lanes in k order then added pairwise. For few rows (decode's
/// attention scores), where packing B^T would cost more than the product.
void dotsAvx512(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b,
                int64_t ldb, float *c, int64_t ldc);
} // namespace detail

} // namespace qeff::runtime::host::gemm

namespace qeff::runtime::host {

/// A constant weight B of one or more MatMuls (PackedMatMul.cpp): read in
/// place by its first product, laid out once in panels by the next (or at
/// load: layOut), its mapped pages then released through `release`.
/// Thread-safe.
class WeightB {
public:
  /// `b` [k, n], or [n, k] when `transposed`; f32 or f16.
  WeightB(Tensor b, bool transposed, std::string name,
          std::function<void(const void *, size_t)> release);
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  /// C[m, n] = A[m, k] x B, A and C dense.
  void multiply(Context &ctx, int64_t m, const float *a, float *c);
  /// Lays B out now (SessionOptions::prepackWeights); no-op when it is.
  void layOut(const Context &ctx);
  /// Whether B has been laid out (tests, benchmarks).
  bool packed() const;

private:
  std::shared_ptr<const gemm::PackedB> packedFor(const Context &ctx);
  void layOutLocked(const Context &ctx);

  Tensor b_;
  bool transposed_;
  std::string name_;
  std::function<void(const void *, size_t)> release_;
  int64_t k_ = 0, n_ = 0;
  gemm::Elem elem_ = gemm::Elem::F32;
  mutable std::mutex mutex_;
  bool used_ = false;
  std::shared_ptr<const gemm::PackedB> packed_;
};

} // namespace qeff::runtime::host

#endif // QEFF_RUNTIME_HOST_GEMM_H
