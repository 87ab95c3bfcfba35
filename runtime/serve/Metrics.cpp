//===- Metrics.cpp - Prometheus metrics of qeff serve ---------------------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "runtime/serve/Metrics.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

using namespace qeff::serve;

namespace {

const std::vector<double> &latencyBounds() {
  static const std::vector<double> bounds = {0.001, 0.0025, 0.005, 0.01, 0.025,
                                             0.05,  0.075,  0.1,   0.25, 0.5,
                                             0.75,  1.0,    2.5,   5.0,  10.0,
                                             30.0,  60.0};
  return bounds;
}

/// A label value with \, " and newline escaped.
std::string escape(const std::string &value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string number(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.10g", v);
  return buffer;
}

} // namespace

void Metrics::Histogram::observe(double v) {
  if (counts.size() != bounds.size() + 1)
    counts.assign(bounds.size() + 1, 0);
  size_t i = std::lower_bound(bounds.begin(), bounds.end(), v) - bounds.begin();
  ++counts[i];
  sum += v;
  ++count;
}

Metrics::Model &Metrics::model(const std::string &name) {
  Model &m = models_[name];
  if (m.ttft.bounds.empty()) {
    m.ttft.bounds = m.itl.bounds = m.duration.bounds = latencyBounds();
    m.ttft.counts.assign(m.ttft.bounds.size() + 1, 0);
    m.itl.counts = m.duration.counts = m.ttft.counts;
  }
  return m;
}

void Metrics::addModel(const std::string &name, int64_t rows) {
  std::lock_guard<std::mutex> lock(mutex_);
  Model &m = model(name);
  m.rows = rows;
  m.stepRows.bounds.clear();
  for (int64_t r = 1; r <= rows; ++r)
    m.stepRows.bounds.push_back(double(r));
  m.stepRows.counts.assign(m.stepRows.bounds.size() + 1, 0);
}

void Metrics::countResponse(const std::string &route, int status) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++responses_[{route, status}];
}

void Metrics::setQueueDepth(const std::string &name, int64_t depth) {
  std::lock_guard<std::mutex> lock(mutex_);
  model(name).queueDepth = depth;
}

void Metrics::setRowsInUse(const std::string &name, int64_t rows) {
  std::lock_guard<std::mutex> lock(mutex_);
  model(name).rowsInUse = rows;
}

void Metrics::addPromptTokens(const std::string &name, int64_t n) {
  std::lock_guard<std::mutex> lock(mutex_);
  model(name).promptTokens += n;
}

void Metrics::addGeneratedTokens(const std::string &name, int64_t n) {
  std::lock_guard<std::mutex> lock(mutex_);
  model(name).generatedTokens += n;
}

void Metrics::addPrefixCacheLookup(const std::string &name, int64_t queried,
                                   int64_t hit) {
  std::lock_guard<std::mutex> lock(mutex_);
  Model &m = model(name);
  m.prefixQueries += queried;
  m.prefixHits += hit;
}

void Metrics::addSpeculativeTokens(const std::string &name, int64_t proposed,
                                   int64_t accepted) {
  std::lock_guard<std::mutex> lock(mutex_);
  Model &m = model(name);
  m.specProposedTokens += proposed;
  m.specAcceptedTokens += accepted;
}

void Metrics::countFinished(const std::string &name, const std::string &reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++model(name).finished[reason];
}

void Metrics::observeTimeToFirstToken(const std::string &name, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  model(name).ttft.observe(seconds);
}

void Metrics::observeInterTokenLatency(const std::string &name, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  model(name).itl.observe(seconds);
}

void Metrics::observeRequestSeconds(const std::string &name, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  model(name).duration.observe(seconds);
}

void Metrics::observeDecodeStepRows(const std::string &name, int64_t rows) {
  std::lock_guard<std::mutex> lock(mutex_);
  model(name).stepRows.observe(double(rows));
}

int64_t Metrics::rowsInUse(const std::string &name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = models_.find(name);
  return it == models_.end() ? 0 : it->second.rowsInUse;
}

int64_t Metrics::queueDepth(const std::string &name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = models_.find(name);
  return it == models_.end() ? 0 : it->second.queueDepth;
}

std::string Metrics::render() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::ostringstream out;
  auto header = [&](const char *name, const char *type, const char *help) {
    out << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type
        << "\n";
  };
  header("qeff_http_responses_total", "counter",
         "HTTP responses by route and status code.");
  for (const auto &[key, count] : responses_)
    out << "qeff_http_responses_total{route=\"" << escape(key.first)
        << "\",code=\"" << key.second << "\"} " << count << "\n";

  auto gauge = [&](const char *name, const char *type, const char *help,
                   int64_t Model::*field) {
    header(name, type, help);
    for (const auto &[name_, m] : models_)
      out << name << "{model=\"" << escape(name_) << "\"} " << m.*field << "\n";
  };
  gauge("qeff_rows", "gauge", "KV-cache rows (sequences decoding at once).",
        &Model::rows);
  gauge("qeff_rows_in_use", "gauge", "KV-cache rows holding a request now.",
        &Model::rowsInUse);
  gauge("qeff_queue_depth", "gauge", "Requests waiting for a free row.",
        &Model::queueDepth);
  gauge("qeff_prompt_tokens_total", "counter", "Prompt tokens prefilled.",
        &Model::promptTokens);
  gauge("qeff_generation_tokens_total", "counter", "Tokens generated.",
        &Model::generatedTokens);
  // vLLM's prefix_cache_queries / prefix_cache_hits, in tokens.
  gauge("qeff_prefix_cache_queries_total", "counter",
        "Prompt tokens looked up in the prefix cache.", &Model::prefixQueries);
  gauge("qeff_prefix_cache_hit_tokens_total", "counter",
        "Prompt tokens whose prefill the prefix cache skipped.",
        &Model::prefixHits);
  gauge("qeff_spec_proposed_tokens_total", "counter",
        "Speculative decoding: tokens proposed to the target.",
        &Model::specProposedTokens);
  gauge("qeff_spec_accepted_tokens_total", "counter",
        "Speculative decoding: proposed tokens the target accepted.",
        &Model::specAcceptedTokens);

  header("qeff_requests_finished_total", "counter",
         "Requests that left the scheduler, by reason (stop, length, "
         "cancelled, error).");
  for (const auto &[name, m] : models_)
    for (const auto &[reason, count] : m.finished)
      out << "qeff_requests_finished_total{model=\"" << escape(name)
          << "\",reason=\"" << escape(reason) << "\"} " << count << "\n";

  auto histogram = [&](const char *name, const char *help,
                       Histogram Model::*field) {
    header(name, "histogram", help);
    for (const auto &[model, m] : models_) {
      const Histogram &h = m.*field;
      std::string labels = "model=\"" + escape(model) + "\"";
      uint64_t cumulative = 0;
      for (size_t i = 0; i < h.bounds.size(); ++i) {
        cumulative += i < h.counts.size() ? h.counts[i] : 0;
        out << name << "_bucket{" << labels << ",le=\"" << number(h.bounds[i])
            << "\"} " << cumulative << "\n";
      }
      out << name << "_bucket{" << labels << ",le=\"+Inf\"} " << h.count << "\n";
      out << name << "_sum{" << labels << "} " << number(h.sum) << "\n";
      out << name << "_count{" << labels << "} " << h.count << "\n";
    }
  };
  histogram("qeff_time_to_first_token_seconds",
            "Time from a request's arrival to its first token.", &Model::ttft);
  histogram("qeff_inter_token_latency_seconds",
            "Time between consecutive tokens of a request.", &Model::itl);
  histogram("qeff_request_duration_seconds",
            "Time from a request's arrival to its last token.", &Model::duration);
  histogram("qeff_decode_step_rows",
            "Rows decoded together per decode step.", &Model::stepRows);
  return out.str();
}
