//===- Speculative.h - proposers for speculative decoding -------*- C++ -*-===//
//
// Part of qeff. Speculative decoding on a target compiled with `qeff
// compile --num-speculative-tokens K[,K2...]`: each decode step a proposer
// guesses up to K tokens per row, the target runs the row's last token and
// the guesses in one step of K + 1 tokens (its DecodeK specialization) and
// returns the logits of all of them; SequenceState::verify keeps the
// longest prefix the target agrees with plus one token of its own (greedy),
// or the tokens speculative rejection sampling accepts (temperature > 0).
// Rejected positions need no KV rollback: their cache slots lie past the
// row's position, so no query sees them before the row writes them again.
// No MLIR types.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_GENERATION_SPECULATIVE_H
#define QEFF_RUNTIME_GENERATION_SPECULATIVE_H

#include "qeff/runtime/Result.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace qeff::runtime {

/// Up to k guessed tokens for one row.
struct Proposal {
  std::vector<int64_t> tokens;
  /// Per token, the proposer's distribution over the vocabulary it was
  /// drawn from (empty: proposed deterministically, e.g. prompt lookup).
  std::vector<std::vector<float>> probs;
};

class Proposer {
public:
  virtual ~Proposer() = default;
  /// "prompt-lookup", "draft=..." (for messages and metrics).
  virtual std::string name() const = 0;
  /// A proposal of at most `limits[r]` tokens for each row whose
  /// `contexts[r]` (prompt + generated tokens) is not null.
  virtual Result<std::vector<Proposal>>
  propose(const std::vector<const std::vector<int64_t> *> &contexts,
          const std::vector<int64_t> &limits) = 0;
};

/// Prompt lookup decoding (HF's prompt_lookup_num_tokens, QEfficient's
/// pld example): the last n tokens of the context (n = maxNgramSize down to
/// 1) searched for in the context before them; the earliest match proposes
/// the tokens that followed it.
class PromptLookupProposer : public Proposer {
public:
  explicit PromptLookupProposer(int64_t maxNgramSize = 3)
      : maxNgramSize_(maxNgramSize) {}
  std::string name() const override { return "prompt-lookup"; }
  Result<std::vector<Proposal>>
  propose(const std::vector<const std::vector<int64_t> *> &contexts,
          const std::vector<int64_t> &limits) override;

  /// The proposal for one context.
  static std::vector<int64_t> lookup(const std::vector<int64_t> &context,
                                     int64_t maxNgramSize, int64_t limit);

private:
  int64_t maxNgramSize_;
};

class Session;
struct GenerationOptions;

/// A draft model (a second artifact with the same tokenizer, run in the
/// same process): it catches up on each row's context (prefill chunks from
/// the first token it has not seen, or whose cache entry a rejection made
/// stale: the longest common prefix of what it was fed and the context) and
/// then decodes up to `limit` tokens, greedy or sampled from its own
/// distribution (temperature, top-k, top-p and min-p of `options`), which
/// it hands over for rejection sampling. Its KV cache rows follow the
/// target's lanes: it needs as many rows (a compiled batch, or cache rows
/// with continuous batching) and a ctx_len at least the target's.
class DraftModelProposer : public Proposer {
public:
  /// `session` must outlive the proposer; `options` the request's sampling.
  /// `targetVocab` (0: the draft's own) sizes the distributions it hands
  /// over: a draft with a smaller vocabulary gives its ids past its own
  /// probability 0.
  static Result<std::unique_ptr<DraftModelProposer>>
  create(Session &session, std::string name, int64_t lanes, int64_t ctxLen,
         const GenerationOptions &options, int64_t targetVocab = 0);
  /// As above, owning `session` (makeProposer, SpeculationSetup.h).
  static Result<std::unique_ptr<DraftModelProposer>>
  create(std::unique_ptr<Session> session, std::string name, int64_t lanes,
         int64_t ctxLen, const GenerationOptions &options,
         int64_t targetVocab = 0);
  ~DraftModelProposer() override;
  std::string name() const override { return name_; }
  Result<std::vector<Proposal>>
  propose(const std::vector<const std::vector<int64_t> *> &contexts,
          const std::vector<int64_t> &limits) override;

private:
  struct Impl;
  explicit DraftModelProposer(std::unique_ptr<Impl> impl, std::string name);
  std::unique_ptr<Impl> impl_;
  std::string name_;
};

/// How a Generator or BatchEngine speculates.
struct SpeculationConfig {
  std::shared_ptr<Proposer> proposer;
  /// Tokens proposed per step at most (0: the target's largest K).
  int64_t maxTokens = 0;
};

/// How `qeff serve` speculates, before the draft model is opened.
struct SpeculationSpec {
  /// "" (off), "prompt-lookup" or "draft".
  std::string method;
  /// Tokens proposed per step at most (0: the target's largest K).
  int64_t numTokens = 0;
  /// Prompt lookup: the longest n-gram searched for.
  int64_t promptLookupMax = 3;
  /// The draft model's artifacts ("draft").
  std::string draftArtifactDir;
};

struct RowResult;

/// One lane of a speculative decode step.
struct SpeculationLane {
  /// The row decoding in the lane (null: idle).
  const RowResult *row = nullptr;
  /// The position of its last generated token, and its max_new_tokens.
  int64_t lastPosition = 0;
  int64_t maxNewTokens = 0;
};

/// The proposals of one decode step, one per lane, each clamped so that the
/// step stays inside the context (ctx_len - 2 - position tokens) and
/// max_new_tokens, and to `config.maxTokens`. None at all when a lane sits at
/// ctx_len - 1: it decodes alone in a step of one token, since the padding
/// of a longer step would write that very slot too (docs/device.md).
Result<std::vector<Proposal>>
proposeStep(const SpeculationConfig &config,
            const std::vector<SpeculationLane> &lanes, int64_t ctxLen);

/// The smallest of the target's `ks` (ascending) holding every proposal;
/// 0 (the plain Decode specialization) when all are empty.
int64_t stepTokenCount(const std::vector<int64_t> &ks,
                       const std::vector<Proposal> &proposals);

/// The input_ids and position_ids ([lanes, S]) of a step of S tokens per
/// lane: each busy lane's last generated token, then its proposal; the
/// rest padding (position -1).
void layOutStep(const std::vector<SpeculationLane> &lanes,
                const std::vector<Proposal> &proposals, int64_t S,
                std::vector<int64_t> &ids, std::vector<int64_t> &positions);

/// Verifies one lane's `proposal` against the target's logits of its step:
/// position i's logits (`logits + i * vocab`) verify draft i (the target's
/// token after the row's last one and drafts 0..i-1) and the one after the
/// last draft gives the bonus token. `verifyAt(logits, draft, draftProbs)`
/// is SequenceState::verify of the row (draft -1: a plain step; returns
/// whether the row took the draft and goes on); `generated` is the row's
/// generated ids, which it extends. Stops at the first rejection or when
/// the row finishes (its stop rules apply token by token). Returns the
/// drafts accepted.
int64_t verifyProposal(
    Proposal &proposal, const float *logits, int64_t vocab,
    const std::vector<int64_t> &generated,
    const std::function<bool(const float *, int64_t, const float *)> &verifyAt);

} // namespace qeff::runtime

#endif // QEFF_RUNTIME_GENERATION_SPECULATIVE_H
