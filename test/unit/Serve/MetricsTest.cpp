//===- MetricsTest.cpp - Prometheus exposition of qeff serve --------------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "runtime/serve/Metrics.h"

#include <gtest/gtest.h>

using namespace qeff::serve;

namespace {

bool has(const std::string &text, const std::string &line) {
  return text.find(line + "\n") != std::string::npos;
}

TEST(Metrics, RendersCountersGaugesAndCumulativeHistograms) {
  Metrics m;
  m.addModel("a\"b", 4);
  m.countResponse("/v1/completions", 200);
  m.countResponse("/v1/completions", 200);
  m.countResponse("/v1/completions", 400);
  m.setRowsInUse("a\"b", 3);
  m.setQueueDepth("a\"b", 2);
  m.addPromptTokens("a\"b", 10);
  m.addGeneratedTokens("a\"b", 7);
  m.addPrefixCacheLookup("a\"b", 12, 5);
  m.addPrefixCacheLookup("a\"b", 8, 0);
  m.addSpeculativeTokens("a\"b", 6, 4);
  m.addSpeculativeTokens("a\"b", 3, 0);
  m.countFinished("a\"b", "stop");
  m.observeTimeToFirstToken("a\"b", 0.003);
  m.observeTimeToFirstToken("a\"b", 0.2);
  m.observeDecodeStepRows("a\"b", 1);
  m.observeDecodeStepRows("a\"b", 3);
  std::string text = m.render();
  EXPECT_TRUE(has(text, R"(qeff_http_responses_total{route="/v1/completions",code="200"} 2)")) << text;
  EXPECT_TRUE(has(text, R"(qeff_http_responses_total{route="/v1/completions",code="400"} 1)"));
  EXPECT_TRUE(has(text, R"(qeff_rows{model="a\"b"} 4)"));
  EXPECT_TRUE(has(text, R"(qeff_rows_in_use{model="a\"b"} 3)"));
  EXPECT_TRUE(has(text, R"(qeff_queue_depth{model="a\"b"} 2)"));
  EXPECT_TRUE(has(text, R"(qeff_prompt_tokens_total{model="a\"b"} 10)"));
  EXPECT_TRUE(has(text, R"(qeff_generation_tokens_total{model="a\"b"} 7)"));
  EXPECT_TRUE(has(text, R"(qeff_prefix_cache_queries_total{model="a\"b"} 20)"));
  EXPECT_TRUE(has(text, R"(qeff_prefix_cache_hit_tokens_total{model="a\"b"} 5)"));
  EXPECT_TRUE(has(text, "# TYPE qeff_prefix_cache_hit_tokens_total counter"));
  EXPECT_TRUE(has(text, R"(qeff_spec_proposed_tokens_total{model="a\"b"} 9)"));
  EXPECT_TRUE(has(text, R"(qeff_spec_accepted_tokens_total{model="a\"b"} 4)"));
  EXPECT_TRUE(has(text, "# TYPE qeff_spec_accepted_tokens_total counter"));
  EXPECT_TRUE(has(text, R"(qeff_requests_finished_total{model="a\"b",reason="stop"} 1)"));
  EXPECT_TRUE(has(text, R"(qeff_time_to_first_token_seconds_bucket{model="a\"b",le="0.0025"} 0)"));
  EXPECT_TRUE(has(text, R"(qeff_time_to_first_token_seconds_bucket{model="a\"b",le="0.005"} 1)"));
  EXPECT_TRUE(has(text, R"(qeff_time_to_first_token_seconds_bucket{model="a\"b",le="0.25"} 2)"));
  EXPECT_TRUE(has(text, R"(qeff_time_to_first_token_seconds_bucket{model="a\"b",le="+Inf"} 2)"));
  EXPECT_TRUE(has(text, R"(qeff_time_to_first_token_seconds_count{model="a\"b"} 2)"));
  EXPECT_TRUE(has(text, R"(qeff_decode_step_rows_bucket{model="a\"b",le="1"} 1)"));
  EXPECT_TRUE(has(text, R"(qeff_decode_step_rows_bucket{model="a\"b",le="3"} 2)"));
  EXPECT_TRUE(has(text, "# TYPE qeff_inter_token_latency_seconds histogram"));
  EXPECT_EQ(m.rowsInUse("a\"b"), 3);
  EXPECT_EQ(m.queueDepth("a\"b"), 2);
}

} // namespace
