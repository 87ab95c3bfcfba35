//===- Sequence.h - one sequence's token choice and stop rules --*- C++ -*-===//
//
// Part of qeff. What Generator (qeff run/infer) and BatchEngine (qeff serve)
// do with each row of logits: choose a token (logit bias, penalties,
// min_tokens and constraint masks, then greedy or sampled with temperature,
// min-p, top-k and top-p), record its logprobs, and apply the stop rules
// (EOS and stop token ids, stop strings, the constraint's end,
// max_new_tokens, the end of the context). With default options the choice
// is exactly the historical sampleToken's.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_GENERATION_SEQUENCE_H
#define QEFF_RUNTIME_GENERATION_SEQUENCE_H

#include "runtime/generation/Generator.h"
#include "runtime/generation/TokenConstraint.h"

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace qeff::runtime {

/// What token choice depends on besides the logits and the options.
struct SamplerState {
  /// Prompt + generated tokens (the repetition penalty).
  std::vector<int64_t> seen;
  /// Generated token -> how often (presence and frequency penalties).
  std::unordered_map<int64_t, int64_t> generatedCounts;
  /// Tokens generated so far (min_tokens).
  int64_t generated = 0;
  /// The sequence's constraint state (null: unconstrained).
  ConstraintMatcher *matcher = nullptr;
};

/// The next token from `logits` (`vocab` values, left unchanged); an error
/// when the masks leave no token (a constraint that allows nothing here).
Result<int64_t> chooseToken(const float *logits, int64_t vocab,
                            const GenerationOptions &options,
                            const SamplerState &state, uint64_t &rngState);

/// What the sampler draws from: candidate ids, most likely first, and their
/// probabilities (summing to 1). Greedy: the argmax alone, probability 1.
struct TokenDistribution {
  std::vector<int64_t> ids;
  std::vector<double> probs;
  /// The probability of `id` (0 when it is no candidate).
  double probOf(int64_t id) const;
};

/// The distribution chooseToken draws from (every filter applied); an error
/// when the masks leave no token.
Result<TokenDistribution> tokenDistribution(const float *logits, int64_t vocab,
                                            const GenerationOptions &options,
                                            const SamplerState &state);

/// log_softmax(logits)[token] and the `k` largest, in double precision.
TokenLogprobs computeLogprobs(const float *logits, int64_t vocab, int64_t token,
                              int64_t k);

/// splitmix64: a tiny, portable PRNG (the same stream on every platform, so
/// a seed reproduces a sample anywhere).
uint64_t nextRandom(uint64_t &state);

/// One sequence being generated: its options, sampler state, constraint
/// matcher and result. Not copyable (it owns the matcher).
class SequenceState {
public:
  /// `tokenizer` may be null (no text, no stop strings). With
  /// `decodeEachToken` the text is decoded after every token (stop strings,
  /// streaming); otherwise by decodeText() at the end.
  SequenceState(GenerationOptions options, const tokenizer::Tokenizer *tokenizer,
                std::vector<int64_t> prompt, int64_t ctxLen, bool decodeEachToken);

  /// Chooses the next token from the raw `logits` of this sequence and
  /// applies the stop rules. No-op once done.
  void step(const float *logits, int64_t vocab, uint64_t &rngState);
  /// Speculative verification of one position: the token is chosen as
  /// step() would (greedy), or for temperature > 0 by speculative rejection
  /// sampling against `draft` (Leviathan et al.: accepted with probability
  /// min(1, p/q), else drawn from norm(max(0, p - q))), `draftProbs` being
  /// the proposer's distribution over the vocabulary (null: it proposed
  /// `draft` deterministically, q one-hot), so the output distribution is
  /// the target's. `draft` -1: no proposal here (a plain step). Returns
  /// whether the sequence took `draft` and goes on.
  bool verify(const float *logits, int64_t vocab, uint64_t &rngState,
              int64_t draft, const float *draftProbs);
  bool done() const { return !result_.finishReason.empty(); }
  /// Ends the sequence now with `reason` (and, for "error", `error`).
  void finish(const std::string &reason, const std::string &error = "");

  const GenerationOptions &options() const { return options_; }
  const std::vector<int64_t> &prompt() const { return result_.promptIds; }
  RowResult &result() { return result_; }
  /// The position of the last generated token.
  int64_t lastPosition() const {
    return int64_t(result_.promptIds.size() + result_.generatedIds.size()) - 1;
  }
  /// Decodes the text when it was not decoded token by token.
  void decodeText();
  /// How much of the text no later token can change: without a trailing
  /// incomplete UTF-8 sequence and (unless stop strings stay in the output)
  /// a tail that may still become a stop string.
  size_t stableTextLength() const;

private:
  /// Records the chosen `token` (logprobs from `logits`) and applies the
  /// stop rules.
  void commit(int64_t token, const float *logits, int64_t vocab);
  /// Decodes the generated tokens and applies the stop strings; true when
  /// one matched (the text is then cut).
  bool updateText();
  /// The text of the generated tokens (after the prompt's last tokens with
  /// decodeAfterPrompt).
  std::string decodeGenerated();

  GenerationOptions options_;
  const tokenizer::Tokenizer *tokenizer_;
  int64_t ctxLen_;
  bool decodeEachToken_;
  SamplerState sampler_;
  std::unique_ptr<ConstraintMatcher> matcher_;
  /// Stop strings must end past this text offset (min_tokens).
  size_t stopFrom_ = 0;
  /// decodeAfterPrompt: the prompt's last tokens and their text.
  std::vector<int64_t> context_;
  std::string contextText_;
  RowResult result_;
};

} // namespace qeff::runtime

#endif // QEFF_RUNTIME_GENERATION_SEQUENCE_H
