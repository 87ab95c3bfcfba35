//===- WorkerPoolTest.cpp - the HTTP worker threads -----------------------===//
//
// Part of qeff. WorkerPool grows a thread per waiting job up to its maximum,
// queues up to maxPending more, and runs any further job at once on the
// caller with refusing() true (the transport's 503).
//
//===----------------------------------------------------------------------===//

#include "runtime/serve/WorkerPool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

using namespace qeff::serve;
using namespace std::chrono_literals;

namespace {

/// Jobs that block until released.
struct Gate {
  std::mutex mutex;
  std::condition_variable cv;
  bool open = false;
  std::atomic<int> running{0}, done{0}, refused{0};

  std::function<void()> job() {
    return [this] {
      if (WorkerPool::refusing()) {
        ++refused;
        return;
      }
      ++running;
      std::unique_lock<std::mutex> lock(mutex);
      cv.wait(lock, [&] { return open; });
      ++done;
    };
  }
  void release() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      open = true;
    }
    cv.notify_all();
  }
};

/// Polls `condition` for up to 5 s.
template <typename F> bool eventually(F condition) {
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition())
      return true;
    std::this_thread::sleep_for(1ms);
  }
  return condition();
}

} // namespace

TEST(WorkerPool, GrowsToItsMaximumQueuesThenRefuses) {
  Gate gate;
  WorkerPool pool(/*maxThreads=*/3, /*maxPending=*/2);
  for (int i = 0; i < 3; ++i)
    pool.enqueue(gate.job());
  ASSERT_TRUE(eventually([&] { return gate.running == 3; }));
  EXPECT_EQ(pool.busy(), 3u);
  EXPECT_FALSE(pool.starved());
  // Two wait; the pool can grow no more, so it is starved.
  pool.enqueue(gate.job());
  pool.enqueue(gate.job());
  EXPECT_TRUE(pool.starved());
  EXPECT_EQ(gate.refused, 0);
  // The sixth cannot wait: it runs here, refused.
  pool.enqueue(gate.job());
  EXPECT_EQ(gate.refused, 1);
  EXPECT_EQ(gate.running, 3);
  gate.release();
  ASSERT_TRUE(eventually([&] { return gate.done == 5; }));
  EXPECT_FALSE(WorkerPool::refusing());
  pool.shutdown();
  EXPECT_EQ(gate.done, 5);
}

TEST(WorkerPool, ThreadsStartingCountAsTakers) {
  // Jobs enqueued back to back before any thread ran: each starts its own
  // thread (none is refused while threads can still be added).
  Gate gate;
  WorkerPool pool(/*maxThreads=*/8, /*maxPending=*/0);
  for (int i = 0; i < 8; ++i)
    pool.enqueue(gate.job());
  EXPECT_EQ(gate.refused, 0);
  ASSERT_TRUE(eventually([&] { return gate.running == 8; }));
  pool.enqueue(gate.job());
  EXPECT_EQ(gate.refused, 1);
  gate.release();
  pool.shutdown();
  EXPECT_EQ(gate.done, 8);
}

TEST(WorkerPool, ShutdownRunsQueuedJobsAndRefusesNewOnes) {
  Gate gate;
  WorkerPool pool(/*maxThreads=*/1, /*maxPending=*/4);
  for (int i = 0; i < 3; ++i)
    pool.enqueue(gate.job());
  ASSERT_TRUE(eventually([&] { return gate.running == 1; }));
  gate.release();
  pool.shutdown();
  EXPECT_EQ(gate.done, 3);
  pool.enqueue(gate.job());
  EXPECT_EQ(gate.refused, 1);
}
