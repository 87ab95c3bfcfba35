//===- Scheduler.cpp - requests into continuous batching ------------------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "runtime/serve/Scheduler.h"

#include "runtime/generation/SpeculationSetup.h"
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

GenerationJob::GenerationJob(std::vector<int64_t> prompt,
                             runtime::GenerationOptions options)
    : GenerationJob({Sequence{std::move(prompt), std::move(options)}}, 0) {
  promptTokens_ = sequences_[0].prompt.size();
}

GenerationJob::GenerationJob(std::vector<Sequence> sequences, int64_t promptTokens)
    : sequences_(std::move(sequences)), promptTokens_(promptTokens),
      arrival_(Clock::now()), states_(sequences_.size()),
      unfinished_(sequences_.size()) {
  lastToken.resize(sequences_.size());
}

void GenerationJob::fillSummary(News &news) const {
  news.finished = finished_;
  news.finishReason = finishReason_;
  news.error = error_;
  news.promptTokens = promptTokens_;
  news.completionTokens = 0;
  for (const State &state : states_)
    news.completionTokens += state.allTokens.size();
}

bool GenerationJob::next(News &news, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto pending = [&] {
    return std::any_of(states_.begin(), states_.end(), [](const State &s) {
      return !s.text.empty() || !s.tokens.empty() || (s.finished && !s.reported);
    });
  };
  cv_.wait_for(lock, timeout, [&] { return finished_ || pending(); });
  bool any = pending();
  news = News();
  news.parts.resize(states_.size());
  for (size_t i = 0; i < states_.size(); ++i) {
    State &state = states_[i];
    Part &part = news.parts[i];
    part.text = std::move(state.text);
    part.tokens = std::move(state.tokens);
    part.logprobs = std::move(state.logprobs);
    state.text.clear();
    state.tokens.clear();
    state.logprobs.clear();
    part.finished = state.finished;
    part.justFinished = state.finished && !state.reported;
    state.reported = state.finished;
    part.finishReason = state.finishReason;
    part.cachedTokens = state.cachedTokens;
  }
  news.text = news.parts[0].text;
  news.tokens = news.parts[0].tokens;
  fillSummary(news);
  return news.finished || any;
}

GenerationJob::News GenerationJob::wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [&] { return finished_; });
  News news;
  news.parts.resize(states_.size());
  for (size_t i = 0; i < states_.size(); ++i) {
    const State &state = states_[i];
    Part &part = news.parts[i];
    part.text = state.allText;
    part.tokens = state.allTokens;
    part.logprobs = state.allLogprobs;
    part.finished = part.justFinished = state.finished;
    part.finishReason = state.finishReason;
    part.cachedTokens = state.cachedTokens;
  }
  news.text = news.parts[0].text;
  news.tokens = news.parts[0].tokens;
  fillSummary(news);
  return news;
}

bool GenerationJob::finishedWithin(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  return cv_.wait_for(lock, timeout, [&] { return finished_; });
}

void GenerationJob::cancel() { cancelled_.store(true); }

void GenerationJob::setCachedTokens(size_t seq, int64_t n) {
  std::lock_guard<std::mutex> lock(mutex_);
  states_[seq].cachedTokens = n;
}

bool GenerationJob::deliver(size_t seq, const RowUpdate &update) {
  bool ended = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    State &state = states_[seq];
    if (finished_ || state.finished)
      return false;
    state.text += update.textDelta;
    state.allText += update.textDelta;
    state.tokens.insert(state.tokens.end(), update.newTokens.begin(),
                        update.newTokens.end());
    state.allTokens.insert(state.allTokens.end(), update.newTokens.begin(),
                           update.newTokens.end());
    state.logprobs.insert(state.logprobs.end(), update.newLogprobs.begin(),
                          update.newLogprobs.end());
    state.allLogprobs.insert(state.allLogprobs.end(), update.newLogprobs.begin(),
                             update.newLogprobs.end());
    if (update.result) {
      const RowResult &result = *update.result;
      state.finished = true;
      state.finishReason = result.finishReason;
      // The deltas concatenate to the final text; the result is the
      // authority (it is what `qeff infer` prints).
      state.allText = result.text;
      state.allTokens = result.generatedIds;
      state.allLogprobs = result.logprobs;
      if (result.finishReason == "error") {
        // One failed sequence fails the request; its other rows are freed.
        finished_ = ended = true;
        finishReason_ = "error";
        error_ = result.error.empty() ? "the model run failed; see the server log"
                                      : result.error;
        cancelled_.store(true);
      } else if (--unfinished_ == 0) {
        finished_ = ended = true;
        finishReason_ = states_[0].finishReason;
      }
    }
  }
  cv_.notify_all();
  return ended;
}

bool GenerationJob::fail(const std::string &error) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (finished_)
      return false;
    finished_ = true;
    finishReason_ = error == "cancelled" ? "cancelled" : "error";
    error_ = error;
    cancelled_.store(true);
  }
  cv_.notify_all();
  return true;
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
  s->tokenizer_ = tokenizer;
  s->occupant_.resize(s->engine_->rows());
  metrics.addModel(s->name_, s->engine_->rows());
  return s;
}

ModelScheduler::~ModelScheduler() { drain(); }

Status ModelScheduler::speculate(const SpeculationSpec &spec, DeviceKind device,
                                 const SessionOptions &options) {
  ProposerTarget target;
  target.session = &session_;
  target.rows = engine_->rows();
  target.ctxLen = engine_->ctxLen();
  target.tokenizer = tokenizer_;
  // The draft proposes greedily whatever the request samples with:
  // rejection sampling against a one-hot q keeps the target's
  // distribution, and a row's tokens depend on its own seed only.
  Result<std::shared_ptr<Proposer>> proposer =
      makeProposer(spec, device, options, target, GenerationOptions());
  if (!proposer)
    return Error{proposer.error()};
  SpeculationConfig config;
  config.maxTokens = spec.numTokens;
  config.proposer = std::move(*proposer);
  return engine_->setSpeculation(std::move(config));
}

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
      // Sequences of it already in rows are freed by the scheduler loop.
      if ((*it)->fail("cancelled"))
        finished(**it, "cancelled");
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

void ModelScheduler::finished(GenerationJob &job, const std::string &reason) {
  std::string label = reason == "cancelled" || reason == "error"
                          ? reason
                          : openAIFinishReason(reason);
  metrics_.countFinished(name_, label);
  metrics_.observeRequestSeconds(name_,
                                 secondsBetween(job.arrival(), Clock::now()));
}

void ModelScheduler::deliver(const std::vector<RowUpdate> &updates) {
  auto now = Clock::now();
  for (const RowUpdate &u : updates) {
    Occupant &occupant = occupant_[u.row];
    std::shared_ptr<GenerationJob> job = occupant.job;
    if (!job)
      continue;
    if (!u.newTokens.empty()) {
      if (!job->sawFirstToken) {
        job->sawFirstToken = true;
        double ttft = secondsBetween(job->arrival(), now);
        job->setTimeToFirstToken(ttft);
        metrics_.observeTimeToFirstToken(name_, ttft);
      } else if (job->lastToken[occupant.seq] != Clock::time_point()) {
        metrics_.observeInterTokenLatency(
            name_, secondsBetween(job->lastToken[occupant.seq], now));
      }
      job->lastToken[occupant.seq] = now;
      metrics_.addGeneratedTokens(name_, u.newTokens.size());
    }
    if (u.specProposedTokens > 0)
      metrics_.addSpeculativeTokens(name_, u.specProposedTokens,
                                    u.specAcceptedTokens);
    if (job->deliver(occupant.seq, u))
      finished(*job, u.result ? u.result->finishReason : "error");
    if (u.result)
      occupant = Occupant();
  }
}

void ModelScheduler::loop() {
  BatchEngine &engine = *engine_;
  std::vector<RowUpdate> updates;
  while (true) {
    // (job, sequence) pairs to prefill into the free rows, and jobs
    // cancelled while waiting.
    std::vector<Occupant> admit;
    std::vector<std::shared_ptr<GenerationJob>> dropped;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [&] {
        return draining_ || !queue_.empty() || engine.activeRows() > 0;
      });
      if (draining_ && queue_.empty() && engine.activeRows() == 0)
        break;
      int64_t free = engine.rows() - engine.activeRows();
      while (int64_t(admit.size()) < free && !queue_.empty()) {
        std::shared_ptr<GenerationJob> &job = queue_.front();
        if (job->cancelled()) {
          dropped.push_back(std::move(job));
          queue_.pop_front();
          continue;
        }
        admit.push_back({job, job->admitted++});
        if (job->admitted == job->sequences())
          queue_.pop_front();
      }
      busyRows_ = engine.activeRows() + admit.size();
      metrics_.setQueueDepth(name_, queue_.size());
    }
    for (std::shared_ptr<GenerationJob> &job : dropped)
      if (job->fail("cancelled"))
        finished(*job, "cancelled");

    // Rows whose client went away (or whose job failed) are freed before
    // anything else runs.
    for (int64_t r = 0; r < engine.rows(); ++r)
      if (occupant_[r].job && occupant_[r].job->cancelled()) {
        engine.cancel(r);
        if (occupant_[r].job->fail("cancelled"))
          finished(*occupant_[r].job, "cancelled");
        occupant_[r] = Occupant();
      }

    // Each admitted sequence is prefilled alone into a free row.
    for (Occupant &next : admit) {
      GenerationJob &job = *next.job;
      if (job.cancelled()) {
        if (job.fail("cancelled"))
          finished(job, "cancelled");
        continue;
      }
      const GenerationJob::Sequence &seq = job.sequence(next.seq);
      updates.clear();
      Result<int64_t> row = engine.admit(seq.prompt, seq.options, updates);
      if (row) {
        occupant_[*row] = next;
        metrics_.addPromptTokens(name_, seq.prompt.size());
        int64_t cached = engine.reusedTokens(*row);
        job.setCachedTokens(next.seq, cached);
        if (engine.prefixCaching())
          metrics_.addPrefixCacheLookup(name_, seq.prompt.size(), cached);
      }
      deliver(updates);
      if (!row && job.fail(row.error()))
        finished(job, "error");
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
