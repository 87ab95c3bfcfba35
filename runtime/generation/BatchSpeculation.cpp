//===- BatchSpeculation.cpp - the decode step of BatchEngine ---------------===//
//
// Part of qeff. BatchEngine's decode step, speculative or not (without a
// proposer every proposal is empty: a plain step of one token per row, the
// Decode specialization). With speculation every active row gets a
// proposal, the target runs all rows in one step of its smallest DecodeK
// specialization that holds the longest proposal (shorter ones padded with
// position -1), and each row keeps what Generator keeps (proposeStep,
// layOutStep and verifyProposal, Speculative.h): the accepted drafts plus
// the target's own token, the stop rules applied token by token. Logprobs
// and constraints hold per token, since every kept token is chosen by
// SequenceState from the target's logits at its position.
//
//===----------------------------------------------------------------------===//

#include "runtime/generation/BatchEngine.h"

using namespace qeff::runtime;

Status BatchEngine::setSpeculation(SpeculationConfig config) {
  if (!config.proposer) {
    speculation_ = {};
    return Status();
  }
  if (deviceSampler_)
    return Error{"speculative decoding (" + config.proposer->name() +
                 ") is not available with an on-device-sampling artifact "
                 "(qeff compile --on-device-sampling): the device returns "
                 "next_tokens, not the logits verification needs; serve it "
                 "without speculation, or compile the model with "
                 "--num-speculative-tokens and without --on-device-sampling"};
  if (Status s = prepareSpeculation(*session_, config, specKs_, /*clamp=*/false);
      !s)
    return s;
  speculation_ = std::move(config);
  return Status();
}

Status BatchEngine::step(std::vector<RowUpdate> &updates) {
  if (activeRows() == 0)
    return Status();
  // Lanes of the run: every cache row with continuous batching, else the
  // compiled batch of which row 0 serves.
  const int64_t B = shape_.batch;
  std::vector<SpeculationLane> lanes(B);
  std::vector<int64_t> batchIndex(B);
  for (int64_t r = 0; r < B; ++r) {
    batchIndex[r] = r;
    if (r < rows() && rows_[r].active) {
      const SequenceState &seq = *rows_[r].seq;
      lanes[r] = {&rows_[r].seq->result(), seq.lastPosition(),
                  seq.options().maxNewTokens};
    }
  }
  Result<std::vector<Proposal>> proposals =
      proposeStep(speculation_, lanes, shape_.ctxLen);
  if (!proposals) {
    failAll(updates);
    return Error{proposals.error()};
  }
  const int64_t S = stepTokenCount(specKs_, *proposals) + 1;
  std::vector<int64_t> ids, positions;
  layOutStep(lanes, *proposals, S, ids, positions);
  std::vector<int64_t> laneRows(B, -1);
  for (int64_t r = 0; r < rows(); ++r)
    if (rows_[r].active)
      laneRows[r] = r;
  Result<Tensor> logits = run(S, S, ids, positions,
                              shape_.continuous ? &batchIndex : nullptr, laneRows);
  if (!logits) {
    failAll(updates);
    return Error{"decode step: " + logits.error()};
  }
  const int64_t vocab = logits->dim(2);
  std::vector<float> values = logits->toFloatVector();
  for (int64_t r = 0; r < rows(); ++r) {
    if (!rows_[r].active)
      continue;
    Row &row = rows_[r];
    SequenceState &seq = *row.seq;
    RowResult &result = seq.result();
    Proposal &proposal = (*proposals)[r];
    size_t tokens = result.generatedIds.size(), logprobs = result.logprobs.size();
    const int64_t fedToken = result.generatedIds.back();
    int64_t accepted = verifyProposal(
        proposal, values.data() + r * S * vocab, vocab, result.generatedIds,
        [&](const float *at, int64_t draft, const float *q) {
          if (seq.options().logitsObserver)
            seq.options().logitsObserver(r, result.generatedIds.size(), at, vocab);
          return seq.verify(at, vocab, row.rng, draft, q);
        });
    // The row's cache now holds the token fed back and the accepted drafts
    // at their positions (rejected drafts' slots are past the history: the
    // mask never reads them, and a reuse prefills over them).
    std::vector<int64_t> fedTokens{fedToken};
    fedTokens.insert(fedTokens.end(), proposal.tokens.begin(),
                     proposal.tokens.begin() + accepted);
    prefix_.fed(r, fedTokens);
    RowUpdate update;
    update.row = r;
    update.specProposedTokens = int64_t(proposal.tokens.size());
    update.specAcceptedTokens = accepted;
    result.metrics.specProposedTokens += update.specProposedTokens;
    result.metrics.specAcceptedTokens += accepted;
    publish(r, tokens, logprobs, update);
    updates.push_back(std::move(update));
  }
  return Status();
}
