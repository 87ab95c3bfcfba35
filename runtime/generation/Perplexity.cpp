//===- Perplexity.cpp - teacher-forced scoring over a Session -------------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "runtime/generation/Perplexity.h"

#include "runtime/generation/Generator.h"

#include <algorithm>
#include <numeric>

namespace qeff::runtime {

std::vector<ScoringWindow> scoringWindows(const std::vector<int64_t> &lengths,
                                          int64_t window, int64_t stride) {
  std::vector<ScoringWindow> windows;
  for (size_t s = 0; s < lengths.size(); ++s) {
    int64_t length = lengths[s], scoredUpTo = 0;
    for (int64_t begin = 0; begin < length; begin += stride) {
      int64_t end = std::min(begin + window, length);
      int64_t first = std::max(scoredUpTo, begin + 1);
      if (first < end)
        windows.push_back({s, begin, end, first});
      scoredUpTo = end;
      if (end == length)
        break;
    }
  }
  return windows;
}

Status scoreSequences(Session &session, const std::vector<std::vector<int64_t>> &sequences,
                      const ScoringOptions &options,
                      const std::function<void(const ScoredToken &, const float *,
                                               int64_t)> &onToken) {
  Result<BatchShape> shape = readBatchShape(session);
  if (!shape)
    return makeError(shape.error());
  if (options.window < 2 || options.stride < 1 || options.stride > options.window)
    return makeError("the window must hold at least 2 tokens and the stride be in 1.." +
                     std::to_string(options.window) + " (window " +
                     std::to_string(options.window) + ", stride " +
                     std::to_string(options.stride) + ")");
  // A token at position ctx_len - 1 would share its slot with the padding
  // writes (docs/device.md): at most ctx_len - 1 tokens.
  if (options.window > shape->ctxLen - 1)
    return makeError("a window of " + std::to_string(options.window) +
                     " tokens does not fit the artifact's context of " +
                     std::to_string(shape->ctxLen) + " (at most " +
                     std::to_string(shape->ctxLen - 1) +
                     "; compile with a larger --ctx-len or give a smaller --window)");
  std::vector<int64_t> lengths;
  for (const auto &s : sequences)
    lengths.push_back(int64_t(s.size()));
  std::vector<ScoringWindow> windows = scoringWindows(lengths, options.window, options.stride);
  int64_t total = 0, done = 0;
  for (const ScoringWindow &w : windows)
    total += w.end - w.begin - 1;
  const int64_t batch = shape->batch;
  std::vector<int64_t> rows(batch);
  std::iota(rows.begin(), rows.end(), 0);
  std::vector<int64_t> ids(batch), positions(batch);
  for (size_t g = 0; g < windows.size(); g += batch) {
    size_t count = std::min<size_t>(batch, windows.size() - g);
    session.reset();
    int64_t steps = 0;
    for (size_t r = 0; r < count; ++r)
      steps = std::max(steps, windows[g + r].end - windows[g + r].begin - 1);
    for (int64_t i = 0; i < steps; ++i) {
      for (int64_t r = 0; r < batch; ++r) {
        const ScoringWindow *w = size_t(r) < count ? &windows[g + r] : nullptr;
        bool active = w && i < w->end - w->begin - 1;
        ids[r] = active ? sequences[w->sequence][w->begin + i] : 0;
        positions[r] = active ? i : -1;
      }
      Result<Tensor> logits = runModelStep(session, batch, 1, ids, positions,
                                           shape->continuous ? &rows : nullptr);
      if (!logits)
        return makeError(logits.error());
      int64_t vocab = logits->dim(2);
      for (size_t r = 0; r < count; ++r) {
        const ScoringWindow &w = windows[g + r];
        int64_t target = w.begin + i + 1;
        if (i >= w.end - w.begin - 1)
          continue;
        ++done;
        if (target >= w.firstScored)
          onToken({w.sequence, target, sequences[w.sequence][target]},
                  logits->data<float>() + r * vocab, vocab);
      }
      if (options.progress)
        options.progress(done, total);
    }
  }
  return {};
}

} // namespace qeff::runtime
