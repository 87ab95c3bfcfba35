//===- Scheduler.h - requests into continuous batching ----------*- C++ -*-===//
//
// Part of qeff. One ModelScheduler per served model: it owns the model's
// Session and BatchEngine and one thread that drives them. HTTP threads
// submit GenerationJobs into a bounded queue; the thread admits queued jobs
// into free cache rows (prefill), runs one decode step of every active row,
// hands each job its new tokens and text, and frees rows when a job
// finishes or its client went away (cancel), so the next job takes the row.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_SERVE_SCHEDULER_H
#define QEFF_RUNTIME_SERVE_SCHEDULER_H

#include "qeff/runtime/Session.h"
#include "runtime/generation/BatchEngine.h"
#include "runtime/serve/Metrics.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace qeff::serve {

using Clock = std::chrono::steady_clock;

/// One generation request, shared by the HTTP thread that waits for its
/// output and the scheduler thread that produces it. It holds one or more
/// sequences (the choices of `n`, best_of's candidates, several prompts),
/// each decoded in its own cache row; the job ends when all of them did, or
/// as soon as one fails.
class GenerationJob {
public:
  struct Sequence {
    std::vector<int64_t> prompt;
    runtime::GenerationOptions options;
  };
  GenerationJob(std::vector<int64_t> prompt, runtime::GenerationOptions options);
  /// `promptTokens`: what usage counts for the prompts (each prompt once,
  /// however many sequences share it).
  GenerationJob(std::vector<Sequence> sequences, int64_t promptTokens);

  /// One sequence's share of the news.
  struct Part {
    /// From next(): what is new; from wait(): everything.
    std::string text;
    std::vector<int64_t> tokens;
    std::vector<runtime::TokenLogprobs> logprobs;
    bool finished = false;
    /// Finished since the consumer last looked (next() reports it once).
    bool justFinished = false;
    /// When finished: the generator's finish reason.
    std::string finishReason;
    /// Prompt tokens the prefix cache supplied (once admitted).
    int64_t cachedTokens = 0;
  };
  /// What happened since the consumer last looked.
  struct News {
    /// The first sequence's text and tokens (all of a one-sequence job's).
    std::string text;
    std::vector<int64_t> tokens;
    /// Every sequence finished, or the job failed.
    bool finished = false;
    /// When finished: the first sequence's finish reason, or "error".
    std::string finishReason;
    std::string error;
    int64_t promptTokens = 0, completionTokens = 0;
    /// One per sequence.
    std::vector<Part> parts;
  };
  /// Waits until there is news or `timeout` passes; returns false on a
  /// timeout with nothing new. After the finished news, returns it again.
  bool next(News &news, std::chrono::milliseconds timeout);
  /// Waits for the end and returns everything.
  News wait();
  /// Waits up to `timeout` for the end; true when finished.
  bool finishedWithin(std::chrono::milliseconds timeout);

  /// The client went away: the scheduler frees the job's rows.
  void cancel();
  bool cancelled() const { return cancelled_.load(); }

  size_t sequences() const { return sequences_.size(); }
  const Sequence &sequence(size_t i) const { return sequences_[i]; }
  Clock::time_point arrival() const { return arrival_; }
  /// Seconds from arrival to the first token (0 before it).
  double timeToFirstToken() const { return ttft_.load(); }

  // The scheduler's side.
  /// Sequence `seq`'s update; true when it ended the job.
  bool deliver(size_t seq, const runtime::RowUpdate &update);
  /// Ends the job with `error` (its other rows are then freed as if
  /// cancelled); false when it had already ended.
  bool fail(const std::string &error);
  void setTimeToFirstToken(double s) { ttft_.store(s); }
  /// Sequence `seq` was admitted with `n` prompt tokens from the cache.
  void setCachedTokens(size_t seq, int64_t n);
  /// The scheduler's bookkeeping: sequences admitted into rows so far, when
  /// each last produced a token.
  size_t admitted = 0;
  std::vector<Clock::time_point> lastToken;
  bool sawFirstToken = false;

private:
  struct State {
    std::string text; ///< not yet taken by next()
    std::vector<int64_t> tokens;
    std::vector<runtime::TokenLogprobs> logprobs;
    std::string allText;
    std::vector<int64_t> allTokens;
    std::vector<runtime::TokenLogprobs> allLogprobs;
    bool finished = false, reported = false;
    std::string finishReason;
    int64_t cachedTokens = 0;
  };
  /// The news fields of the whole job (mutex_ held).
  void fillSummary(News &news) const;

  std::vector<Sequence> sequences_;
  int64_t promptTokens_;
  Clock::time_point arrival_;
  std::atomic<bool> cancelled_{false};
  std::atomic<double> ttft_{0};
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<State> states_;
  size_t unfinished_;
  bool finished_ = false;
  std::string finishReason_, error_;
};

class ModelScheduler {
public:
  /// Opens the artifact and builds the engine (no thread yet).
  /// `maxQueue`: jobs that may wait for a row beyond those the free rows
  /// take at once (more are refused).
  static runtime::Result<std::unique_ptr<ModelScheduler>>
  create(std::string name, const std::string &artifactDir,
         runtime::DeviceKind device, const runtime::SessionOptions &options,
         const tokenizer::Tokenizer *tokenizer, Metrics &metrics,
         int64_t maxQueue);
  ~ModelScheduler();

  /// Speculative decoding (before start()): prompt lookup, or a draft
  /// model opened from `spec.draftArtifactDir` with the target's device and
  /// session options (makeProposer, SpeculationSetup.h). Errors name what
  /// does not fit (no target, a draft with too few rows, a shorter context,
  /// a larger vocabulary or another tokenizer).
  runtime::Status speculate(const runtime::SpeculationSpec &spec,
                            runtime::DeviceKind device,
                            const runtime::SessionOptions &options);

  enum class Admission { Queued, QueueFull, ShuttingDown };
  Admission submit(std::shared_ptr<GenerationJob> job);

  void start();
  /// Refuses new jobs, lets the queued and running ones finish, joins.
  void drain();

  const std::string &name() const { return name_; }
  int64_t rows() const { return engine_->rows(); }
  int64_t ctxLen() const { return engine_->ctxLen(); }
  bool continuousBatching() const { return engine_->continuousBatching(); }
  /// An on-device-sampling artifact, and its largest top_k.
  bool samplesOnDevice() const { return engine_->samplesOnDevice(); }
  int64_t maxTopKIds() const { return engine_->maxTopKIds(); }
  /// Prefix caching on (the default) or off; before start().
  void setPrefixCaching(bool on) { engine_->setPrefixCaching(on); }

private:
  ModelScheduler(std::string name, runtime::Session session, Metrics &metrics,
                 int64_t maxQueue)
      : name_(std::move(name)), session_(std::move(session)), metrics_(metrics),
        maxQueue_(maxQueue) {}
  void loop();
  void deliver(const std::vector<runtime::RowUpdate> &updates);
  /// Counts a job that ended (once per job).
  void finished(GenerationJob &job, const std::string &reason);
  /// Ends the queued jobs whose client went away (mutex_ held).
  void dropCancelledLocked();

  std::string name_;
  runtime::Session session_;
  std::optional<runtime::BatchEngine> engine_;
  /// The target's tokenizer (null: none), which a draft's must match.
  const tokenizer::Tokenizer *tokenizer_ = nullptr;
  Metrics &metrics_;
  int64_t maxQueue_;
  /// Cache row -> the job and sequence decoding in it (scheduler thread
  /// only).
  struct Occupant {
    std::shared_ptr<GenerationJob> job;
    size_t seq = 0;
  };
  std::vector<Occupant> occupant_;

  std::mutex mutex_;
  std::condition_variable cv_;
  /// Jobs with sequences still to admit (the front one may be partly
  /// admitted).
  std::deque<std::shared_ptr<GenerationJob>> queue_;
  bool draining_ = false;
  /// Rows decoding or about to be prefilled (as of the last loop).
  int64_t busyRows_ = 0;
  std::thread thread_;
};

} // namespace qeff::serve

#endif // QEFF_RUNTIME_SERVE_SCHEDULER_H
