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
  if (std::string bad = checkGenerationOptions(options); !bad.empty())
    return Error{bad};
  auto free = std::find_if(rows_.begin(), rows_.end(),
                           [](const Row &r) { return !r.active; });
  if (free == rows_.end())
    return Error{"no free cache row"};
  const int64_t r = free - rows_.begin();
  Row &row = *free;
  row = Row();
  row.active = true;
  row.rng = options.seed;
  row.seq.emplace(std::move(options), tokenizer_, std::move(prompt), shape_.ctxLen,
                  /*decodeEachToken=*/true);
  row.start = Clock::now();
  if (!shape_.continuous)
    session_->reset();

  // Chunks of the Prefill seq_len, position -1 on padding. Stale entries of
  // a reused row are never visible: a query at position p sees slots <= p,
  // all rewritten by this sequence.
  const int64_t P = shape_.prefillSeqLen;
  const int64_t batch = shape_.continuous ? 1 : shape_.batch;
  const std::vector<int64_t> batchIndex = {r};
  const std::vector<int64_t> &promptIds = row.seq->prompt();
  const int64_t n = promptIds.size();
  for (int64_t c = 0; c * P < n; ++c) {
    std::vector<int64_t> ids(batch * P, 0), positions(batch * P, -1);
    for (int64_t j = 0; j < P && c * P + j < n; ++j) {
      ids[j] = promptIds[c * P + j];
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
      row.seq->result().metrics.timeToFirstToken = secondsSince(row.start);
      RowUpdate update;
      update.row = r;
      sample(r, values.data(), logits->dim(2), update);
      updates.push_back(std::move(update));
    }
  }
  return r;
}

void BatchEngine::cancel(int64_t row) {
  if (row >= 0 && row < rows()) {
    rows_[row].active = false;
    rows_[row].seq.reset();
  }
}

void BatchEngine::sample(int64_t r, const float *logits, int64_t vocab,
                         RowUpdate &update) {
  Row &row = rows_[r];
  SequenceState &seq = *row.seq;
  RowResult &result = seq.result();
  if (seq.options().logitsObserver)
    seq.options().logitsObserver(r, result.generatedIds.size(), logits, vocab);
  size_t tokens = result.generatedIds.size(), logprobs = result.logprobs.size();
  seq.step(logits, vocab, row.rng);
  publish(r, tokens, logprobs, update);
}

void BatchEngine::publish(int64_t r, size_t tokens, size_t logprobs,
                          RowUpdate &update) {
  Row &row = rows_[r];
  SequenceState &seq = *row.seq;
  RowResult &result = seq.result();
  update.newTokens.assign(result.generatedIds.begin() + tokens,
                          result.generatedIds.end());
  update.newLogprobs.assign(result.logprobs.begin() + logprobs, result.logprobs.end());
  if (seq.done())
    return finish(r, update);

  // Hand out the text that no later token can retract.
  if (!tokenizer_)
    return;
  const std::string &text = result.text;
  size_t safe = seq.stableTextLength();
  if (safe > row.emitted.size() &&
      text.compare(0, row.emitted.size(), row.emitted) == 0) {
    update.textDelta = text.substr(row.emitted.size(), safe - row.emitted.size());
    row.emitted.append(update.textDelta);
  }
}

void BatchEngine::finish(int64_t r, RowUpdate &update) {
  Row &row = rows_[r];
  RowResult &result = row.seq->result();
  const std::string &text = result.text;
  if (text.size() > row.emitted.size() &&
      text.compare(0, row.emitted.size(), row.emitted) == 0)
    update.textDelta += text.substr(row.emitted.size());
  RowMetrics &m = result.metrics;
  m.promptTokens = result.promptIds.size();
  m.generatedTokens = result.generatedIds.size();
  m.totalSeconds = secondsSince(row.start);
  computeRates(m);
  update.result = std::move(result);
  row.active = false;
  row.seq.reset();
}

void BatchEngine::failAll(std::vector<RowUpdate> &updates) {
  for (int64_t r = 0; r < rows(); ++r)
    if (rows_[r].active) {
      RowUpdate update;
      update.row = r;
      rows_[r].seq->finish("error", "the model run failed; see the server log");
      finish(r, update);
      updates.push_back(std::move(update));
    }
}
