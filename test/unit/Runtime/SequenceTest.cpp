//===- SequenceTest.cpp - token choice options, stop rules, constraints ---===//
//
// Part of qeff. chooseToken's options (logit bias, presence and frequency
// penalties over generated tokens, min_p, the min_tokens mask),
// computeLogprobs against log_softmax, SequenceState's stop rules (stop token
// ids, min_tokens, include_stop_str_in_output, skip_special_tokens), logprobs
// of every generated token, and constrained decoding through a test-only
// TokenConstraint ("digits only, at most three"); then the same options
// through Generator and BatchEngine on a tiny bigram model.
//
//===----------------------------------------------------------------------===//

#include "runtime/generation/BatchEngine.h"
#include "runtime/generation/Sequence.h"

#include "frontend/Tokenizer/Tokenizer.h"
#include "test/unit/Runtime/ModelBuilder.h"

#include <gmock/gmock.h>

#include <cmath>
#include <map>
#include <set>

using namespace qeff::runtime;
using namespace qeff::runtime::test;
using ::testing::HasSubstr;

namespace {

constexpr int64_t kVocab = 32;
constexpr int64_t kEos = 2;

/// Logits that make `token` the clear favourite (10 above the rest, which
/// fall off slowly by id so that ties never decide anything).
std::vector<float> favour(int64_t token, int64_t vocab = kVocab) {
  std::vector<float> logits(vocab);
  for (int64_t i = 0; i < vocab; ++i)
    logits[i] = -0.01f * float(i);
  logits[token] = 10;
  return logits;
}

/// Only the digit tokens 10..19 are allowed; the output may end after
/// `canEndAt` digits and must end after `mustEndAt`.
class DigitsConstraint : public TokenConstraint {
public:
  DigitsConstraint(int canEndAt, int mustEndAt) : canEndAt_(canEndAt), mustEndAt_(mustEndAt) {}
  class Matcher : public ConstraintMatcher {
  public:
    explicit Matcher(const DigitsConstraint &c) : c_(c) {}
    void allowedTokens(std::vector<uint8_t> &allowed) override {
      if (count_ < c_.mustEndAt_)
        for (int64_t id = 10; id < 20 && id < int64_t(allowed.size()); ++id)
          allowed[id] = 1;
    }
    bool accept(int64_t token) override {
      if (token < 10 || token >= 20 || count_ >= c_.mustEndAt_)
        return false;
      ++count_;
      return true;
    }
    bool canEnd() const override { return count_ >= c_.canEndAt_; }
    bool mustEnd() const override { return count_ >= c_.mustEndAt_; }

  private:
    const DigitsConstraint &c_;
    int count_ = 0;
  };
  std::unique_ptr<ConstraintMatcher> start() const override {
    return std::make_unique<Matcher>(*this);
  }
  std::string describe() const override { return "digits"; }

private:
  int canEndAt_, mustEndAt_;
};

/// Nothing is ever allowed and the output can never end.
class NothingConstraint : public TokenConstraint {
  struct Matcher : ConstraintMatcher {
    void allowedTokens(std::vector<uint8_t> &) override {}
    bool accept(int64_t) override { return false; }
    bool canEnd() const override { return false; }
    bool mustEnd() const override { return false; }
  };

public:
  std::unique_ptr<ConstraintMatcher> start() const override {
    return std::make_unique<Matcher>();
  }
  std::string describe() const override { return "nothing"; }
};

int64_t choose(const std::vector<float> &logits, const GenerationOptions &options,
               const SamplerState &state = {}) {
  uint64_t rng = 1;
  Result<int64_t> t = chooseToken(logits.data(), logits.size(), options, state, rng);
  EXPECT_TRUE(t.ok()) << t.error();
  return t ? *t : -1;
}

TEST(ChooseToken, LogitBiasMovesTheChoice) {
  std::vector<float> logits = favour(5);
  GenerationOptions options;
  EXPECT_EQ(choose(logits, options), 5);
  options.logitBias = {{7, 100.0}};
  EXPECT_EQ(choose(logits, options), 7);
  options.logitBias = {{5, -100.0}};
  EXPECT_EQ(choose(logits, options), 0); // the next best
  options.logitBias = {{kVocab + 3, 100.0}, {-1, 100.0}}; // outside: ignored
  EXPECT_EQ(choose(logits, options), 5);
}

TEST(ChooseToken, PresenceAndFrequencyPenaltiesCountGeneratedTokensOnly) {
  std::vector<float> logits(4, 0.f);
  logits[0] = 2.0f;
  logits[1] = 1.5f;
  GenerationOptions options;
  options.frequencyPenalty = 0.3;
  SamplerState state;
  state.seen = {0, 0, 0}; // the prompt: no effect
  EXPECT_EQ(choose(logits, options, state), 0);
  state.generatedCounts[0] = 1; // 2.0 - 0.3 = 1.7 > 1.5
  EXPECT_EQ(choose(logits, options, state), 0);
  state.generatedCounts[0] = 2; // 2.0 - 0.6 = 1.4 < 1.5
  EXPECT_EQ(choose(logits, options, state), 1);
  GenerationOptions presence;
  presence.presencePenalty = 0.6; // once, whatever the count
  state.generatedCounts[0] = 1;
  EXPECT_EQ(choose(logits, presence, state), 1);
  presence.presencePenalty = 0.4;
  state.generatedCounts[0] = 9;
  EXPECT_EQ(choose(logits, presence, state), 0);
  // A negative penalty favours repeating.
  GenerationOptions repeat;
  repeat.frequencyPenalty = -1.0;
  state.generatedCounts = {{1, 1}};
  EXPECT_EQ(choose(logits, repeat, state), 1);
}

TEST(ChooseToken, MinPDropsTheUnlikely) {
  // p relative to the best: 1, e^-1 (0.37), e^-3 (0.05).
  std::vector<float> logits = {0.f, -1.f, -3.f};
  GenerationOptions options;
  options.temperature = 1.0;
  options.minP = 0.1;
  std::map<int64_t, int> counts;
  uint64_t rng = 42;
  for (int i = 0; i < 2000; ++i) {
    Result<int64_t> t = chooseToken(logits.data(), 3, options, {}, rng);
    ASSERT_TRUE(t.ok());
    ++counts[*t];
  }
  EXPECT_EQ(counts[2], 0);
  EXPECT_GT(counts[0], 1200);
  EXPECT_GT(counts[1], 300);
  // Without min_p token 2 is drawn about 4% of the time.
  options.minP = 0;
  int twos = 0;
  for (int i = 0; i < 2000; ++i)
    twos += *chooseToken(logits.data(), 3, options, {}, rng) == 2;
  EXPECT_GT(twos, 30);
}

TEST(ChooseToken, MinTokensMasksEosAndStopIds) {
  GenerationOptions options;
  options.eosIds = {kEos};
  options.stopTokenIds = {7};
  options.minTokens = 2;
  SamplerState state;
  std::vector<float> logits = favour(kEos);
  logits[7] = 9; // the runner-up is a stop id too
  EXPECT_EQ(choose(logits, options, state), 0);
  state.generated = 2;
  EXPECT_EQ(choose(logits, options, state), kEos);
  // Sampled as well: the masked ids are never drawn.
  options.temperature = 5.0;
  state.generated = 1;
  uint64_t rng = 3;
  for (int i = 0; i < 300; ++i) {
    int64_t t = *chooseToken(logits.data(), kVocab, options, state, rng);
    EXPECT_TRUE(t != kEos && t != 7) << t;
  }
}

TEST(ComputeLogprobs, EqualsLogSoftmaxAndListsTheTopK) {
  std::vector<float> logits = {1.0f, 3.0f, -2.0f, 3.0f, 0.5f};
  double z = 0;
  for (float l : logits)
    z += std::exp(double(l));
  TokenLogprobs lp = computeLogprobs(logits.data(), 5, 4, 3);
  EXPECT_EQ(lp.token, 4);
  EXPECT_NEAR(lp.logprob, 0.5 - std::log(z), 1e-12);
  ASSERT_EQ(lp.top.size(), 3u);
  EXPECT_EQ(lp.top[0].first, 1); // ties: the lower id first
  EXPECT_EQ(lp.top[1].first, 3);
  EXPECT_EQ(lp.top[2].first, 0);
  EXPECT_NEAR(lp.top[2].second, 1.0 - std::log(z), 1e-12);
  EXPECT_TRUE(computeLogprobs(logits.data(), 5, 0, 0).top.empty());
  EXPECT_EQ(computeLogprobs(logits.data(), 5, 0, 20).top.size(), 5u);
}

/// Steps `seq` through `script` (the favoured token of each step) until it
/// is done; returns the steps taken.
int run(SequenceState &seq, const std::vector<int64_t> &script,
        const std::vector<std::pair<int64_t, double>> &extra = {}) {
  uint64_t rng = 0;
  int steps = 0;
  for (int64_t token : script) {
    if (seq.done())
      break;
    std::vector<float> logits = favour(token);
    for (auto [id, v] : extra)
      logits[id] = float(v);
    seq.step(logits.data(), kVocab, rng);
    ++steps;
  }
  return steps;
}

TEST(SequenceState, StopTokenIdsEndAtTheFirstOccurrence) {
  GenerationOptions options;
  options.eosIds = {kEos};
  options.stopTokenIds = {9, 11};
  options.logprobs = 0;
  SequenceState seq(options, nullptr, {1, 4}, 64, false);
  run(seq, {5, 6, 11, 7, 9});
  EXPECT_EQ(seq.result().finishReason, "stop_token");
  EXPECT_EQ(seq.result().generatedIds, (std::vector<int64_t>{5, 6}));
  EXPECT_EQ(seq.result().logprobs.size(), 2u);

  // Kept with include_stop_str_in_output (also an EOS).
  options.includeStopInOutput = true;
  SequenceState kept(options, nullptr, {1, 4}, 64, false);
  run(kept, {5, 6, 11, 7});
  EXPECT_EQ(kept.result().finishReason, "stop_token");
  EXPECT_EQ(kept.result().generatedIds, (std::vector<int64_t>{5, 6, 11}));
  EXPECT_EQ(kept.result().logprobs.size(), 3u);
  SequenceState eos(options, nullptr, {1}, 64, false);
  run(eos, {5, kEos, 6});
  EXPECT_EQ(eos.result().finishReason, "eos");
  EXPECT_EQ(eos.result().generatedIds, (std::vector<int64_t>{5, kEos}));
}

TEST(SequenceState, MinTokensDelaysTheEnd) {
  GenerationOptions options;
  options.eosIds = {kEos};
  options.minTokens = 3;
  SequenceState seq(options, nullptr, {1}, 64, false);
  // EOS is the favourite at every step; the runner-up is token 0.
  run(seq, std::vector<int64_t>(10, kEos));
  EXPECT_EQ(seq.result().finishReason, "eos");
  EXPECT_EQ(seq.result().generatedIds, (std::vector<int64_t>{0, 0, 0}));
}

TEST(SequenceState, LogprobsAreRawWhateverTheSampling) {
  GenerationOptions options;
  options.logprobs = 2;
  options.logitBias = {{3, 100.0}}; // forces token 3, not in the raw top 2
  options.temperature = 0.7;
  options.presencePenalty = 2.0;
  SequenceState seq(options, nullptr, {1}, 64, false);
  uint64_t rng = 5;
  std::vector<float> logits = favour(8);
  seq.step(logits.data(), kVocab, rng);
  const RowResult &r = seq.result();
  ASSERT_EQ(r.generatedIds, (std::vector<int64_t>{3}));
  ASSERT_EQ(r.logprobs.size(), 1u);
  double z = 0;
  for (float l : logits)
    z += std::exp(double(l));
  EXPECT_NEAR(r.logprobs[0].logprob, logits[3] - std::log(z), 1e-9);
  ASSERT_EQ(r.logprobs[0].top.size(), 2u);
  EXPECT_EQ(r.logprobs[0].top[0].first, 8);
  EXPECT_NEAR(r.logprobs[0].top[0].second, 10 - std::log(z), 1e-9);
  EXPECT_EQ(r.logprobs[0].top[1].first, 0);
}

TEST(SequenceState, ConstraintMasksAndEnds) {
  GenerationOptions options;
  options.eosIds = {kEos};
  options.logprobs = 0;
  options.constraint = std::make_shared<DigitsConstraint>(3, 3);
  SequenceState seq(options, nullptr, {1}, 64, false);
  // The model favours non-digits and EOS; only digits can come, then the
  // constraint ends the row.
  int steps = run(seq, {5, kEos, 12, 7, 7}, {{15, 5.0}});
  EXPECT_EQ(steps, 3);
  EXPECT_EQ(seq.result().finishReason, "constraint_end");
  EXPECT_EQ(seq.result().generatedIds, (std::vector<int64_t>{15, 15, 12}));
  // Logprobs stay those of the raw logits.
  std::vector<float> first = favour(5);
  first[15] = 5.0f;
  EXPECT_NEAR(seq.result().logprobs[0].logprob,
              computeLogprobs(first.data(), kVocab, 15, 0).logprob, 1e-12);

  // EOS is allowed once the output can end.
  options.constraint = std::make_shared<DigitsConstraint>(2, 5);
  SequenceState early(options, nullptr, {1}, 64, false);
  run(early, std::vector<int64_t>(6, kEos), {{13, 5.0}});
  EXPECT_EQ(early.result().finishReason, "eos");
  EXPECT_EQ(early.result().generatedIds, (std::vector<int64_t>{13, 13}));

  // Sampling never leaves the allowed set.
  options.temperature = 3.0;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    options.seed = seed;
    SequenceState sampled(options, nullptr, {1}, 64, false);
    uint64_t rng = seed;
    std::vector<float> flat(kVocab, 0.f);
    for (int i = 0; i < 6 && !sampled.done(); ++i)
      sampled.step(flat.data(), kVocab, rng);
    for (int64_t t : sampled.result().generatedIds)
      EXPECT_TRUE(t >= 10 && t < 20) << t;
    EXPECT_TRUE(sampled.result().finishReason == "eos" ||
                sampled.result().finishReason == "constraint_end")
        << sampled.result().finishReason;
  }
}

TEST(SequenceState, AConstraintThatAllowsNothingIsAnError) {
  GenerationOptions options;
  options.eosIds = {kEos};
  options.constraint = std::make_shared<NothingConstraint>();
  SequenceState seq(options, nullptr, {1}, 64, false);
  run(seq, {5});
  EXPECT_EQ(seq.result().finishReason, "error");
  EXPECT_THAT(seq.result().error,
              HasSubstr("the constraint (nothing) allows no token after 0 generated "
                        "tokens and the output cannot end there"));
  // Only the end allowed, but min_tokens forbids it.
  options.constraint = std::make_shared<DigitsConstraint>(1, 1);
  options.minTokens = 2;
  options.maxNewTokens = 5;
  SequenceState stuck(options, nullptr, {1}, 64, false);
  run(stuck, {12, 12, 12});
  EXPECT_EQ(stuck.result().finishReason, "constraint_end"); // mustEnd wins
  options.constraint = std::make_shared<DigitsConstraint>(1, 3);
  options.minTokens = 1;
  SequenceState fine(options, nullptr, {1}, 64, false);
  run(fine, {kEos, kEos, kEos});
  EXPECT_EQ(fine.result().finishReason, "eos");
  EXPECT_EQ(fine.result().generatedIds.size(), 1u);
}

qeff::tokenizer::Tokenizer stories() {
  auto tok = qeff::tokenizer::Tokenizer::fromDirectory(QEFF_TEST_DATA_DIR
                                                      "/models/stories260K-hf");
  EXPECT_TRUE(tok.ok()) << tok.status();
  return *tok;
}

/// Steps a 512-token sequence through `script` with the stories tokenizer.
RowResult runText(GenerationOptions options, const std::vector<int64_t> &script) {
  qeff::tokenizer::Tokenizer tok = stories();
  SequenceState seq(std::move(options), &tok, {1}, 256, true);
  uint64_t rng = 0;
  for (int64_t token : script) {
    if (seq.done())
      break;
    std::vector<float> logits = favour(token, 512);
    seq.step(logits.data(), 512, rng);
  }
  return seq.result();
}

// ", there was a little" = 432 383 286 261 376 in stories260K.
const std::vector<int64_t> kThereWas = {432, 383, 286, 261, 376};

TEST(SequenceState, StopStringsWithAndWithoutTheStop) {
  GenerationOptions options;
  options.stopStrings = {"was"};
  RowResult cut = runText(options, kThereWas);
  EXPECT_EQ(cut.finishReason, "stop_string");
  EXPECT_EQ(cut.text, ", there ");
  options.includeStopInOutput = true;
  RowResult kept = runText(options, kThereWas);
  EXPECT_EQ(kept.text, ", there was");
  EXPECT_EQ(kept.generatedIds.size(), 3u);
}

TEST(SequenceState, MinTokensIgnoresStopStringsInItsText) {
  GenerationOptions options;
  options.stopStrings = {"there"};
  options.maxNewTokens = 5;
  options.minTokens = 2; // " there" is token 2: too early
  RowResult r = runText(options, kThereWas);
  EXPECT_EQ(r.finishReason, "max_new_tokens");
  EXPECT_EQ(r.text, ", there was a little");
  options.minTokens = 1; // ends in token 2's text: matched
  EXPECT_EQ(runText(options, kThereWas).finishReason, "stop_string");
}

TEST(SequenceState, SkipSpecialTokensFalseKeepsThem) {
  GenerationOptions options;
  options.maxNewTokens = 3;
  std::vector<int64_t> script = {432, 1, 383}; // ",", <s>, " there"
  EXPECT_EQ(runText(options, script).text, ", there");
  options.skipSpecialTokens = false;
  EXPECT_THAT(runText(options, script).text, HasSubstr("<s>"));
}

//===----------------------------------------------------------------------===//
// Through the engines: a bigram model, logits = T[last input token].
//===----------------------------------------------------------------------===//

/// T[a][b]: token a is followed by (a + 1) mod 16, then (a + 3) mod 16.
std::vector<float> bigramTable() {
  std::vector<float> t(16 * 16);
  for (int a = 0; a < 16; ++a)
    for (int b = 0; b < 16; ++b)
      t[a * 16 + b] = b == (a + 1) % 16 ? 4.f : b == (a + 3) % 16 ? 3.f : 0.1f * b;
  return t;
}

struct BigramArtifact {
  TempDir dir;
  BigramArtifact() {
    ModelBuilder b;
    b.input("input_ids", I64, {"batch_size", "seq_len"});
    b.input("position_ids", I64, {"batch_size", "seq_len"});
    b.output("logits", F32, {"batch_size", "1", "16"});
    b.initF32("T", {16, 16}, bigramTable());
    b.node("Gather", {"T", "input_ids"}, {"logits"});
    b.save(dir);
    dir.write("specializations.json", R"({"specializations":[
      {"name":"Prefill","symbols":{"batch_size":"1","seq_len":"1","ctx_len":"32"}}]})");
  }
};

TEST(Engines, OptionsReachGeneratorAndBatchEngine) {
  BigramArtifact a;
  auto session = Session::open(a.dir.path(), DeviceKind::Host);
  ASSERT_TRUE(session.ok()) << session.error();
  GenerationOptions options;
  options.maxNewTokens = 8;
  options.stopTokenIds = {9};
  options.logprobs = 1;
  // Greedy from 3: 4, then 7 (3 + 1.5 beats 5's 4), 8, then 9 stops.
  options.logitBias = {{7, 1.5}};
  auto generator = Generator::create(*session, nullptr);
  ASSERT_TRUE(generator.ok()) << generator.error();
  auto result = generator->generate({{3}}, options);
  ASSERT_TRUE(result.ok()) << result.error();
  const RowResult &row = result->rows[0];
  EXPECT_EQ(row.generatedIds, (std::vector<int64_t>{4, 7, 8}));
  EXPECT_EQ(row.finishReason, "stop_token");
  ASSERT_EQ(row.logprobs.size(), 3u);
  // Raw: token 7 after 4 without its bias, and 5 the most likely.
  std::vector<float> t = bigramTable();
  EXPECT_NEAR(row.logprobs[1].logprob,
              computeLogprobs(&t[4 * 16], 16, 7, 0).logprob, 1e-6);
  EXPECT_EQ(row.logprobs[1].top[0].first, 5);

  auto engine = BatchEngine::create(*session, nullptr);
  ASSERT_TRUE(engine.ok()) << engine.error();
  std::vector<RowUpdate> updates;
  ASSERT_TRUE(engine->admit({3}, options, updates).ok());
  std::vector<int64_t> tokens;
  size_t logprobs = 0;
  std::optional<RowResult> done;
  while (!done) {
    for (RowUpdate &u : updates) {
      tokens.insert(tokens.end(), u.newTokens.begin(), u.newTokens.end());
      logprobs += u.newLogprobs.size();
      if (u.result)
        done = *u.result;
    }
    updates.clear();
    if (!done)
      ASSERT_TRUE(engine->step(updates).ok());
  }
  EXPECT_EQ(tokens, row.generatedIds);
  EXPECT_EQ(logprobs, 3u);
  EXPECT_EQ(done->finishReason, "stop_token");
  EXPECT_EQ(done->logprobs.size(), 3u);

  // A constraint that allows nothing fails the row with its reason; the
  // generator reports it as an error.
  options.constraint = std::make_shared<NothingConstraint>();
  auto failed = generator->generate({{3}}, options);
  ASSERT_FALSE(failed.ok());
  EXPECT_THAT(failed.error(), HasSubstr("prompt 0: the constraint (nothing) allows no token"));
  updates.clear();
  ASSERT_TRUE(engine->admit({3}, options, updates).ok());
  ASSERT_EQ(updates.size(), 1u);
  ASSERT_TRUE(updates[0].result);
  EXPECT_EQ(updates[0].result->finishReason, "error");
  EXPECT_THAT(updates[0].result->error, HasSubstr("allows no token"));
  EXPECT_EQ(engine->activeRows(), 0);

  // Out-of-range options are refused.
  GenerationOptions bad;
  bad.logprobs = 21;
  EXPECT_THAT(generator->generate({{3}}, bad).error(), HasSubstr("logprobs must be in -1..20"));
  bad.logprobs = -1;
  bad.minTokens = -1;
  EXPECT_THAT(engine->admit({3}, bad, updates).error(), HasSubstr("min_tokens"));
}

} // namespace

// GenerationHooks: onToken sees each kept token as it is chosen (not the stop
// token that ends the row), and cancelled stops before the next model step.
TEST(Engines, GeneratorHooksReportTokensAndCancel) {
  BigramArtifact a;
  auto session = Session::open(a.dir.path(), DeviceKind::Host);
  ASSERT_TRUE(session.ok()) << session.error();
  auto generator = Generator::create(*session, nullptr);
  ASSERT_TRUE(generator.ok()) << generator.error();
  GenerationOptions options;
  options.maxNewTokens = 8;
  options.stopTokenIds = {9};
  options.logitBias = {{7, 1.5}};

  std::vector<std::pair<size_t, int64_t>> seen;
  int steps = 0;
  GenerationHooks hooks;
  hooks.onToken = [&](size_t row, int64_t token) { seen.push_back({row, token}); };
  hooks.cancelled = [&]() {
    ++steps;
    return false;
  };
  auto result = generator->generate({{3}}, options, {}, hooks);
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_EQ(seen, (std::vector<std::pair<size_t, int64_t>>{{0, 4}, {0, 7}, {0, 8}}));
  // One prefill and three decode steps (the last one chose the stop token).
  EXPECT_EQ(steps, 4);

  // Cancelled after the prefill: the error says so, and the generator (and
  // its session) work afterwards.
  seen.clear();
  steps = 0;
  hooks.cancelled = [&]() { return ++steps > 1; };
  auto cancelled = generator->generate({{3}}, options, {}, hooks);
  ASSERT_FALSE(cancelled.ok());
  EXPECT_EQ(cancelled.error(), "generation cancelled");
  EXPECT_EQ(seen, (std::vector<std::pair<size_t, int64_t>>{{0, 4}}));
  auto again = generator->generate({{3}}, options);
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_EQ(again->rows[0].generatedIds, (std::vector<int64_t>{4, 7, 8}));
}
