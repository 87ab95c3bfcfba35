//===- Generator.cpp - the generation loop over a Session -----------------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "runtime/generation/Generator.h"

#include "frontend/Tokenizer/Tokenizer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

using namespace qeff::runtime;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// splitmix64: a tiny, portable PRNG (the same stream on every platform, so
/// a seed reproduces a sample anywhere).
uint64_t nextRandom(uint64_t &state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double uniform01(uint64_t &state) {
  return static_cast<double>(nextRandom(state) >> 11) * 0x1.0p-53;
}

/// Whether `text` ends inside a UTF-8 sequence the decoder could not finish
/// (it decodes such bytes to U+FFFD until the rest arrives).
bool endsIncomplete(const std::string &text) {
  return text.size() >= 3 && text.compare(text.size() - 3, 3, "\xEF\xBF\xBD") == 0;
}

} // namespace

int64_t qeff::runtime::sampleToken(const float *logits, int64_t vocab,
                                   const GenerationOptions &options,
                                   const std::vector<int64_t> &seen,
                                   uint64_t &rngState) {
  std::vector<float> scores(logits, logits + vocab);
  if (options.repetitionPenalty != 1.0)
    for (int64_t id : seen)
      if (id >= 0 && id < vocab) {
        float &s = scores[id];
        s = s > 0 ? s / float(options.repetitionPenalty)
                  : s * float(options.repetitionPenalty);
      }
  if (options.temperature <= 0.0)
    return std::max_element(scores.begin(), scores.end()) - scores.begin();

  // Candidates by descending score (stable: lower id first on ties).
  std::vector<int64_t> order(vocab);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return scores[a] > scores[b];
  });
  if (options.topK > 0 && options.topK < vocab)
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
  double r = uniform01(rngState), acc = 0;
  for (size_t i = 0; i < probs.size(); ++i) {
    acc += probs[i];
    if (r < acc)
      return order[i];
  }
  return order.back();
}

Result<Generator> Generator::create(Session &session,
                                    const tokenizer::Tokenizer *tokenizer) {
  Generator g(session, tokenizer);
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
  g.batch_ = get("batch_size");
  g.prefillSeqLen_ = get("seq_len");
  g.ctxLen_ = get("ctx_len");
  if (g.batch_ <= 0 || g.prefillSeqLen_ <= 0 || g.ctxLen_ <= 0)
    return Error{"the Prefill specialization must bind batch_size, seq_len and "
                 "ctx_len"};
  bool decode = g.prefillSeqLen_ == 1 ||
                std::any_of(specs.begin(), specs.end(), [&](const auto &s) {
                  auto it = s.symbols.find("seq_len");
                  return it != s.symbols.end() && it->second == 1;
                });
  if (!decode)
    return Error{"the artifact has no specialization with seq_len 1 to decode"};
  return g;
}

Result<GenerationResult>
Generator::generate(const std::vector<std::vector<int64_t>> &prompts,
                    const GenerationOptions &options,
                    const TextCallback &onText) {
  if (prompts.empty())
    return Error{"no prompt given"};
  if (options.maxNewTokens <= 0)
    return Error{"max_new_tokens must be positive"};
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
  auto start = Clock::now();
  double prefillSeconds = 0, decodeSeconds = 0;
  int64_t prefillTokens = 0, decodeTokens = 0;
  for (size_t first = 0; first < prompts.size(); first += batch_) {
    std::vector<std::vector<int64_t>> group(
        prompts.begin() + first,
        prompts.begin() + std::min(prompts.size(), first + size_t(batch_)));
    size_t before = result.rows.size();
    if (Status s = generateGroup(group, first, options, onText, result); !s)
      return Error{s.error()};
    for (size_t r = before; r < result.rows.size(); ++r) {
      const RowMetrics &m = result.rows[r].metrics;
      prefillTokens += m.promptTokens;
      decodeTokens += std::max<int64_t>(0, m.generatedTokens - 1);
    }
    prefillSeconds += lastPrefillSeconds_;
    decodeSeconds += lastDecodeSeconds_;
  }
  result.totalSeconds = secondsSince(start);
  result.prefillTokensPerSecond =
      prefillSeconds > 0 ? prefillTokens / prefillSeconds : 0;
  result.decodeTokensPerSecond =
      decodeSeconds > 0 ? decodeTokens / decodeSeconds : 0;
  return result;
}

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

  std::vector<RowResult> rows(n);
  std::vector<std::vector<float>> firstLogits(n);
  int64_t vocab = 0;
  auto runStep = [&](const std::vector<int64_t> &ids,
                     const std::vector<int64_t> &positions,
                     int64_t seq) -> Result<Tensor> {
    TensorMap inputs;
    inputs["input_ids"] = Tensor::fromInt64({B, seq}, ids);
    inputs["position_ids"] = Tensor::fromInt64({B, seq}, positions);
    if (Status s = session_->run(inputs); !s)
      return Error{s.error()};
    Result<Tensor> logits = session_->getOutput("logits");
    if (!logits)
      return logits;
    if (logits->rank() != 3 || logits->dim(0) != B || logits->dim(1) != 1)
      return Error{"the model's logits are " + shapeString(logits->shape()) +
                   ", expected [batch, 1, vocab]: is this a device artifact?"};
    vocab = logits->dim(2);
    return logits;
  };

  // Prefill, chunk by chunk; a row's first logits come from the chunk holding
  // its last prompt token.
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
    Result<Tensor> logits = runStep(ids, positions, P);
    if (!logits)
      return Error{"prefill chunk " + std::to_string(c) + ": " + logits.error()};
    std::vector<float> values = logits->toFloatVector();
    for (size_t b = 0; b < n; ++b)
      if ((int64_t(prompts[b].size()) - 1) / P == c) {
        firstLogits[b].assign(values.begin() + b * vocab,
                              values.begin() + (b + 1) * vocab);
        rows[b].metrics.timeToFirstToken = secondsSince(start);
      }
  }
  lastPrefillSeconds_ = secondsSince(start);
  auto decodeStart = Clock::now();

  std::vector<bool> done(n, false);
  std::vector<std::string> emitted(n);
  std::vector<std::vector<float>> logitsOf = firstLogits;
  for (size_t b = 0; b < n; ++b)
    rows[b].promptIds = prompts[b];

  // Text is decoded per token only when something watches it (stop strings,
  // streaming); otherwise once per row at the end.
  bool decodeEachToken =
      tokenizer_ && (!options.stopStrings.empty() || bool(onText));

  // Adds a sampled token to row b, applying the stop rules.
  auto accept = [&](size_t b, int64_t token) {
    RowResult &row = rows[b];
    if (std::find(options.eosIds.begin(), options.eosIds.end(), token) !=
        options.eosIds.end()) {
      row.finishReason = "eos";
      done[b] = true;
      return;
    }
    row.generatedIds.push_back(token);
    if (decodeEachToken) {
      std::string text = tokenizer_->decode(row.generatedIds, true);
      for (const std::string &stop : options.stopStrings)
        if (size_t at = text.find(stop); !stop.empty() && at != std::string::npos) {
          text.resize(at);
          row.finishReason = "stop_string";
          done[b] = true;
        }
      row.text = text;
      if (onText && (done[b] || !endsIncomplete(text)) &&
          text.size() > emitted[b].size() &&
          text.compare(0, emitted[b].size(), emitted[b]) == 0) {
        onText(firstRow + b, text.substr(emitted[b].size()));
        emitted[b] = text;
      }
    }
    if (done[b])
      return;
    if (int64_t(row.generatedIds.size()) >= options.maxNewTokens) {
      row.finishReason = "max_new_tokens";
      done[b] = true;
    } else if (int64_t(prompts[b].size() + row.generatedIds.size()) > ctxLen_) {
      // The next step would feed a token at position ctx_len.
      row.finishReason = "context_end";
      done[b] = true;
    }
  };

  std::vector<std::vector<int64_t>> seen(prompts.begin(), prompts.end());
  for (size_t b = 0; b < n; ++b) {
    if (options.logitsObserver)
      options.logitsObserver(firstRow + b, 0, logitsOf[b].data(), vocab);
    int64_t token = sampleToken(logitsOf[b].data(), vocab, options, seen[b], rng);
    seen[b].push_back(token);
    accept(b, token);
  }
  while (std::find(done.begin(), done.end(), false) != done.end()) {
    std::vector<int64_t> ids(B, 0), positions(B, -1);
    for (size_t b = 0; b < n; ++b)
      if (!done[b]) {
        ids[b] = rows[b].generatedIds.back();
        positions[b] = prompts[b].size() + rows[b].generatedIds.size() - 1;
      }
    Result<Tensor> logits = runStep(ids, positions, 1);
    if (!logits)
      return Error{"decode step: " + logits.error()};
    std::vector<float> values = logits->toFloatVector();
    for (size_t b = 0; b < n; ++b) {
      if (done[b])
        continue;
      if (options.logitsObserver)
        options.logitsObserver(firstRow + b, rows[b].generatedIds.size(),
                               values.data() + b * vocab, vocab);
      int64_t token =
          sampleToken(values.data() + b * vocab, vocab, options, seen[b], rng);
      seen[b].push_back(token);
      accept(b, token);
      if (done[b])
        rows[b].metrics.totalSeconds = secondsSince(start);
    }
  }
  lastDecodeSeconds_ = secondsSince(decodeStart);

  for (size_t b = 0; b < n; ++b) {
    RowMetrics &m = rows[b].metrics;
    m.promptTokens = prompts[b].size();
    m.generatedTokens = rows[b].generatedIds.size();
    if (m.totalSeconds == 0)
      m.totalSeconds = secondsSince(start);
    m.prefillTokensPerSecond =
        m.timeToFirstToken > 0 ? m.promptTokens / m.timeToFirstToken : 0;
    double decodeTime = m.totalSeconds - m.timeToFirstToken;
    m.decodeTokensPerSecond =
        decodeTime > 0 ? std::max<int64_t>(0, m.generatedTokens - 1) / decodeTime
                       : 0;
    if (tokenizer_ && !decodeEachToken)
      rows[b].text = tokenizer_->decode(rows[b].generatedIds, true);
    result.rows.push_back(std::move(rows[b]));
  }
  return Status();
}
