//===- WorkerPool.h - the HTTP worker threads of `qeff serve` ---*- C++ -*-===//
//
// Part of qeff. The task queue HttpTransport gives cpp-httplib: one job per
// accepted connection. Threads are created when a connection finds none
// idle, up to a maximum; a thread idle for 10 s exits (a few stay). Beyond
// the threads, up to `maxPending` connections wait; one that cannot even
// wait is run at once on the accept thread with refusing() true, so that
// the transport answers it 503 and closes it without reading it.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_SERVE_WORKERPOOL_H
#define QEFF_RUNTIME_SERVE_WORKERPOOL_H

#include <httplib.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <list>
#include <mutex>
#include <thread>

namespace qeff::serve {

class WorkerPool : public httplib::TaskQueue {
public:
  WorkerPool(size_t maxThreads, size_t maxPending);
  ~WorkerPool() override;

  void enqueue(std::function<void()> fn) override;
  /// Refuses new jobs (run as refusals), lets the queued ones run, joins
  /// every thread.
  void shutdown() override;

  /// Threads running a job.
  size_t busy();
  /// A job waits and no thread can be added for it.
  bool starved();

  /// True while this thread runs a job the pool could not queue.
  static bool refusing();

private:
  struct Worker {
    std::thread thread;
    bool exited = false;
  };
  void work(std::list<Worker>::iterator self);
  /// Joins threads that exited while idle.
  void reap(std::unique_lock<std::mutex> &lock);

  static constexpr size_t kKeep = 4;
  const size_t maxThreads_, maxPending_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  std::list<Worker> threads_;
  size_t idle_ = 0;
  /// Threads created that have not yet looked for a job.
  size_t starting_ = 0;
  bool stopping_ = false;
};

} // namespace qeff::serve

#endif // QEFF_RUNTIME_SERVE_WORKERPOOL_H
