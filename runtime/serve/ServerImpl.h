//===- ServerImpl.h - internals shared by the server's files ----*- C++ -*-===//
//
// Part of qeff. Not a public header: the state of a Server and the helpers
// its route files (Server.cpp, OpenAIRoutes.cpp, V2Routes.cpp) share.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_SERVE_SERVERIMPL_H
#define QEFF_RUNTIME_SERVE_SERVERIMPL_H

#include "runtime/serve/HttpTransport.h"
#include "runtime/serve/Metrics.h"
#include "runtime/serve/Protocol.h"
#include "runtime/serve/Scheduler.h"
#include "runtime/serve/Server.h"
#include "runtime/structured/Vocabulary.h"

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>

namespace qeff::serve {

struct ServedModel {
  ServedModelSpec spec;
  std::unique_ptr<ModelScheduler> scheduler;
  /// The tokenizer's token bytes for JSON output (response_format); null
  /// with `vocabularyUnavailable` saying why.
  std::shared_ptr<const structured::Vocabulary> vocabulary;
  std::string vocabularyUnavailable;
};

/// What the log line and the metrics of one HTTP request need; filled by
/// the handler (and a stream's content provider), read by the logger. All
/// of them run on the request's worker thread, one request at a time.
struct RequestLog {
  std::string route = "unmatched";
  std::string model, finishReason, error;
  int64_t promptTokens = -1, completionTokens = -1;
  double timeToFirstToken = -1;
  bool stream = false;
  Clock::time_point start;
};
RequestLog &requestLog();

/// Which protocol a route speaks (for error bodies).
enum class Protocol { OpenAI, V2, Plain };

struct Server::Impl {
  ServerOptions options;
  Metrics metrics;
  std::map<std::string, std::unique_ptr<ServedModel>> models;
  std::vector<std::string> order;
  HttpTransport http;
  std::atomic<bool> draining{false};

  /// Generation requests being answered (a stream until its last byte).
  std::mutex inflightMutex;
  std::condition_variable inflightDone;
  int64_t inflight = 0;
  void enter();
  void leave();

  void registerRoutes();
  void registerOpenAIRoutes();
  void registerV2Routes();

  /// The model a request names ("" = the only one), or a 404 naming it.
  ServedModel *findModel(const std::string &name, ApiError &error,
                         const std::string &param = "model");

  /// A validated generation: prompt ids checked against the vocabulary and
  /// the context, options filled from the request and the model.
  struct Prepared {
    std::vector<int64_t> prompt;
    runtime::GenerationOptions options;
  };
  /// `defaultMaxTokens` < 0: the rest of the context.
  std::optional<Prepared> prepare(ServedModel &model, std::vector<int64_t> prompt,
                                  const std::string &promptParam,
                                  const SamplingParams &sampling,
                                  int64_t defaultMaxTokens, ApiError &error);
  /// On an on-device-sampling artifact: false with a 400 naming the first
  /// request field that needs logits on the host (or best_of > n, which
  /// ranks by logprobs), or a top_k above the sampler's max_top_k_ids.
  bool checkDeviceSampling(const ServedModel &model, const SamplingParams &sampling,
                           std::optional<int64_t> bestOf, int64_t n,
                           ApiError &error);
  /// Tokens of a text prompt (400 without a tokenizer).
  std::optional<std::vector<int64_t>> encode(ServedModel &model,
                                             const std::string &text,
                                             bool addSpecialTokens,
                                             const std::string &param,
                                             ApiError &error);
  /// Counts the request in flight and queues its job; a refusal (shutting
  /// down, queue full: a 503) undoes both.
  std::optional<ApiError> admit(ServedModel &model,
                                const std::shared_ptr<GenerationJob> &job);
  /// Waits for a whole (not streamed) job, ends it in flight, logs it. A
  /// client that goes away meanwhile cancels the job (its row is freed at
  /// the next step): the news then has finishReason "cancelled".
  GenerationJob::News finish(GenerationJob &job);

  /// Answers with server-sent events: `render` turns each piece of news
  /// into events (the finished news into the closing ones). The job is
  /// cancelled when the client goes away; leave() when the stream ends.
  void stream(httplib::Response &res, std::shared_ptr<GenerationJob> job,
              std::function<std::string(const GenerationJob::News &)> render);

  void sendError(httplib::Response &res, const ApiError &error,
                 Protocol protocol);
  void log(const httplib::Request &req, const httplib::Response &res);
};

/// The refusal of a generation that ended in `error`: 499 (nginx's "client
/// closed request", for the log and metrics: nobody reads it) when its
/// client went away, else 500.
ApiError generationFailed(const std::string &error);

/// A fresh request id: prefix + 24 hex digits.
std::string newRequestId(const char *prefix);
/// Unix time in seconds.
int64_t unixTime();

} // namespace qeff::serve

#endif // QEFF_RUNTIME_SERVE_SERVERIMPL_H
