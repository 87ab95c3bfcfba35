//===- EvalMetrics.h - what `qeff eval` reports -----------------*- C++ -*-===//
//
// Part of qeff. Per numerics mode: perplexity over the scored tokens and,
// against the fp32 run, top-1 agreement and the KL divergence
// KL(p_fp32 || p_mode) per token (mean and max), in float64. The fp32 run
// keeps its log-probabilities for the comparisons (bounded: see
// kMaxReferenceBytes). The table shows QEfficient's acceptance targets for
// the perplexity ratio next to the result: <= 1.001 for fp16, <= 1.01 with
// MX formats.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_TOOLS_QEFF_EVALMETRICS_H
#define QEFF_TOOLS_QEFF_EVALMETRICS_H

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace qeff::tool {

/// The fp32 log-probabilities of every scored token, [tokens, vocab].
struct ReferenceLogProbs {
  std::vector<float> logProbs;
  std::vector<int64_t> top1;
  int64_t vocab = 0;
};

/// The largest reference kept (tokens x vocab x 4 bytes).
inline constexpr uint64_t kMaxReferenceBytes = uint64_t(4) << 30;

struct EvalResult {
  std::string numerics;
  double perplexity = 0;
  int64_t tokens = 0;
  bool compared = false; ///< against fp32 (not for fp32 itself)
  double top1Agreement = 0, meanKL = 0, maxKL = 0;
};

class EvalAccumulator {
public:
  /// `reference`: the fp32 run to compare with (null for fp32 itself).
  EvalAccumulator(std::string numerics, const ReferenceLogProbs *reference)
      : reference_(reference) {
    result_.numerics = std::move(numerics);
  }
  /// Keeps this run's log-probabilities in `into` (the fp32 run).
  void record(ReferenceLogProbs *into) { record_ = into; }
  /// One scored token: the logits predicting `target`.
  void add(int64_t target, const float *logits, int64_t vocab);
  bool ok() const { return error_.empty(); }
  const std::string &error() const { return error_; }
  EvalResult result() const;

private:
  const ReferenceLogProbs *reference_;
  ReferenceLogProbs *record_ = nullptr;
  EvalResult result_;
  double nllSum_ = 0, klSum_ = 0;
  int64_t agree_ = 0;
  std::vector<double> logProbs_;
  std::string error_;
};

/// The table (or, with `json`, {"results": [...]}) of `results`, the first
/// being fp32.
void printEvalResults(const std::vector<EvalResult> &results, bool json,
                      llvm::raw_ostream &os);

} // namespace qeff::tool

#endif // QEFF_TOOLS_QEFF_EVALMETRICS_H
