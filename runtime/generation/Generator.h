//===- Generator.h - the generation loop over a Session ---------*- C++ -*-===//
//
// Part of qeff. Text generation on a compiled artifact, as the AI 100 runs
// it: prompts right-padded into the compiled batch, prefill in chunks of the
// Prefill specialization's seq_len with position -1 on padding, then one
// decode step (seq_len 1) per token, the KV cache retained in the session.
// An artifact with a `batch_index` input (continuous batching) instead
// prefills each prompt alone into a free cache row and decodes all rows
// together, a finished row taking the next waiting prompt.
// Greedy or sampled (temperature, top-k, top-p, min-p, repetition,
// presence and frequency penalties, logit bias, seeded), optionally
// constrained (TokenConstraint); stops per row on an EOS or stop token id, a
// stop string, the constraint's end, max_new_tokens or the end of the
// context; optionally with each token's logprobs. No MLIR types.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_GENERATION_GENERATOR_H
#define QEFF_RUNTIME_GENERATION_GENERATOR_H

#include "qeff/runtime/Session.h"
// Beside this header in the source tree and when installed (qeff/runtime/).
#include "DeviceSampler.h"
#include "Speculative.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace qeff::tokenizer {
class Tokenizer;
} // namespace qeff::tokenizer

namespace qeff::runtime {

/// What a constrained sequence may generate (TokenConstraint.h, installed
/// next to this header).
class TokenConstraint;

/// Largest `GenerationOptions::logprobs` (OpenAI's and vLLM's default limit).
constexpr int64_t kMaxTopLogprobs = 20;

struct GenerationOptions {
  int64_t maxNewTokens = 128;
  /// 0: greedy (argmax, first index on ties).
  double temperature = 0.0;
  /// 0: no top-k filter.
  int64_t topK = 0;
  /// 1: no nucleus filter.
  double topP = 1.0;
  /// 0: off. Drops the tokens whose probability (after temperature) is
  /// below min_p times the most likely one's, before top-k and top-p (as
  /// vLLM's min_p).
  double minP = 0.0;
  /// 1: none. HF semantics: a seen token's logit is divided by the penalty
  /// when positive, multiplied when negative.
  double repetitionPenalty = 1.0;
  /// 0: none. OpenAI semantics over the generated tokens (not the prompt):
  /// a token's logit is lowered by frequencyPenalty times the number of
  /// times it was generated, and by presencePenalty once it was.
  double presencePenalty = 0.0, frequencyPenalty = 0.0;
  /// (token id, bias) added to the logits before anything else (OpenAI's
  /// logit_bias; the caller clamps to [-100, 100]). Ids outside the logits
  /// are ignored.
  std::vector<std::pair<int64_t, double>> logitBias;
  uint64_t seed = 0;
  /// Any of these ends a row.
  std::vector<int64_t> eosIds;
  /// Like eosIds (vLLM's stop_token_ids).
  std::vector<int64_t> stopTokenIds;
  /// Until this many tokens were generated, EOS and stop token ids cannot
  /// be chosen and stop strings do not match (vLLM's min_tokens).
  int64_t minTokens = 0;
  /// A row ends when its text contains one (the text is cut before it).
  std::vector<std::string> stopStrings;
  /// The stop string stays in the text (cut after it), and the EOS or stop
  /// token that ended a row is kept (in generatedIds and the text);
  /// otherwise neither is.
  bool includeStopInOutput = false;
  /// Decoding drops special tokens (BOS, EOS, ...); false keeps them.
  bool skipSpecialTokens = true;
  /// The text is decoded as a continuation of the prompt (after its last
  /// tokens, then cut), as vLLM's incremental detokenizer does: a
  /// SentencePiece tokenizer drops the leading space of the first token it
  /// decodes, so "Once" + "upon a time" becomes "Once" + " upon a time".
  /// Off: the generated tokens alone, as HF's tokenizer.decode(generated)
  /// (what `qeff run`/`qeff infer` print).
  bool decodeAfterPrompt = false;
  /// -1: none. k in 0..kMaxTopLogprobs: RowResult::logprobs holds every
  /// generated token's logprob and the k most likely tokens', all
  /// log_softmax of the raw logits the device returned (before penalties,
  /// bias, masks and temperature: vLLM's default raw_logprobs).
  int64_t logprobs = -1;
  /// Constrained decoding: each row starts a matcher; only the tokens it
  /// allows can be chosen, EOS and stop ids only when it canEnd(); the row
  /// ends (finishReason "constraint_end") when it mustEnd(), and with
  /// finishReason "error" when no token is allowed. Logprobs stay raw.
  std::shared_ptr<const TokenConstraint> constraint;
  /// Sees the logits each token is chosen from: row, step (0 = from the
  /// prefill), `vocab` values. For tests and debugging.
  std::function<void(size_t row, int64_t step, const float *logits,
                     int64_t vocab)>
      logitsObserver;
};

/// "" when `options` are in range, else what is wrong.
std::string checkGenerationOptions(const GenerationOptions &options);

/// One generated token's log-probabilities (natural log).
struct TokenLogprobs {
  int64_t token = -1;
  double logprob = 0;
  /// The most likely tokens, most likely first (lower id first on ties).
  std::vector<std::pair<int64_t, double>> top;
};

struct RowMetrics {
  int64_t promptTokens = 0;
  int64_t generatedTokens = 0;
  double timeToFirstToken = 0; ///< seconds from the start of the batch
  double prefillTokensPerSecond = 0;
  double decodeTokensPerSecond = 0;
  double totalSeconds = 0;
  /// Speculative decoding: tokens proposed to the target, and those it
  /// accepted (each accepted token saved one decode step).
  int64_t specProposedTokens = 0;
  int64_t specAcceptedTokens = 0;
  /// Prefix caching (BatchEngine): prompt tokens whose prefill was skipped
  /// because the cache row already held them.
  int64_t cachedPromptTokens = 0;
};

/// Fills the rates of `m` from its token counts and times.
void computeRates(RowMetrics &m);

struct RowResult {
  std::vector<int64_t> promptIds;
  std::vector<int64_t> generatedIds;
  /// Decoded generated text (empty without a tokenizer).
  std::string text;
  /// "eos", "stop_token", "stop_string", "constraint_end",
  /// "max_new_tokens", "context_end" or "error" (then `error` says why).
  std::string finishReason;
  std::string error;
  /// One per generated token when GenerationOptions::logprobs >= 0.
  std::vector<TokenLogprobs> logprobs;
  RowMetrics metrics;
};

struct GenerationResult {
  std::vector<RowResult> rows;
  /// Over all rows: prompt tokens / prefill seconds, generated tokens /
  /// decode seconds, wall time.
  double prefillTokensPerSecond = 0;
  double decodeTokensPerSecond = 0;
  double totalSeconds = 0;
  /// Speculative decoding over all rows (RowMetrics), and the target's
  /// decode steps.
  int64_t specProposedTokens = 0;
  int64_t specAcceptedTokens = 0;
  int64_t decodeSteps = 0;
};

/// The batch geometry of an artifact, from its Prefill/Decode
/// specializations: `batch` is the compiled batch, or with continuous
/// batching (a `batch_index` input) the number of KV-cache rows.
struct BatchShape {
  int64_t batch = 1, prefillSeqLen = 1, ctxLen = 0;
  bool continuous = false;
};
Result<BatchShape> readBatchShape(const Session &session);

/// One run: `batch` rows of `seq` tokens (and their cache rows with
/// continuous batching); the logits, checked to be [batch, 1, vocab].
/// On a speculative-decoding target (a `num_logits_to_keep` input) the
/// input is given as [1, 1]: the last valid token of each row.
Result<Tensor> runModelStep(Session &session, int64_t batch, int64_t seq,
                            const std::vector<int64_t> &ids,
                            const std::vector<int64_t> &positions,
                            const std::vector<int64_t> *batchIndex);

/// A verification step on a speculative-decoding target: `num_logits_to_keep`
/// is `keep` and the logits, checked to be [batch, keep, vocab], are those
/// of the `keep` tokens ending at each row's last valid one (of its first
/// `keep` tokens when a row is right-padded within a step of `keep` tokens).
Result<Tensor> runModelStepKeep(Session &session, int64_t batch, int64_t seq,
                                int64_t keep, const std::vector<int64_t> &ids,
                                const std::vector<int64_t> &positions,
                                const std::vector<int64_t> *batchIndex);

/// Whether the artifact is a speculative-decoding target (`qeff compile
/// --num-speculative-tokens`): a `num_logits_to_keep` input.
bool isSpeculativeTarget(const Session &session);

/// The K values of a speculative-decoding target's DecodeK specializations
/// (seq_len K + 1 binding num_logits_to_keep K + 1), ascending; empty for
/// any other artifact.
std::vector<int64_t> speculativeTokenCounts(const Session &session);

/// Checks speculation `config` (its proposer set) against the target
/// `session`: its K values go to `ks`; config.maxTokens 0 becomes the
/// largest K, and a larger one is clamped to it (`clamp`) or refused.
Status prepareSpeculation(const Session &session, SpeculationConfig &config,
                          std::vector<int64_t> &ks, bool clamp);

/// Called with newly decoded text of a row (complete UTF-8 sequences).
using TextCallback = std::function<void(size_t row, const std::string &text)>;

/// Per-call hooks of Generator::generate, called on the calling thread.
struct GenerationHooks {
  /// Each token a row generates, as it is chosen (row, token id), after
  /// the text it completed went to the TextCallback; a stop token that is
  /// not kept in the output is not reported.
  std::function<void(size_t row, int64_t token)> onToken;
  /// Polled before every model step; true stops the generation and
  /// generate() fails with "generation cancelled".
  std::function<bool()> cancelled;
};

class Generator {
public:
  /// `tokenizer` may be null (ids only). The session must expose `input_ids`
  /// and `position_ids` inputs, a `logits` output of [batch, 1, vocab] and a
  /// Prefill specialization (Decode when prefill seq_len > 1).
  static Result<Generator> create(Session &session,
                                  const tokenizer::Tokenizer *tokenizer);

  /// Generates for every prompt, in groups of the compiled batch size.
  Result<GenerationResult> generate(
      const std::vector<std::vector<int64_t>> &prompts,
      const GenerationOptions &options, const TextCallback &onText = {},
      const GenerationHooks &hooks = {});

  /// Speculative decoding from now on: the session must be a target
  /// (`qeff compile --num-speculative-tokens`); config.maxTokens is clamped
  /// to its largest K. A null proposer turns speculation off.
  Status setSpeculation(SpeculationConfig config);

  int64_t batchSize() const { return batch_; }
  bool continuousBatching() const { return continuous_; }
  int64_t prefillSeqLen() const { return prefillSeqLen_; }
  int64_t ctxLen() const { return ctxLen_; }

private:
  Generator(Session &session, const tokenizer::Tokenizer *tokenizer)
      : session_(&session), tokenizer_(tokenizer) {}
  Status generateGroup(const std::vector<std::vector<int64_t>> &prompts,
                       size_t firstRow, const GenerationOptions &options,
                       const TextCallback &onText, GenerationResult &result);
  /// Continuous batching: each prompt is prefilled alone into a free cache
  /// row; all rows decode together; a finished row takes the next prompt.
  Status generateContinuous(const std::vector<std::vector<int64_t>> &prompts,
                            const GenerationOptions &options,
                            const TextCallback &onText,
                            GenerationResult &result);
  /// One decode step of the rows in `lanes` (lane -> row of `book`, -1:
  /// idle), speculating when configured. `book` is Generator.cpp's RowBook.
  template <typename Book>
  Status decodeStep(Book &book, const std::vector<int64_t> &lanes,
                    const std::vector<int64_t> *batchIndex, uint64_t &rng,
                    std::chrono::steady_clock::time_point start);
  /// Asks the running call's hooks whether to stop (before each model step).
  bool pollCancelled() {
    if (hooks_ && hooks_->cancelled && hooks_->cancelled())
      cancelled_ = true;
    return cancelled_;
  }
  /// A prefill run of `batch` lanes whose first `sequences` hold prompts.
  Result<Tensor> runStep(int64_t batch, int64_t seq,
                         const std::vector<int64_t> &ids,
                         const std::vector<int64_t> &positions,
                         const std::vector<int64_t> *batchIndex,
                         int64_t sequences) {
    if (pollCancelled())
      return Error{"generation cancelled"};
    if (deviceSampler_) {
      std::vector<bool> active(batch, false);
      std::fill(active.begin(), active.begin() + std::min(batch, sequences), true);
      return runSampledStep(*session_, samplerShape_, samplerLanes(active), seq,
                            ids, positions, batchIndex);
    }
    return runModelStep(*session_, batch, seq, ids, positions, batchIndex);
  }
  /// The sampler lanes of a run: the call's parameters, and its stream for
  /// the lanes holding a sequence (padding lanes draw no uniforms).
  std::vector<SamplerLane> samplerLanes(const std::vector<bool> &active) {
    std::vector<SamplerLane> lanes(active.size());
    for (size_t l = 0; l < active.size(); ++l)
      lanes[l] = {samplerParams_, active[l] ? &samplerRng_ : nullptr};
    return lanes;
  }

  Session *session_;
  const tokenizer::Tokenizer *tokenizer_;
  /// The compiled batch; with continuous batching the number of cache rows.
  int64_t batch_ = 1, prefillSeqLen_ = 1, ctxLen_ = 0;
  bool continuous_ = false;
  double lastPrefillSeconds_ = 0, lastDecodeSeconds_ = 0;
  SpeculationConfig speculation_;
  /// The target's K values, ascending (speculativeTokenCounts).
  std::vector<int64_t> specKs_;
  int64_t decodeSteps_ = 0;
  /// The hooks of the running generate() call, and whether they cancelled it.
  const GenerationHooks *hooks_ = nullptr;
  bool cancelled_ = false;
  /// An on-device-sampling artifact (next_tokens): the running call's
  /// parameters and the stream its uniforms come from (seeded per call).
  bool deviceSampler_ = false;
  DeviceSamplerShape samplerShape_;
  DeviceSamplingParams samplerParams_;
  uint64_t samplerRng_ = 0;
};

/// Picks the next token from one row of logits with the options' sampling
/// (exposed for tests; the generation loops use SequenceState, which adds
/// the penalties over generated tokens, masks and constraints).
int64_t sampleToken(const float *logits, int64_t vocab,
                    const GenerationOptions &options,
                    const std::vector<int64_t> &seen, uint64_t &rngState);

} // namespace qeff::runtime

#endif // QEFF_RUNTIME_GENERATION_GENERATOR_H
