//===- Perplexity.h - teacher-forced scoring over a Session -----*- C++ -*-===//
//
// Part of qeff. What `qeff eval` measures: token sequences fed one token per
// decode step (as the device decodes; the logits of every position are
// needed), each sequence cut into windows of at most `window` tokens that
// start every `stride` tokens (Hugging Face's sliding-window perplexity:
// each window scores only the tokens the previous windows did not, the
// rest of the window is context). The batch rows of the artifact run
// windows side by side (one per row, padding rows at position -1). Each
// scored token is handed to a callback with the logits that predict it.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_GENERATION_PERPLEXITY_H
#define QEFF_RUNTIME_GENERATION_PERPLEXITY_H

#include "qeff/runtime/Session.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace qeff::runtime {

struct ScoringOptions {
  /// Tokens per window (at most the artifact's ctx_len - 1) and the step
  /// between window starts (<= window).
  int64_t window = 0, stride = 0;
  /// Called after each decode step with the tokens fed so far and in all.
  std::function<void(int64_t done, int64_t total)> progress;
};

/// One scored token: sequence, its position in the sequence (the token at
/// `position` is predicted from the logits of `position - 1`), the id.
struct ScoredToken {
  size_t sequence;
  int64_t position;
  int64_t target;
};

/// The windows of a sequence of `length` tokens: [begin, end) and the first
/// position they score (positions < that are context only).
struct ScoringWindow {
  size_t sequence;
  int64_t begin, end, firstScored;
};
std::vector<ScoringWindow> scoringWindows(const std::vector<int64_t> &lengths,
                                          int64_t window, int64_t stride);

/// Feeds every window through `session` and calls `onToken` with each
/// scored token and its logits (`vocab` floats, valid during the call), in
/// the order of the windows. Errors: bad window/stride, a window longer
/// than the context, a run failing.
Status scoreSequences(Session &session, const std::vector<std::vector<int64_t>> &sequences,
                      const ScoringOptions &options,
                      const std::function<void(const ScoredToken &, const float *logits,
                                               int64_t vocab)> &onToken);

} // namespace qeff::runtime

#endif // QEFF_RUNTIME_GENERATION_PERPLEXITY_H
