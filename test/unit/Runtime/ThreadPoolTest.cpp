//===- ThreadPoolTest.cpp - parallelFor on the host device's pool ---------===//
//
// The pool's hand-off spins before it sleeps (runtime/host/KernelSupport.cpp):
// every index runs exactly once whether jobs come back to back (workers
// still spinning) or after a pause longer than the spin (workers asleep);
// jobs of different thread counts follow each other; an exception in a chunk
// reaches the caller and the pool keeps working; two callers at once both
// finish (the second runs inline).
//
//===----------------------------------------------------------------------===//

#include "runtime/host/Kernel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace qeff::runtime::host;

namespace {

/// Runs one job over [0, n) and checks that each index ran once.
void expectEachIndexOnce(const Context &ctx, int64_t n, bool balanced) {
  std::vector<std::atomic<int>> hits(n);
  auto fn = [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      hits[i].fetch_add(1);
  };
  if (balanced)
    parallelForBalanced(ctx, n, fn);
  else
    parallelFor(ctx, n, 1, fn);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(hits[i].load(), 1) << "index " << i << " of " << n;
}

TEST(HostThreadPool, EveryIndexOnceBackToBackAndAfterPauses) {
  auto arena = std::make_shared<Arena>();
  for (int threads : {2, 3, 4, 2}) {
    Context ctx{arena.get(), threads};
    for (int job = 0; job < 300; ++job)
      expectEachIndexOnce(ctx, 1 + job % 37, job % 2 == 0);
    // Longer than the workers spin: they are asleep for the next job.
    for (int job = 0; job < 5; ++job) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      expectEachIndexOnce(ctx, 64, job % 2 == 0);
    }
  }
}

TEST(HostThreadPool, AnExceptionReachesTheCallerAndThePoolGoesOn) {
  auto arena = std::make_shared<Arena>();
  Context ctx{arena.get(), 2};
  for (int round = 0; round < 20; ++round) {
    EXPECT_THROW(parallelForBalanced(ctx, 16,
                                     [&](int64_t b, int64_t) {
                                       if (b == 5 + round % 3)
                                         throw std::runtime_error("chunk failed");
                                     }),
                 std::runtime_error);
    expectEachIndexOnce(ctx, 100, true);
  }
}

TEST(HostThreadPool, TwoCallersAtOnceBothFinish) {
  auto arena = std::make_shared<Arena>();
  Context ctx{arena.get(), 2};
  std::atomic<int64_t> sum{0};
  auto caller = [&] {
    for (int job = 0; job < 200; ++job)
      parallelForBalanced(ctx, 50, [&](int64_t b, int64_t e) { sum.fetch_add(e - b); });
  };
  std::thread other(caller);
  caller();
  other.join();
  EXPECT_EQ(sum.load(), 2 * 200 * 50);
}

} // namespace
