//===- SpeculativeTest.cpp - speculative decoding on the host device ------===//
//
// The speculative-decoding target form (`--num-speculative-tokens`) on the
// goldens from the real Hugging Face code, on the host device:
//  - target logits: the prompt prefilled, then prompt + greedy tokens fed in
//    steps of K + 1 give, at every position, the logits of the golden's
//    no-cache forward over the whole sequence (full_logits), or for rope
//    scaling that follows the sequence length (dynamic NTK, longrope) those
//    of HF's cached decode (step_logits);
//  - no KV rollback: after a step whose speculative tokens are all
//    rejected, the next step's logits do not depend on what those tokens
//    were (bitwise), and equal the golden's;
//  - the prompt-lookup proposer; speculative rejection sampling keeps the
//    target's distribution (a statistical test with a fixed seed count);
//  - BatchEngine's speculative step (qeff serve): the goldens' greedy
//    tokens with either proposer, 1 and 2 cache rows; a draft equal to the
//    target accepts every proposal; a stop token inside an accepted run
//    ends the row there.
//
//===----------------------------------------------------------------------===//

#include "test/unit/Runtime/GoldenArtifact.h"
#include "test/unit/Runtime/ModelBuilder.h"

#include "frontend/HF/SafeTensors.h"
#include "qeff/compile/Compile.h"
#include "runtime/generation/BatchEngine.h"
#include "runtime/generation/Generator.h"
#include "runtime/generation/Sequence.h"
#include "runtime/generation/Speculative.h"

#include <gmock/gmock.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <optional>

using namespace qeff::runtime;
using namespace qeff::runtime::test;

namespace {

constexpr int64_t kCtx = 64, kPrefill = 4, kK = 3;

/// A golden's prompts (left padding removed), greedy tokens, the logits of
/// its no-cache forward over prompt + greedy tokens and those of its cached
/// greedy decode.
struct Golden {
  int64_t batch = 0, promptLen = 0, n = 0, vocab = 0;
  std::vector<std::vector<int64_t>> prompts, greedy;
  std::vector<float> full;  ///< [batch, promptLen + n, vocab]
  std::vector<float> steps; ///< [batch, n, vocab]
  double atol = 0, rtol = 0;
  /// Rope frequencies that follow the sequence length (golden.json
  /// seq_len_dependent_rope: dynamic NTK, longrope).
  bool seqLenRope = false;

  const float *fullAt(int64_t b, int64_t s) const {
    return full.data() + (b * (promptLen + n) + s) * vocab;
  }
  /// The logits after feeding greedy token `j` of row `b`, as the runtime's
  /// cached decode computes them: full_logits' (left-padded) position
  /// promptLen + j, or for sequence-length dependent rope step_logits'
  /// step j + 1 (full_logits is one forward with one length for every
  /// position, which is not what cached decoding computes there; the last
  /// greedy token has no step after it: null).
  const float *afterGreedy(int64_t b, int64_t j) const {
    if (!seqLenRope)
      return fullAt(b, promptLen + j);
    return j + 1 < n ? steps.data() + (b * n + j + 1) * vocab : nullptr;
  }
};

std::optional<Golden> loadGolden(const std::string &name) {
  std::ifstream in(goldenDir(name) + "/golden.json");
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded())
    return std::nullopt;
  Golden g;
  g.batch = j["batch"];
  g.promptLen = j["prompt_len"];
  g.n = j["N"];
  g.vocab = j["vocab_size"];
  g.atol = j["tolerances"]["recommended"]["fp32"]["logits_atol"];
  g.rtol = j["tolerances"]["recommended"]["fp32"]["logits_rtol"];
  g.seqLenRope = j.contains("seq_len_dependent_rope");
  for (int64_t b = 0; b < g.batch; ++b) {
    std::vector<int64_t> p;
    for (int64_t s = 0; s < g.promptLen; ++s)
      if (j["attention_mask"][b][s] == 1)
        p.push_back(j["prompt_ids"][b][s]);
    g.prompts.push_back(p);
    g.greedy.push_back(j["greedy_tokens"][b].get<std::vector<int64_t>>());
  }
  auto file = qeff::hf::SafeTensorsFile::open(goldenDir(name) + "/golden.safetensors");
  if (!file.ok())
    return std::nullopt;
  auto full = (*file)->get("full_logits");
  if (!full.ok() || full->shape() != std::vector<int64_t>{g.batch, g.promptLen + g.n, g.vocab})
    return std::nullopt;
  g.full.resize(full->numElements());
  std::memcpy(g.full.data(), full->data, full->byteSize());
  auto steps = (*file)->get("step_logits");
  if (!steps.ok() || steps->shape() != std::vector<int64_t>{g.batch, g.n, g.vocab})
    return std::nullopt;
  g.steps.resize(steps->numElements());
  std::memcpy(g.steps.data(), steps->data, steps->byteSize());
  return g;
}

/// Compiles golden `name` as a speculative-decoding target on the host.
std::optional<Session> openTarget(const TempDir &dir, const std::string &name,
                                  int64_t batch, bool rolling = false,
                                  int64_t fullBatch = 0) {
  qeff::compile::Options options;
  options.checkpointDir = goldenDir(name);
  options.outputDir = dir.file("artifact");
  options.ctxLen = kCtx;
  options.prefillSeqLen = kPrefill;
  options.batchSize = fullBatch > 0 ? 1 : batch;
  options.fullBatchSize = fullBatch;
  options.rollingKVWindow = rolling;
  options.numSpeculativeTokens = {1, kK};
  SessionOptions sessionOptions;
  sessionOptions.numThreads = 1;
  // Weights laid out once at open: every run then takes the same kernels,
  // so runs compare bitwise (unpacked first products round differently).
  sessionOptions.prepackWeights = true;
  // Rope frequencies computed in the graph: every node output finite,
  // padding slots (position -1) and idle rows included, as fp16 emulation
  // requires.
  auto golden = loadGolden(name);
  sessionOptions.checkFinite = golden && golden->seqLenRope;
  return compileAndOpenOnHost(options, sessionOptions);
}

/// Prefills every row of `g` (right-padded chunks of kPrefill, all rows in
/// one batch).
void prefill(Session &session, const Golden &g) {
  int64_t longest = 0;
  for (const auto &p : g.prompts)
    longest = std::max<int64_t>(longest, p.size());
  for (int64_t c = 0; c * kPrefill < longest; ++c) {
    std::vector<int64_t> ids(g.batch * kPrefill, 0), pos(g.batch * kPrefill, -1);
    for (int64_t b = 0; b < g.batch; ++b)
      for (int64_t j = 0; j < kPrefill; ++j)
        if (c * kPrefill + j < int64_t(g.prompts[b].size())) {
          ids[b * kPrefill + j] = g.prompts[b][c * kPrefill + j];
          pos[b * kPrefill + j] = c * kPrefill + j;
        }
    auto logits = runModelStep(session, g.batch, kPrefill, ids, pos, nullptr);
    ASSERT_TRUE(logits.ok()) << logits.error();
  }
}

/// Whether logits row `got` matches the golden row within its tolerance;
/// the worst offender otherwise.
std::string compare(const float *got, const float *want, int64_t vocab,
                    double atol, double rtol) {
  for (int64_t v = 0; v < vocab; ++v)
    if (!(std::fabs(got[v] - want[v]) <= atol + rtol * std::fabs(want[v])))
      return "logit " + std::to_string(v) + " is " + std::to_string(got[v]) +
             ", golden " + std::to_string(want[v]);
  return "";
}

std::vector<std::string> goldenNames() {
  std::ifstream in(std::string(QEFF_TEST_DATA_DIR) + "/golden/index.json");
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  std::vector<std::string> names;
  if (j.is_discarded())
    return names;
  for (const auto &entry : j["models"])
    names.push_back(entry["dir"].get<std::string>());
  return names;
}

class TargetLogits : public ::testing::TestWithParam<std::string> {};

// Prompt + greedy tokens in steps of K + 1 = 4 (the last one right-padded):
// logits [batch, 4, vocab], each position equal to the golden's full_logits,
// or with dynamic NTK / longrope scaling to its step_logits (HF's cached
// decode: each token rotated for its own position + 1, as the target's
// decode steps do). The prompts of those goldens (10 tokens, prefilled in
// chunks of 4) are shorter than their scaling threshold (16), so chunked and
// one-shot prefill both take the unscaled frequencies.

TEST_P(TargetLogits, StepsOfKPlusOneGiveTheFullForwardLogits) {
  auto g = loadGolden(GetParam());
  ASSERT_TRUE(g) << GetParam();
  TempDir dir;
  auto session = openTarget(dir, GetParam(), g->batch);
  ASSERT_TRUE(session);
  EXPECT_THAT(speculativeTokenCounts(*session), ::testing::ElementsAre(1, kK));
  prefill(*session, *g);
  const int64_t S = kK + 1;
  int64_t compared = 0;
  for (int64_t c = 0; c * S < g->n; ++c) {
    std::vector<int64_t> ids(g->batch * S, 0), pos(g->batch * S, -1);
    for (int64_t b = 0; b < g->batch; ++b)
      for (int64_t i = 0; i < S && c * S + i < g->n; ++i) {
        ids[b * S + i] = g->greedy[b][c * S + i];
        pos[b * S + i] = int64_t(g->prompts[b].size()) + c * S + i;
      }
    auto logits = runModelStepKeep(*session, g->batch, S, S, ids, pos, nullptr);
    ASSERT_TRUE(logits.ok()) << logits.error();
    std::vector<float> values = logits->toFloatVector();
    for (int64_t b = 0; b < g->batch; ++b)
      for (int64_t i = 0; i < S && c * S + i < g->n; ++i) {
        // Feeding greedy token j gives the logits after it: full_logits at
        // (left-padded) index promptLen + j.
        int64_t j = c * S + i;
        const float *want = g->afterGreedy(b, j);
        if (!want)
          continue;
        std::string bad = compare(values.data() + (b * S + i) * g->vocab, want,
                                  g->vocab, g->atol, g->rtol);
        EXPECT_EQ(bad, "") << "row " << b << ", greedy token " << j;
        ++compared;
      }
  }
  EXPECT_EQ(compared, g->batch * (g->seqLenRope ? g->n - 1 : g->n));
}

INSTANTIATE_TEST_SUITE_P(Goldens, TargetLogits, ::testing::ValuesIn(goldenNames()),
                         [](const auto &info) {
                           std::string n = info.param;
                           for (char &c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c)))
                               c = '_';
                           return n;
                         });

/// Runs golden `g`'s row 0 through one verification step whose 3
/// speculative tokens are `wrong` (all rejected: the target's choice after
/// the row's last token is the golden's greedy token 1), then the step
/// the generator runs next: greedy tokens 1..4 at their positions. Returns
/// that step's logits. With continuous batching the sequence lives in cache
/// row 0 and the decode steps run both rows, row 1 idle.
std::vector<float> afterRejection(Session &session, const Golden &g,
                                  const std::vector<int64_t> &wrong,
                                  bool continuous,
                                  std::vector<float> *rejectedStep = nullptr) {
  session.reset();
  std::vector<int64_t> rowIndex = {0}, bothRows = {0, 1};
  const std::vector<int64_t> *rows = continuous ? &rowIndex : nullptr;
  const std::vector<int64_t> &prompt = g.prompts[0];
  const int64_t L = prompt.size(), S = kK + 1;
  for (int64_t c = 0; c * kPrefill < L; ++c) {
    std::vector<int64_t> ids(kPrefill, 0), pos(kPrefill, -1);
    for (int64_t j = 0; j < kPrefill && c * kPrefill + j < L; ++j) {
      ids[j] = prompt[c * kPrefill + j];
      pos[j] = c * kPrefill + j;
    }
    EXPECT_TRUE(runModelStep(session, 1, kPrefill, ids, pos, rows).ok());
  }
  // Decode steps: one lane per cache row with continuous batching.
  const int64_t B = continuous ? 2 : 1;
  auto step = [&](std::vector<int64_t> ids, std::vector<int64_t> pos) {
    ids.resize(B * S, 0);
    pos.resize(B * S, -1);
    return runModelStepKeep(session, B, S, S, ids, pos,
                            continuous ? &bothRows : nullptr);
  };
  std::vector<int64_t> ids = {g.greedy[0][0]};
  ids.insert(ids.end(), wrong.begin(), wrong.end());
  auto first = step(ids, {L, L + 1, L + 2, L + 3});
  EXPECT_TRUE(first.ok()) << first.error();
  if (!first.ok())
    return {};
  // The target rejects the first speculative token: its own choice is the
  // golden's next greedy token.
  std::vector<float> v = first->toFloatVector();
  if (rejectedStep)
    rejectedStep->assign(v.begin(), v.begin() + S * g.vocab);
  int64_t best = std::max_element(v.begin(), v.begin() + g.vocab) - v.begin();
  EXPECT_EQ(best, g.greedy[0][1]);
  EXPECT_NE(wrong[0], g.greedy[0][1]);
  auto next = step({g.greedy[0][1], g.greedy[0][2], g.greedy[0][3], g.greedy[0][4]},
                   {L + 1, L + 2, L + 3, L + 4});
  EXPECT_TRUE(next.ok()) << next.error();
  if (!next.ok())
    return {};
  std::vector<float> all = next->toFloatVector();
  all.resize(S * g.vocab); // lane 0
  return all;
}

// Rejected positions need no KV rollback: slots L+1..L+3 hold the rejected
// tokens' keys and values after the first step, but the mask shows a query
// at position p only slots <= p, and the next step writes slots L+1.. before
// attention reads them. So the logits after the rejection are the same
// (bitwise) whatever was rejected, and they are the golden's.
TEST(Speculative, RejectedPositionsNeedNoKVRollback) {
  for (const char *name : {"LlamaForCausalLM", "MistralForCausalLM",
                           "GPTBigCodeForCausalLM"}) {
    for (bool continuous : {false, true}) {
      SCOPED_TRACE(std::string(name) + (continuous ? " (continuous batching)" : ""));
      auto g = loadGolden(name);
      ASSERT_TRUE(g);
      TempDir dir;
      auto session = openTarget(dir, name, 1, false, continuous ? 2 : 0);
      ASSERT_TRUE(session);
      Golden one = *g;
      one.batch = 1;
      auto pick = [&](int64_t salt) {
        std::vector<int64_t> w;
        for (int64_t i = 0; i < kK; ++i) {
          int64_t t = 3 + (salt * 97 + i * 31) % (g->vocab - 3);
          while (t == g->greedy[0][1 + i])
            t = 3 + (t + 1) % (g->vocab - 3);
          w.push_back(t);
        }
        return w;
      };
      std::vector<float> firstA, firstB;
      std::vector<float> a = afterRejection(*session, one, pick(1), continuous, &firstA);
      std::vector<float> b = afterRejection(*session, one, pick(2), continuous, &firstB);
      // The rejected tokens were run: the first step's logits after them
      // differ between the two runs...
      ASSERT_EQ(firstA.size(), size_t((kK + 1) * g->vocab));
      EXPECT_NE(std::memcmp(firstA.data() + g->vocab, firstB.data() + g->vocab,
                            kK * g->vocab * sizeof(float)),
                0);
      // ...and their cache slots need no rollback: the next step is the same.
      ASSERT_EQ(a.size(), size_t((kK + 1) * g->vocab));
      ASSERT_EQ(b.size(), a.size());
      EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0)
          << "the rejected tokens changed the next step's logits";
      const int64_t L = g->prompts[0].size();
      for (int64_t i = 0; i <= kK; ++i)
        EXPECT_EQ(compare(a.data() + i * g->vocab,
                          g->fullAt(0, g->promptLen + 1 + i), g->vocab, g->atol,
                          g->rtol),
                  "")
            << "position " << L + 1 + i;
    }
  }
}

TEST(PromptLookup, EarliestMatchOfTheLongestNgram) {
  // "5 6 7" occurs at 1 and at 6: the earliest match proposes 8 9 1.
  std::vector<int64_t> ctx = {4, 5, 6, 7, 8, 9, 5, 6, 7, 1, 5, 6, 7};
  EXPECT_THAT(PromptLookupProposer::lookup(ctx, 3, 3), ::testing::ElementsAre(8, 9, 5));
  EXPECT_THAT(PromptLookupProposer::lookup(ctx, 3, 10),
              ::testing::ElementsAre(8, 9, 5, 6, 7, 1, 5, 6, 7));
  // A 3-gram without a match falls back to 2-grams, then 1-grams.
  std::vector<int64_t> two = {1, 2, 3, 9, 2, 3};
  EXPECT_THAT(PromptLookupProposer::lookup(two, 3, 2), ::testing::ElementsAre(9, 2));
  std::vector<int64_t> one = {7, 1, 2, 8, 2};
  EXPECT_THAT(PromptLookupProposer::lookup(one, 3, 5), ::testing::ElementsAre(8, 2));
  // Nothing to match, or no room: no proposal.
  EXPECT_TRUE(PromptLookupProposer::lookup({1, 2, 3, 4}, 3, 4).empty());
  EXPECT_TRUE(PromptLookupProposer::lookup(ctx, 3, 0).empty());
  EXPECT_TRUE(PromptLookupProposer::lookup({5}, 3, 4).empty());
  // max_ngram_size 1 looks at the last token only.
  EXPECT_THAT(PromptLookupProposer::lookup(ctx, 1, 2), ::testing::ElementsAre(8, 9));
}

/// Frequencies of the first token SequenceState::verify yields over
/// `trials` seeds, for target logits `logits` and a draft drawn from `q`
/// (null: the fixed draft `fixedDraft`, q one-hot).
std::vector<double> verifiedFrequencies(const std::vector<float> &logits,
                                        const std::vector<float> *q,
                                        int64_t fixedDraft,
                                        const GenerationOptions &options,
                                        int trials) {
  const int64_t vocab = logits.size();
  std::vector<double> counts(vocab, 0);
  for (int t = 0; t < trials; ++t) {
    uint64_t rng = 0x51ed + uint64_t(t) * 7919;
    int64_t draft = fixedDraft;
    if (q) {
      // The draft samples from q with its own random stream.
      uint64_t draftRng = ~rng;
      std::vector<float> logq(vocab);
      for (int64_t v = 0; v < vocab; ++v)
        logq[v] = std::log((*q)[v]);
      GenerationOptions plain;
      plain.temperature = 1.0;
      draft = sampleToken(logq.data(), vocab, plain, {}, draftRng);
    }
    SequenceState seq(options, nullptr, {1}, 1 << 20, false);
    seq.verify(logits.data(), vocab, rng, draft, q ? q->data() : nullptr);
    EXPECT_EQ(seq.result().generatedIds.size(), 1u);
    if (!seq.result().generatedIds.empty())
      counts[seq.result().generatedIds[0]] += 1;
  }
  for (double &c : counts)
    c /= trials;
  return counts;
}

// Speculative rejection sampling keeps the target's distribution, whatever
// the draft: 20000 seeds per case, every token's frequency within 5
// standard errors of the target's probability (with temperature and top-k
// applied: the distribution the plain sampler draws from).
TEST(Speculative, RejectionSamplingKeepsTheTargetDistribution) {
  const std::vector<float> logits = {1.0f, 2.5f, 0.2f, -1.0f, 2.0f, 0.7f};
  GenerationOptions options;
  options.temperature = 0.8;
  options.topK = 5;
  SamplerState state;
  auto p = tokenDistribution(logits.data(), logits.size(), options, state);
  ASSERT_TRUE(p.ok()) << p.error();
  const int trials = 20000;
  std::vector<float> qSkewed = {0.05f, 0.05f, 0.4f, 0.3f, 0.1f, 0.1f};
  std::vector<float> qClose = {0.1f, 0.4f, 0.05f, 0.05f, 0.3f, 0.1f};
  std::vector<std::vector<double>> runs = {
      verifiedFrequencies(logits, nullptr, 1, options, trials), // likely draft
      verifiedFrequencies(logits, nullptr, 3, options, trials), // impossible draft
      verifiedFrequencies(logits, &qSkewed, -1, options, trials),
      verifiedFrequencies(logits, &qClose, -1, options, trials)};
  for (size_t r = 0; r < runs.size(); ++r)
    for (int64_t v = 0; v < int64_t(logits.size()); ++v) {
      double want = p->probOf(v);
      double se = std::sqrt(std::max(want * (1 - want), 1e-12) / trials);
      EXPECT_NEAR(runs[r][v], want, 5 * se + 1e-9)
          << "case " << r << ", token " << v;
    }
}

// Greedy verification takes the longest prefix the target agrees with and
// one token of its own.
TEST(Speculative, GreedyVerificationStopsAtTheFirstDisagreement) {
  const int64_t vocab = 5;
  // Position logits whose argmax is 2, 4, 1.
  std::vector<std::vector<float>> steps = {
      {0, 0, 3, 0, 0}, {0, 0, 0, 0, 3}, {0, 3, 0, 0, 0}};
  GenerationOptions options;
  SequenceState seq(options, nullptr, {1}, 1 << 20, false);
  uint64_t rng = 0;
  EXPECT_TRUE(seq.verify(steps[0].data(), vocab, rng, 2, nullptr));
  EXPECT_FALSE(seq.verify(steps[1].data(), vocab, rng, 3, nullptr));
  EXPECT_THAT(seq.result().generatedIds, ::testing::ElementsAre(2, 4));
  // No draft: a plain step.
  EXPECT_FALSE(seq.verify(steps[2].data(), vocab, rng, -1, nullptr));
  EXPECT_THAT(seq.result().generatedIds, ::testing::ElementsAre(2, 4, 1));
}

/// What a BatchEngine produced for each of `prompts` (admitted in order as
/// rows free up, all rows stepping together), with the tokens of each
/// sequence's updates concatenated and the speculative counts they carried.
struct EngineRun {
  std::vector<RowResult> results;
  std::vector<std::vector<int64_t>> streamed;
  int64_t proposed = 0, accepted = 0, steps = 0;
};

EngineRun runEngine(BatchEngine &engine,
                    const std::vector<std::vector<int64_t>> &prompts,
                    const GenerationOptions &options) {
  EngineRun run;
  const size_t n = prompts.size();
  run.results.resize(n);
  run.streamed.resize(n);
  std::vector<int64_t> seqOfRow(engine.rows(), -1);
  size_t next = 0, done = 0;
  auto handle = [&](const std::vector<RowUpdate> &updates) {
    for (const RowUpdate &u : updates) {
      int64_t seq = seqOfRow[u.row];
      EXPECT_GE(seq, 0);
      if (seq < 0)
        continue;
      run.streamed[seq].insert(run.streamed[seq].end(), u.newTokens.begin(),
                               u.newTokens.end());
      run.proposed += u.specProposedTokens;
      run.accepted += u.specAcceptedTokens;
      if (u.result) {
        run.results[seq] = *u.result;
        seqOfRow[u.row] = -1;
        ++done;
      }
    }
  };
  while (done < n) {
    while (engine.hasFreeRow() && next < n) {
      std::vector<RowUpdate> updates;
      auto row = engine.admit(prompts[next], options, updates);
      EXPECT_TRUE(row.ok()) << row.error();
      if (!row.ok())
        return run;
      seqOfRow[*row] = int64_t(next++);
      handle(updates);
    }
    std::vector<RowUpdate> updates;
    Status s = engine.step(updates);
    EXPECT_TRUE(s) << s.error();
    if (!s)
      return run;
    ++run.steps;
    handle(updates);
  }
  return run;
}

/// A draft proposer over a second session of the target's own artifact.
std::shared_ptr<Proposer> selfDraft(std::optional<Session> &draft,
                                    const TempDir &dir, const BatchEngine &engine) {
  SessionOptions sessionOptions;
  sessionOptions.numThreads = 1;
  sessionOptions.prepackWeights = true;
  auto s = Session::open(dir.file("artifact"), DeviceKind::Host, sessionOptions);
  EXPECT_TRUE(s.ok()) << s.error();
  if (!s.ok())
    return nullptr;
  draft.emplace(std::move(*s));
  auto proposer = DraftModelProposer::create(*draft, "draft=self", engine.rows(),
                                             engine.ctxLen(), GenerationOptions());
  EXPECT_TRUE(proposer.ok()) << proposer.error();
  if (!proposer.ok())
    return nullptr;
  return std::shared_ptr<Proposer>(std::move(*proposer));
}

// Every row of the golden and the same rows reversed, admitted as rows free
// up: the golden's greedy tokens, whichever proposer, with 1 and 2 cache
// rows and without continuous batching; the tokens of a row's updates are
// its result's. A draft equal to the target has every proposal accepted.
TEST(BatchSpeculation, GreedyTokensEqualTheGoldens) {
  // The dynamic NTK and longrope goldens cross their scaling threshold
  // during generation: verification steps must rotate as one-token steps.
  for (const char *name : {"LlamaForCausalLM", "GPT2LMHeadModel",
                           "MistralForCausalLM-small_window",
                           "LlamaForCausalLM-dynamic_rope",
                           "Phi3ForCausalLM-longrope"}) {
    auto g = loadGolden(name);
    ASSERT_TRUE(g);
    std::vector<std::vector<int64_t>> prompts = g->prompts, want = g->greedy;
    prompts.insert(prompts.end(), g->prompts.rbegin(), g->prompts.rend());
    want.insert(want.end(), g->greedy.rbegin(), g->greedy.rend());
    for (int64_t fullBatch : {0, 1, 2}) {
      TempDir dir;
      auto session = openTarget(dir, name, 1, false, fullBatch);
      ASSERT_TRUE(session);
      for (bool draft : {false, true}) {
        SCOPED_TRACE(std::string(name) + ", full batch " + std::to_string(fullBatch) +
                     (draft ? ", draft = target" : ", prompt lookup"));
        auto engine = BatchEngine::create(*session, nullptr);
        ASSERT_TRUE(engine.ok()) << engine.error();
        std::optional<Session> draftSession;
        SpeculationConfig config;
        config.proposer = draft ? selfDraft(draftSession, dir, *engine)
                                : std::make_shared<PromptLookupProposer>(3);
        ASSERT_TRUE(config.proposer);
        ASSERT_TRUE(engine->setSpeculation(config));
        EXPECT_EQ(engine->speculativeTokens(), kK);
        GenerationOptions options;
        options.maxNewTokens = g->n;
        EngineRun run = runEngine(*engine, prompts, options);
        for (size_t i = 0; i < prompts.size(); ++i) {
          EXPECT_EQ(run.results[i].generatedIds, want[i]) << "request " << i;
          EXPECT_EQ(run.streamed[i], run.results[i].generatedIds) << "request " << i;
        }
        int64_t proposed = 0, accepted = 0;
        for (const RowResult &r : run.results) {
          proposed += r.metrics.specProposedTokens;
          accepted += r.metrics.specAcceptedTokens;
        }
        EXPECT_EQ(run.proposed, proposed);
        EXPECT_EQ(run.accepted, accepted);
        if (draft) {
          EXPECT_GT(proposed, 0);
          EXPECT_EQ(accepted, proposed) << "a draft equal to the target";
        }
      }
    }
  }
}

// With a draft equal to the target every step keeps K + 1 tokens: a stop
// token that the golden yields inside such a run ends the row right there
// (left out of the output), and max_new_tokens cuts a run short.
TEST(BatchSpeculation, StopRulesApplyTokenByTokenInsideAnAcceptedRun) {
  auto g = loadGolden("LlamaForCausalLM");
  ASSERT_TRUE(g);
  const std::vector<int64_t> &greedy = g->greedy[0];
  // The first greedy token past the first step's run (the prefill's token
  // and K + 1 more) that occurs nowhere before it, not the run's first.
  size_t at = 0;
  for (size_t i = kK + 3; i < greedy.size() && !at; ++i)
    if (std::find(greedy.begin(), greedy.begin() + i, greedy[i]) ==
        greedy.begin() + i)
      at = i;
  ASSERT_GT(at, 0u) << "no distinct greedy token to stop at";
  TempDir dir;
  auto session = openTarget(dir, "LlamaForCausalLM", 1, false, 2);
  ASSERT_TRUE(session);
  auto engine = BatchEngine::create(*session, nullptr);
  ASSERT_TRUE(engine.ok()) << engine.error();
  std::optional<Session> draftSession;
  SpeculationConfig config;
  config.proposer = selfDraft(draftSession, dir, *engine);
  ASSERT_TRUE(config.proposer);
  ASSERT_TRUE(engine->setSpeculation(config));

  GenerationOptions options;
  options.maxNewTokens = g->n;
  options.stopTokenIds = {greedy[at]};
  EngineRun run = runEngine(*engine, {g->prompts[0]}, options);
  EXPECT_EQ(run.results[0].finishReason, "stop_token");
  EXPECT_EQ(run.results[0].generatedIds,
            std::vector<int64_t>(greedy.begin(), greedy.begin() + at));
  EXPECT_EQ(run.streamed[0], run.results[0].generatedIds);

  options.stopTokenIds.clear();
  options.maxNewTokens = 6; // the prefill's token, then 4 + 1
  run = runEngine(*engine, {g->prompts[0]}, options);
  EXPECT_EQ(run.results[0].finishReason, "max_new_tokens");
  EXPECT_EQ(run.results[0].generatedIds,
            std::vector<int64_t>(greedy.begin(), greedy.begin() + 6));
  EXPECT_EQ(run.steps, 2);
}

// Speculation needs a target, and no more tokens than its largest K.
TEST(BatchSpeculation, RefusesWhatTheTargetCannotVerify) {
  TempDir dir;
  auto session = openTarget(dir, "LlamaForCausalLM", 1, false, 2);
  ASSERT_TRUE(session);
  auto engine = BatchEngine::create(*session, nullptr);
  ASSERT_TRUE(engine.ok());
  SpeculationConfig config;
  config.proposer = std::make_shared<PromptLookupProposer>(3);
  config.maxTokens = kK + 1;
  Status s = engine->setSpeculation(config);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error(), ::testing::HasSubstr("at most 3 speculative tokens"));
  config.maxTokens = 1;
  ASSERT_TRUE(engine->setSpeculation(config));
  EXPECT_EQ(engine->speculativeTokens(), 1);
}

} // namespace
