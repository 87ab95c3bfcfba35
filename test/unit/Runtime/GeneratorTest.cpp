//===- GeneratorTest.cpp - token choice of the generation loop ------------===//
//
// Part of qeff. sampleToken's semantics: greedy, the HF repetition penalty,
// top-k, top-p, temperature, and reproducibility from the seed.
//
//===----------------------------------------------------------------------===//

#include "runtime/generation/Generator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

using namespace qeff::runtime;

namespace {

TEST(SampleToken, GreedyIsTheFirstArgmax) {
  float logits[] = {0.5f, 2.0f, -1.0f, 2.0f};
  GenerationOptions greedy;
  uint64_t rng = 1;
  EXPECT_EQ(sampleToken(logits, 4, greedy, {}, rng), 1);
}

TEST(SampleToken, RepetitionPenaltyFollowsHF) {
  // Token 1 was seen: its positive logit is divided (2.0 / 4 = 0.5 < 1.5), a
  // seen negative logit would be multiplied (more negative).
  float logits[] = {1.5f, 2.0f, -1.0f};
  GenerationOptions options;
  options.repetitionPenalty = 4.0;
  uint64_t rng = 1;
  EXPECT_EQ(sampleToken(logits, 3, options, {1}, rng), 0);
  float negative[] = {-0.5f, -0.6f, -3.0f};
  EXPECT_EQ(sampleToken(negative, 3, options, {0}, rng), 1);
}

TEST(SampleToken, TopKOneAndTinyTopPAreGreedy) {
  float logits[] = {0.1f, 0.2f, 3.0f, 0.3f};
  GenerationOptions k1;
  k1.temperature = 1.0;
  k1.topK = 1;
  GenerationOptions p0;
  p0.temperature = 1.0;
  p0.topP = 1e-6;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    uint64_t a = seed, b = seed;
    EXPECT_EQ(sampleToken(logits, 4, k1, {}, a), 2);
    EXPECT_EQ(sampleToken(logits, 4, p0, {}, b), 2);
  }
}

TEST(SampleToken, TopKRestrictsTheCandidates) {
  float logits[] = {1.0f, 0.9f, 0.8f, -5.0f, 0.7f};
  GenerationOptions options;
  options.temperature = 2.0;
  options.topK = 2;
  uint64_t rng = 7;
  for (int i = 0; i < 500; ++i) {
    int64_t t = sampleToken(logits, 5, options, {}, rng);
    EXPECT_TRUE(t == 0 || t == 1) << t;
  }
}

TEST(SampleToken, TemperatureSamplesTheSoftmax) {
  // p = softmax(logits / T); 20000 draws land within a few sigma.
  float logits[] = {0.0f, 1.0f, 2.0f};
  GenerationOptions options;
  options.temperature = 1.5;
  uint64_t rng = 12345;
  std::map<int64_t, int> counts;
  const int n = 20000;
  for (int i = 0; i < n; ++i)
    ++counts[sampleToken(logits, 3, options, {}, rng)];
  double z = 0, p[3];
  for (int i = 0; i < 3; ++i)
    z += p[i] = std::exp(logits[i] / 1.5);
  for (int i = 0; i < 3; ++i) {
    double expected = p[i] / z, sigma = std::sqrt(expected * (1 - expected) / n);
    EXPECT_NEAR(counts[i] / double(n), expected, 5 * sigma) << "token " << i;
  }
}

TEST(SampleToken, TheSeedReproducesTheDraws) {
  float logits[] = {0.3f, 0.2f, 0.1f, 0.0f};
  GenerationOptions options;
  options.temperature = 1.0;
  uint64_t a = 99, b = 99, c = 100;
  std::vector<int64_t> first, second, other;
  for (int i = 0; i < 64; ++i) {
    first.push_back(sampleToken(logits, 4, options, {}, a));
    second.push_back(sampleToken(logits, 4, options, {}, b));
    other.push_back(sampleToken(logits, 4, options, {}, c));
  }
  EXPECT_EQ(first, second);
  EXPECT_NE(first, other);
}

} // namespace
