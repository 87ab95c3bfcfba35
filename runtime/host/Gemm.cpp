//===- Gemm.cpp - Packing B once, blocking, the portable microkernel ------===//

#include "runtime/host/Gemm.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string_view>

namespace qeff::runtime::host::gemm {
namespace detail {

// The vector families' CPU features (none off x86-64).
#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#define QEFF_CPU_HAS(feature) (__builtin_cpu_init(), __builtin_cpu_supports(feature))
#else
#define QEFF_CPU_HAS(feature) false
#endif

bool cpuHasAvx512() {
  return QEFF_CPU_HAS("avx512f") && QEFF_CPU_HAS("fma") && QEFF_CPU_HAS("f16c");
}

bool cpuHasAvx2() { return QEFF_CPU_HAS("avx2") && QEFF_CPU_HAS("fma") && QEFF_CPU_HAS("f16c"); }

} // namespace detail

namespace {

constexpr int64_t kPanel = PackedB::kPanel;
constexpr int64_t kMR = 8;   ///< rows of A per microkernel call
constexpr int64_t kKC = 256; ///< rows of B per panel block (32 KiB of f32)
constexpr int64_t kMC = 192; ///< rows of A per block (kMC x kKC in L2)
/// Rows of A from which gemm runs the two-panel microkernel: below, the
/// one-panel kernel's 8-row tiles waste fewer rows (a short prompt).
constexpr int64_t kWideMinRows = 16;
// kKCInPlace (Gemm.h): rows of B per block when one tile of rows reads B in
// place: short blocks keep few rows of B streaming at once.

/// The portable microkernel (CPUs without AVX2, QEFF_HOST_KERNELS=portable):
/// the same blocking and the same k order as the vector ones.
void microPortable(int64_t mr, int64_t kc, const float *a, int64_t lda, const void *panel,
                   int64_t ldp, Elem elem, float *c, int64_t ldc, int64_t cols, bool accumulate) {
  float acc[kMR][kPanel] = {};
  float row[kPanel];
  for (int64_t k = 0; k < kc; ++k) {
    if (elem == Elem::F16) {
      const uint16_t *p = static_cast<const uint16_t *>(panel) + k * ldp;
      for (int64_t j = 0; j < kPanel; ++j)
        row[j] = halfToFloat(p[j]);
    } else if (elem == Elem::BF16) {
      const uint16_t *p = static_cast<const uint16_t *>(panel) + k * ldp;
      for (int64_t j = 0; j < kPanel; ++j)
        row[j] = bfloat16ToFloat(p[j]);
    } else {
      std::memcpy(row, static_cast<const float *>(panel) + k * ldp, sizeof(row));
    }
    for (int64_t r = 0; r < mr; ++r) {
      float av = a[r * lda + k];
      for (int64_t j = 0; j < kPanel; ++j)
        acc[r][j] += av * row[j];
    }
  }
  for (int64_t r = 0; r < mr; ++r)
    for (int64_t j = 0; j < cols; ++j)
      c[r * ldc + j] = accumulate ? c[r * ldc + j] + acc[r][j] : acc[r][j];
}

Impl bestImpl() {
  return detail::cpuHasAvx512() ? Impl::Avx512 : detail::cpuHasAvx2() ? Impl::Avx2 : Impl::Portable;
}

Impl resolveImpl() {
  if (std::getenv("QEFF_HOST_NO_SIMD"))
    return Impl::Portable;
  const char *env = std::getenv("QEFF_HOST_KERNELS");
  std::string_view want = env ? env : "";
  if (want.empty() || want == "auto")
    return bestImpl();
  Impl forced = want == "portable" ? Impl::Portable
                : want == "avx2"   ? Impl::Avx2
                : want == "avx512" ? Impl::Avx512
                                   : Impl::Auto;
  if (forced == Impl::Auto) {
    std::fprintf(stderr,
                 "qeff: QEFF_HOST_KERNELS='%s' is not one of auto, portable, avx2, avx512; "
                 "using %s\n",
                 env, implName(bestImpl()));
    return bestImpl();
  }
  if (!implAvailable(forced)) {
    std::fprintf(stderr, "qeff: QEFF_HOST_KERNELS=%s: this CPU lacks it; using %s\n", env,
                 implName(bestImpl()));
    return bestImpl();
  }
  return forced;
}

/// The kernels of one family; null gemv / dots: none (the blocked
/// microkernel path, the scalar loops).
struct Kernels {
  decltype(&detail::microAvx512) micro;
  decltype(&detail::gemvAvx512) gemv;
  decltype(&detail::dotsAvx512) dots;
  decltype(&detail::microWideAvx512) wide; ///< null: one panel at a time
};

Kernels kernelsFor(Impl impl) {
  if (impl == Impl::Auto)
    impl = activeImpl();
  QEFF_CHECK(implAvailable(impl),
             std::string("the ") + implName(impl) + " kernels do not run on this CPU (internal error)");
  switch (impl) {
  case Impl::Avx512:
    return {detail::microAvx512, detail::gemvAvx512, detail::dotsAvx512,
            detail::microWideAvx512};
  case Impl::Avx2: return {detail::microAvx2, detail::gemvAvx2, detail::dotsAvx2, nullptr};
  default: return {microPortable, nullptr, nullptr, nullptr};
  }
}

/// Anonymous memory for a packed B (2 MiB huge pages where the kernel gives
/// them: a few thousand faults instead of a million for a 4 GB model).
void *allocatePacked(size_t bytes) {
  void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  if (bytes >= (size_t(2) << 20))
    madvise(p, bytes, MADV_HUGEPAGE);
#endif
  return p;
}

/// Handles the products with no k sum (nothing to write, or C = 0); false
/// when there is work.
bool emptyProduct(int64_t m, int64_t n, int64_t k, float *c, int64_t ldc) {
  if (m == 0 || n == 0)
    return true;
  if (k != 0)
    return false;
  for (int64_t i = 0; i < m; ++i)
    std::fill(c + i * ldc, c + i * ldc + n, 0.f);
  return true;
}

} // namespace

Impl activeImpl() {
  static const Impl impl = resolveImpl();
  return impl;
}

bool implAvailable(Impl impl) {
  switch (impl) {
  case Impl::Avx512: return detail::cpuHasAvx512();
  case Impl::Avx2: return detail::cpuHasAvx2();
  default: return true;
  }
}

const char *implName(Impl impl) {
  switch (impl) {
  case Impl::Auto: return "auto";
  case Impl::Portable: return "portable";
  case Impl::Avx2: return "avx2";
  case Impl::Avx512: return "avx512";
  }
  return "?";
}

bool fastKernels() { return activeImpl() != Impl::Portable; }

PackedB::~PackedB() {
  if (data_ && owned_)
    munmap(data_, bytes_);
}

std::shared_ptr<PackedB> PackedB::pack(const Context &ctx, const void *src, Elem srcElem,
                                       int64_t k, int64_t n, bool transposed, Elem store,
                                       std::vector<float> *scratch) {
  QEFF_CHECK(k >= 0 && n >= 0, "negative matrix size (internal error)");
  QEFF_CHECK(store == srcElem || store == Elem::F32,
             "packing weights into a narrower or other 2-byte type would round them "
             "(internal error)");
  auto b = std::shared_ptr<PackedB>(new PackedB);
  b->k_ = k;
  b->n_ = n;
  b->elem_ = store;
  size_t es = elemSize(store);
  int64_t panels = b->panels();
  b->bytes_ = std::max<size_t>(1, size_t(panels) * size_t(k) * kPanel * es);
  if (scratch) {
    scratch->resize((b->bytes_ + 3) / 4);
    b->data_ = scratch->data();
    b->owned_ = false;
  } else {
    b->data_ = allocatePacked(b->bytes_);
  }
  if (!k || !n)
    return b;
  char *dst = static_cast<char *>(b->data_);
  const float *sf = static_cast<const float *>(src);
  const uint16_t *sh = static_cast<const uint16_t *>(src);
  // One element of B (row kk, column col) as the stored type.
  auto element = [&](int64_t kk, int64_t col, char *out) {
    int64_t i = transposed ? col * k + kk : kk * n + col;
    if (srcElem == store)
      std::memcpy(out, srcElem == Elem::F32 ? static_cast<const void *>(sf + i)
                                            : static_cast<const void *>(sh + i),
                  es);
    else { // f16 / bf16 -> f32
      float v = srcElem == Elem::F16 ? halfToFloat(sh[i]) : bfloat16ToFloat(sh[i]);
      std::memcpy(out, &v, 4);
    }
  };
  int64_t panelBytes = k * kPanel * es;
  if (!transposed) {
    // Panel-major: each thread fills whole panels, kGroup at a time, row by
    // row (each source row read as one run of kGroup x kPanel elements,
    // each panel written in order). Writing one source row into all panels
    // instead scatters 128-byte runs over the whole layout: several times
    // slower on large N (the LM head).
    constexpr int64_t kGroup = 8;
    int64_t groups = (panels + kGroup - 1) / kGroup;
    parallelFor(ctx, groups, 1, [&](int64_t g0, int64_t g1) {
      for (int64_t g = g0; g < g1; ++g) {
        int64_t pb = g * kGroup, pe = std::min(panels, pb + kGroup);
        for (int64_t kk = 0; kk < k; ++kk)
          for (int64_t p = pb; p < pe; ++p) {
            char *out = dst + p * panelBytes + kk * kPanel * es;
            int64_t c0 = p * kPanel, cols = std::min(kPanel, n - c0);
            if (srcElem == store) {
              const char *in = static_cast<const char *>(src) + (kk * n + c0) * es;
              std::memcpy(out, in, cols * es);
            } else {
              for (int64_t j = 0; j < cols; ++j)
                element(kk, c0 + j, out + j * es);
            }
            if (cols < kPanel)
              std::memset(out + cols * es, 0, (kPanel - cols) * es);
          }
      }
    });
  } else {
    parallelFor(ctx, panels, 1, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        char *out = dst + p * panelBytes;
        int64_t c0 = p * kPanel, cols = std::min(kPanel, n - c0);
        if (cols < kPanel)
          for (int64_t kk = 0; kk < k; ++kk)
            std::memset(out + (kk * kPanel + cols) * es, 0, (kPanel - cols) * es);
        if (srcElem == Elem::F32 && store == Elem::F32) {
          // The common case (K^T of an attention's scores, once per head
          // and chunk): a plain transpose of a cols x k block, no
          // per-element dispatch.
          float *o = reinterpret_cast<float *>(out);
          for (int64_t j = 0; j < cols; ++j) {
            const float *col = sf + (c0 + j) * k;
            for (int64_t kk = 0; kk < k; ++kk)
              o[kk * kPanel + j] = col[kk];
          }
          continue;
        }
        for (int64_t j = 0; j < cols; ++j)
          for (int64_t kk = 0; kk < k; ++kk)
            element(kk, c0 + j, out + (kk * kPanel + j) * es);
      }
    });
  }
  return b;
}

namespace {

/// Panels [p0, p1) of C = A x B on the calling thread (gemm's work), C's
/// columns up to `n` (<= b.n()) written.
void gemmPanels(const Kernels &kern, int64_t m, const float *a, int64_t lda, const PackedB &b,
                int64_t n, float *c, int64_t ldc, int64_t p0, int64_t p1) {
  int64_t k = b.k();
  auto micro = kern.micro;
  size_t es = elemSize(b.elem());
  Elem elem = b.elem();
  if (m == 1 && kern.gemv) {
    // Decode: two panels at a time (detail::gemvAvx512 / gemvAvx2), the
    // same sums.
    for (int64_t p = p0; p < p1; p += 2) {
      int64_t np = std::min<int64_t>(2, p1 - p);
      kern.gemv(np, k, kKC, a, b.panel(p), elem, c + p * kPanel,
                std::min(np * kPanel, n - p * kPanel));
    }
    return;
  }
  for (int64_t i0 = 0; i0 < m; i0 += kMC) {
    int64_t i1 = std::min(m, i0 + kMC);
    int64_t p = p0;
    if (kern.wide && m >= kWideMinRows) {
      // Two panels per microkernel call (the same sums, fewer loads).
      for (; p + 1 < p1; p += 2) {
        int64_t cols = std::min(2 * kPanel, n - p * kPanel);
        const char *panel0 = static_cast<const char *>(b.panel(p));
        const char *panel1 = static_cast<const char *>(b.panel(p + 1));
        for (int64_t k0 = 0; k0 < k; k0 += kKC) {
          int64_t kc = std::min(kKC, k - k0);
          size_t off = k0 * kPanel * es;
          for (int64_t i = i0; i < i1; i += detail::kWideMR)
            kern.wide(std::min(detail::kWideMR, i1 - i), kc, a + i * lda + k0, lda,
                      panel0 + off, panel1 + off, kPanel, elem, c + i * ldc + p * kPanel, ldc,
                      cols, k0 > 0);
        }
      }
    }
    for (; p < p1; ++p) {
      int64_t cols = std::min(kPanel, n - p * kPanel);
      const char *panel = static_cast<const char *>(b.panel(p));
      for (int64_t k0 = 0; k0 < k; k0 += kKC) {
        int64_t kc = std::min(kKC, k - k0);
        const char *block = panel + k0 * kPanel * es;
        for (int64_t i = i0; i < i1; i += kMR)
          micro(std::min(kMR, i1 - i), kc, a + i * lda + k0, lda, block, kPanel, elem,
                c + i * ldc + p * kPanel, ldc, cols, k0 > 0);
      }
    }
  }
}

} // namespace

void gemm(const Context &ctx, int64_t m, const float *a, int64_t lda, const PackedB &b,
          float *c, int64_t ldc, Impl impl) {
  gemmColumns(ctx, m, a, lda, b, b.n(), c, ldc, impl);
}

void gemmColumns(const Context &ctx, int64_t m, const float *a, int64_t lda, const PackedB &b,
                 int64_t n, float *c, int64_t ldc, Impl impl) {
  QEFF_CHECK(n >= 0 && n <= b.n(), "gemmColumns: more columns than B has (internal error)");
  if (emptyProduct(m, n, b.k(), c, ldc))
    return;
  Kernels kern = kernelsFor(impl);
  parallelForBalanced(ctx, (n + kPanel - 1) / kPanel, [&](int64_t p0, int64_t p1) {
    gemmPanels(kern, m, a, lda, b, n, c, ldc, p0, p1);
  });
}

void gemmMulti(const Context &ctx, int64_t m, const float *a, int64_t lda,
               const std::vector<const PackedB *> &bs, const std::vector<float *> &cs,
               Impl impl) {
  QEFF_CHECK(bs.size() == cs.size(), "gemmMulti: one C per B (internal error)");
  // Panels of the products that have work, numbered one after the other.
  std::vector<size_t> live;
  std::vector<int64_t> first{0};
  for (size_t i = 0; i < bs.size(); ++i)
    if (!emptyProduct(m, bs[i]->n(), bs[i]->k(), cs[i], bs[i]->n())) {
      live.push_back(i);
      first.push_back(first.back() + bs[i]->panels());
    }
  Kernels kern = kernelsFor(impl);
  parallelForBalanced(ctx, first.back(), [&](int64_t q0, int64_t q1) {
    for (size_t j = 0; j < live.size(); ++j) {
      int64_t p0 = std::max(q0, first[j]), p1 = std::min(q1, first[j + 1]);
      if (p0 < p1) {
        const PackedB &b = *bs[live[j]];
        gemmPanels(kern, m, a, lda, b, b.n(), cs[live[j]], b.n(), p0 - first[j], p1 - first[j]);
      }
    }
  });
}

void gemmInPlace(const Context &ctx, int64_t m, const float *a, int64_t lda, const void *b,
                 Elem elem, int64_t k, int64_t n, float *c, int64_t ldc, Impl impl,
                 bool accumulate) {
  if (accumulate && (m == 0 || n == 0 || k == 0))
    return;
  if (emptyProduct(m, n, k, c, ldc))
    return;
  auto micro = kernelsFor(impl).micro;
  size_t es = elemSize(elem);
  int64_t strips = (n + kPanel - 1) / kPanel;
  const char *base = static_cast<const char *>(b);
  // Rows [k0, k0 + kc) of strip p copied into `block` as a panel block
  // (kPanel elements a row, zero-padded past n).
  auto copyBlock = [&](int64_t p, int64_t k0, int64_t kc, char *block) {
    int64_t c0 = p * kPanel, cols = std::min(kPanel, n - c0);
    for (int64_t r = 0; r < kc; ++r) {
      std::memcpy(block + r * kPanel * es, base + ((k0 + r) * n + c0) * es, cols * es);
      if (cols < kPanel)
        std::memset(block + (r * kPanel + cols) * es, 0, (kPanel - cols) * es);
    }
  };
  parallelFor(ctx, strips, 1, [&](int64_t p0, int64_t p1) {
    if (m <= kMR) {
      // One tile of rows: each element of B is used once, so the
      // microkernel reads the strips where they lie, kKCInPlace rows at a
      // time across all of this thread's strips (its part of each row of B
      // in order). A partial last strip goes through a zero-padded copy.
      alignas(64) float tail[kKCInPlace * kPanel];
      for (int64_t k0 = 0; k0 < k; k0 += kKCInPlace) {
        int64_t kc = std::min(kKCInPlace, k - k0);
        for (int64_t p = p0; p < p1; ++p) {
          int64_t c0 = p * kPanel, cols = std::min(kPanel, n - c0);
          const void *strip = base + (k0 * n + c0) * es;
          int64_t ldp = n;
          if (cols < kPanel) {
            copyBlock(p, k0, kc, reinterpret_cast<char *>(tail));
            strip = tail;
            ldp = kPanel;
          }
          micro(m, kc, a + k0, lda, strip, ldp, elem, c + c0, ldc, cols, accumulate || k0 > 0);
        }
      }
      return;
    }
    // More rows: every block of B is used by each tile of rows, and read
    // with B's row stride it would not stay in cache (at power-of-two row
    // lengths the rows of a strip share cache sets). So kKCCopy rows of up
    // to kGroupCopy strips are copied into panel blocks first, each row
    // segment read in order, and every tile of rows runs on them.
    constexpr int64_t kKCCopy = 128, kGroupCopy = 16, kPrefetchRows = 8;
    std::vector<float> scratch(kKCCopy * kPanel * kGroupCopy);
    char *blocks = reinterpret_cast<char *>(scratch.data());
    for (int64_t i0 = 0; i0 < m; i0 += kMC) {
      int64_t i1 = std::min(m, i0 + kMC);
      for (int64_t g0 = p0; g0 < p1; g0 += kGroupCopy) {
        int64_t g1 = std::min(p1, g0 + kGroupCopy);
        for (int64_t k0 = 0; k0 < k; k0 += kKCCopy) {
          int64_t kc = std::min(kKCCopy, k - k0);
          size_t blockBytes = kc * kPanel * es;
          // Whole strips with a constant-size copy (inlined vector moves),
          // then a partial last one.
          int64_t full = std::min(g1, n / kPanel);
          // Each row's segment is a short run (up to 2 KiB) in a row of B
          // that is kilobytes long: the hardware prefetchers barely start on
          // one, so the copy waited on memory for every row. The rows
          // kPrefetchRows ahead are prefetched.
          size_t segment = std::min(n, g1 * kPanel) * es - g0 * kPanel * es;
          for (int64_t r = 0; r < kc; ++r) {
            const char *row = base + (k0 + r) * n * es;
            if (k0 + r + kPrefetchRows < k) {
              const char *ahead = row + kPrefetchRows * n * es + g0 * kPanel * es;
              for (size_t off = 0; off < segment; off += 64)
                __builtin_prefetch(ahead + off);
            }
            char *out = blocks + r * kPanel * es;
            if (es == 4)
              for (int64_t p = g0; p < full; ++p)
                std::memcpy(out + (p - g0) * blockBytes, row + p * kPanel * 4, kPanel * 4);
            else
              for (int64_t p = g0; p < full; ++p)
                std::memcpy(out + (p - g0) * blockBytes, row + p * kPanel * 2, kPanel * 2);
            for (int64_t p = std::max(g0, full); p < g1; ++p) {
              int64_t c0 = p * kPanel, cols = n - c0;
              std::memcpy(out + (p - g0) * blockBytes, row + c0 * es, cols * es);
              std::memset(out + (p - g0) * blockBytes + cols * es, 0, (kPanel - cols) * es);
            }
          }
          for (int64_t p = g0; p < g1; ++p) {
            int64_t c0 = p * kPanel, cols = std::min(kPanel, n - c0);
            const char *block = blocks + (p - g0) * blockBytes;
            for (int64_t i = i0; i < i1; i += kMR)
              micro(std::min(kMR, i1 - i), kc, a + i * lda + k0, lda, block, kPanel, elem,
                    c + i * ldc + c0, ldc, cols, accumulate || k0 > 0);
          }
        }
      }
    }
  });
}

void headGemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b,
              int64_t ldb, bool transB, float *c, int64_t ldc, std::vector<float> &scratch,
              Impl impl) {
  if (m == 0 || n == 0)
    return;
  Kernels kern = kernelsFor(impl);
  if (kern.dots && k > 0) {
    if (transB && m <= kDotRows) {
      kern.dots(m, n, k, a, lda, b, ldb, c, ldc);
      return;
    }
    if (!transB && m <= kMR && ldb == n) {
      gemmInPlace(Context{nullptr, 1}, m, a, lda, b, Elem::F32, k, n, c, ldc, impl);
      return;
    }
  }
  if (m == 1) {
    if (transB) {
      // c[j] = a . B^T row j: 8 partial sums, so that the loop vectorises.
      for (int64_t j = 0; j < n; ++j) {
        const float *bj = b + j * ldb;
        float part[8] = {};
        int64_t p = 0;
        for (; p + 8 <= k; p += 8)
          for (int q = 0; q < 8; ++q)
            part[q] += a[p + q] * bj[p + q];
        float s = ((part[0] + part[1]) + (part[2] + part[3])) +
                  ((part[4] + part[5]) + (part[6] + part[7]));
        for (; p < k; ++p)
          s += a[p] * bj[p];
        c[j] = s;
      }
    } else {
      std::fill(c, c + n, 0.f);
      for (int64_t p = 0; p < k; ++p) {
        float ap = a[p];
        const float *bp = b + p * ldb;
        for (int64_t j = 0; j < n; ++j)
          c[j] += ap * bp[j];
      }
    }
    return;
  }
  // B packed from its strided rows: only the ldb == row length case is a
  // plain matrix, so copy rows first when they are padded.
  const float *src = b;
  std::vector<float> dense;
  int64_t rows = transB ? n : k, cols = transB ? k : n;
  if (ldb != cols) {
    dense.resize(rows * cols);
    for (int64_t r = 0; r < rows; ++r)
      std::copy(b + r * ldb, b + r * ldb + cols, dense.begin() + r * cols);
    src = dense.data();
  }
  Context serial{nullptr, 1};
  auto packed = PackedB::pack(serial, src, Elem::F32, k, n, transB, Elem::F32, &scratch);
  gemm(serial, m, a, lda, *packed, c, ldc, impl);
}

void referenceGemm(int64_t m, int64_t n, int64_t k, const float *a, const float *b, float *c) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float s = 0.f;
      for (int64_t p = 0; p < k; ++p)
        s += a[i * k + p] * b[p * n + j];
      c[i * n + j] = s;
    }
}

} // namespace qeff::runtime::host::gemm
