//===- BatchEngine.cpp - incremental continuous batching ------------------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "runtime/generation/BatchEngine.h"

#include "frontend/Tokenizer/Tokenizer.h"

#include <algorithm>

using namespace qeff::runtime;

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
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

} // namespace

Result<BatchEngine> BatchEngine::create(Session &session,
                                        const tokenizer::Tokenizer *tokenizer) {
  Result<BatchShape> shape = readBatchShape(session);
  if (!shape)
    return Error{shape.error()};
  BatchEngine engine(session, tokenizer, *shape);
  // Without continuous batching every sequence starts from position 0 of
  // the whole compiled batch: one sequence at a time.
  engine.rows_.resize(shape->continuous ? shape->batch : 1);
  return engine;
}

int64_t BatchEngine::activeRows() const {
  return std::count_if(rows_.begin(), rows_.end(),
                       [](const Row &r) { return r.active; });
}

Result<void> BatchEngine::checkPrompt(const std::vector<int64_t> &prompt) const {
  if (prompt.empty())
    return Error{"the prompt is empty: give at least one token (e.g. BOS)"};
  if (int64_t(prompt.size()) > shape_.ctxLen - 1)
    return Error{"the prompt has " + std::to_string(prompt.size()) +
                 " tokens but the context holds " + std::to_string(shape_.ctxLen) +
                 ": at most " + std::to_string(shape_.ctxLen - 1) +
                 " prompt tokens leave room to generate"};
  return {};
}

Result<int64_t> BatchEngine::admit(std::vector<int64_t> prompt,
                                   GenerationOptions options,
                                   std::vector<RowUpdate> &updates) {
  if (Result<void> ok = checkPrompt(prompt); !ok)
    return Error{ok.error()};
  if (options.maxNewTokens <= 0)
    return Error{"max_new_tokens must be positive"};
  auto free = std::find_if(rows_.begin(), rows_.end(),
                           [](const Row &r) { return !r.active; });
  if (free == rows_.end())
    return Error{"no free cache row"};
  const int64_t r = free - rows_.begin();
  Row &row = *free;
  row = Row();
  row.active = true;
  row.prompt = std::move(prompt);
  row.options = std::move(options);
  row.seen = row.prompt;
  row.result.promptIds = row.prompt;
  row.rng = row.options.seed;
  row.start = Clock::now();
  if (!shape_.continuous)
    session_->reset();

  // Chunks of the Prefill seq_len, position -1 on padding. Stale entries of
  // a reused row are never visible: a query at position p sees slots <= p,
  // all rewritten by this sequence.
  const int64_t P = shape_.prefillSeqLen;
  const int64_t batch = shape_.continuous ? 1 : shape_.batch;
  const std::vector<int64_t> batchIndex = {r};
  const int64_t n = row.prompt.size();
  for (int64_t c = 0; c * P < n; ++c) {
    std::vector<int64_t> ids(batch * P, 0), positions(batch * P, -1);
    for (int64_t j = 0; j < P && c * P + j < n; ++j) {
      ids[j] = row.prompt[c * P + j];
      positions[j] = c * P + j;
    }
    Result<Tensor> logits =
        runModelStep(*session_, batch, P, ids, positions,
                     shape_.continuous ? &batchIndex : nullptr);
    if (!logits) {
      failAll(updates);
      return Error{"prefill chunk " + std::to_string(c) + ": " + logits.error()};
    }
    if ((c + 1) * P >= n) {
      std::vector<float> values = logits->toFloatVector();
      row.result.metrics.timeToFirstToken = secondsSince(row.start);
      RowUpdate update;
      update.row = r;
      sample(r, values.data(), logits->dim(2), update);
      updates.push_back(std::move(update));
    }
  }
  return r;
}

Status BatchEngine::step(std::vector<RowUpdate> &updates) {
  if (activeRows() == 0)
    return Status();
  const int64_t batch = shape_.batch;
  std::vector<int64_t> ids(batch, 0), positions(batch, -1), batchIndex(batch);
  for (int64_t r = 0; r < rows(); ++r) {
    batchIndex[r] = r;
    if (!rows_[r].active)
      continue;
    const Row &row = rows_[r];
    ids[r] = row.result.generatedIds.back();
    positions[r] = row.prompt.size() + row.result.generatedIds.size() - 1;
  }
  Result<Tensor> logits =
      runModelStep(*session_, batch, 1, ids, positions,
                   shape_.continuous ? &batchIndex : nullptr);
  if (!logits) {
    failAll(updates);
    return Error{"decode step: " + logits.error()};
  }
  const int64_t vocab = logits->dim(2);
  std::vector<float> values = logits->toFloatVector();
  for (int64_t r = 0; r < rows(); ++r) {
    if (!rows_[r].active)
      continue;
    RowUpdate update;
    update.row = r;
    sample(r, values.data() + r * vocab, vocab, update);
    updates.push_back(std::move(update));
  }
  return Status();
}

void BatchEngine::cancel(int64_t row) {
  if (row >= 0 && row < rows())
    rows_[row].active = false;
}

void BatchEngine::sample(int64_t r, const float *logits, int64_t vocab,
                         RowUpdate &update) {
  Row &row = rows_[r];
  const GenerationOptions &options = row.options;
  if (options.logitsObserver)
    options.logitsObserver(r, row.result.generatedIds.size(), logits, vocab);
  int64_t token = sampleToken(logits, vocab, options, row.seen, row.rng);
  row.seen.push_back(token);
  if (std::find(options.eosIds.begin(), options.eosIds.end(), token) !=
      options.eosIds.end())
    return finish(r, "eos", update);

  std::vector<int64_t> &generated = row.result.generatedIds;
  generated.push_back(token);
  update.newTokens.push_back(token);
  std::string reason;
  if (tokenizer_) {
    std::string text = tokenizer_->decode(generated, true);
    // The same rule as Generator: the text is cut before the earliest stop
    // string it contains.
    for (const std::string &stop : options.stopStrings)
      if (size_t at = text.find(stop); !stop.empty() && at != std::string::npos) {
        text.resize(at);
        reason = "stop_string";
      }
    row.result.text = std::move(text);
  }
  if (reason.empty()) {
    if (int64_t(generated.size()) >= options.maxNewTokens)
      reason = "max_new_tokens";
    else if (int64_t(row.prompt.size() + generated.size()) > shape_.ctxLen)
      reason = "context_end"; // the next step would feed position ctx_len
  }
  if (!reason.empty())
    return finish(r, reason, update);

  // Hand out the text that no later token can retract.
  if (!tokenizer_)
    return;
  const std::string &text = row.result.text;
  size_t safe = withoutIncompleteTail(text);
  safe -= stopPrefixAtEnd(text, safe, options.stopStrings);
  if (safe > row.emitted.size() &&
      text.compare(0, row.emitted.size(), row.emitted) == 0) {
    update.textDelta = text.substr(row.emitted.size(), safe - row.emitted.size());
    row.emitted.append(update.textDelta);
  }
}

void BatchEngine::finish(int64_t r, const std::string &reason,
                         RowUpdate &update) {
  Row &row = rows_[r];
  const std::string &text = row.result.text;
  if (text.size() > row.emitted.size() &&
      text.compare(0, row.emitted.size(), row.emitted) == 0)
    update.textDelta += text.substr(row.emitted.size());
  RowResult &result = row.result;
  RowMetrics &m = result.metrics;
  result.finishReason = reason;
  m.promptTokens = row.prompt.size();
  m.generatedTokens = result.generatedIds.size();
  m.totalSeconds = secondsSince(row.start);
  computeRates(m);
  update.result = std::move(result);
  row.active = false;
}

void BatchEngine::failAll(std::vector<RowUpdate> &updates) {
  for (int64_t r = 0; r < rows(); ++r)
    if (rows_[r].active) {
      RowUpdate update;
      update.row = r;
      finish(r, "error", update);
      updates.push_back(std::move(update));
    }
}
