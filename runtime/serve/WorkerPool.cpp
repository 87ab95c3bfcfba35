//===- WorkerPool.cpp - the HTTP worker threads of `qeff serve` -----------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "runtime/serve/WorkerPool.h"

#include <algorithm>
#include <chrono>

using namespace qeff::serve;

namespace {
thread_local bool tlsRefusing = false;
} // namespace

WorkerPool::WorkerPool(size_t maxThreads, size_t maxPending)
    : maxThreads_(std::max<size_t>(1, maxThreads)), maxPending_(maxPending) {}

WorkerPool::~WorkerPool() { shutdown(); }

bool WorkerPool::refusing() { return tlsRefusing; }

void WorkerPool::enqueue(std::function<void()> fn) {
  std::unique_lock<std::mutex> lock(mutex_);
  reap(lock);
  // Waiting means: beyond what idle or starting threads take, with no
  // thread left to start.
  if (stopping_ || (threads_.size() >= maxThreads_ &&
                    jobs_.size() >= maxPending_ + idle_ + starting_)) {
    lock.unlock();
    tlsRefusing = true;
    fn();
    tlsRefusing = false;
    return;
  }
  jobs_.push_back(std::move(fn));
  if (idle_ + starting_ < jobs_.size() && threads_.size() < maxThreads_) {
    ++starting_;
    threads_.emplace_back();
    auto it = std::prev(threads_.end());
    it->thread = std::thread([this, it] { work(it); });
  }
  lock.unlock();
  cv_.notify_one();
}

void WorkerPool::shutdown() {
  std::list<Worker> all;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  // Workers finish their connection (the transport closes idle ones
  // promptly once the listener stopped) and the queued ones.
  std::unique_lock<std::mutex> lock(mutex_);
  while (!threads_.empty()) {
    all.splice(all.end(), threads_);
    lock.unlock();
    for (Worker &w : all)
      if (w.thread.joinable())
        w.thread.join();
    all.clear();
    lock.lock();
  }
}

size_t WorkerPool::busy() {
  std::lock_guard<std::mutex> lock(mutex_);
  return threads_.size() - idle_ - starting_;
}

bool WorkerPool::starved() {
  std::lock_guard<std::mutex> lock(mutex_);
  return jobs_.size() > idle_ + starting_ && threads_.size() >= maxThreads_;
}

void WorkerPool::work(std::list<Worker>::iterator self) {
  std::unique_lock<std::mutex> lock(mutex_);
  --starting_;
  while (true) {
    ++idle_;
    bool woke = cv_.wait_for(lock, std::chrono::seconds(10), [&] {
      return stopping_ || !jobs_.empty();
    });
    --idle_;
    if (jobs_.empty() && (stopping_ || (!woke && threads_.size() > kKeep))) {
      self->exited = true;
      return;
    }
    if (jobs_.empty())
      continue;
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    job();
    lock.lock();
  }
}

void WorkerPool::reap(std::unique_lock<std::mutex> &lock) {
  std::list<Worker> done;
  for (auto it = threads_.begin(); it != threads_.end();) {
    auto next = std::next(it);
    if (it->exited)
      done.splice(done.end(), threads_, it);
    it = next;
  }
  if (done.empty())
    return;
  lock.unlock();
  for (Worker &w : done)
    w.thread.join();
  lock.lock();
}
