//===- Speculative.cpp - proposers for speculative decoding ---------------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "runtime/generation/Speculative.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace qeff::runtime;

std::vector<int64_t>
PromptLookupProposer::lookup(const std::vector<int64_t> &context,
                             int64_t maxNgramSize, int64_t limit) {
  const int64_t length = int64_t(context.size());
  if (limit <= 0)
    return {};
  for (int64_t n = std::min(maxNgramSize, length - 1); n >= 1; --n) {
    auto ngram = context.end() - n;
    // Windows starting before the n-gram itself: the earliest match wins.
    for (int64_t start = 0; start + n < length; ++start) {
      if (!std::equal(ngram, context.end(), context.begin() + start))
        continue;
      int64_t from = start + n, to = std::min(from + limit, length);
      if (from < to)
        return std::vector<int64_t>(context.begin() + from, context.begin() + to);
    }
  }
  return {};
}

Result<std::vector<Proposal>> PromptLookupProposer::propose(
    const std::vector<const std::vector<int64_t> *> &contexts,
    const std::vector<int64_t> &limits) {
  std::vector<Proposal> out(contexts.size());
  for (size_t r = 0; r < contexts.size(); ++r)
    if (contexts[r])
      out[r].tokens = lookup(*contexts[r], maxNgramSize_, limits[r]);
  return out;
}

//===----------------------------------------------------------------------===//
// The draft model
//===----------------------------------------------------------------------===//

#include "runtime/generation/Generator.h"
#include "runtime/generation/Sequence.h"

struct DraftModelProposer::Impl {
  Session *session = nullptr;
  /// The session when the proposer owns it.
  std::unique_ptr<Session> owned;
  /// The length of the distributions handed over (>= the draft's vocab).
  int64_t targetVocab = 0;
  BatchShape shape;
  GenerationOptions options;
  uint64_t rng = 0;
  /// Per draft cache row: the tokens its cache holds, in position order.
  std::vector<std::vector<int64_t>> fed;

  /// Rows `rows` of the draft run `tokens[r]` at positions `from[r]..`; the
  /// logits after each row's last token. One batch of all rows (a compiled
  /// batch), or each row alone into its cache row (continuous batching).
  Result<std::vector<std::vector<float>>>
  feed(const std::vector<int64_t> &rows,
       const std::vector<std::vector<int64_t>> &tokens,
       const std::vector<int64_t> &from) {
    std::vector<std::vector<float>> last(rows.size());
    const int64_t B = shape.batch;
    std::vector<int64_t> allRows(B);
    for (int64_t r = 0; r < B; ++r)
      allRows[r] = r;
    int64_t longest = 0;
    for (const auto &t : tokens)
      longest = std::max<int64_t>(longest, t.size());
    // Runs `members` (indices into rows) in steps of S tokens, `batch`
    // lanes, member m in lane laneOf(m); keeps each member's logits from
    // the step holding its last token.
    auto run = [&](const std::vector<size_t> &members, int64_t batch,
                   int64_t S, auto laneOf,
                   const std::vector<int64_t> *batchIndex) -> Status {
      int64_t n = 0;
      for (size_t i : members)
        n = std::max<int64_t>(n, tokens[i].size());
      for (int64_t c = 0; c * S < n; ++c) {
        std::vector<int64_t> ids(batch * S, 0), positions(batch * S, -1);
        for (size_t i : members)
          for (int64_t j = 0; j < S && c * S + j < int64_t(tokens[i].size()); ++j) {
            ids[laneOf(i) * S + j] = tokens[i][c * S + j];
            positions[laneOf(i) * S + j] = from[i] + c * S + j;
          }
        Result<Tensor> logits =
            runModelStep(*session, batch, S, ids, positions, batchIndex);
        if (!logits)
          return Error{"draft model: " + logits.error()};
        const int64_t vocab = logits->dim(2);
        std::vector<float> values = logits->toFloatVector();
        for (size_t i : members)
          if (!tokens[i].empty() && (int64_t(tokens[i].size()) - 1) / S == c)
            last[i].assign(values.begin() + laneOf(i) * vocab,
                           values.begin() + (laneOf(i) + 1) * vocab);
      }
      return Status();
    };
    std::vector<size_t> all(rows.size());
    for (size_t i = 0; i < rows.size(); ++i)
      all[i] = i;
    auto byRow = [&](size_t i) { return rows[i]; };
    Status s;
    if (longest == 1) // a decode step of every row
      s = run(all, B, 1, byRow, shape.continuous ? &allRows : nullptr);
    else if (!shape.continuous) // prefill chunks of the compiled batch
      s = run(all, B, shape.prefillSeqLen, byRow, nullptr);
    else // continuous batching: each row prefilled alone into its row
      for (size_t i = 0; i < rows.size() && s; ++i) {
        std::vector<int64_t> index = {rows[i]};
        s = run({i}, 1, shape.prefillSeqLen, [](size_t) { return int64_t(0); },
                &index);
      }
    if (!s)
      return Error{s.error()};
    return last;
  }

  /// The draft's next token from `logits`, and its distribution when
  /// sampling (empty when greedy).
  std::pair<int64_t, std::vector<float>> draw(const std::vector<float> &logits) {
    SamplerState state;
    Result<TokenDistribution> dist =
        tokenDistribution(logits.data(), logits.size(), options, state);
    if (!dist)
      return {-1, {}};
    if (options.temperature <= 0.0)
      return {dist->ids.front(), {}};
    std::vector<float> q(std::max<size_t>(logits.size(), targetVocab), 0.0f);
    for (size_t i = 0; i < dist->ids.size(); ++i)
      q[dist->ids[i]] = float(dist->probs[i]);
    // A draw from q with the draft's own stream (chooseToken's rule).
    GenerationOptions plain;
    plain.temperature = 1.0;
    std::vector<float> logq(logits.size());
    for (size_t v = 0; v < logits.size(); ++v)
      logq[v] = q[v] > 0 ? std::log(q[v]) : -std::numeric_limits<float>::infinity();
    int64_t token = sampleToken(logq.data(), logq.size(), plain, {}, rng);
    return {token, std::move(q)};
  }
};

DraftModelProposer::DraftModelProposer(std::unique_ptr<Impl> impl, std::string name)
    : impl_(std::move(impl)), name_(std::move(name)) {}
DraftModelProposer::~DraftModelProposer() = default;

Result<std::unique_ptr<DraftModelProposer>>
DraftModelProposer::create(Session &session, std::string name, int64_t lanes,
                           int64_t ctxLen, const GenerationOptions &options,
                           int64_t targetVocab) {
  Result<BatchShape> shape = readBatchShape(session);
  if (!shape)
    return Error{shape.error()};
  if (shape->batch < lanes)
    return Error{"it decodes " + std::to_string(shape->batch) +
                 " rows but the target " + std::to_string(lanes) +
                 ": compile it with the target's --batch-size or "
                 "--full-batch-size"};
  if (shape->ctxLen < ctxLen)
    return Error{"its ctx_len " + std::to_string(shape->ctxLen) +
                 " is shorter than the target's " + std::to_string(ctxLen)};
  auto impl = std::make_unique<Impl>();
  impl->session = &session;
  impl->targetVocab = targetVocab;
  impl->shape = *shape;
  impl->options = options;
  impl->rng = options.seed ^ 0xD7AF7D7AF7ull;
  impl->fed.assign(shape->batch, {});
  session.reset();
  return std::unique_ptr<DraftModelProposer>(
      new DraftModelProposer(std::move(impl), std::move(name)));
}

Result<std::unique_ptr<DraftModelProposer>>
DraftModelProposer::create(std::unique_ptr<Session> session, std::string name,
                           int64_t lanes, int64_t ctxLen,
                           const GenerationOptions &options,
                           int64_t targetVocab) {
  auto proposer =
      create(*session, std::move(name), lanes, ctxLen, options, targetVocab);
  if (proposer)
    (*proposer)->impl_->owned = std::move(session);
  return proposer;
}

Result<std::vector<Proposal>> DraftModelProposer::propose(
    const std::vector<const std::vector<int64_t> *> &contexts,
    const std::vector<int64_t> &limits) {
  Impl &d = *impl_;
  std::vector<Proposal> out(contexts.size());
  std::vector<int64_t> rows, from;
  std::vector<std::vector<int64_t>> tokens;
  std::vector<int64_t> want;
  for (size_t r = 0; r < contexts.size(); ++r) {
    if (!contexts[r] || limits[r] <= 0 || r >= d.fed.size())
      continue;
    const std::vector<int64_t> &ctx = *contexts[r];
    std::vector<int64_t> &fed = d.fed[r];
    // The cache holds what was fed; from the first difference on it is
    // stale (rejected drafts, or another sequence in this row), and a slot
    // past the row's position is never seen before it is written again.
    size_t same = 0;
    while (same < fed.size() && same < ctx.size() && fed[same] == ctx[same])
      ++same;
    same = std::min(same, ctx.size() - 1); // the last token gives the logits
    fed.resize(same);
    rows.push_back(int64_t(r));
    from.push_back(int64_t(same));
    tokens.emplace_back(ctx.begin() + same, ctx.end());
    want.push_back(limits[r]);
  }
  if (rows.empty())
    return out;
  Result<std::vector<std::vector<float>>> logits = d.feed(rows, tokens, from);
  if (!logits)
    return Error{logits.error()};
  for (size_t i = 0; i < rows.size(); ++i)
    d.fed[rows[i]].insert(d.fed[rows[i]].end(), tokens[i].begin(), tokens[i].end());
  // Decode: one token per row per step, up to each row's limit.
  for (int64_t step = 0;; ++step) {
    std::vector<int64_t> nextRows, nextFrom;
    std::vector<std::vector<int64_t>> nextTokens;
    for (size_t i = 0; i < rows.size(); ++i) {
      Proposal &p = out[rows[i]];
      if (int64_t(p.tokens.size()) >= want[i] || (*logits)[i].empty())
        continue;
      auto [token, q] = d.draw((*logits)[i]);
      if (token < 0)
        continue;
      p.tokens.push_back(token);
      if (!q.empty())
        p.probs.push_back(std::move(q));
      if (int64_t(p.tokens.size()) < want[i]) {
        nextRows.push_back(rows[i]);
        nextFrom.push_back(int64_t(d.fed[rows[i]].size()));
        nextTokens.push_back({token});
      }
    }
    if (nextRows.empty())
      break;
    Result<std::vector<std::vector<float>>> more = d.feed(nextRows, nextTokens, nextFrom);
    if (!more)
      return Error{more.error()};
    std::vector<std::vector<float>> byRow(rows.size());
    for (size_t j = 0; j < nextRows.size(); ++j) {
      d.fed[nextRows[j]].push_back(nextTokens[j][0]);
      for (size_t i = 0; i < rows.size(); ++i)
        if (rows[i] == nextRows[j])
          byRow[i] = std::move((*more)[j]);
    }
    *logits = std::move(byRow);
  }
  // A sampled proposal carries q for every token, a greedy one none.
  for (Proposal &p : out)
    if (!p.probs.empty() && p.probs.size() != p.tokens.size())
      p.probs.clear();
  return out;
}

//===----------------------------------------------------------------------===//
// One speculative step (shared by Generator and BatchEngine)
//===----------------------------------------------------------------------===//

Result<std::vector<Proposal>>
qeff::runtime::proposeStep(const SpeculationConfig &config,
                           const std::vector<SpeculationLane> &lanes,
                           int64_t ctxLen) {
  const size_t B = lanes.size();
  std::vector<Proposal> proposals(B);
  if (!config.proposer)
    return proposals;
  std::vector<std::vector<int64_t>> contexts(B);
  std::vector<const std::vector<int64_t> *> asked(B, nullptr);
  std::vector<int64_t> limits(B, 0);
  for (size_t l = 0; l < B; ++l) {
    const SpeculationLane &lane = lanes[l];
    if (!lane.row)
      continue;
    int64_t p = lane.lastPosition;
    if (p >= ctxLen - 1)
      return proposals;
    limits[l] = std::max<int64_t>(
        0, std::min({config.maxTokens, ctxLen - 2 - p,
                     lane.maxNewTokens - int64_t(lane.row->generatedIds.size()) -
                         1}));
    contexts[l] = lane.row->promptIds;
    contexts[l].insert(contexts[l].end(), lane.row->generatedIds.begin(),
                       lane.row->generatedIds.end());
    asked[l] = &contexts[l];
  }
  Result<std::vector<Proposal>> got = config.proposer->propose(asked, limits);
  if (!got)
    return Error{"speculative proposal (" + config.proposer->name() +
                 "): " + got.error()};
  proposals = std::move(*got);
  proposals.resize(B);
  for (size_t l = 0; l < B; ++l) {
    Proposal &pr = proposals[l];
    if (!lanes[l].row || int64_t(pr.tokens.size()) > limits[l])
      pr.tokens.resize(lanes[l].row ? limits[l] : 0);
    if (!pr.probs.empty())
      pr.probs.resize(pr.tokens.size());
  }
  return proposals;
}

int64_t qeff::runtime::stepTokenCount(const std::vector<int64_t> &ks,
                                      const std::vector<Proposal> &proposals) {
  int64_t longest = 0;
  for (const Proposal &p : proposals)
    longest = std::max<int64_t>(longest, p.tokens.size());
  if (longest == 0)
    return 0;
  // proposeStep clamps to the largest K, so one always holds it.
  return *std::lower_bound(ks.begin(), ks.end(), longest);
}

void qeff::runtime::layOutStep(const std::vector<SpeculationLane> &lanes,
                               const std::vector<Proposal> &proposals,
                               int64_t S, std::vector<int64_t> &ids,
                               std::vector<int64_t> &positions) {
  const size_t B = lanes.size();
  ids.assign(B * S, 0);
  positions.assign(B * S, -1);
  for (size_t l = 0; l < B; ++l) {
    if (!lanes[l].row)
      continue;
    ids[l * S] = lanes[l].row->generatedIds.back();
    positions[l * S] = lanes[l].lastPosition;
    for (size_t i = 0; i < proposals[l].tokens.size(); ++i) {
      ids[l * S + 1 + i] = proposals[l].tokens[i];
      positions[l * S + 1 + i] = lanes[l].lastPosition + 1 + int64_t(i);
    }
  }
}

int64_t qeff::runtime::verifyProposal(
    Proposal &proposal, const float *logits, int64_t vocab,
    const std::vector<int64_t> &generated,
    const std::function<bool(const float *, int64_t, const float *)> &verifyAt) {
  // A draft of a smaller vocabulary gives its ids past it no mass.
  for (std::vector<float> &q : proposal.probs)
    q.resize(vocab, 0.0f);
  const int64_t k = int64_t(proposal.tokens.size());
  int64_t accepted = 0;
  for (int64_t i = 0; i <= k; ++i) {
    int64_t draft = i < k ? proposal.tokens[i] : -1;
    const float *q =
        i < k && !proposal.probs.empty() ? proposal.probs[i].data() : nullptr;
    size_t before = generated.size();
    bool took = verifyAt(logits + i * vocab, draft, q);
    if (i < k && generated.size() > before && generated.back() == draft)
      ++accepted;
    if (!took)
      break;
  }
  return accepted;
}
