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
  if (qeff::runtime::samplesOnDevice(session)) {
    Result<DeviceSamplerShape> sampler = readDeviceSamplerShape(session);
    if (!sampler)
      return Error{sampler.error()};
    engine.deviceSampler_ = true;
    engine.samplerShape_ = *sampler;
  }
  // Without continuous batching every sequence starts from position 0 of
  // the whole compiled batch: one sequence at a time.
  engine.rows_.resize(shape->continuous ? shape->batch : 1);
  // The penalty buffers of on-device sampling are retained state that is
  // not a KV cache: forArtifact's limit is then 0, every prefill starts at
  // position 0 and so clears the row's buffers (qeff.token_mask_update).
  engine.prefix_ = PrefixCache::forArtifact(session, engine.rows(),
                                            shape->prefillSeqLen, shape->ctxLen);
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
  // On-device sampling: the device chooses with the request's parameters;
  // the row's SequenceState applies only the stop rules to its choice.
  DeviceSamplingParams samplerParams;
  if (deviceSampler_) {
    if (std::string bad = checkDeviceSamplingOptions(options, samplerShape_); !bad.empty())
      return Error{bad};
    samplerParams = deviceSamplingParams(options);
    options = hostOptionsForDeviceSampling(options);
  }
  std::vector<bool> free(rows_.size());
  for (size_t i = 0; i < rows_.size(); ++i)
    free[i] = !rows_[i].active;
  PrefixCache::Choice choice = prefix_.choose(prompt, free);
  if (choice.row < 0)
    return Error{"no free cache row"};
  const int64_t r = choice.row, reuse = choice.reuse;
  Row &row = rows_[r];
  row = Row();
  row.active = true;
  row.rng = options.seed;
  row.samplerParams = samplerParams;
  row.samplerRng = options.seed;
  row.reused = reuse;
  row.seq.emplace(std::move(options), tokenizer_, std::move(prompt), shape_.ctxLen,
                  /*decodeEachToken=*/true);
  row.seq->result().metrics.cachedPromptTokens = reuse;
  row.start = Clock::now();
  if (!shape_.continuous && reuse == 0)
    session_->reset();

  // Chunks of the Prefill seq_len from the reuse position (any position: the
  // graph places and masks each token by its position id), position -1 on
  // padding. Stale entries of a reused row are never visible: a query at
  // position p sees slots <= p, the reused prefix and slots this sequence
  // rewrites first.
  const int64_t P = shape_.prefillSeqLen;
  const int64_t batch = shape_.continuous ? 1 : shape_.batch;
  const std::vector<int64_t> batchIndex = {r};
  const std::vector<int64_t> &promptIds = row.seq->prompt();
  const int64_t n = promptIds.size();
  for (int64_t c = 0; reuse + c * P < n; ++c) {
    const int64_t from = reuse + c * P;
    std::vector<int64_t> ids(batch * P, 0), positions(batch * P, -1);
    for (int64_t j = 0; j < P && from + j < n; ++j) {
      ids[j] = promptIds[from + j];
      positions[j] = from + j;
    }
    std::vector<int64_t> laneRows(batch, -1);
    laneRows[0] = r;
    Result<Tensor> logits = run(P, 1, ids, positions,
                                shape_.continuous ? &batchIndex : nullptr, laneRows);
    if (!logits) {
      failAll(updates);
      return Error{"prefill chunk " + std::to_string(c) + ": " + logits.error()};
    }
    if (from + P >= n) {
      prefix_.prefilled(r, promptIds);
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

Result<Tensor> BatchEngine::run(int64_t seq, int64_t keep,
                                const std::vector<int64_t> &ids,
                                const std::vector<int64_t> &positions,
                                const std::vector<int64_t> *batchIndex,
                                const std::vector<int64_t> &laneRows) {
  const int64_t batch = int64_t(laneRows.size());
  if (!deviceSampler_)
    return runModelStepKeep(*session_, batch, seq, keep, ids, positions,
                            batchIndex);
  std::vector<SamplerLane> lanes(batch);
  for (int64_t l = 0; l < batch; ++l)
    if (int64_t r = laneRows[l]; r >= 0 && rows_[r].active)
      lanes[l] = {rows_[r].samplerParams, &rows_[r].samplerRng};
  return runSampledStep(*session_, samplerShape_, lanes, seq, ids, positions,
                        batchIndex);
}

void BatchEngine::cancel(int64_t row) {
  if (row >= 0 && row < rows() && rows_[row].active) {
    rows_[row].active = false;
    rows_[row].seq.reset();
    prefix_.released(row);
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
  prefix_.released(r);
}

void BatchEngine::failAll(std::vector<RowUpdate> &updates) {
  // A failed run zeroes the retained state (Session::run).
  prefix_.forgetAll();
  for (int64_t r = 0; r < rows(); ++r)
    if (rows_[r].active) {
      RowUpdate update;
      update.row = r;
      rows_[r].seq->finish("error", "the model run failed; see the server log");
      finish(r, update);
      updates.push_back(std::move(update));
    }
}
