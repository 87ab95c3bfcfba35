//===- PerplexityTest.cpp - qeff eval's windows ---------------------------===//
//
// runtime/generation/Perplexity's windows follow Hugging Face's sliding-
// window perplexity: each window scores what no earlier window did, from at
// least one token of context, so with a stride below the window every token
// but a sequence's first is scored exactly once (with stride = window each
// later window's first token is context only, as in Hugging Face's recipe).
//
//===----------------------------------------------------------------------===//

#include "runtime/generation/Perplexity.h"

#include <gtest/gtest.h>

#include <map>

using namespace qeff::runtime;

TEST(Perplexity, WindowsScoreEveryTokenOnce) {
  for (int64_t length : {2, 5, 16, 17, 40})
    for (int64_t window : {2, 3, 8, 16})
      for (int64_t stride = 1; stride <= window; ++stride) {
        std::map<int64_t, int> scored;
        for (const ScoringWindow &w : scoringWindows({length}, window, stride)) {
          EXPECT_LE(w.end - w.begin, window);
          EXPECT_GT(w.firstScored, w.begin); // a scored token has context
          for (int64_t p = w.firstScored; p < w.end; ++p)
            ++scored[p];
        }
        int64_t expected = length - 1;
        if (stride == window) // each later window's first token: context only
          expected -= (length - 1) / window;
        ASSERT_EQ(int64_t(scored.size()), expected)
            << "length " << length << " window " << window << " stride " << stride;
        for (auto [p, n] : scored) {
          EXPECT_EQ(n, 1) << p;
          EXPECT_GE(p, 1);
        }
      }
}

TEST(Perplexity, HuggingFaceWindowLayout) {
  // 10 tokens, window 4, stride 2: [0,4) scores 1..3, [2,6) 4..5, [4,8)
  // 6..7, [6,10) 8..9.
  auto w = scoringWindows({10}, 4, 2);
  ASSERT_EQ(w.size(), 4u);
  int64_t expect[4][3] = {{0, 4, 1}, {2, 6, 4}, {4, 8, 6}, {6, 10, 8}};
  for (size_t i = 0; i < w.size(); ++i) {
    EXPECT_EQ(w[i].begin, expect[i][0]);
    EXPECT_EQ(w[i].end, expect[i][1]);
    EXPECT_EQ(w[i].firstScored, expect[i][2]);
  }
  // Two sequences keep their own windows; a 1-token sequence has none.
  auto two = scoringWindows({3, 1, 5}, 8, 8);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].sequence, 0u);
  EXPECT_EQ(two[1].sequence, 2u);
}
