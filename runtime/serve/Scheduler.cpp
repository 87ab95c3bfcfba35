//===- Scheduler.cpp - requests into continuous batching ------------------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "runtime/serve/Scheduler.h"

#include "runtime/serve/Protocol.h"

#include <algorithm>

using namespace qeff::serve;
using namespace qeff::runtime;

namespace {
double secondsBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}
} // namespace

//===----------------------------------------------------------------------===//
// GenerationJob
//===----------------------------------------------------------------------===//

bool GenerationJob::next(News &news, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait_for(lock, timeout, [&] {
    return finished_ || !text_.empty() || !tokens_.empty();
  });
  news = News();
  news.text = std::move(text_);
  news.tokens = std::move(tokens_);
  text_.clear();
  tokens_.clear();
  news.finished = finished_;
  news.finishReason = finishReason_;
  news.error = error_;
  news.promptTokens = prompt_.size();
  news.completionTokens = allTokens_.size();
  return news.finished || !news.text.empty() || !news.tokens.empty();
}

GenerationJob::News GenerationJob::wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [&] { return finished_; });
  News news;
  news.text = allText_;
  news.tokens = allTokens_;
  news.finished = true;
  news.finishReason = finishReason_;
  news.error = error_;
  news.promptTokens = prompt_.size();
  news.completionTokens = allTokens_.size();
  return news;
}

bool GenerationJob::finishedWithin(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  return cv_.wait_for(lock, timeout, [&] { return finished_; });
}

void GenerationJob::cancel() { cancelled_.store(true); }

void GenerationJob::deliver(const RowUpdate &update) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    text_ += update.textDelta;
    allText_ += update.textDelta;
    tokens_.insert(tokens_.end(), update.newTokens.begin(), update.newTokens.end());
    allTokens_.insert(allTokens_.end(), update.newTokens.begin(),
                      update.newTokens.end());
    if (update.result) {
      finished_ = true;
      finishReason_ = update.result->finishReason;
      if (finishReason_ == "error")
        error_ = "the model run failed; see the server log";
      // The deltas concatenate to the final text; the result is the
      // authority (it is what `qeff infer` prints).
      allText_ = update.result->text;
      allTokens_ = update.result->generatedIds;
    }
  }
  cv_.notify_all();
}

void GenerationJob::fail(const std::string &error) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finished_ = true;
    finishReason_ = "error";
    error_ = error;
  }
  cv_.notify_all();
}

//===----------------------------------------------------------------------===//
// ModelScheduler
//===----------------------------------------------------------------------===//

Result<std::unique_ptr<ModelScheduler>>
ModelScheduler::create(std::string name, const std::string &artifactDir,
                       DeviceKind device, const SessionOptions &options,
                       const tokenizer::Tokenizer *tokenizer, Metrics &metrics,
                       int64_t maxQueue) {
  Result<Session> session = Session::open(artifactDir, device, options);
  if (!session)
    return Error{artifactDir + ": " + session.error()};
  std::unique_ptr<ModelScheduler> s(new ModelScheduler(
      std::move(name), std::move(*session), metrics, maxQueue));
  // The engine points at the scheduler's own session (which never moves).
  Result<BatchEngine> engine = BatchEngine::create(s->session_, tokenizer);
  if (!engine)
    return Error{artifactDir + ": " + engine.error()};
  s->engine_.emplace(std::move(*engine));
  s->occupant_.resize(s->engine_->rows());
  metrics.addModel(s->name_, s->engine_->rows());
  return s;
}

ModelScheduler::~ModelScheduler() { drain(); }

ModelScheduler::Admission
ModelScheduler::submit(std::shared_ptr<GenerationJob> job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (draining_)
      return Admission::ShuttingDown;
    // Jobs whose client left make no claim on the queue.
    dropCancelledLocked();
    // Jobs the free rows will take at once do not count as waiting.
    int64_t freeRows = std::max<int64_t>(0, engine_->rows() - busyRows_);
    if (int64_t(queue_.size()) >= maxQueue_ + freeRows)
      return Admission::QueueFull;
    queue_.push_back(std::move(job));
    metrics_.setQueueDepth(name_, queue_.size());
  }
  cv_.notify_all();
  return Admission::Queued;
}

void ModelScheduler::dropCancelledLocked() {
  for (auto it = queue_.begin(); it != queue_.end();) {
    if ((*it)->cancelled()) {
      (*it)->fail("cancelled");
      finished(**it, "cancelled", 0);
      it = queue_.erase(it);
    } else {
      ++it;
    }
  }
  metrics_.setQueueDepth(name_, queue_.size());
}

void ModelScheduler::start() {
  if (!thread_.joinable())
    thread_ = std::thread([this] { loop(); });
}

void ModelScheduler::drain() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    draining_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

void ModelScheduler::finished(GenerationJob &job, const std::string &reason,
                              int64_t generated) {
  std::string label = reason == "cancelled" || reason == "error"
                          ? reason
                          : openAIFinishReason(reason);
  metrics_.countFinished(name_, label);
  metrics_.observeRequestSeconds(name_,
                                 secondsBetween(job.arrival(), Clock::now()));
  (void)generated;
}

void ModelScheduler::deliver(const std::vector<RowUpdate> &updates) {
  auto now = Clock::now();
  for (const RowUpdate &u : updates) {
    std::shared_ptr<GenerationJob> job = occupant_[u.row];
    if (!job)
      continue;
    if (!u.newTokens.empty()) {
      if (!job->sawFirstToken) {
        job->sawFirstToken = true;
        double ttft = secondsBetween(job->arrival(), now);
        job->setTimeToFirstToken(ttft);
        metrics_.observeTimeToFirstToken(name_, ttft);
      } else {
        metrics_.observeInterTokenLatency(name_,
                                          secondsBetween(job->lastToken, now));
      }
      job->lastToken = now;
      metrics_.addGeneratedTokens(name_, u.newTokens.size());
    }
    job->deliver(u);
    if (u.result) {
      finished(*job, u.result->finishReason, u.result->generatedIds.size());
      occupant_[u.row].reset();
    }
  }
}

void ModelScheduler::loop() {
  BatchEngine &engine = *engine_;
  std::vector<RowUpdate> updates;
  while (true) {
    std::vector<std::shared_ptr<GenerationJob>> admit;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [&] {
        return draining_ || !queue_.empty() || engine.activeRows() > 0;
      });
      dropCancelledLocked();
      if (draining_ && queue_.empty() && engine.activeRows() == 0)
        break;
      int64_t free = engine.rows() - engine.activeRows();
      while (int64_t(admit.size()) < free && !queue_.empty()) {
        admit.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      busyRows_ = engine.activeRows() + admit.size();
      metrics_.setQueueDepth(name_, queue_.size());
    }

    // Rows whose client went away are freed before anything else runs.
    for (int64_t r = 0; r < engine.rows(); ++r)
      if (occupant_[r] && occupant_[r]->cancelled()) {
        engine.cancel(r);
        occupant_[r]->fail("cancelled");
        finished(*occupant_[r], "cancelled", 0);
        occupant_[r].reset();
      }

    // Each admitted job is prefilled alone into a free row.
    for (std::shared_ptr<GenerationJob> &job : admit) {
      if (job->cancelled()) {
        job->fail("cancelled");
        finished(*job, "cancelled", 0);
        continue;
      }
      updates.clear();
      Result<int64_t> row = engine.admit(job->prompt(), job->options(), updates);
      if (row) {
        occupant_[*row] = job;
        metrics_.addPromptTokens(name_, job->prompt().size());
      }
      deliver(updates);
      if (!row) {
        job->fail(row.error());
        finished(*job, "error", 0);
      }
    }
    metrics_.setRowsInUse(name_, engine.activeRows());

    if (engine.activeRows() > 0) {
      metrics_.observeDecodeStepRows(name_, engine.activeRows());
      updates.clear();
      Status s = engine.step(updates);
      deliver(updates);
      (void)s; // a failed step finished every row with "error" (delivered)
      metrics_.setRowsInUse(name_, engine.activeRows());
    }
    std::lock_guard<std::mutex> lock(mutex_);
    busyRows_ = engine.activeRows();
  }
  metrics_.setRowsInUse(name_, 0);
}
