//===- DeviceSamplerGoldenTest.cpp - on-device sampling on the goldens ----===//
//
// A golden compiled with --on-device-sampling, generated with on the host
// device by the Generator: seeded sampling with penalties equals the C++
// reference sampler applied to the plain artifact's logits with the same
// uniforms; what needs logits is refused. BatchEngine (qeff serve) on a
// 2-row continuous-batching sampler artifact: greedy rows give the golden's
// tokens, each row samples with its own parameters and seed (the tokens of
// a seeded request do not depend on its neighbour, equal the Generator's
// for the same seed, and survive a row reused after penalized sequences:
// the buffers restart with each prompt), no prefix is reused, speculation
// is refused. (Greedy generation on every golden:
// test/driver/infer-sampler.test; serving: test/serve/sampler.js.)
//
//===----------------------------------------------------------------------===//

#include "test/unit/Runtime/GoldenArtifact.h"
#include "test/unit/Runtime/ModelBuilder.h"

#include "qeff/compile/Compile.h"
#include "runtime/generation/BatchEngine.h"
#include "runtime/generation/DeviceSampler.h"
#include "runtime/generation/Generator.h"
#include "runtime/generation/Sequence.h"

#include <gmock/gmock.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <optional>

using namespace qeff::runtime;
using namespace qeff::runtime::test;

namespace {

constexpr int64_t kCtx = 64, kPrefill = 4;

struct Golden {
  std::vector<std::vector<int64_t>> prompts, greedy;
};

std::optional<Golden> loadGolden(const std::string &name) {
  std::ifstream in(goldenDir(name) + "/golden.json");
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded())
    return std::nullopt;
  Golden g;
  for (int64_t b = 0; b < j["batch"].get<int64_t>(); ++b) {
    std::vector<int64_t> p;
    for (int64_t s = 0; s < j["prompt_len"].get<int64_t>(); ++s)
      if (j["attention_mask"][b][s] == 1)
        p.push_back(j["prompt_ids"][b][s]);
    g.prompts.push_back(p);
    g.greedy.push_back(j["greedy_tokens"][b].get<std::vector<int64_t>>());
  }
  return g;
}

std::optional<Session> compileAndOpen(const TempDir &dir, const std::string &name,
                                      const std::string &sub, int64_t batch,
                                      int64_t fullBatch, bool sampler) {
  qeff::compile::Options options;
  options.checkpointDir = goldenDir(name);
  options.outputDir = dir.file(sub);
  options.ctxLen = kCtx;
  options.prefillSeqLen = kPrefill;
  options.batchSize = fullBatch > 0 ? 1 : batch;
  options.fullBatchSize = fullBatch;
  options.onDeviceSampling = sampler;
  SessionOptions sessionOptions;
  sessionOptions.numThreads = 1;
  sessionOptions.prepackWeights = true;
  return compileAndOpenOnHost(options, sessionOptions);
}

// Seeded sampling with every parameter: the sampler artifact's tokens are
// those of the reference sampler on the plain artifact's logits, fed the
// uniforms the Generator draws (maxTopKIds per row per run, prefill chunks
// included) and penalty masks kept as the graph keeps them.
TEST(SamplerSeeded, EqualsTheReferenceOnThePlainLogits) {
  const std::string name = "LlamaForCausalLM";
  std::optional<Golden> g = loadGolden(name);
  ASSERT_TRUE(g);
  TempDir dir;
  std::optional<Session> sampled = compileAndOpen(dir, name, "sampler", 1, 0, true);
  std::optional<Session> plain = compileAndOpen(dir, name, "plain", 1, 0, false);
  ASSERT_TRUE(sampled && plain);
  auto shape = readDeviceSamplerShape(*sampled);
  ASSERT_TRUE(shape.ok()) << shape.error();
  const int64_t vocab = shape->vocab, K = shape->maxTopKIds;

  GenerationOptions options;
  options.maxNewTokens = 12;
  options.temperature = 0.9;
  options.topK = 40;
  options.topP = 0.9;
  options.minP = 0.02;
  options.repetitionPenalty = 1.3;
  options.presencePenalty = 0.5;
  auto generator = Generator::create(*sampled, nullptr);
  ASSERT_TRUE(generator.ok()) << generator.error();
  int64_t differFromGreedy = 0;
  for (uint64_t seed : {1, 2, 3}) {
    options.seed = seed;
    auto result = generator->generate({g->prompts[0]}, options);
    ASSERT_TRUE(result.ok()) << result.error();
    const std::vector<int64_t> &tokens = result->rows[0].generatedIds;
    auto again = generator->generate({g->prompts[0]}, options);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->rows[0].generatedIds, tokens) << "seed " << seed << " twice";
    differFromGreedy += tokens != g->greedy[0];

    // The reference on the plain artifact's logits.
    DeviceSamplingParams params = deviceSamplingParams(options);
    uint64_t rng = seed;
    std::vector<float> uniforms(K);
    auto draw = [&] {
      for (float &u : uniforms)
        u = openUniform(rng);
    };
    std::vector<uint8_t> rep(vocab, 0), pres(vocab, 0);
    const std::vector<int64_t> &prompt = g->prompts[0];
    plain->reset();
    std::vector<float> last;
    for (int64_t c = 0; c * kPrefill < int64_t(prompt.size()); ++c) {
      std::vector<int64_t> ids(kPrefill, 0), pos(kPrefill, -1);
      for (int64_t j = 0; j < kPrefill && c * kPrefill + j < int64_t(prompt.size()); ++j) {
        ids[j] = prompt[c * kPrefill + j];
        pos[j] = c * kPrefill + j;
        rep[ids[j]] = 1;
      }
      draw();
      auto logits = runModelStep(*plain, 1, kPrefill, ids, pos, nullptr);
      ASSERT_TRUE(logits.ok()) << logits.error();
      last = logits->toFloatVector();
    }
    std::vector<int64_t> expected;
    int64_t position = int64_t(prompt.size());
    while (true) {
      expected.push_back(referenceDeviceSample(last.data(), vocab, rep.data(), pres.data(),
                                               params, K, uniforms.data()));
      if (int64_t(expected.size()) == options.maxNewTokens)
        break;
      rep[expected.back()] = pres[expected.back()] = 1;
      draw();
      auto logits = runModelStep(*plain, 1, 1, {expected.back()}, {position++}, nullptr);
      ASSERT_TRUE(logits.ok()) << logits.error();
      last = logits->toFloatVector();
    }
    EXPECT_EQ(tokens, expected) << "seed " << seed;
  }
  EXPECT_GT(differFromGreedy, 0) << "sampling at temperature 0.9 never left the greedy path";
}

// What the on-device sampler cannot do is refused by name; serving and
// logits consumers refuse the artifact.
TEST(SamplerSeeded, RefusesWhatNeedsLogits) {
  TempDir dir;
  std::optional<Session> sampled =
      compileAndOpen(dir, "LlamaForCausalLM", "sampler", 1, 0, true);
  ASSERT_TRUE(sampled);
  auto generator = Generator::create(*sampled, nullptr);
  ASSERT_TRUE(generator.ok());
  GenerationOptions options;
  options.logprobs = 2;
  auto r = generator->generate({{1, 2, 3}}, options);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error(), ::testing::HasSubstr("logprobs is not available with an "
                                              "on-device-sampling artifact"));
  options.logprobs = -1;
  options.frequencyPenalty = 0.5;
  r = generator->generate({{1, 2, 3}}, options);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error(), ::testing::HasSubstr("frequency_penalty"));
  auto logits = runModelStep(*sampled, 1, kPrefill, {1, 2, 3, 0}, {0, 1, 2, -1}, nullptr);
  ASSERT_FALSE(logits.ok());
  EXPECT_THAT(logits.error(), ::testing::HasSubstr("samples on the device"));
}

using Request = std::pair<std::vector<int64_t>, GenerationOptions>;

/// Serves `requests` through `engine` as qeff serve does (admitted in order
/// as rows free up, all active rows stepped together); each one's tokens.
std::vector<std::vector<int64_t>> serve(BatchEngine &engine,
                                        const std::vector<Request> &requests) {
  std::vector<std::vector<int64_t>> out(requests.size());
  std::map<int64_t, size_t> requestOf;
  std::vector<RowUpdate> updates;
  auto take = [&] {
    for (RowUpdate &u : updates)
      if (u.result) {
        out[requestOf.at(u.row)] = u.result->generatedIds;
        EXPECT_NE(u.result->finishReason, "error") << u.result->error;
      }
    updates.clear();
  };
  size_t next = 0;
  while (next < requests.size() || engine.activeRows() > 0) {
    while (next < requests.size() && engine.hasFreeRow()) {
      Result<int64_t> row =
          engine.admit(requests[next].first, requests[next].second, updates);
      EXPECT_TRUE(row.ok()) << row.error();
      if (!row.ok())
        return out;
      requestOf[*row] = next++;
      EXPECT_EQ(engine.reusedTokens(*row), 0) << "a prefix was reused";
      take();
    }
    if (engine.activeRows() > 0) {
      Status s = engine.step(updates);
      EXPECT_TRUE(s.ok()) << s.error();
      take();
    }
  }
  return out;
}

TEST(SamplerBatch, RowsSampleWithTheirOwnParametersAndSeeds) {
  const std::string name = "LlamaForCausalLM";
  std::optional<Golden> g = loadGolden(name);
  ASSERT_TRUE(g);
  ASSERT_GE(g->prompts.size(), 2u);
  TempDir dir;
  std::optional<Session> sampled = compileAndOpen(dir, name, "cb", 1, 2, true);
  ASSERT_TRUE(sampled);
  // The penalty buffers are retained state that is not a KV cache: no
  // prefix reuse, so every prompt is prefilled from position 0, which
  // clears its row's buffers.
  EXPECT_EQ(reusableHistoryLimit(*sampled, kPrefill, kCtx), 0);
  auto engine = BatchEngine::create(*sampled, nullptr);
  ASSERT_TRUE(engine.ok()) << engine.error();
  ASSERT_EQ(engine->rows(), 2);
  EXPECT_TRUE(engine->samplesOnDevice());

  auto greedy = [&](size_t i) {
    GenerationOptions o;
    o.maxNewTokens = int64_t(g->greedy[i].size());
    return Request{g->prompts[i], o};
  };
  std::vector<Request> greedyRequests;
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < g->prompts.size(); ++i)
      greedyRequests.push_back(greedy(i));
  std::vector<std::vector<int64_t>> got = serve(*engine, greedyRequests);
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(got[i], g->greedy[i % g->prompts.size()]) << "greedy request " << i;

  GenerationOptions sampledOptions;
  sampledOptions.maxNewTokens = 12;
  sampledOptions.temperature = 0.9;
  sampledOptions.topK = 40;
  sampledOptions.topP = 0.9;
  sampledOptions.minP = 0.02;
  sampledOptions.repetitionPenalty = 1.3;
  sampledOptions.presencePenalty = 0.5;
  sampledOptions.seed = 5;
  GenerationOptions neighbour = sampledOptions;
  neighbour.maxNewTokens = 20;
  neighbour.temperature = 1.5;
  neighbour.repetitionPenalty = 2.0;
  neighbour.seed = 99;
  const std::vector<int64_t> &prompt = g->prompts[0];
  std::vector<int64_t> alone = serve(*engine, {{prompt, sampledOptions}})[0];
  ASSERT_EQ(int64_t(alone.size()), sampledOptions.maxNewTokens);
  // Beside a neighbour with other parameters, admitted first.
  EXPECT_EQ(serve(*engine, {{g->prompts[1], neighbour}, {prompt, sampledOptions}})[1],
            alone);
  // Both rows last held penalized sequences; a greedy row beside a sampled
  // one stays greedy.
  got = serve(*engine, {{prompt, sampledOptions}, greedy(1)});
  EXPECT_EQ(got[0], alone);
  EXPECT_EQ(got[1], g->greedy[1]);
  // The Generator (qeff run) draws the same uniforms for one sequence.
  auto generator = Generator::create(*sampled, nullptr);
  ASSERT_TRUE(generator.ok()) << generator.error();
  auto run = generator->generate({prompt}, sampledOptions);
  ASSERT_TRUE(run.ok()) << run.error();
  EXPECT_EQ(run->rows[0].generatedIds, alone);
  // Other seeds give other samples.
  bool differs = false;
  for (uint64_t seed : {6, 7, 8}) {
    GenerationOptions other = sampledOptions;
    other.seed = seed;
    differs |= serve(*engine, {{prompt, other}})[0] != alone;
  }
  EXPECT_TRUE(differs) << "seeds 5..8 sampled the same tokens";
}

TEST(SamplerBatch, RefusesWhatNeedsLogitsAndSpeculation) {
  TempDir dir;
  std::optional<Session> sampled =
      compileAndOpen(dir, "LlamaForCausalLM", "cb", 1, 2, true);
  ASSERT_TRUE(sampled);
  auto engine = BatchEngine::create(*sampled, nullptr);
  ASSERT_TRUE(engine.ok()) << engine.error();
  std::vector<RowUpdate> updates;
  GenerationOptions options;
  options.logitBias = {{1, 2.0}};
  auto row = engine->admit({1, 2, 3}, options, updates);
  ASSERT_FALSE(row.ok());
  EXPECT_THAT(row.error(), ::testing::HasSubstr("logit_bias is not available"));
  EXPECT_EQ(engine->activeRows(), 0);
  SpeculationConfig config;
  config.proposer = std::make_shared<PromptLookupProposer>(3);
  Status s = engine->setSpeculation(config);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error(), ::testing::HasSubstr("not available with an "
                                              "on-device-sampling artifact"));
}

} // namespace
