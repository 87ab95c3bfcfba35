//===- PrefixCache.cpp - reusing a KV-cache row's prefix ------------------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "runtime/generation/PrefixCache.h"

#include "qeff/runtime/Session.h"

#include <algorithm>

using namespace qeff::runtime;

int64_t qeff::runtime::reusableHistoryLimit(const Session &session,
                                            int64_t prefillSeqLen,
                                            int64_t ctxLen) {
  int64_t limit = PrefixCache::kUnlimited;
  const std::vector<TensorInfo> &inputs = session.inputInfos();
  for (const std::string &name : session.stateNames()) {
    auto info = std::find_if(inputs.begin(), inputs.end(),
                             [&](const TensorInfo &i) { return i.name == name; });
    if (info == inputs.end() || !info->hasShape || info->dims.size() != 4)
      return 0;
    const Dim &slots = info->dims[2];
    // A device may report the specialization's value instead of the symbol.
    if (slots.symbol == "ctx_len" || (slots.symbol.empty() && slots.value >= ctxLen))
      continue;
    // A rolling buffer: window + prefill_seq_len - 1 ring slots plus the
    // padding slot (docs/device.md).
    if (slots.value <= 0 || !slots.symbol.empty())
      return 0;
    limit = std::min(limit, std::max<int64_t>(0, slots.value - prefillSeqLen));
  }
  return limit;
}

PrefixCache::PrefixCache(int64_t rows, int64_t historyLimit, int64_t promptLimit)
    : rows_(rows), limit_(historyLimit), promptLimit_(promptLimit) {}

PrefixCache PrefixCache::forArtifact(const Session &session, int64_t rows,
                                     int64_t prefillSeqLen, int64_t ctxLen) {
  int64_t limit = reusableHistoryLimit(session, prefillSeqLen, ctxLen);
  int64_t promptLimit = kUnlimited;
  if (int64_t t = session.ropeThreshold(); t >= 0) {
    limit = std::min(limit, t);
    promptLimit = t;
  }
  return PrefixCache(rows, limit, promptLimit);
}

int64_t PrefixCache::reusable(int64_t row,
                              const std::vector<int64_t> &prompt) const {
  const std::vector<int64_t> &h = rows_[row].history;
  if (!enabled_ || int64_t(h.size()) > limit_ || prompt.empty() ||
      int64_t(prompt.size()) > promptLimit_)
    return 0;
  size_t n = std::min(h.size(), prompt.size() - 1);
  return std::mismatch(h.begin(), h.begin() + n, prompt.begin()).first - h.begin();
}

PrefixCache::Choice PrefixCache::choose(const std::vector<int64_t> &prompt,
                                        const std::vector<bool> &free) const {
  Choice best;
  for (int64_t r = 0; r < int64_t(rows_.size()); ++r) {
    if (r >= int64_t(free.size()) || !free[r])
      continue;
    int64_t reuse = reusable(r, prompt);
    if (best.row < 0 || reuse > best.reuse ||
        (reuse == best.reuse && rows_[r].releasedAt < rows_[best.row].releasedAt))
      best = {r, reuse};
  }
  return best;
}

void PrefixCache::prefilled(int64_t row, const std::vector<int64_t> &prompt) {
  rows_[row].history = prompt;
}

void PrefixCache::fed(int64_t row, const std::vector<int64_t> &tokens) {
  std::vector<int64_t> &h = rows_[row].history;
  // Past the limit the history is never reused again: stop growing it.
  if (int64_t(h.size()) <= limit_)
    h.insert(h.end(), tokens.begin(), tokens.end());
}

void PrefixCache::released(int64_t row) { rows_[row].releasedAt = ++clock_; }

void PrefixCache::forget(int64_t row) { rows_[row].history.clear(); }

void PrefixCache::forgetAll() {
  for (Row &r : rows_)
    r.history.clear();
}
