//===- Gemm.h - Matrix products with a B laid out once ----------*- C++ -*-===//
//
// The host device's own GEMM for the weight products: B (a constant weight)
// is laid out once, when the session first uses it, in panels of kPanel
// columns (each panel K rows of kPanel consecutive elements, zero-padded past
// N), stored as f32, f16 or bf16 (2-byte weights stay 2 bytes and are
// widened in the kernel, exactly). C = A x B then runs register-blocked
// microkernels over the panels (AVX-512F, or AVX2 + FMA + F16C, chosen at run
// time by CPU features or QEFF_HOST_KERNELS; a portable loop otherwise),
// split between threads by panel, accumulating in f32 with FMA in k order.
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
#include <type_traits>
#include <vector>

namespace qeff::runtime::host::gemm {

enum class Elem : uint8_t { F32, F16, BF16 };

inline size_t elemSize(Elem e) { return e == Elem::F32 ? 4 : 2; }

/// B [K, N] in panels (see the file comment).
class PackedB {
public:
  static constexpr int64_t kPanel = 32;

  /// Lays out `src` ([k, n] row-major, or [n, k] when `transposed`), of
  /// element type `srcElem` (f16 / bf16 as raw bits), stored as `store`
  /// (`srcElem`, or f32: a widening; anything else is refused). Parallel on
  /// ctx's pool.
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
    return static_cast<const char *>(data_) + p * k_ * kPanel * elemSize(elem_);
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

/// A family of microkernels. Auto is activeImpl(); the others force one
/// (tests: every path against the reference loop on every machine, the
/// ones this CPU lacks skipped with a message).
enum class Impl : uint8_t { Auto, Portable, Avx2, Avx512 };

/// The family the host device uses: QEFF_HOST_KERNELS=portable|avx2|avx512
/// forces one (a family this CPU lacks falls back to the best it has, with
/// a message on stderr), QEFF_HOST_NO_SIMD=1 means portable; otherwise the
/// best this CPU has (AVX-512F, then AVX2 + FMA + F16C).
Impl activeImpl();
/// Whether this CPU runs `impl` (Auto and Portable: always).
bool implAvailable(Impl impl);
/// "portable", "avx2", "avx512" ("auto" for Auto).
const char *implName(Impl impl);

/// C[m, n] = A[m, k] x B: A rows `lda` floats apart, C rows `ldc` apart.
/// Threads over panels on ctx's pool. `impl` forces a family (tests; it
/// must be available).
void gemm(const Context &ctx, int64_t m, const float *a, int64_t lda, const PackedB &b,
          float *c, int64_t ldc, Impl impl = Impl::Auto);
/// C[m, n] = A x the first n (<= b.n()) columns of B, each element gemm's
/// bits (a prefill's attention scores of a block of rows, against the
/// positions up to the last one they keep, with K^T packed once).
void gemmColumns(const Context &ctx, int64_t m, const float *a, int64_t lda, const PackedB &b,
                 int64_t n, float *c, int64_t ldc, Impl impl = Impl::Auto);

/// C_i[m, n_i] = A[m, k] x B_i (C_i dense) for several B of the same k
/// (the q/k/v or gate/up projections of one input): one hand-off to the
/// pool for all of their panels instead of one per product; each C_i has
/// the bits gemm gives it.
void gemmMulti(const Context &ctx, int64_t m, const float *a, int64_t lda,
               const std::vector<const PackedB *> &bs, const std::vector<float *> &cs,
               Impl impl = Impl::Auto);

/// C[m, n] = A[m, k] x B with B [k, n] row-major used where it lies (f32,
/// or f16 as raw IEEE half bits: a weight in the external-data mapping), for
/// a product that should not wait for B to be laid out (a weight's first);
/// also bf16.
/// Threads split B's 32-column strips. Up to one tile of rows (8), the
/// microkernels read each strip with B's row stride (a partial last strip
/// through a zero-padded copy), each thread its part of every row of B in
/// order; with more rows, each 32 KiB block of a strip is copied into a
/// panel block once and used by all of them.
/// With `accumulate`, C += A x B, the sums of each block of kKCInPlace
/// rows of B added to C as the blocks of one longer product are: a product
/// over rows [8i, 8j) of B then one over [8j, 8l) gives the bits of one
/// over [8i, 8l) (the attention's runs of valid key positions).
void gemmInPlace(const Context &ctx, int64_t m, const float *a, int64_t lda, const void *b,
                 Elem elem, int64_t k, int64_t n, float *c, int64_t ldc, Impl impl = Impl::Auto,
                 bool accumulate = false);
/// Rows of B per block of gemmInPlace with up to 8 rows of A.
constexpr int64_t kKCInPlace = 8;

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
              int64_t ldb, bool transB, float *c, int64_t ldc, std::vector<float> &scratch,
              Impl impl = Impl::Auto);

/// True when vector microkernels are in use (activeImpl() is not
/// Portable). Without them f32 weights stay with OpenBLAS; f16 and bf16
/// weights use the portable loop.
bool fastKernels();

/// The plain reference loop for tests: C = A x B, B [k, n] row-major f32,
/// f32 sums in k order.
void referenceGemm(int64_t m, int64_t n, int64_t k, const float *a, const float *b, float *c);

namespace detail {
/// f(std::integral_constant<Elem, E>{}) for the E of `e`: the vector
/// kernels' one dispatch from the element type to their templates.
template <typename F> void withElem(Elem e, F &&f) {
  switch (e) {
  case Elem::F16: return f(std::integral_constant<Elem, Elem::F16>{});
  case Elem::BF16: return f(std::integral_constant<Elem, Elem::BF16>{});
  case Elem::F32: break;
  }
  f(std::integral_constant<Elem, Elem::F32>{});
}

/// Microkernels: C tile (mr <= 8 rows, cols <= kPanel valid) = A rows x one
/// panel over kc rows of B starting at row k0 (A already offset by k0), the
/// panel's rows `ldp` elements apart (kPanel when packed; all kPanel columns
/// of each row are read); `accumulate` adds to C instead of overwriting it.
void microAvx512(int64_t mr, int64_t kc, const float *a, int64_t lda, const void *panel,
                 int64_t ldp, Elem elem, float *c, int64_t ldc, int64_t cols, bool accumulate);
/// The same over two panels at once (`panel1` kPanel columns after
/// `panel0`'s in C; mr <= kWideMR rows, cols <= 2 * kPanel valid): each
/// element the same sum as microAvx512's, with fewer loads per FMA.
void microWideAvx512(int64_t mr, int64_t kc, const float *a, int64_t lda, const void *panel0,
                     const void *panel1, int64_t ldp, Elem elem, float *c, int64_t ldc,
                     int64_t cols, bool accumulate);
constexpr int64_t kWideMR = 6;
bool cpuHasAvx512();
/// AVX2 + FMA + F16C: the same microkernel contract in ymm registers (each
/// element's sum the same FMA chain in k order, so bitwise the AVX-512
/// results); gemvAvx2 and dotsAvx2 as below (dotsAvx2 sums 8 lanes).
void microAvx2(int64_t mr, int64_t kc, const float *a, int64_t lda, const void *panel,
               int64_t ldp, Elem elem, float *c, int64_t ldc, int64_t cols, bool accumulate);
bool cpuHasAvx2();
void gemvAvx2(int64_t np, int64_t k, int64_t kKC, const float *a, const void *panels,
              Elem elem, float *c, int64_t cols);
void dotsAvx2(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b,
              int64_t ldb, float *c, int64_t ldc);
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
  /// `b` [k, n], or [n, k] when `transposed`; f32, f16 or bf16.
  WeightB(Tensor b, bool transposed, std::string name,
          std::function<void(const void *, size_t)> release);
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  /// C[m, n] = A[m, k] x B, A and C dense.
  void multiply(Context &ctx, int64_t m, const float *a, float *c);
  /// A product is about to use B: its panels, or null when this product
  /// reads B where it lies (the first; the next lays B out).
  std::shared_ptr<const gemm::PackedB> use(const Context &ctx) { return packedFor(ctx); }
  /// multiply with what use() returned.
  void multiplyWith(Context &ctx, const std::shared_ptr<const gemm::PackedB> &packed, int64_t m,
                    const float *a, float *c);
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
