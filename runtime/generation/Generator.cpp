//===- Generator.cpp - the generation loop over a Session -----------------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "runtime/generation/Generator.h"

#include "runtime/generation/Sequence.h"

#include "frontend/Tokenizer/Tokenizer.h"

#include <algorithm>
#include <chrono>
#include <numeric>

using namespace qeff::runtime;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Whether `text` ends inside a UTF-8 sequence the decoder could not finish
/// (it decodes such bytes to U+FFFD until the rest arrives).
bool endsIncomplete(const std::string &text) {
  return text.size() >= 3 && text.compare(text.size() - 3, 3, "\xEF\xBF\xBD") == 0;
}

} // namespace

void qeff::runtime::computeRates(RowMetrics &m) {
  m.prefillTokensPerSecond =
      m.timeToFirstToken > 0 ? m.promptTokens / m.timeToFirstToken : 0;
  double decodeTime = m.totalSeconds - m.timeToFirstToken;
  m.decodeTokensPerSecond =
      decodeTime > 0 ? std::max<int64_t>(0, m.generatedTokens - 1) / decodeTime
                     : 0;
}

Result<BatchShape> qeff::runtime::readBatchShape(const Session &session) {
  BatchShape shape;
  const auto &specs = session.specializations();
  auto prefill = std::find_if(specs.begin(), specs.end(), [](const auto &s) {
    return s.name == "Prefill";
  });
  if (prefill == specs.end())
    return Error{"the artifact has no Prefill specialization (specializations.json)"};
  auto get = [&](const char *symbol) -> int64_t {
    auto it = prefill->symbols.find(symbol);
    return it == prefill->symbols.end() ? 0 : it->second;
  };
  shape.batch = get("batch_size");
  shape.prefillSeqLen = get("seq_len");
  shape.ctxLen = get("ctx_len");
  if (shape.batch <= 0 || shape.prefillSeqLen <= 0 || shape.ctxLen <= 0)
    return Error{"the Prefill specialization must bind batch_size, seq_len and "
                 "ctx_len"};
  bool decode = shape.prefillSeqLen == 1 ||
                std::any_of(specs.begin(), specs.end(), [&](const auto &s) {
                  auto it = s.symbols.find("seq_len");
                  return it != s.symbols.end() && it->second == 1;
                });
  if (!decode)
    return Error{"the artifact has no specialization with seq_len 1 to decode"};
  // Continuous batching: a batch_index input; full_batch_size cache rows,
  // prefilled one at a time, decoded all together.
  const auto &inputs = session.inputInfos();
  shape.continuous = std::any_of(inputs.begin(), inputs.end(), [](const TensorInfo &i) {
    return i.name == "batch_index";
  });
  if (shape.continuous) {
    int64_t full = get("full_batch_size");
    bool decodes = std::any_of(specs.begin(), specs.end(), [&](const auto &s) {
      auto batch = s.symbols.find("batch_size"), seq = s.symbols.find("seq_len");
      return batch != s.symbols.end() && batch->second == full &&
             seq != s.symbols.end() && seq->second == 1;
    });
    if (full <= 0 || shape.batch != 1 || !decodes)
      return Error{"the artifact has a batch_index input (continuous batching) "
                   "but no Prefill specialization of batch_size 1 binding "
                   "full_batch_size, or none decoding full_batch_size rows"};
    shape.batch = full;
  }
  return shape;
}

bool qeff::runtime::isSpeculativeTarget(const Session &session) {
  const auto &inputs = session.inputInfos();
  return std::any_of(inputs.begin(), inputs.end(), [](const TensorInfo &i) {
    return i.name == "num_logits_to_keep";
  });
}

std::vector<int64_t> qeff::runtime::speculativeTokenCounts(const Session &session) {
  std::vector<int64_t> ks;
  if (!isSpeculativeTarget(session))
    return ks;
  for (const Specialization &s : session.specializations()) {
    auto seq = s.symbols.find("seq_len"), keep = s.symbols.find("num_logits_to_keep");
    if (seq != s.symbols.end() && keep != s.symbols.end() && keep->second > 1 &&
        seq->second == keep->second)
      ks.push_back(keep->second - 1);
  }
  std::sort(ks.begin(), ks.end());
  ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
  return ks;
}

Result<Tensor> qeff::runtime::runModelStepKeep(
    Session &session, int64_t batch, int64_t seq, int64_t keep,
    const std::vector<int64_t> &ids, const std::vector<int64_t> &positions,
    const std::vector<int64_t> *batchIndex) {
  TensorMap inputs;
  inputs["input_ids"] = Tensor::fromInt64({batch, seq}, ids);
  inputs["position_ids"] = Tensor::fromInt64({batch, seq}, positions);
  if (batchIndex)
    inputs["batch_index"] = Tensor::fromInt64({batch, 1}, *batchIndex);
  // Only the length of num_logits_to_keep selects; its values are unused
  // (zeros, as QEfficient feeds them).
  if (isSpeculativeTarget(session))
    inputs["num_logits_to_keep"] =
        Tensor::fromInt64({keep, 1}, std::vector<int64_t>(keep, 0));
  else if (keep != 1)
    return Error{"the artifact returns the last token's logits only: compile "
                 "it with --num-speculative-tokens to verify " +
                 std::to_string(keep - 1) + " speculative tokens per step"};
  if (samplesOnDevice(session))
    return Error{"this artifact samples on the device (qeff compile "
                 "--on-device-sampling): it returns next_tokens, not logits; "
                 "scoring (qeff eval), logprobs and speculative verification "
                 "need an artifact compiled without --on-device-sampling"};
  if (Status s = session.run(inputs); !s)
    return Error{s.error()};
  Result<Tensor> logits = session.getOutput("logits");
  if (!logits)
    return logits;
  if (logits->rank() != 3 || logits->dim(0) != batch || logits->dim(1) != keep)
    return Error{"the model's logits are " + shapeString(logits->shape()) +
                 ", expected [batch, " + std::to_string(keep) +
                 ", vocab]: is this a device artifact?"};
  return logits;
}

Result<Tensor> qeff::runtime::runModelStep(Session &session, int64_t batch,
                                           int64_t seq,
                                           const std::vector<int64_t> &ids,
                                           const std::vector<int64_t> &positions,
                                           const std::vector<int64_t> *batchIndex) {
  return runModelStepKeep(session, batch, seq, 1, ids, positions, batchIndex);
}

Result<Generator> Generator::create(Session &session,
                                    const tokenizer::Tokenizer *tokenizer) {
  Generator g(session, tokenizer);
  Result<BatchShape> shape = readBatchShape(session);
  if (!shape)
    return Error{shape.error()};
  g.batch_ = shape->batch;
  g.prefillSeqLen_ = shape->prefillSeqLen;
  g.ctxLen_ = shape->ctxLen;
  g.continuous_ = shape->continuous;
  if (samplesOnDevice(session)) {
    Result<DeviceSamplerShape> sampler = readDeviceSamplerShape(session);
    if (!sampler)
      return Error{sampler.error()};
    g.deviceSampler_ = true;
    g.samplerShape_ = *sampler;
  }
  return g;
}

Result<GenerationResult>
Generator::generate(const std::vector<std::vector<int64_t>> &prompts,
                    const GenerationOptions &options,
                    const TextCallback &onText,
                    const GenerationHooks &hooks) {
  hooks_ = &hooks;
  cancelled_ = false;
  // The hooks live for this call only.
  struct Forget {
    const GenerationHooks *&hooks;
    ~Forget() { hooks = nullptr; }
  } forget{hooks_};
  if (prompts.empty())
    return Error{"no prompt given"};
  if (std::string bad = checkGenerationOptions(options); !bad.empty())
    return Error{bad};
  // On-device sampling: the device chooses with the options' sampling
  // parameters; the host only applies the stop rules to its choice.
  GenerationOptions hostOptions;
  if (deviceSampler_) {
    if (std::string bad = checkDeviceSamplingOptions(options, samplerShape_); !bad.empty())
      return Error{bad};
    samplerParams_ = deviceSamplingParams(options);
    samplerRng_ = options.seed;
    hostOptions = hostOptionsForDeviceSampling(options);
  }
  const GenerationOptions &used = deviceSampler_ ? hostOptions : options;
  for (size_t i = 0; i < prompts.size(); ++i) {
    if (prompts[i].empty())
      return Error{"prompt " + std::to_string(i) +
                   " is empty: give at least one token (e.g. BOS)"};
    if (int64_t(prompts[i].size()) > ctxLen_ - 1)
      return Error{"prompt " + std::to_string(i) + " has " +
                   std::to_string(prompts[i].size()) +
                   " tokens but the context holds " + std::to_string(ctxLen_) +
                   ": at most " + std::to_string(ctxLen_ - 1) +
                   " prompt tokens leave room to generate (compile with a "
                   "larger --ctx-len)"};
  }
  GenerationResult result;
  decodeSteps_ = 0;
  auto start = Clock::now();
  double prefillSeconds = 0, decodeSeconds = 0;
  if (continuous_) {
    if (Status s = generateContinuous(prompts, used, onText, result); !s)
      return Error{cancelled_ ? "generation cancelled" : s.error()};
    prefillSeconds = lastPrefillSeconds_;
    decodeSeconds = lastDecodeSeconds_;
  } else {
    for (size_t first = 0; first < prompts.size(); first += batch_) {
      std::vector<std::vector<int64_t>> group(
          prompts.begin() + first,
          prompts.begin() + std::min(prompts.size(), first + size_t(batch_)));
      if (Status s = generateGroup(group, first, used, onText, result); !s)
        return Error{cancelled_ ? "generation cancelled" : s.error()};
      prefillSeconds += lastPrefillSeconds_;
      decodeSeconds += lastDecodeSeconds_;
    }
  }
  for (size_t i = 0; i < result.rows.size(); ++i)
    if (result.rows[i].finishReason == "error")
      return Error{"prompt " + std::to_string(i) + ": " + result.rows[i].error};
  int64_t prefillTokens = 0, decodeTokens = 0;
  for (const RowResult &row : result.rows) {
    prefillTokens += row.metrics.promptTokens;
    decodeTokens += std::max<int64_t>(0, row.metrics.generatedTokens - 1);
    result.specProposedTokens += row.metrics.specProposedTokens;
    result.specAcceptedTokens += row.metrics.specAcceptedTokens;
  }
  result.decodeSteps = decodeSteps_;
  result.totalSeconds = secondsSince(start);
  result.prefillTokensPerSecond =
      prefillSeconds > 0 ? prefillTokens / prefillSeconds : 0;
  result.decodeTokensPerSecond =
      decodeSeconds > 0 ? decodeTokens / decodeSeconds : 0;
  return result;
}

namespace {

/// The rows of one generation: each a SequenceState (token choice and stop
/// rules), and the text streamed so far.
class RowBook {
public:
  RowBook(const std::vector<std::vector<int64_t>> &prompts, size_t firstRow,
          const GenerationOptions &options, const qeff::tokenizer::Tokenizer *tokenizer,
          const TextCallback &onText, const GenerationHooks *hooks,
          int64_t ctxLen)
      : firstRow_(firstRow), options_(options), onText_(onText),
        onToken_(hooks ? hooks->onToken : nullptr), emitted_(prompts.size()) {
    // Text is decoded per token only when something watches it (stop
    // strings, streaming); otherwise once per row at the end.
    bool decodeEachToken = !options.stopStrings.empty() || bool(onText);
    rows_.reserve(prompts.size());
    for (const std::vector<int64_t> &prompt : prompts)
      rows_.emplace_back(options, tokenizer, prompt, ctxLen, decodeEachToken);
  }

  bool done(size_t b) const { return rows_[b].done(); }
  bool allDone() const {
    return std::all_of(rows_.begin(), rows_.end(),
                       [](const SequenceState &s) { return s.done(); });
  }
  RowResult &row(size_t b) { return rows_[b].result(); }
  /// The position of row b's last generated token.
  int64_t lastPosition(size_t b) const { return rows_[b].lastPosition(); }
  int64_t maxNewTokens() const { return options_.maxNewTokens; }

  /// Samples row b's next token from its logits and applies the stop rules.
  void step(size_t b, const float *logits, int64_t vocab, uint64_t &rng) {
    verify(b, logits, vocab, rng, -1, nullptr);
  }

  /// SequenceState::verify for row b (a plain step when `draft` is -1);
  /// streams the text it completes.
  bool verify(size_t b, const float *logits, int64_t vocab, uint64_t &rng,
              int64_t draft, const float *draftProbs) {
    SequenceState &seq = rows_[b];
    RowResult &row = seq.result();
    if (options_.logitsObserver)
      options_.logitsObserver(firstRow_ + b, row.generatedIds.size(), logits, vocab);
    size_t before = row.generatedIds.size();
    bool took = seq.verify(logits, vocab, rng, draft, draftProbs);
    // Stream the text a new token completed (an incomplete UTF-8 tail
    // waits for its next token, unless a stop string ended the row).
    const std::string &text = row.text;
    if (onText_ && row.generatedIds.size() > before &&
        (row.finishReason == "stop_string" || !endsIncomplete(text)) &&
        text.size() > emitted_[b].size() &&
        text.compare(0, emitted_[b].size(), emitted_[b]) == 0) {
      onText_(firstRow_ + b, text.substr(emitted_[b].size()));
      emitted_[b] = text;
    }
    // After the text it completed: a stream sends both together.
    if (onToken_ && row.generatedIds.size() > before)
      onToken_(firstRow_ + b, row.generatedIds.back());
    return took;
  }

  /// Row b's metrics and text; `start` is when its generation started.
  RowResult finish(size_t b, Clock::time_point start) {
    rows_[b].decodeText();
    RowResult &row = rows_[b].result();
    RowMetrics &m = row.metrics;
    m.promptTokens = row.promptIds.size();
    m.generatedTokens = row.generatedIds.size();
    if (m.totalSeconds == 0)
      m.totalSeconds = secondsSince(start);
    computeRates(m);
    return std::move(row);
  }

private:
  size_t firstRow_;
  const GenerationOptions &options_;
  const TextCallback &onText_;
  std::function<void(size_t, int64_t)> onToken_;
  std::vector<SequenceState> rows_;
  std::vector<std::string> emitted_;
};

} // namespace

Status Generator::generateGroup(const std::vector<std::vector<int64_t>> &prompts,
                                size_t firstRow,
                                const GenerationOptions &options,
                                const TextCallback &onText,
                                GenerationResult &result) {
  const int64_t B = batch_, P = prefillSeqLen_;
  const size_t n = prompts.size();
  session_->reset();
  auto start = Clock::now();
  uint64_t rng = options.seed;
  RowBook book(prompts, firstRow, options, tokenizer_, onText, hooks_, ctxLen_);

  // Prefill, chunk by chunk; a row's first logits come from the chunk holding
  // its last prompt token.
  std::vector<std::vector<float>> firstLogits(n);
  int64_t vocab = 0;
  int64_t maxLen = 0;
  for (const auto &p : prompts)
    maxLen = std::max<int64_t>(maxLen, p.size());
  for (int64_t c = 0; c * P < maxLen; ++c) {
    std::vector<int64_t> ids(B * P, 0), positions(B * P, -1);
    for (size_t b = 0; b < n; ++b)
      for (int64_t j = 0; j < P; ++j) {
        int64_t s = c * P + j;
        if (s < int64_t(prompts[b].size())) {
          ids[b * P + j] = prompts[b][s];
          positions[b * P + j] = s;
        }
      }
    Result<Tensor> logits = runStep(B, P, ids, positions, nullptr, int64_t(n));
    if (!logits)
      return Error{"prefill chunk " + std::to_string(c) + ": " + logits.error()};
    vocab = logits->dim(2);
    std::vector<float> values = logits->toFloatVector();
    for (size_t b = 0; b < n; ++b)
      if ((int64_t(prompts[b].size()) - 1) / P == c) {
        firstLogits[b].assign(values.begin() + b * vocab,
                              values.begin() + (b + 1) * vocab);
        book.row(b).metrics.timeToFirstToken = secondsSince(start);
      }
  }
  lastPrefillSeconds_ = secondsSince(start);
  auto decodeStart = Clock::now();

  for (size_t b = 0; b < n; ++b)
    book.step(b, firstLogits[b].data(), vocab, rng);
  while (!book.allDone()) {
    std::vector<int64_t> lanes(B, -1);
    for (size_t b = 0; b < n; ++b)
      if (!book.done(b))
        lanes[b] = int64_t(b);
    if (Status s = decodeStep(book, lanes, nullptr, rng, start); !s)
      return s;
  }
  lastDecodeSeconds_ = secondsSince(decodeStart);

  for (size_t b = 0; b < n; ++b)
    result.rows.push_back(book.finish(b, start));
  return Status();
}

Status Generator::generateContinuous(
    const std::vector<std::vector<int64_t>> &prompts,
    const GenerationOptions &options, const TextCallback &onText,
    GenerationResult &result) {
  const int64_t slots = batch_, P = prefillSeqLen_;
  const size_t n = prompts.size();
  session_->reset();
  auto start = Clock::now();
  uint64_t rng = options.seed;
  RowBook book(prompts, 0, options, tokenizer_, onText, hooks_, ctxLen_);
  double prefillSeconds = 0;

  // Prefills prompt b alone into cache row `slot` and samples its first
  // token. Stale entries of the row's previous sequence are never visible:
  // a query at position p sees slots <= p, all rewritten by this sequence.
  auto prefill = [&](size_t b, int64_t slot) -> Status {
    auto prefillStart = Clock::now();
    const std::vector<int64_t> &prompt = prompts[b];
    std::vector<int64_t> row = {slot};
    for (int64_t c = 0; c * P < int64_t(prompt.size()); ++c) {
      std::vector<int64_t> ids(P, 0), positions(P, -1);
      for (int64_t j = 0; j < P && c * P + j < int64_t(prompt.size()); ++j) {
        ids[j] = prompt[c * P + j];
        positions[j] = c * P + j;
      }
      Result<Tensor> logits = runStep(1, P, ids, positions, &row, 1);
      if (!logits)
        return Error{"prefill of prompt " + std::to_string(b) + ", chunk " +
                     std::to_string(c) + ": " + logits.error()};
      if ((c + 1) * P >= int64_t(prompt.size())) {
        std::vector<float> values = logits->toFloatVector();
        book.row(b).metrics.timeToFirstToken = secondsSince(start);
        book.step(b, values.data(), logits->dim(2), rng);
        if (book.done(b))
          book.row(b).metrics.totalSeconds = secondsSince(start);
      }
    }
    prefillSeconds += secondsSince(prefillStart);
    return Status();
  };

  // Cache row -> the prompt decoding in it (-1: free). A finished sequence
  // frees its row for the next waiting prompt.
  std::vector<int64_t> occupant(slots, -1);
  size_t next = 0;
  auto fill = [&]() -> Status {
    for (int64_t s = 0; s < slots; ++s)
      while ((occupant[s] < 0 || book.done(occupant[s])) && next < n) {
        occupant[s] = int64_t(next);
        if (Status st = prefill(next++, s); !st)
          return st;
      }
    return Status();
  };
  if (Status s = fill(); !s)
    return s;
  double decodeSeconds = 0;
  std::vector<int64_t> rows(slots);
  std::iota(rows.begin(), rows.end(), 0);
  while (!book.allDone()) {
    auto stepStart = Clock::now();
    std::vector<int64_t> lanes(slots, -1);
    for (int64_t s = 0; s < slots; ++s)
      if (occupant[s] >= 0 && !book.done(occupant[s]))
        lanes[s] = occupant[s];
    if (Status s = decodeStep(book, lanes, &rows, rng, start); !s)
      return s;
    decodeSeconds += secondsSince(stepStart);
    if (Status s = fill(); !s)
      return s;
  }
  lastPrefillSeconds_ = prefillSeconds;
  lastDecodeSeconds_ = decodeSeconds;
  for (size_t b = 0; b < n; ++b)
    result.rows.push_back(book.finish(b, start));
  return Status();
}

Status qeff::runtime::prepareSpeculation(const Session &session,
                                         SpeculationConfig &config,
                                         std::vector<int64_t> &ks, bool clamp) {
  ks = speculativeTokenCounts(session);
  if (ks.empty())
    return Error{"speculative decoding (" + config.proposer->name() +
                 ") needs a target compiled with --num-speculative-tokens K "
                 "(qeff compile or qeff infer): this artifact returns the "
                 "last token's logits only"};
  if (config.maxTokens < 0)
    return Error{"the number of speculative tokens must not be negative"};
  if (config.maxTokens > ks.back() && !clamp)
    return Error{"the target verifies at most " + std::to_string(ks.back()) +
                 " speculative tokens per step (its largest "
                 "--num-speculative-tokens), not " +
                 std::to_string(config.maxTokens)};
  if (config.maxTokens == 0 || config.maxTokens > ks.back())
    config.maxTokens = ks.back();
  return Status();
}

Status Generator::setSpeculation(SpeculationConfig config) {
  if (!config.proposer) {
    speculation_ = {};
    return Status();
  }
  if (Status s = prepareSpeculation(*session_, config, specKs_, /*clamp=*/true); !s)
    return s;
  speculation_ = std::move(config);
  return Status();
}

template <typename Book>
Status Generator::decodeStep(Book &book, const std::vector<int64_t> &lanes,
                             const std::vector<int64_t> *batchIndex,
                             uint64_t &rng, Clock::time_point start) {
  if (pollCancelled())
    return Error{"generation cancelled"};
  const int64_t B = int64_t(lanes.size());
  ++decodeSteps_;
  std::vector<SpeculationLane> specLanes(B);
  for (int64_t l = 0; l < B; ++l)
    if (lanes[l] >= 0)
      specLanes[l] = {&book.row(lanes[l]), book.lastPosition(lanes[l]),
                      book.maxNewTokens()};
  std::vector<Proposal> proposals(B);
  if (speculation_.proposer) {
    Result<std::vector<Proposal>> got =
        proposeStep(speculation_, specLanes, ctxLen_);
    if (!got)
      return Error{got.error()};
    proposals = std::move(*got);
  }
  const int64_t S = stepTokenCount(specKs_, proposals) + 1;
  std::vector<int64_t> ids, positions;
  layOutStep(specLanes, proposals, S, ids, positions);
  std::vector<bool> active(B);
  for (int64_t l = 0; l < B; ++l)
    active[l] = lanes[l] >= 0 && !book.done(lanes[l]);
  Result<Tensor> logits =
      deviceSampler_
          ? runSampledStep(*session_, samplerShape_, samplerLanes(active), S,
                           ids, positions, batchIndex)
          : runModelStepKeep(*session_, B, S, S, ids, positions, batchIndex);
  if (!logits)
    return Error{"decode step: " + logits.error()};
  const int64_t vocab = logits->dim(2);
  std::vector<float> values = logits->toFloatVector();
  for (int64_t l = 0; l < B; ++l) {
    int64_t b = lanes[l];
    if (b < 0 || book.done(b))
      continue;
    Proposal &pr = proposals[l];
    const int64_t k = int64_t(pr.tokens.size());
    RowResult &row = book.row(b);
    int64_t accepted = verifyProposal(
        pr, values.data() + l * S * vocab, vocab, row.generatedIds,
        [&](const float *at, int64_t draft, const float *q) {
          return book.verify(b, at, vocab, rng, draft, q);
        });
    row.metrics.specProposedTokens += k;
    row.metrics.specAcceptedTokens += accepted;
    if (book.done(b))
      row.metrics.totalSeconds = secondsSince(start);
  }
  return Status();
}
