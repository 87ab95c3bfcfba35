//===- PrefixCache.h - reusing a KV-cache row's prefix ----------*- C++ -*-===//
//
// Part of qeff. The prefix-caching bookkeeping of BatchEngine (`qeff serve`):
// each KV-cache row's token history (the tokens whose keys and values the
// row holds at positions 0, 1, ...: the prompt, then every token fed back by
// a decode step), and the choice of a free row for a new prompt: the one
// whose history shares the longest prefix with it, so that the prefill
// starts at the end of that prefix instead of at position 0.
//
// Why no rollback or clearing is needed: a query at position p sees only
// slots <= p (docs/device.md), and the new sequence writes every slot from
// the reuse position on before it reads it, so what the row held past the
// shared prefix is never read (the argument that lets speculative
// verification leave rejected tokens in the cache).
//
// Rolling KV buffers (`--kv-window=rolling`) keep only the last slots of a
// sliding-window layer, overwriting older positions: a row is reused there
// only while its whole history fits the window (then nothing it ever wrote
// was overwritten, even counting speculative verification writes, which go
// at most prefill_seq_len - 1 positions past the history).
//
// Rope frequencies that follow the call's sequence length L (dynamic NTK,
// longrope; Session::ropeThreshold) rotate a cached key with the L of the
// step that wrote it: the prefill chunk's largest position + 1, a decode
// token's own position + 1. A reused prefix would then keep another
// request's rotations (and a prefill from the reuse position other chunk
// lengths), so a row is reused only while its history and the new prompt
// are both within the threshold T: every L involved is then at most T,
// where the frequencies are the fixed ones whoever wrote the key.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_GENERATION_PREFIXCACHE_H
#define QEFF_RUNTIME_GENERATION_PREFIXCACHE_H

#include <cstdint>
#include <limits>
#include <vector>

namespace qeff::runtime {

class Session;

/// The longest row history that can be reused on `session`'s artifact:
/// unlimited (INT64_MAX) when every retained state is a full KV cache
/// (`[batch, heads, ctx_len, head_dim]`), the smallest window of its rolling
/// KV buffers (`[batch, heads, window + prefill_seq_len, head_dim]`, fewer
/// slots than ctx_len), or 0 (no reuse) for retained state of any other
/// form, whose meaning a token history does not capture.
int64_t reusableHistoryLimit(const Session &session, int64_t prefillSeqLen,
                             int64_t ctxLen);

class PrefixCache {
public:
  static constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max();

  /// `rows` cache rows, all empty; a history longer than `historyLimit`
  /// is never reused (reusableHistoryLimit), nor any history for a prompt
  /// longer than `promptLimit` (the rope threshold).
  explicit PrefixCache(int64_t rows = 0, int64_t historyLimit = kUnlimited,
                       int64_t promptLimit = kUnlimited);

  /// For `session`'s artifact: reusableHistoryLimit, and both limits at most
  /// the rope threshold when its frequencies follow the sequence length.
  static PrefixCache forArtifact(const Session &session, int64_t rows,
                                 int64_t prefillSeqLen, int64_t ctxLen);

  /// Off: every prompt prefills from position 0 (histories are still kept,
  /// so turning it on again is safe).
  void setEnabled(bool on) { enabled_ = on; }
  bool enabled() const { return enabled_; }
  int64_t historyLimit() const { return limit_; }
  int64_t promptLimit() const { return promptLimit_; }

  /// The prompt tokens that row `row` would skip for `prompt`: the common
  /// prefix of its history and the prompt, leaving at least one prompt
  /// token to prefill (its logits give the first generated token); 0 when
  /// disabled or the history or the prompt is past its limit.
  int64_t reusable(int64_t row, const std::vector<int64_t> &prompt) const;

  struct Choice {
    int64_t row = -1;   ///< -1: no free row
    int64_t reuse = 0;  ///< prompt tokens to skip
  };
  /// Among the rows with `free[row]`, the one that skips the most prompt
  /// tokens; on a tie the one freed longest ago (least recently used, a
  /// never-used row first), so the histories most recently produced, the
  /// likeliest to be asked for again, survive longest; then the lowest row.
  Choice choose(const std::vector<int64_t> &prompt,
                const std::vector<bool> &free) const;

  /// Row `row` now holds `prompt` (prefilled from its reuse position).
  void prefilled(int64_t row, const std::vector<int64_t> &prompt);
  /// A decode step wrote `tokens` at the row's next positions (its last
  /// generated token; with speculative decoding also the accepted drafts).
  void fed(int64_t row, const std::vector<int64_t> &tokens);
  void fed(int64_t row, int64_t token) { fed(row, std::vector<int64_t>{token}); }
  /// The row's sequence ended: it keeps its history and becomes the most
  /// recently used.
  void released(int64_t row);
  /// The row's cache is unknown (a failed prefill): empty history.
  void forget(int64_t row);
  /// Every row's cache is lost (a failed run zeroes the retained state).
  void forgetAll();

  const std::vector<int64_t> &history(int64_t row) const {
    return rows_[row].history;
  }

private:
  struct Row {
    std::vector<int64_t> history;
    /// When the row was last released (0: never used).
    uint64_t releasedAt = 0;
  };
  std::vector<Row> rows_;
  int64_t limit_;
  int64_t promptLimit_;
  bool enabled_ = true;
  uint64_t clock_ = 0;
};

} // namespace qeff::runtime

#endif // QEFF_RUNTIME_GENERATION_PREFIXCACHE_H
