//===- ProtocolTest.cpp - request parsing of qeff serve -------------------===//
//
// Part of qeff. OpenAI and KServe-v2 request bodies: accepted forms and
// defaults, and for each rejected one the status, the named field and the
// message; the response and stream-chunk shapes.
//
//===----------------------------------------------------------------------===//

#include "runtime/serve/Protocol.h"

#include <gtest/gtest.h>

using namespace qeff::serve;

namespace {

TEST(CompletionRequest, AcceptsTheOpenAIForms) {
  ApiError error;
  auto r = parseCompletionRequest(
      R"({"model":"m","prompt":"hi","max_tokens":7,"temperature":0,"top_p":0.5,)"
      R"("top_k":-1,"seed":-3,"stop":"\n","n":1,"stream":true,)"
      R"("stream_options":{"include_usage":true},"logprobs":null,"user":"u"})",
      error);
  ASSERT_TRUE(r) << error.message;
  EXPECT_EQ(r->model, "m");
  EXPECT_EQ(*r->promptText, "hi");
  EXPECT_EQ(*r->sampling.maxTokens, 7);
  EXPECT_EQ(r->sampling.temperature, 0);
  EXPECT_EQ(r->sampling.topP, 0.5);
  EXPECT_EQ(r->sampling.topK, 0); // -1 = off, as in vLLM
  EXPECT_EQ(*r->sampling.seed, uint64_t(int64_t(-3)));
  EXPECT_EQ(r->sampling.stop, std::vector<std::string>{"\n"});
  EXPECT_TRUE(r->stream);
  EXPECT_TRUE(r->includeUsage);

  auto ids = parseCompletionRequest(R"({"prompt":[[1,2,3]]})", error);
  ASSERT_TRUE(ids) << error.message;
  EXPECT_EQ(*ids->promptIds, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_FALSE(ids->sampling.maxTokens);
  EXPECT_EQ(ids->sampling.temperature, 1.0); // OpenAI's default
  auto wrapped = parseCompletionRequest(R"({"prompt":["text"]})", error);
  ASSERT_TRUE(wrapped);
  EXPECT_EQ(*wrapped->promptText, "text");
}

struct Rejected {
  const char *body;
  const char *param;
  const char *message;
};

TEST(CompletionRequest, RejectionsNameTheField) {
  const Rejected cases[] = {
      {R"({"prompt":"a",)", "", "not valid JSON ([json.exception.parse_error.101] parse error at line 1, column 15"},
      {R"({"prompt":"a","prompt":"b"})", "", "request: the body: duplicate field 'prompt'"},
      {R"("text")", "", "must be a JSON object, got string"},
      {R"({})", "prompt", "prompt: is required"},
      {R"({"prompt":{}})", "prompt", "must be a string or an array of token ids, got object"},
      {R"({"prompt":[]})", "prompt", "an empty array of token ids"},
      {R"({"prompt":[1,"a"]})", "prompt", "element 1 must be a token id"},
      {R"({"prompt":["a","b"]})", "prompt", "holds 2 prompts"},
      {R"({"prompt":"a","max_tokens":0})", "max_tokens", "must be at least 1, got 0"},
      {R"({"prompt":"a","max_tokens":-2})", "max_tokens", "must be at least 1, got -2"},
      {R"({"prompt":"a","max_tokens":1.5})", "max_tokens", "must be an integer, got number"},
      {R"({"prompt":"a","temperature":-0.1})", "temperature", "must be at least 0"},
      {R"({"prompt":"a","top_p":0})", "top_p", "must be greater than 0"},
      {R"({"prompt":"a","top_p":1.5})", "top_p", "must be between 0 and 1"},
      {R"({"prompt":"a","top_k":-2})", "top_k", "must be at least -1"},
      {R"({"prompt":"a","stop":3})", "stop", "a string or an array of strings"},
      {R"({"prompt":"a","n":3})", "n", "n other than 1"},
      {R"({"prompt":"a","echo":true})", "echo", "echo is not supported"},
      {R"({"prompt":"a","stream":"yes"})", "stream", "must be a boolean, got string"},
      {R"({"prompt":"a","stream_options":{"include_usage":1}})",
       "stream_options.include_usage", "must be a boolean"},
      {R"({"prompt":"a","model":7})", "model", "must be a string, got integer"},
      {R"({"prompt":"a","frequency_penalty":0.5})", "frequency_penalty", "not supported"},
  };
  for (const Rejected &c : cases) {
    ApiError error;
    EXPECT_FALSE(parseCompletionRequest(c.body, error)) << c.body;
    EXPECT_EQ(error.status, 400) << c.body;
    EXPECT_EQ(error.param, c.param) << c.body;
    EXPECT_NE(error.message.find(c.message), std::string::npos)
        << c.body << " -> " << error.message;
  }
}

TEST(ChatRequest, ContentPartsAndRejections) {
  ApiError error;
  auto r = parseChatRequest(
      R"({"messages":[{"role":"system","content":"be brief"},)"
      R"({"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}],)"
      R"("max_completion_tokens":9,"add_generation_prompt":false})",
      error);
  ASSERT_TRUE(r) << error.message;
  EXPECT_EQ(r->messages[1]["content"], "a\nb");
  EXPECT_EQ(*r->sampling.maxTokens, 9);
  EXPECT_FALSE(r->addGenerationPrompt);

  const Rejected cases[] = {
      {R"({})", "messages", "messages: is required"},
      {R"({"messages":[]})", "messages", "is empty"},
      {R"({"messages":[1]})", "messages[0]", "must be an object, got integer"},
      {R"({"messages":[{"role":"user"}]})", "messages[0].content", "is required"},
      {R"({"messages":[{"role":"user","content":5}]})", "messages[0].content",
       "a string or an array of text parts"},
      {R"({"messages":[{"role":"user","content":[{"type":"image_url"}]}]})",
       "messages[0].content[0]", "only {\"type\": \"text\""},
      // A "type" that is not a string threw from nlohmann's value() and
      // ended the process (HttpBodyFuzzer).
      {R"({"messages":[{"role":"user","content":[{"type":5,"text":"Hi"}]}]})",
       "messages[0].content[0]", "only {\"type\": \"text\""},
      {R"({"messages":[{"role":"user","content":"x"}],"tools":[{}]})", "tools",
       "not supported"},
  };
  for (const Rejected &c : cases) {
    ApiError error;
    EXPECT_FALSE(parseChatRequest(c.body, error)) << c.body;
    EXPECT_EQ(error.param, c.param) << c.body;
    EXPECT_NE(error.message.find(c.message), std::string::npos)
        << c.body << " -> " << error.message;
  }
}

TEST(GenerateRequest, ParametersOrTopLevel) {
  ApiError error;
  auto r = parseGenerateRequest(
      R"({"id":"r1","text_input":"hi","parameters":{"max_tokens":5,"temperature":0,"stop":["x"]}})",
      error);
  ASSERT_TRUE(r) << error.message;
  EXPECT_EQ(r->id, "r1");
  EXPECT_EQ(r->textInput, "hi");
  EXPECT_EQ(*r->sampling.maxTokens, 5);
  EXPECT_EQ(r->sampling.stop, std::vector<std::string>{"x"});
  auto top = parseGenerateRequest(
      R"({"text_input":["hi"],"max_tokens":3,"stop_words":"y","bad_words":""})", error);
  ASSERT_TRUE(top) << error.message;
  EXPECT_EQ(*top->sampling.maxTokens, 3);
  EXPECT_EQ(top->sampling.stop, std::vector<std::string>{"y"});

  EXPECT_FALSE(parseGenerateRequest(R"({"parameters":{}})", error));
  EXPECT_EQ(error.param, "text_input");
  EXPECT_FALSE(parseGenerateRequest(R"({"text_input":"a","parameters":{"max_tokens":-1}})", error));
  EXPECT_EQ(error.param, "parameters.max_tokens");
  EXPECT_EQ(error.message, "parameters.max_tokens: must be at least 1, got -1");
  EXPECT_EQ(v2ErrorBody(error),
            R"({"error":"parameters.max_tokens: must be at least 1, got -1"})");
  EXPECT_FALSE(parseGenerateRequest(R"({"text_input":"a","bad_words":["z"]})", error));
  EXPECT_EQ(error.param, "bad_words");
}

TEST(Responses, OpenAIShapes) {
  Completion c;
  c.id = "cmpl-1";
  c.created = 5;
  c.model = "m";
  c.text = "hello";
  c.finishReason = "length";
  c.promptIds = {1, 2};
  c.tokenIds = {3, 4, 5};
  EXPECT_EQ(completionResponse(c).dump(),
            R"({"id":"cmpl-1","object":"text_completion","created":5,"model":"m",)"
            R"("choices":[{"index":0,"text":"hello","logprobs":null,"finish_reason":"length"}],)"
            R"("usage":{"prompt_tokens":2,"completion_tokens":3,"total_tokens":5}})");
  EXPECT_EQ(chatChunk(c, "he", "", /*first=*/true, {}).dump(),
            R"({"id":"cmpl-1","object":"chat.completion.chunk","created":5,"model":"m",)"
            R"("choices":[{"index":0,"delta":{"role":"assistant","content":"he"},)"
            R"("logprobs":null,"finish_reason":null}]})");
  EXPECT_EQ(chatChunk(c, "", "stop", /*first=*/false, {})["choices"][0]["delta"].dump(),
            "{}");
  EXPECT_EQ(usageChunk(c, false, 3)["usage"]["total_tokens"], 5);
  EXPECT_EQ(openAIFinishReason("eos"), "stop");
  EXPECT_EQ(openAIFinishReason("stop_string"), "stop");
  EXPECT_EQ(openAIFinishReason("max_new_tokens"), "length");
  EXPECT_EQ(openAIFinishReason("context_end"), "length");
  ApiError e = badRequest("max_tokens: bad", "max_tokens");
  EXPECT_EQ(openAIErrorBody(e),
            R"({"error":{"message":"max_tokens: bad","type":"invalid_request_error",)"
            R"("param":"max_tokens","code":null}})");
  EXPECT_EQ(sseEvent("[DONE]"), "data: [DONE]\n\n");
}

} // namespace
