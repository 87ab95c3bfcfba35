//===- Sequence.cpp - one sequence's token choice and stop rules ----------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "runtime/generation/Sequence.h"

#include "frontend/Tokenizer/Tokenizer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

using namespace qeff::runtime;

uint64_t qeff::runtime::nextRandom(uint64_t &state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

namespace {

constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

double uniform01(uint64_t &state) {
  return static_cast<double>(nextRandom(state) >> 11) * 0x1.0p-53;
}

bool contains(const std::vector<int64_t> &ids, int64_t id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

/// The length of `text` without its trailing U+FFFD characters: the decoder
/// yields them for a UTF-8 sequence whose remaining bytes are still to come.
size_t withoutIncompleteTail(const std::string &text) {
  static const std::string replacement = "\xEF\xBF\xBD";
  size_t end = text.size();
  while (end >= 3 && text.compare(end - 3, 3, replacement) == 0)
    end -= 3;
  return end;
}

/// The longest k such that text[end-k, end) is a proper prefix of a stop
/// string: text that may still turn into a stop string.
size_t stopPrefixAtEnd(const std::string &text, size_t end,
                       const std::vector<std::string> &stops) {
  size_t hold = 0;
  for (const std::string &stop : stops)
    for (size_t k = std::min(stop.size() - (stop.empty() ? 0 : 1), end); k > hold;
         --k)
      if (text.compare(end - k, k, stop, 0, k) == 0) {
        hold = k;
        break;
      }
  return hold;
}

/// Why the masks left no token, for the row's error.
std::string nothingAllowed(const GenerationOptions &options,
                           const SamplerState &state) {
  std::string after = " after " + std::to_string(state.generated) + " generated tokens";
  if (!state.matcher)
    return "no token can be chosen" + after +
           ": min_tokens forbids the end tokens and every other logit is -inf";
  std::string what = "the constraint (" + options.constraint->describe() + ")";
  if (state.matcher->canEnd() && state.generated < options.minTokens)
    return what + " allows only the end of the output" + after +
           ", but min_tokens asks for " + std::to_string(options.minTokens);
  return what + " allows no token" + after + " and the output cannot end there";
}

} // namespace

std::string qeff::runtime::checkGenerationOptions(const GenerationOptions &o) {
  if (o.maxNewTokens <= 0)
    return "max_new_tokens must be positive";
  if (o.minTokens < 0)
    return "min_tokens must not be negative";
  if (o.logprobs < -1 || o.logprobs > kMaxTopLogprobs)
    return "logprobs must be in -1.." + std::to_string(kMaxTopLogprobs);
  if (!(o.minP >= 0 && o.minP <= 1))
    return "min_p must be in [0, 1]";
  // The ranges `qeff run` and the server check for their own flags and
  // fields, for every other caller (the Python module).
  if (!(o.temperature >= 0) || std::isinf(o.temperature))
    return "temperature must be a finite number >= 0 (0 = greedy)";
  if (o.topK < 0)
    return "top_k must be >= 0 (0 = all tokens)";
  if (!(o.topP > 0 && o.topP <= 1))
    return "top_p must be in (0, 1]";
  if (!(o.repetitionPenalty > 0) || std::isinf(o.repetitionPenalty))
    return "repetition_penalty must be a finite number > 0";
  return "";
}

double TokenDistribution::probOf(int64_t id) const {
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] == id)
      return probs[i];
  return 0;
}

Result<TokenDistribution>
qeff::runtime::tokenDistribution(const float *logits, int64_t vocab,
                                 const GenerationOptions &options,
                                 const SamplerState &state) {
  // The order of vLLM's sampler: logit bias, then the penalties, then the
  // masks; temperature, min-p, top-k and top-p last.
  std::vector<float> scores(logits, logits + vocab);
  for (const auto &[id, bias] : options.logitBias)
    if (id >= 0 && id < vocab)
      scores[id] += float(bias);
  if (options.repetitionPenalty != 1.0)
    for (int64_t id : state.seen)
      if (id >= 0 && id < vocab) {
        float &s = scores[id];
        s = s > 0 ? s / float(options.repetitionPenalty)
                  : s * float(options.repetitionPenalty);
      }
  if (options.frequencyPenalty != 0.0 || options.presencePenalty != 0.0)
    for (const auto &[id, count] : state.generatedCounts)
      if (id >= 0 && id < vocab) {
        scores[id] -= float(options.frequencyPenalty) * float(count);
        scores[id] -= float(options.presencePenalty);
      }

  bool masked = false;
  if (state.matcher) {
    std::vector<uint8_t> allowed(vocab, 0);
    state.matcher->allowedTokens(allowed);
    // The end tokens are the engine's business (below), not the matcher's.
    for (const std::vector<int64_t> *ids : {&options.eosIds, &options.stopTokenIds})
      for (int64_t id : *ids)
        if (id >= 0 && id < vocab)
          allowed[id] = 1;
    for (int64_t i = 0; i < vocab; ++i)
      if (!allowed[i])
        scores[i] = kMinusInf;
    masked = true;
  }
  if (state.generated < options.minTokens ||
      (state.matcher && !state.matcher->canEnd())) {
    for (const std::vector<int64_t> *ids : {&options.eosIds, &options.stopTokenIds})
      for (int64_t id : *ids)
        if (id >= 0 && id < vocab)
          scores[id] = kMinusInf;
    masked = true;
  }
  if (masked && std::none_of(scores.begin(), scores.end(),
                             [](float s) { return s > kMinusInf; }))
    return Error{nothingAllowed(options, state)};

  if (options.temperature <= 0.0)
    return TokenDistribution{
        {int64_t(std::max_element(scores.begin(), scores.end()) - scores.begin())},
        {1.0}};

  // Candidates by descending score (stable: lower id first on ties).
  std::vector<int64_t> order(vocab);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return scores[a] > scores[b];
  });
  if (masked)
    order.erase(std::find_if(order.begin(), order.end(),
                             [&](int64_t id) { return !(scores[id] > kMinusInf); }),
                order.end());
  if (options.minP > 0.0) {
    // p_i >= min_p * p_max  <=>  s_i / T >= s_max / T + log(min_p).
    double floor = scores[order.front()] / options.temperature + std::log(options.minP);
    size_t keep = 1;
    while (keep < order.size() && scores[order[keep]] / options.temperature >= floor)
      ++keep;
    order.resize(keep);
  }
  if (options.topK > 0 && options.topK < int64_t(order.size()))
    order.resize(options.topK);
  std::vector<double> probs(order.size());
  double maxScore = scores[order.front()] / options.temperature, sum = 0;
  for (size_t i = 0; i < order.size(); ++i)
    sum += probs[i] = std::exp(scores[order[i]] / options.temperature - maxScore);
  for (double &p : probs)
    p /= sum;
  if (options.topP < 1.0) {
    // Keep the smallest prefix whose mass reaches top_p (at least one).
    double mass = 0;
    size_t keep = 0;
    while (keep < probs.size() && mass < options.topP)
      mass += probs[keep++];
    order.resize(keep);
    probs.resize(keep);
    for (double &p : probs)
      p /= mass;
  }
  return TokenDistribution{std::move(order), std::move(probs)};
}

namespace {
/// A draw from `probs` (summing to about 1) with one uniform number.
size_t drawIndex(const std::vector<double> &probs, uint64_t &rngState) {
  double r = uniform01(rngState), acc = 0;
  for (size_t i = 0; i < probs.size(); ++i) {
    acc += probs[i];
    if (r < acc)
      return i;
  }
  return probs.size() - 1;
}
} // namespace

Result<int64_t> qeff::runtime::chooseToken(const float *logits, int64_t vocab,
                                           const GenerationOptions &options,
                                           const SamplerState &state,
                                           uint64_t &rngState) {
  Result<TokenDistribution> dist = tokenDistribution(logits, vocab, options, state);
  if (!dist)
    return Error{dist.error()};
  if (options.temperature <= 0.0)
    return dist->ids.front();
  return dist->ids[drawIndex(dist->probs, rngState)];
}

int64_t qeff::runtime::sampleToken(const float *logits, int64_t vocab,
                                   const GenerationOptions &options,
                                   const std::vector<int64_t> &seen,
                                   uint64_t &rngState) {
  SamplerState state;
  state.seen = seen;
  state.generated = options.minTokens; // no end-token mask here
  Result<int64_t> token = chooseToken(logits, vocab, options, state, rngState);
  return token ? *token : -1;
}

TokenLogprobs qeff::runtime::computeLogprobs(const float *logits, int64_t vocab,
                                             int64_t token, int64_t k) {
  double maxLogit = -std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < vocab; ++i)
    maxLogit = std::max(maxLogit, double(logits[i]));
  double sum = 0;
  for (int64_t i = 0; i < vocab; ++i)
    sum += std::exp(double(logits[i]) - maxLogit);
  const double logZ = maxLogit + std::log(sum);
  TokenLogprobs out;
  out.token = token;
  out.logprob = double(logits[token]) - logZ;
  k = std::min(k, vocab);
  if (k > 0) {
    std::vector<int64_t> ids(vocab);
    std::iota(ids.begin(), ids.end(), 0);
    std::partial_sort(ids.begin(), ids.begin() + k, ids.end(), [&](int64_t a, int64_t b) {
      return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
    });
    for (int64_t j = 0; j < k; ++j)
      out.top.emplace_back(ids[j], double(logits[ids[j]]) - logZ);
  }
  return out;
}

SequenceState::SequenceState(GenerationOptions options,
                             const tokenizer::Tokenizer *tokenizer,
                             std::vector<int64_t> prompt, int64_t ctxLen,
                             bool decodeEachToken)
    : options_(std::move(options)), tokenizer_(tokenizer), ctxLen_(ctxLen),
      decodeEachToken_(tokenizer && decodeEachToken) {
  sampler_.seen = prompt;
  result_.promptIds = std::move(prompt);
  if (options_.constraint) {
    matcher_ = options_.constraint->start();
    sampler_.matcher = matcher_.get();
  }
}

void SequenceState::finish(const std::string &reason, const std::string &error) {
  result_.finishReason = reason;
  result_.error = error;
}

void SequenceState::step(const float *logits, int64_t vocab, uint64_t &rngState) {
  if (done())
    return;
  if (options_.constraint && !matcher_)
    return finish("error", "the constraint (" + options_.constraint->describe() +
                               ") could not start a sequence");
  Result<int64_t> chosen = chooseToken(logits, vocab, options_, sampler_, rngState);
  if (!chosen)
    return finish("error", chosen.error());
  commit(*chosen, logits, vocab);
}

bool SequenceState::verify(const float *logits, int64_t vocab,
                           uint64_t &rngState, int64_t draft,
                           const float *draftProbs) {
  if (done())
    return false;
  if (draft < 0 || options_.temperature <= 0.0) {
    // Greedy: the target's own choice; the draft survives when it agrees.
    size_t before = result_.generatedIds.size();
    step(logits, vocab, rngState);
    return draft >= 0 && !done() && result_.generatedIds.size() > before &&
           result_.generatedIds.back() == draft;
  }
  if (options_.constraint && !matcher_) {
    finish("error", "the constraint (" + options_.constraint->describe() +
                        ") could not start a sequence");
    return false;
  }
  Result<TokenDistribution> dist =
      tokenDistribution(logits, vocab, options_, sampler_);
  if (!dist) {
    finish("error", dist.error());
    return false;
  }
  auto q = [&](int64_t id) -> double {
    if (!draftProbs)
      return id == draft ? 1.0 : 0.0;
    return id >= 0 && id < vocab ? double(draftProbs[id]) : 0.0;
  };
  double p = dist->probOf(draft), qd = q(draft);
  int64_t token = -1;
  if (qd > 0 && uniform01(rngState) < std::min(1.0, p / qd)) {
    token = draft;
  } else {
    // Rejected: the residual norm(max(0, p - q)), over the target's
    // candidates (q adds nothing where p is 0).
    std::vector<double> residual(dist->ids.size());
    double mass = 0;
    for (size_t i = 0; i < residual.size(); ++i)
      mass += residual[i] = std::max(0.0, dist->probs[i] - q(dist->ids[i]));
    if (mass > 0) {
      for (double &r : residual)
        r /= mass;
      token = dist->ids[drawIndex(residual, rngState)];
    } else {
      // p <= q everywhere means p == q: the draft could not be rejected
      // but for rounding; draw from p.
      token = dist->ids[drawIndex(dist->probs, rngState)];
    }
  }
  commit(token, logits, vocab);
  return token == draft && !done();
}

void SequenceState::commit(int64_t token, const float *logits, int64_t vocab) {
  sampler_.seen.push_back(token);
  std::string reason = contains(options_.eosIds, token)        ? "eos"
                       : contains(options_.stopTokenIds, token) ? "stop_token"
                                                                : "";
  if (!reason.empty() && !options_.includeStopInOutput)
    return finish(reason);

  if (options_.logprobs >= 0)
    result_.logprobs.push_back(computeLogprobs(logits, vocab, token, options_.logprobs));
  std::vector<int64_t> &generated = result_.generatedIds;
  generated.push_back(token);
  ++sampler_.generated;
  if (reason.empty()) {
    ++sampler_.generatedCounts[token];
    if (matcher_ && !matcher_->accept(token))
      return finish("error", "the constraint (" + options_.constraint->describe() +
                                 ") refused token " + std::to_string(token) +
                                 ", which it had allowed");
  }
  if (decodeEachToken_ && updateText() && reason.empty())
    reason = "stop_string";
  if (reason.empty() && matcher_ && matcher_->mustEnd())
    reason = "constraint_end";
  if (reason.empty()) {
    if (int64_t(generated.size()) >= options_.maxNewTokens)
      reason = "max_new_tokens";
    else if (int64_t(result_.promptIds.size() + generated.size()) > ctxLen_)
      reason = "context_end"; // the next step would feed position ctx_len
  }
  if (!reason.empty())
    finish(reason);
}

std::string SequenceState::decodeGenerated() {
  const std::vector<int64_t> &generated = result_.generatedIds;
  if (!options_.decodeAfterPrompt || result_.promptIds.empty())
    return tokenizer_->decode(generated, options_.skipSpecialTokens);
  if (context_.empty()) {
    // A few tokens decide how the first generated one is spaced (vLLM
    // starts from the prompt's last 5).
    const std::vector<int64_t> &prompt = result_.promptIds;
    context_.assign(prompt.end() - std::min<size_t>(prompt.size(), 5), prompt.end());
    contextText_ = tokenizer_->decode(context_, options_.skipSpecialTokens);
  }
  std::vector<int64_t> all = context_;
  all.insert(all.end(), generated.begin(), generated.end());
  std::string text = tokenizer_->decode(all, options_.skipSpecialTokens);
  if (text.compare(0, contextText_.size(), contextText_) == 0)
    return text.substr(contextText_.size());
  // The context decoded differently before the continuation (a cleanup
  // joining across it): the generated tokens alone.
  return tokenizer_->decode(generated, options_.skipSpecialTokens);
}

bool SequenceState::updateText() {
  std::string text = decodeGenerated();
  // vLLM's min_tokens: text of the first min_tokens tokens cannot hold the
  // end of a stop string.
  if (int64_t(result_.generatedIds.size()) <= options_.minTokens)
    stopFrom_ = text.size();
  // The text is cut at the earliest stop string it contains.
  size_t best = std::string::npos, bestSize = 0;
  for (const std::string &stop : options_.stopStrings) {
    if (stop.empty())
      continue;
    size_t from = stopFrom_ >= stop.size() ? stopFrom_ - stop.size() + 1 : 0;
    size_t at = text.find(stop, from);
    if (at < best) {
      best = at;
      bestSize = stop.size();
    }
  }
  bool matched = best != std::string::npos;
  if (matched)
    text.resize(options_.includeStopInOutput ? best + bestSize : best);
  result_.text = std::move(text);
  return matched;
}

void SequenceState::decodeText() {
  if (tokenizer_ && !decodeEachToken_)
    result_.text = decodeGenerated();
}

size_t SequenceState::stableTextLength() const {
  const std::string &text = result_.text;
  size_t safe = withoutIncompleteTail(text);
  // A stop string that stays in the output never retracts text.
  if (!options_.includeStopInOutput)
    safe -= stopPrefixAtEnd(text, safe, options_.stopStrings);
  return safe;
}
