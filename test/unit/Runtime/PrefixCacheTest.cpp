//===- PrefixCacheTest.cpp - the prefix cache's row choice ----------------===//
//
// PrefixCache alone (no model): the free row with the longest usable prefix
// wins, the least recently released one on a tie (never-used rows first),
// at least one prompt token is left to prefill, histories (and, with a
// rope threshold, prompts) past the limit
// (rolling KV buffers) and a disabled cache give nothing, and the history
// follows prefill, decode feeds and failures.
//
//===----------------------------------------------------------------------===//

#include "runtime/generation/PrefixCache.h"

#include <gtest/gtest.h>

using namespace qeff::runtime;

namespace {

using Ids = std::vector<int64_t>;

TEST(PrefixCache, LongestPrefixAmongFreeRows) {
  PrefixCache cache(3);
  cache.prefilled(0, {1, 2, 3});
  cache.prefilled(1, {1, 2, 3, 4, 5});
  cache.prefilled(2, {1, 2, 3, 4, 5, 6, 7});
  for (int64_t r = 0; r < 3; ++r)
    cache.released(r);
  PrefixCache::Choice c = cache.choose({1, 2, 3, 4, 5, 9, 9}, {true, true, true});
  // Rows 1 and 2 both share 5 tokens; row 1 was released before row 2.
  EXPECT_EQ(c.row, 1);
  EXPECT_EQ(c.reuse, 5);
  // Row 1 busy: row 2 shares as much.
  c = cache.choose({1, 2, 3, 4, 5, 9, 9}, {true, false, true});
  EXPECT_EQ(c.row, 2);
  EXPECT_EQ(c.reuse, 5);
  // Only row 0 free.
  c = cache.choose({1, 2, 3, 4, 5, 9, 9}, {true, false, false});
  EXPECT_EQ(c.row, 0);
  EXPECT_EQ(c.reuse, 3);
  // Nothing free.
  EXPECT_EQ(cache.choose({1}, {false, false, false}).row, -1);
}

TEST(PrefixCache, TiesGoToTheRowReleasedLongestAgo) {
  PrefixCache cache(4);
  // Rows 0..2 hold unrelated histories, released in the order 2, 0, 1;
  // row 3 was never used.
  cache.prefilled(0, {5, 6});
  cache.prefilled(1, {7, 8});
  cache.prefilled(2, {9, 10});
  cache.released(2);
  cache.released(0);
  cache.released(1);
  EXPECT_EQ(cache.choose({1, 2}, {true, true, true, true}).row, 3);
  EXPECT_EQ(cache.choose({1, 2}, {true, true, true, false}).row, 2);
  EXPECT_EQ(cache.choose({1, 2}, {true, true, false, false}).row, 0);
  // Releasing row 0 again makes it the most recent.
  cache.released(0);
  EXPECT_EQ(cache.choose({1, 2}, {true, true, false, false}).row, 1);
  // A longer prefix beats recency.
  EXPECT_EQ(cache.choose({5, 6, 1}, {true, true, false, false}).row, 0);
}

TEST(PrefixCache, AtLeastOnePromptTokenIsPrefilled) {
  PrefixCache cache(1);
  cache.prefilled(0, {1, 2, 3, 4});
  cache.fed(0, 5);
  EXPECT_EQ(cache.history(0), (Ids{1, 2, 3, 4, 5}));
  // The same prompt: all but its last token.
  EXPECT_EQ(cache.reusable(0, {1, 2, 3, 4}), 3);
  // A prefix of the history.
  EXPECT_EQ(cache.reusable(0, {1, 2}), 1);
  EXPECT_EQ(cache.reusable(0, {1}), 0);
  // The history and then some.
  EXPECT_EQ(cache.reusable(0, {1, 2, 3, 4, 5, 6}), 5);
  EXPECT_EQ(cache.reusable(0, {1, 2, 3, 4, 5}), 4);
  // Diverging at once.
  EXPECT_EQ(cache.reusable(0, {2, 2, 3}), 0);
  EXPECT_EQ(cache.reusable(0, {}), 0);
}

TEST(PrefixCache, DisabledOrPastTheLimitReusesNothing) {
  PrefixCache cache(2, /*historyLimit=*/4);
  cache.prefilled(0, {1, 2, 3});
  cache.prefilled(1, {1, 2, 3});
  EXPECT_EQ(cache.reusable(0, {1, 2, 3, 9}), 3);
  cache.fed(0, 4);
  EXPECT_EQ(cache.reusable(0, {1, 2, 3, 4, 9}), 4); // 4 tokens: still in
  cache.fed(0, 5);
  EXPECT_EQ(cache.reusable(0, {1, 2, 3, 9}), 0); // 5 > 4
  PrefixCache::Choice c = cache.choose({1, 2, 3, 9}, {true, true});
  EXPECT_EQ(c.row, 1);
  EXPECT_EQ(c.reuse, 3);
  cache.setEnabled(false);
  EXPECT_EQ(cache.reusable(1, {1, 2, 3, 9}), 0);
  c = cache.choose({1, 2, 3, 9}, {true, true});
  EXPECT_EQ(c.reuse, 0);
  cache.setEnabled(true);
  EXPECT_EQ(cache.reusable(1, {1, 2, 3, 9}), 3);
}

// The rope threshold (dynamic NTK, longrope) limits the prompt as well as
// the history: a longer prompt reuses nothing, whatever it shares.
TEST(PrefixCache, PromptsPastThePromptLimitReuseNothing) {
  PrefixCache cache(1, /*historyLimit=*/5, /*promptLimit=*/5);
  EXPECT_EQ(cache.promptLimit(), 5);
  cache.prefilled(0, {1, 2, 3});
  EXPECT_EQ(cache.reusable(0, {1, 2, 3, 4, 9}), 3); // 5 tokens: in
  EXPECT_EQ(cache.reusable(0, {1, 2, 3, 4, 9, 9}), 0); // 6 > 5
  EXPECT_EQ(cache.choose({1, 2, 3, 4, 9, 9}, {true}).reuse, 0);
  cache.fed(0, {4, 5});
  EXPECT_EQ(cache.reusable(0, {1, 2, 3, 4, 9}), 4);
  cache.fed(0, 6); // a history of 6 > 5
  EXPECT_EQ(cache.reusable(0, {1, 2, 3, 4, 9}), 0);
}

TEST(PrefixCache, ForgetEmptiesHistories) {
  PrefixCache cache(2);
  cache.prefilled(0, {1, 2, 3});
  cache.prefilled(1, {1, 2, 3});
  cache.forget(0);
  EXPECT_TRUE(cache.history(0).empty());
  EXPECT_EQ(cache.reusable(1, {1, 2, 3, 4}), 3);
  cache.forgetAll();
  EXPECT_EQ(cache.reusable(1, {1, 2, 3, 4}), 0);
  // A new prefill starts the history again.
  cache.prefilled(1, {7, 8});
  cache.fed(1, {9, 10});
  EXPECT_EQ(cache.history(1), (Ids{7, 8, 9, 10}));
}

} // namespace
