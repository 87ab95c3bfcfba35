//===- BatchEngine.h - incremental continuous batching ----------*- C++ -*-===//
//
// Part of qeff. The generation loop of Generator, opened up for a server:
// requests arrive one by one, each is admitted into a free KV-cache row
// (prefilled alone, in chunks), all active rows decode together one step at a
// time, and a row is freed when its sequence finishes or is cancelled. Token
// choice is Generator's sampleToken, so a greedy request yields exactly the
// tokens `qeff run`/`qeff infer` yield for the same prompt.
//
// A continuous-batching artifact (a `batch_index` input) has
// full_batch_size rows; any other artifact serves one sequence at a time
// (row 0 of its compiled batch, the other rows padding). With prefix caching
// (PrefixCache.h, on by default) a prompt takes the free row whose cache
// already holds its longest prefix and is prefilled from there. With
// speculation (setSpeculation) every step proposes tokens for every active
// row and verifies them in one run of the target (the decode step is in
// BatchSpeculation.cpp). On an on-device-sampling artifact (next_tokens,
// DeviceSampler.h) each row feeds its own request's sampling parameters and
// uniforms from its own seeded stream; its penalty buffers are cleared by
// the prefill from position 0 (prefix reuse is off for that retained
// state). No MLIR types; not thread-safe (one thread drives an engine).
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_GENERATION_BATCHENGINE_H
#define QEFF_RUNTIME_GENERATION_BATCHENGINE_H

#include "runtime/generation/Generator.h"
#include "runtime/generation/PrefixCache.h"
#include "runtime/generation/Sequence.h"
#include "runtime/generation/Speculative.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace qeff::runtime {

/// What one admit() or step() did to one row.
struct RowUpdate {
  int64_t row = -1;
  /// Tokens of the sequence produced by this call (none when the sampled
  /// token was an EOS or stop id left out of the output).
  std::vector<int64_t> newTokens;
  /// Their logprobs, when the options ask for them.
  std::vector<TokenLogprobs> newLogprobs;
  /// Text that is now final: never retracted by a later token (held back
  /// while it might still become a stop string or ends in an incomplete
  /// UTF-8 sequence). The deltas of a row concatenate to its final text.
  std::string textDelta;
  /// Set when the row finished (and was freed): the whole result, with its
  /// finishReason (RowResult).
  std::optional<RowResult> result;
  /// Speculative decoding: tokens proposed for the row in this step, and
  /// those the target accepted.
  int64_t specProposedTokens = 0;
  int64_t specAcceptedTokens = 0;
};

class BatchEngine {
public:
  /// `tokenizer` may be null (ids only, no text, no stop strings).
  static Result<BatchEngine> create(Session &session,
                                    const tokenizer::Tokenizer *tokenizer);

  /// Sequences that can decode at once.
  int64_t rows() const { return int64_t(rows_.size()); }
  int64_t activeRows() const;
  bool hasFreeRow() const { return activeRows() < rows(); }
  int64_t ctxLen() const { return shape_.ctxLen; }
  int64_t prefillSeqLen() const { return shape_.prefillSeqLen; }
  bool continuousBatching() const { return shape_.continuous; }
  /// The artifact samples on the device (next_tokens): only the options
  /// checkDeviceSamplingOptions accepts, top_k up to maxTopKIds().
  bool samplesOnDevice() const { return deviceSampler_; }
  int64_t maxTopKIds() const { return samplerShape_.maxTopKIds; }

  /// Checks a prompt against the context: empty, or longer than ctx_len - 1
  /// tokens (no room to generate), is an error naming the limit.
  Result<void> checkPrompt(const std::vector<int64_t> &prompt) const;

  /// Prefills `prompt` into a free row and samples its first token (the
  /// update for the row is appended to `updates`; it may already be
  /// finished). Returns the row. Errors: no free row, a bad prompt or
  /// options, a failed run (which loses every row's cache: all active rows
  /// are then finished with finishReason "error").
  Result<int64_t> admit(std::vector<int64_t> prompt, GenerationOptions options,
                        std::vector<RowUpdate> &updates);

  /// One decode step of every active row; appends one update per row
  /// (with speculation it may carry several tokens).
  Status step(std::vector<RowUpdate> &updates);

  /// Speculative decoding from now on: the session must be a target
  /// (`qeff compile --num-speculative-tokens`); config.maxTokens 0 means its
  /// largest K, and more is refused. A draft model proposer needs rows()
  /// lanes. A null proposer turns speculation off.
  Status setSpeculation(SpeculationConfig config);
  bool speculating() const { return bool(speculation_.proposer); }
  /// Tokens proposed per step at most (0 without speculation).
  int64_t speculativeTokens() const {
    return speculating() ? speculation_.maxTokens : 0;
  }

  /// Frees `row` now (its result is dropped); no-op for a free row.
  void cancel(int64_t row);

  /// Prefix caching on (the default) or off.
  void setPrefixCaching(bool on) { prefix_.setEnabled(on); }
  bool prefixCaching() const { return prefix_.enabled(); }
  const PrefixCache &prefixCache() const { return prefix_; }
  /// The prompt tokens whose prefill the last admission into `row` skipped.
  int64_t reusedTokens(int64_t row) const { return rows_[row].reused; }

private:
  using Clock = std::chrono::steady_clock;
  struct Row {
    bool active = false;
    std::optional<SequenceState> seq;
    std::string emitted; ///< text handed out in textDelta so far
    uint64_t rng = 0;
    Clock::time_point start;
    int64_t reused = 0; ///< prompt tokens taken from the cache
    /// On-device sampling: the request's parameters, and the stream of its
    /// uniforms (seeded with its seed; maxTopKIds per run it takes part in).
    DeviceSamplingParams samplerParams;
    uint64_t samplerRng = 0;
  };

  BatchEngine(Session &session, const tokenizer::Tokenizer *tokenizer,
              BatchShape shape)
      : session_(&session), tokenizer_(tokenizer), shape_(shape) {}
  /// One run of the model; `laneRows[l]` is the row lane l serves (-1:
  /// padding), whose sampler parameters and uniforms an on-device-sampling
  /// artifact is fed.
  Result<Tensor> run(int64_t seq, int64_t keep, const std::vector<int64_t> &ids,
                     const std::vector<int64_t> &positions,
                     const std::vector<int64_t> *batchIndex,
                     const std::vector<int64_t> &laneRows);
  /// Samples the row's next token from `logits` and applies the stop rules;
  /// fills `update`, freeing the row when it finishes.
  void sample(int64_t r, const float *logits, int64_t vocab, RowUpdate &update);
  /// Fills `update` with what the row produced since it had `tokens`
  /// tokens and `logprobs` logprobs, freeing the row when it finished.
  void publish(int64_t r, size_t tokens, size_t logprobs, RowUpdate &update);
  /// Hands out the row's result (its sequence is done) and frees it.
  void finish(int64_t r, RowUpdate &update);
  /// After a failed run: every active row ends with reason "error".
  void failAll(std::vector<RowUpdate> &updates);

  Session *session_;
  const tokenizer::Tokenizer *tokenizer_;
  BatchShape shape_;
  std::vector<Row> rows_;
  PrefixCache prefix_;
  SpeculationConfig speculation_;
  /// The target's K values, ascending (speculativeTokenCounts).
  std::vector<int64_t> specKs_;
  bool deviceSampler_ = false;
  DeviceSamplerShape samplerShape_;
};

} // namespace qeff::runtime

#endif // QEFF_RUNTIME_GENERATION_BATCHENGINE_H
