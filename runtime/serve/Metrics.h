//===- Metrics.h - Prometheus metrics of qeff serve -------------*- C++ -*-===//
//
// Part of qeff. Counters, gauges and histograms of the server, rendered in
// the Prometheus text exposition format (version 0.0.4) for GET /metrics.
// Thread-safe: HTTP threads and scheduler threads update it concurrently.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_SERVE_METRICS_H
#define QEFF_RUNTIME_SERVE_METRICS_H

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace qeff::serve {

class Metrics {
public:
  /// Registers a served model with its number of cache rows.
  void addModel(const std::string &model, int64_t rows);

  /// One HTTP response (any route), by route pattern and status code.
  void countResponse(const std::string &route, int status);

  void setQueueDepth(const std::string &model, int64_t depth);
  void setRowsInUse(const std::string &model, int64_t rows);
  void addPromptTokens(const std::string &model, int64_t n);
  void addGeneratedTokens(const std::string &model, int64_t n);
  /// Prefix caching looked up `queried` prompt tokens and skipped the
  /// prefill of `hit` of them.
  void addPrefixCacheLookup(const std::string &model, int64_t queried,
                            int64_t hit);
  /// Speculative decoding: tokens proposed to the target, and accepted.
  void addSpeculativeTokens(const std::string &model, int64_t proposed,
                            int64_t accepted);
  /// A request left the scheduler: stop, length, cancelled or error.
  void countFinished(const std::string &model, const std::string &reason);
  void observeTimeToFirstToken(const std::string &model, double seconds);
  void observeInterTokenLatency(const std::string &model, double seconds);
  void observeRequestSeconds(const std::string &model, double seconds);
  /// The rows one decode step ran (how much the requests overlapped).
  void observeDecodeStepRows(const std::string &model, int64_t rows);

  /// The exposition text.
  std::string render() const;

  /// Current values (tests, logs).
  int64_t rowsInUse(const std::string &model) const;
  int64_t queueDepth(const std::string &model) const;

private:
  struct Histogram {
    std::vector<double> bounds; ///< upper bounds, ascending (+Inf implied)
    std::vector<uint64_t> counts; ///< per bucket (not cumulative)
    double sum = 0;
    uint64_t count = 0;
    void observe(double v);
  };
  struct Model {
    int64_t rows = 0, rowsInUse = 0, queueDepth = 0;
    int64_t promptTokens = 0, generatedTokens = 0;
    int64_t prefixQueries = 0, prefixHits = 0;
    int64_t specProposedTokens = 0, specAcceptedTokens = 0;
    std::map<std::string, uint64_t> finished;
    Histogram ttft, itl, duration, stepRows;
  };
  Model &model(const std::string &name);

  mutable std::mutex mutex_;
  std::map<std::string, Model> models_;
  std::map<std::pair<std::string, int>, uint64_t> responses_;
};

} // namespace qeff::serve

#endif // QEFF_RUNTIME_SERVE_METRICS_H
