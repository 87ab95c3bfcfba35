//===- GemmBench.cpp - the host device's weight products -------------------===//
//
// Part of qeff. Run on demand (not a test): times the weight products of one
// TinyLlama-1.1B layer (q/k/v/o, gate/up/down) and the LM head for a prefill
// chunk (m = 128), a short prompt (m = 8) and a decode step (m = 1):
// OpenBLAS sgemm / sgemv (which packs B on every call), the packed-B kernels
// on f32 panels and on f16 panels (the f16-artifact path), and B used in
// place (gemmInPlace, f32 and f16: what the host device runs before a weight
// is laid out). Prints GFLOPS (best of --reps, default 5) with --threads
// (default 1), and the time to lay each weight out. With one thread the
// products are timed on the thread's CPU clock, so other processes on a
// shared machine do not count.
//
//   ninja -C build qeff-gemm-bench && build/bin/qeff-gemm-bench --threads 2
//
//===----------------------------------------------------------------------===//

#include "runtime/host/Gemm.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

using namespace qeff::runtime;
using namespace qeff::runtime::host;

namespace {
/// Seconds on the thread's own CPU clock with one thread (time slices lost
/// to other processes on a shared machine do not count), else wall time.
int gThreads = 1;
double cpuClock() {
  if (gThreads == 1) {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
} // namespace

int main(int argc, char **argv) {
  int reps = 5, threads = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--reps") == 0)
      reps = std::max(1, std::atoi(argv[i + 1]));
    else if (std::strcmp(argv[i], "--threads") == 0)
      threads = std::max(1, std::atoi(argv[i + 1]));
  }
  gThreads = threads;
  openblas_set_num_threads(threads);
  auto arena = std::make_shared<Arena>();
  Context ctx{arena.get(), threads};
  struct Shape {
    const char *name;
    int64_t k, n;
  } shapes[] = {{"q/o_proj [2048, 2048]", 2048, 2048},
                {"k/v_proj [2048, 256]", 2048, 256},
                {"gate/up  [2048, 5632]", 2048, 5632},
                {"down     [5632, 2048]", 5632, 2048},
                {"lm_head  [2048, 32000]", 2048, 32000}};
  std::printf("AVX-512 kernels: %s; threads %d; GFLOPS, best of %d\n",
              gemm::fastKernels() ? "yes" : "no", threads, reps);
  std::printf("%-24s %4s %10s %10s %10s %10s %10s\n", "weight", "m", "openblas", "packed32",
              "packed16", "inplace32", "inplace16");
  for (const Shape &s : shapes) {
    std::vector<float> b(s.k * s.n);
    std::vector<uint16_t> bh(b.size());
    for (size_t i = 0; i < b.size(); ++i) {
      b[i] = float(int((i * 7919) % 2001) - 1000) * 1e-3f;
      bh[i] = floatToHalf(b[i]);
    }
    auto l0 = std::chrono::steady_clock::now();
    auto p32 = gemm::PackedB::pack(ctx, b.data(), gemm::Elem::F32, s.k, s.n, false,
                                   gemm::Elem::F32);
    auto l1 = std::chrono::steady_clock::now();
    auto p16 = gemm::PackedB::pack(ctx, bh.data(), gemm::Elem::F16, s.k, s.n, false,
                                   gemm::Elem::F16);
    auto l2 = std::chrono::steady_clock::now();
    std::printf("%-24s laid out in %.1f ms (f32), %.1f ms (f16)\n", s.name,
                std::chrono::duration<double>(l1 - l0).count() * 1e3,
                std::chrono::duration<double>(l2 - l1).count() * 1e3);
    for (int64_t m : {int64_t(128), int64_t(8), int64_t(1)}) {
      std::vector<float> a(m * s.k, 0.5f), c(m * s.n);
      double best[5] = {1e30, 1e30, 1e30, 1e30, 1e30};
      for (int r = 0; r < reps; ++r)
        for (int mode = 0; mode < 5; ++mode) {
          double t0 = cpuClock();
          if (mode == 0) {
            if (m == 1)
              cblas_sgemv(CblasRowMajor, CblasTrans, s.k, s.n, 1.f, b.data(), s.n, a.data(), 1,
                          0.f, c.data(), 1);
            else
              cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, s.n, s.k, 1.f, a.data(),
                          s.k, b.data(), s.n, 0.f, c.data(), s.n);
          } else if (mode <= 2) {
            gemm::gemm(ctx, m, a.data(), s.k, mode == 1 ? *p32 : *p16, c.data(), s.n);
          } else {
            bool f16 = mode == 4;
            gemm::gemmInPlace(ctx, m, a.data(), s.k,
                              f16 ? static_cast<const void *>(bh.data()) : b.data(),
                              f16 ? gemm::Elem::F16 : gemm::Elem::F32, s.k, s.n, c.data(), s.n);
          }
          double sec = cpuClock() - t0;
          best[mode] = std::min(best[mode], sec);
        }
      double flops = 2.0 * m * s.k * s.n;
      std::printf("%-24s %4lld %10.1f %10.1f %10.1f %10.1f %10.1f\n", s.name, (long long)m,
                  flops / best[0] * 1e-9, flops / best[1] * 1e-9, flops / best[2] * 1e-9,
                  flops / best[3] * 1e-9, flops / best[4] * 1e-9);
    }
  }
  // The attention's per-head products of a 128-token prefill chunk
  // (TinyLlama: 8 query heads per KV head, head_dim 64, ctx 256): the
  // scores Q x K^T of one KV head's 1024 query rows over the 128 positions
  // kept, and P x V over them (gemm::headGemm, what Attention.cpp runs).
  {
    const int64_t m = 1024, used = 128, d = 64, ctxLen = 256;
    std::vector<float> q(m * d), kc(ctxLen * d), v(ctxLen * d), s(m * ctxLen), o(m * d), scratch;
    for (size_t i = 0; i < q.size(); ++i)
      q[i] = float(int((i * 7919) % 2001) - 1000) * 1e-3f;
    for (size_t i = 0; i < kc.size(); ++i)
      kc[i] = v[i] = float(int((i * 104729) % 2001) - 1000) * 1e-3f;
    double best[2] = {1e30, 1e30};
    for (int r = 0; r < reps; ++r) {
      double t0 = cpuClock();
      gemm::headGemm(m, used, d, q.data(), d, kc.data(), d, true, s.data(), ctxLen, scratch);
      double t1 = cpuClock();
      gemm::headGemm(m, d, used, s.data(), ctxLen, v.data(), d, false, o.data(), d, scratch);
      double t2 = cpuClock();
      best[0] = std::min(best[0], t1 - t0);
      best[1] = std::min(best[1], t2 - t1);
    }
    double flops = 2.0 * m * used * d;
    std::printf("attention, one KV head of a 128-token chunk (one thread): scores %.1f, "
                "P x V %.1f GFLOPS\n",
                flops / best[0] * 1e-9, flops / best[1] * 1e-9);
  }
  return 0;
}
