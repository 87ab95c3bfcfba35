//===- EvalMetrics.cpp - what `qeff eval` reports -------------------------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "tools/qeff/EvalMetrics.h"

#include "llvm/Support/Format.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

using namespace llvm;

namespace qeff::tool {

void EvalAccumulator::add(int64_t target, const float *logits, int64_t vocab) {
  if (!error_.empty())
    return;
  if (target >= vocab) {
    error_ = "token id " + std::to_string(target) + " is outside the model's vocabulary of " +
             std::to_string(vocab);
    return;
  }
  // log-softmax in float64.
  double top = -INFINITY;
  int64_t arg = 0;
  for (int64_t v = 0; v < vocab; ++v)
    if (double(logits[v]) > top) {
      top = logits[v];
      arg = v;
    }
  double sum = 0;
  for (int64_t v = 0; v < vocab; ++v)
    sum += std::exp(double(logits[v]) - top);
  double lse = top + std::log(sum);
  logProbs_.resize(vocab);
  for (int64_t v = 0; v < vocab; ++v)
    logProbs_[v] = double(logits[v]) - lse;
  nllSum_ -= logProbs_[target];
  int64_t index = result_.tokens++;

  if (record_) {
    if (record_->vocab == 0)
      record_->vocab = vocab;
    uint64_t bytes = uint64_t(index + 1) * uint64_t(vocab) * sizeof(float);
    if (bytes > kMaxReferenceBytes) {
      error_ = "comparing numerics keeps the fp32 log-probabilities of every scored token "
               "(tokens x vocab x 4 bytes), and " +
               std::to_string(index + 1) + " x " + std::to_string(vocab) +
               " passes the 4 GiB bound: score fewer tokens per run";
      return;
    }
    for (int64_t v = 0; v < vocab; ++v)
      record_->logProbs.push_back(float(logProbs_[v]));
    record_->top1.push_back(arg);
  }
  if (reference_) {
    if (reference_->vocab != vocab || index >= int64_t(reference_->top1.size())) {
      error_ = "the scored tokens differ from the fp32 run's";
      return;
    }
    const float *ref = reference_->logProbs.data() + index * vocab;
    double kl = 0;
    for (int64_t v = 0; v < vocab; ++v)
      kl += std::exp(double(ref[v])) * (double(ref[v]) - logProbs_[v]);
    kl = std::max(kl, 0.0); // rounding can leave -1e-17
    klSum_ += kl;
    result_.maxKL = std::max(result_.maxKL, kl);
    agree_ += reference_->top1[index] == arg;
  }
}

EvalResult EvalAccumulator::result() const {
  EvalResult r = result_;
  r.perplexity = r.tokens ? std::exp(nllSum_ / double(r.tokens)) : NAN;
  r.compared = reference_ != nullptr;
  if (r.compared && r.tokens) {
    r.top1Agreement = double(agree_) / double(r.tokens);
    r.meanKL = klSum_ / double(r.tokens);
  }
  return r;
}

namespace {
/// QEfficient's acceptance target for the perplexity ratio to fp32.
double targetRatio(const std::string &numerics) {
  if (numerics == "fp32")
    return 0;
  return numerics.find("mx") != std::string::npos ? 1.01 : 1.001;
}
} // namespace

void printEvalResults(const std::vector<EvalResult> &results, bool json, raw_ostream &os) {
  double base = results.empty() ? NAN : results.front().perplexity;
  if (json) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const EvalResult &r : results) {
      nlohmann::ordered_json j;
      j["numerics"] = r.numerics;
      j["perplexity"] = r.perplexity;
      j["tokens"] = r.tokens;
      j["top1_agreement"] = r.compared ? nlohmann::ordered_json(r.top1Agreement) : nullptr;
      j["mean_kl"] = r.compared ? nlohmann::ordered_json(r.meanKL) : nullptr;
      j["max_kl"] = r.compared ? nlohmann::ordered_json(r.maxKL) : nullptr;
      j["perplexity_ratio"] = r.perplexity / base;
      j["target_ratio"] =
          r.compared ? nlohmann::ordered_json(targetRatio(r.numerics)) : nullptr;
      list.push_back(j);
    }
    nlohmann::ordered_json root;
    root["results"] = list;
    os << root.dump() << "\n";
    return;
  }
  const char *header[] = {"numerics", "perplexity", "tokens", "ratio",
                          "target",   "top-1",      "mean KL", "max KL"};
  os << format("%-24s %12s %7s %8s %8s %7s %10s %10s\n", header[0], header[1], header[2],
               header[3], header[4], header[5], header[6], header[7]);
  for (const EvalResult &r : results) {
    double ratio = r.perplexity / base;
    os << format("%-24s %12.6g %7lld %8.5f", r.numerics.c_str(), r.perplexity,
                 (long long)r.tokens, ratio);
    if (!r.compared) {
      const char *none = "-";
      os << format(" %8s %7s %10s %10s\n", none, none, none, none);
      continue;
    }
    double target = targetRatio(r.numerics);
    os << format(" %8s %6.2f%% %10.3g %10.3g  %s\n",
                 ("<=" + std::to_string(target).substr(0, target < 1.005 ? 5 : 4)).c_str(),
                 100 * r.top1Agreement, r.meanKL, r.maxKL, ratio <= target ? "ok" : "over");
  }
}

} // namespace qeff::tool
