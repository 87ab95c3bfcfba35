//===- ProtocolTest.cpp - request parsing of qeff serve -------------------===//
//
// Part of qeff. OpenAI and KServe-v2 request bodies: accepted forms and
// defaults, and for each rejected one the status, the named field and the
// message (unimplemented fields refused by name, the limits on stop lists,
// choices and token counts); the response, stream-chunk and logprobs
// shapes; the choices' seeds and best_of ranking.
//
//===----------------------------------------------------------------------===//

#include "runtime/serve/Choices.h"
#include "runtime/serve/Logprobs.h"
#include "runtime/serve/Protocol.h"

#include <gtest/gtest.h>

#include <limits>

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
  ASSERT_EQ(r->prompts.size(), 1u);
  EXPECT_EQ(*r->prompts[0].text, "hi");
  EXPECT_EQ(*r->sampling.maxTokens, 7);
  EXPECT_EQ(r->sampling.temperature, 0);
  EXPECT_EQ(r->sampling.topP, 0.5);
  EXPECT_EQ(r->sampling.topK, 0); // -1 = off, as in vLLM
  EXPECT_EQ(*r->sampling.seed, uint64_t(int64_t(-3)));
  EXPECT_EQ(r->sampling.stop, std::vector<std::string>{"\n"});
  EXPECT_TRUE(r->output.stream);
  EXPECT_TRUE(r->output.includeUsage);
  EXPECT_EQ(r->n, 1);
  EXPECT_FALSE(r->sampling.logprobs);
  // vLLM's defaults of its extensions.
  EXPECT_TRUE(r->sampling.skipSpecialTokens);
  EXPECT_FALSE(r->sampling.includeStopStrInOutput);
  EXPECT_EQ(r->sampling.minTokens, 0);
  EXPECT_EQ(r->sampling.responseFormat.type, ResponseFormat::Type::Text);

  auto ids = parseCompletionRequest(R"({"prompt":[[1,2,3]]})", error);
  ASSERT_TRUE(ids) << error.message;
  EXPECT_EQ(*ids->prompts[0].ids, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_FALSE(ids->sampling.maxTokens);
  EXPECT_EQ(ids->sampling.temperature, 1.0); // OpenAI's default
  auto wrapped = parseCompletionRequest(R"({"prompt":["text"]})", error);
  ASSERT_TRUE(wrapped);
  EXPECT_EQ(*wrapped->prompts[0].text, "text");
  auto flat = parseCompletionRequest(R"({"prompt":[7,8]})", error);
  ASSERT_TRUE(flat) << error.message;
  EXPECT_EQ(*flat->prompts[0].ids, (std::vector<int64_t>{7, 8}));
}

TEST(CompletionRequest, PromptArraysNAndBestOf) {
  ApiError error;
  auto texts = parseCompletionRequest(R"({"prompt":["a","b",""],"n":2})", error);
  ASSERT_TRUE(texts) << error.message;
  ASSERT_EQ(texts->prompts.size(), 3u);
  EXPECT_EQ(*texts->prompts[1].text, "b");
  EXPECT_EQ(*texts->prompts[2].text, "");
  EXPECT_EQ(texts->n, 2);
  auto ids = parseCompletionRequest(R"({"prompt":[[1,2],[3]],"best_of":3,"n":2})", error);
  ASSERT_TRUE(ids) << error.message;
  ASSERT_EQ(ids->prompts.size(), 2u);
  EXPECT_EQ(*ids->prompts[1].ids, std::vector<int64_t>{3});
  EXPECT_EQ(*ids->bestOf, 3);
  // 128 sequences in all is the limit.
  EXPECT_TRUE(parseCompletionRequest(R"({"prompt":["a","b"],"n":64})", error));
}

TEST(CompletionRequest, SamplingExtensions) {
  ApiError error;
  auto r = parseCompletionRequest(
      R"({"prompt":"a","presence_penalty":-2,"frequency_penalty":1.5,)"
      R"("logit_bias":{"5":100,"7":-250,"0":0.5},"min_p":0.05,"min_tokens":3,)"
      R"("stop_token_ids":[2,13],"include_stop_str_in_output":true,)"
      R"("skip_special_tokens":false,"logprobs":5,"echo":true,"seed":9,)"
      R"("return_tokens_as_token_ids":true,"add_special_tokens":false,)"
      R"("user":"u","spaces_between_special_tokens":true,"priority":0,)"
      R"("length_penalty":1.0,"use_beam_search":false,"stream_options":null})",
      error);
  ASSERT_FALSE(r) << "echo with logprobs must be refused";
  EXPECT_EQ(error.param, "echo");
  EXPECT_NE(error.message.find("echo together with logprobs"), std::string::npos);
  r = parseCompletionRequest(
      R"({"prompt":"a","presence_penalty":-2,"frequency_penalty":1.5,)"
      R"("logit_bias":{"5":100,"7":-250,"0":0.5},"min_p":0.05,"min_tokens":3,)"
      R"("stop_token_ids":[2,13],"include_stop_str_in_output":true,)"
      R"("skip_special_tokens":false,"logprobs":5,"seed":9,)"
      R"("return_tokens_as_token_ids":true,"add_special_tokens":false,)"
      R"("user":"u","spaces_between_special_tokens":true,"priority":0,)"
      R"("length_penalty":1.0,"use_beam_search":false,"stream_options":null})",
      error);
  ASSERT_TRUE(r) << error.message;
  const SamplingParams &s = r->sampling;
  EXPECT_EQ(s.presencePenalty, -2);
  EXPECT_EQ(s.frequencyPenalty, 1.5);
  // Clamped to [-100, 100] as OpenAI.
  EXPECT_EQ(s.logitBias, (std::vector<std::pair<int64_t, double>>{
                             {0, 0.5}, {5, 100}, {7, -100}}));
  EXPECT_EQ(s.minP, 0.05);
  EXPECT_EQ(s.minTokens, 3);
  EXPECT_EQ(s.stopTokenIds, (std::vector<int64_t>{2, 13}));
  EXPECT_TRUE(s.includeStopStrInOutput);
  EXPECT_FALSE(s.skipSpecialTokens);
  EXPECT_EQ(*s.logprobs, 5);
  EXPECT_TRUE(r->output.returnTokensAsTokenIds);
  EXPECT_FALSE(r->addSpecialTokens);
  auto echo = parseCompletionRequest(R"({"prompt":"a","echo":true,"logprobs":false})", error);
  ASSERT_TRUE(echo) << error.message;
  EXPECT_TRUE(echo->echo);
  EXPECT_FALSE(echo->sampling.logprobs);
}

TEST(CompletionRequest, ResponseFormatIsParsedIntoTheRequest) {
  ApiError error;
  auto schema = parseCompletionRequest(
      R"({"prompt":"a","response_format":{"type":"json_schema","json_schema":)"
      R"({"name":"person","strict":true,"schema":{"type":"object","properties":)"
      R"({"age":{"type":"integer"}},"required":["age"]}}}})",
      error);
  ASSERT_TRUE(schema) << error.message;
  const ResponseFormat &f = schema->sampling.responseFormat;
  EXPECT_EQ(f.type, ResponseFormat::Type::JsonSchema);
  EXPECT_EQ(f.name, "person");
  EXPECT_TRUE(f.strict);
  EXPECT_EQ(f.schema["required"][0], "age");
  EXPECT_EQ(f.param, "response_format");
  auto object = parseChatRequest(
      R"({"messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_object"}})",
      error);
  ASSERT_TRUE(object) << error.message;
  EXPECT_EQ(object->sampling.responseFormat.type, ResponseFormat::Type::JsonObject);
  auto text = parseChatRequest(
      R"({"messages":[{"role":"user","content":"x"}],"response_format":{"type":"text"}})",
      error);
  ASSERT_TRUE(text) << error.message;
  EXPECT_EQ(text->sampling.responseFormat.type, ResponseFormat::Type::Text);
  // vLLM's guided_json: an object or a string holding one.
  auto guided = parseCompletionRequest(
      R"({"prompt":"a","guided_json":"{\"type\":\"object\"}"})", error);
  ASSERT_TRUE(guided) << error.message;
  EXPECT_EQ(guided->sampling.responseFormat.type, ResponseFormat::Type::JsonSchema);
  EXPECT_EQ(guided->sampling.responseFormat.schema["type"], "object");
  EXPECT_EQ(guided->sampling.responseFormat.param, "guided_json");
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
      {R"({"prompt":{}})", "prompt",
       "must be a string, an array of token ids, or an array of those, got object"},
      {R"({"prompt":[]})", "prompt", "prompt: is an empty array"},
      {R"({"prompt":[1,"a"]})", "prompt", "element 1 must be a token id"},
      {R"({"prompt":["a",[1]]})", "prompt", "prompt 1: must be a string like the first"},
      {R"({"prompt":[[1],"a"]})", "prompt", "prompt 1: must be a token-id array"},
      {R"({"prompt":[[1],[]]})", "prompt", "prompt 1: is an empty array of token ids"},
      {R"({"prompt":[[1],[-4]]})", "prompt", "prompt 1: element 0 must be a token id"},
      {R"({"prompt":"a","max_tokens":0})", "max_tokens", "must be at least 1, got 0"},
      {R"({"prompt":"a","max_tokens":-2})", "max_tokens", "must be at least 1, got -2"},
      {R"({"prompt":"a","max_tokens":1.5})", "max_tokens", "must be an integer, got number"},
      {R"({"prompt":"a","temperature":-0.1})", "temperature", "must be at least 0"},
      {R"({"prompt":"a","top_p":0})", "top_p", "must be greater than 0"},
      {R"({"prompt":"a","top_p":1.5})", "top_p", "must be between 0 and 1"},
      {R"({"prompt":"a","top_k":-2})", "top_k", "must be at least -1"},
      {R"({"prompt":"a","stop":3})", "stop", "a string or an array of strings"},
      {R"({"prompt":"a","n":0})", "n", "must be between 1 and 128, got 0"},
      {R"({"prompt":"a","n":129})", "n", "must be between 1 and 128, got 129"},
      {R"({"prompt":["a","b"],"n":65})", "n",
       "2 prompts x 65 sequences each is more than the 128 sequences"},
      {R"({"prompt":"a","n":3,"best_of":2})", "best_of", "must be at least n (3), got 2"},
      {R"({"prompt":"a","best_of":2,"stream":true})", "best_of",
       "is not supported with stream"},
      {R"({"prompt":["a","b","c"],"best_of":50})", "best_of", "3 prompts x 50"},
      {R"({"prompt":"a","logprobs":21})", "logprobs", "must be between 0 and 20, got 21"},
      {R"({"prompt":"a","logprobs":-1})", "logprobs", "must be between 0 and 20"},
      {R"({"prompt":"a","logprobs":2,"echo":true})", "echo",
       "echo together with logprobs is not supported"},
      {R"({"prompt":"a","presence_penalty":2.5})", "presence_penalty",
       "must be between -2 and 2"},
      {R"({"prompt":"a","frequency_penalty":-3})", "frequency_penalty",
       "must be between -2 and 2"},
      {R"({"prompt":"a","logit_bias":[1]})", "logit_bias", "must be an object"},
      {R"({"prompt":"a","logit_bias":{"x":1}})", "logit_bias", "key 'x' is not a token id"},
      {R"({"prompt":"a","logit_bias":{"-3":1}})", "logit_bias", "key '-3' is not a token id"},
      {R"({"prompt":"a","logit_bias":{"99999999999999999999":1}})", "logit_bias",
       "is not a token id"},
      {R"({"prompt":"a","logit_bias":{"3":"up"}})", "logit_bias",
       "the bias of token 3 must be a number, got string"},
      {R"({"prompt":"a","min_p":1.5})", "min_p", "must be between 0 and 1"},
      {R"({"prompt":"a","min_tokens":-1})", "min_tokens", "must be at least 0"},
      {R"({"prompt":"a","stop_token_ids":[1,-2]})", "stop_token_ids",
       "element 1 must be a token id"},
      {R"({"prompt":"a","stop_token_ids":5})", "stop_token_ids", "an array of token ids"},
      {R"({"prompt":"a","include_stop_str_in_output":1})", "include_stop_str_in_output",
       "must be a boolean"},
      {R"({"prompt":"a","skip_special_tokens":"no"})", "skip_special_tokens",
       "must be a boolean"},
      {R"({"prompt":"a","seed":18446744073709551615})", "seed", "is too large"},
      {R"({"prompt":"a","max_tokens":18446744073709551615})", "max_tokens", "is too large"},
      {R"({"prompt":"a","response_format":{"type":"yaml"}})", "response_format.type",
       "must be \"text\", \"json_object\" or \"json_schema\", got 'yaml'"},
      {R"({"prompt":"a","response_format":{}})", "response_format.type", "is required"},
      {R"({"prompt":"a","response_format":"json"})", "response_format", "must be an object"},
      {R"({"prompt":"a","response_format":{"type":"json_schema"}})",
       "response_format.json_schema", "is required when type is \"json_schema\""},
      {R"({"prompt":"a","response_format":{"type":"json_schema","json_schema":{"schema":{}}}})",
       "response_format.json_schema.name", "is required"},
      {R"({"prompt":"a","response_format":{"type":"json_schema","json_schema":{"name":"a b"}}})",
       "response_format.json_schema.name", "1 to 64 letters"},
      {R"({"prompt":"a","response_format":{"type":"json_schema","json_schema":{"name":"a","schema":3}}})",
       "response_format.json_schema.schema", "must be an object (a JSON schema)"},
      {R"({"prompt":"a","guided_json":"{oops"})", "guided_json", "must be a JSON schema"},
      {R"({"prompt":"a","guided_json":{},"response_format":{"type":"json_object"}})",
       "guided_json", "not both"},
      {R"({"prompt":"a","stream":true,"stream_options":{"continuous_usage_stats":true}})",
       "stream_options.continuous_usage_stats", "not supported"},
      {R"({"prompt":"a","stream":"yes"})", "stream", "must be a boolean, got string"},
      {R"({"prompt":"a","stream_options":{"include_usage":1}})",
       "stream_options.include_usage", "must be a boolean"},
      {R"({"prompt":"a","model":7})", "model", "must be a string, got integer"},
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

/// A body with `count` stop strings of `bytes` bytes each.
std::string stops(size_t count, size_t bytes) {
  std::string body = R"({"prompt":"a","stop":[)";
  for (size_t i = 0; i < count; ++i)
    body += (i ? "," : "") + std::string("\"") + std::string(bytes, 'x') + "\"";
  return body + "]}";
}

TEST(Limits, StopListCountAndSize) {
  ApiError error;
  EXPECT_TRUE(parseCompletionRequest(stops(kMaxStopStrings, kMaxStopStringBytes), error))
      << error.message;
  EXPECT_FALSE(parseCompletionRequest(stops(kMaxStopStrings + 1, 1), error));
  EXPECT_EQ(error.param, "stop");
  EXPECT_EQ(error.message, "stop: holds 65 stop strings; at most 64 are accepted");
  EXPECT_FALSE(parseCompletionRequest(stops(2, kMaxStopStringBytes + 1), error));
  EXPECT_EQ(error.param, "stop");
  EXPECT_EQ(error.message,
            "stop: element 0 is 257 bytes long; stop strings may have at most 256");
  // The same limits on the v2 route, under either name.
  std::string v2 = stops(kMaxStopStrings + 1, 1);
  v2.replace(0, std::string(R"({"prompt":"a",)").size(), R"({"text_input":"a","parameters":{)");
  EXPECT_FALSE(parseGenerateRequest(v2 + "}", error));
  EXPECT_EQ(error.param, "parameters.stop");
  EXPECT_FALSE(parseGenerateRequest(
      R"({"text_input":"a","stop_words":[")" + std::string(300, 'y') + R"("]})", error));
  EXPECT_EQ(error.param, "stop_words");
  std::string ids = R"({"prompt":"a","stop_token_ids":[)";
  for (size_t i = 0; i <= kMaxStopTokenIds; ++i)
    ids += (i ? ",1" : "1");
  EXPECT_FALSE(parseCompletionRequest(ids + "]}", error));
  EXPECT_EQ(error.param, "stop_token_ids");
  EXPECT_NE(error.message.find("at most 256"), std::string::npos) << error.message;
}

TEST(Limits, UnimplementedFieldsAreRefusedByName) {
  // Each changes the output and is not implemented: 400 naming it.
  const char *completion[] = {
      R"("suffix":"x")", R"("use_beam_search":true)", R"("length_penalty":0.5)",
      R"("prompt_logprobs":0)", R"("truncate_prompt_tokens":4)",
      R"("allowed_token_ids":[1])", R"("bad_words":["x"])", R"("logprob_token_ids":[1])",
      R"("spaces_between_special_tokens":false)", R"("guided_regex":"a+")",
      R"("guided_choice":["a"])", R"("guided_grammar":"g")", R"("structured_outputs":{})",
      R"("watermarking":true)", R"("repetition_detection":{})",
      R"("thinking_token_budget":10)", R"("vllm_xargs":{"a":1})",
      R"("kv_transfer_params":{})", R"("prompt_embeds":"AAAA")", R"("priority":1)"};
  for (const char *field : completion) {
    std::string body = std::string(R"({"prompt":"a",)") + field + "}";
    std::string key = std::string(field).substr(1, std::string(field).find('"', 1) - 1);
    ApiError error;
    EXPECT_FALSE(parseCompletionRequest(body, error)) << body;
    EXPECT_EQ(error.param, key) << body;
    EXPECT_NE(error.message.find("not supported"), std::string::npos) << error.message;
    // The chat route refuses them too.
    body = std::string(R"({"messages":[{"role":"user","content":"x"}],)") + field + "}";
    if (key != "suffix") {
      EXPECT_FALSE(parseChatRequest(body, error)) << body;
      EXPECT_EQ(error.param, key) << body;
    }
  }
  const char *chat[] = {
      R"("tools":[{"type":"function"}])", R"("functions":[{}])",
      R"("tool_choice":"required")", R"("tool_choice":{"type":"function"})",
      R"("function_call":{"name":"f"})", R"("audio":{"voice":"x"})",
      R"("modalities":["text","audio"])", R"("prediction":{"type":"content"})",
      R"("reasoning_effort":"low")", R"("verbosity":"low")",
      R"("web_search_options":{})", R"("echo":true)", R"("continue_final_message":true)",
      R"("chat_template":"{{x}}")", R"("chat_template_kwargs":{"a":1})",
      R"("documents":[])", R"("mm_processor_kwargs":{})"};
  for (const char *field : chat) {
    std::string body =
        std::string(R"({"messages":[{"role":"user","content":"x"}],)") + field + "}";
    std::string key = std::string(field).substr(1, std::string(field).find('"', 1) - 1);
    ApiError error;
    EXPECT_FALSE(parseChatRequest(body, error)) << body;
    EXPECT_EQ(error.param, key) << body;
    EXPECT_NE(error.message.find("not supported"), std::string::npos) << error.message;
  }
  // Harmless fields, and the neutral values of the others, are accepted.
  ApiError error;
  EXPECT_TRUE(parseChatRequest(
      R"({"messages":[{"role":"user","content":"x"}],"user":"u","store":false,)"
      R"("metadata":{"k":"v"},"service_tier":"auto","parallel_tool_calls":true,)"
      R"("tool_choice":"none","tools":[],"modalities":["text"],"echo":false,)"
      R"("spaces_between_special_tokens":true,"priority":0,"thinking_token_budget":-1,)"
      R"("bad_words":[],"n":1,"logprobs":false,"top_logprobs":0})",
      error))
      << error.message;
}

TEST(ChatRequest, LogprobsNAndBestOf) {
  ApiError error;
  auto r = parseChatRequest(
      R"({"messages":[{"role":"user","content":"x"}],"logprobs":true,"top_logprobs":5,)"
      R"("n":3,"seed":1})",
      error);
  ASSERT_TRUE(r) << error.message;
  EXPECT_EQ(*r->sampling.logprobs, 5);
  EXPECT_EQ(r->n, 3);
  auto plain = parseChatRequest(
      R"({"messages":[{"role":"user","content":"x"}],"logprobs":true})", error);
  ASSERT_TRUE(plain) << error.message;
  EXPECT_EQ(*plain->sampling.logprobs, 0);
  const Rejected cases[] = {
      {R"({"messages":[{"role":"user","content":"x"}],"top_logprobs":3})", "top_logprobs",
       "needs \"logprobs\": true"},
      {R"({"messages":[{"role":"user","content":"x"}],"logprobs":true,"top_logprobs":21})",
       "top_logprobs", "must be between 0 and 20, got 21"},
      {R"({"messages":[{"role":"user","content":"x"}],"logprobs":3})", "logprobs",
       "must be a boolean"},
      {R"({"messages":[{"role":"user","content":"x"}],"n":200})", "n",
       "must be between 1 and 128"},
      {R"({"messages":[{"role":"user","content":"x"}],"best_of":2,"stream":true})",
       "best_of", "not supported with stream"},
  };
  for (const Rejected &c : cases) {
    EXPECT_FALSE(parseChatRequest(c.body, error)) << c.body;
    EXPECT_EQ(error.param, c.param) << c.body;
    EXPECT_NE(error.message.find(c.message), std::string::npos)
        << c.body << " -> " << error.message;
  }
}

TEST(GenerateRequest, SamplingExtensionsOrRefusals) {
  ApiError error;
  auto r = parseGenerateRequest(
      R"({"text_input":"a","parameters":{"stop_token_ids":[5],"min_tokens":2,)"
      R"("min_p":0.1,"presence_penalty":0.5,"frequency_penalty":0.25,)"
      R"("include_stop_str_in_output":true,"skip_special_tokens":false,)"
      R"("logit_bias":{"3":2.5},"n":1}})",
      error);
  ASSERT_TRUE(r) << error.message;
  EXPECT_EQ(r->sampling.stopTokenIds, std::vector<int64_t>{5});
  EXPECT_EQ(r->sampling.minTokens, 2);
  EXPECT_EQ(r->sampling.minP, 0.1);
  EXPECT_EQ(r->sampling.presencePenalty, 0.5);
  EXPECT_EQ(r->sampling.frequencyPenalty, 0.25);
  EXPECT_TRUE(r->sampling.includeStopStrInOutput);
  EXPECT_FALSE(r->sampling.skipSpecialTokens);
  EXPECT_EQ(r->sampling.logitBias, (std::vector<std::pair<int64_t, double>>{{3, 2.5}}));
  for (const char *field : {R"("n":2)", R"("best_of":3)", R"("logprobs":1)",
                            R"("response_format":{"type":"json_object"})",
                            R"("guided_json":{})", R"("use_beam_search":true)",
                            R"("prompt_logprobs":1)"}) {
    std::string body = std::string(R"({"text_input":"a","parameters":{)") + field + "}}";
    std::string key = std::string(field).substr(1, std::string(field).find('"', 1) - 1);
    EXPECT_FALSE(parseGenerateRequest(body, error)) << body;
    EXPECT_EQ(error.param, "parameters." + key) << body;
  }
}

TEST(Responses, OpenAIShapes) {
  Completion c;
  c.id = "cmpl-1";
  c.created = 5;
  c.model = "m";
  c.systemFingerprint = "qeff-1.0-host";
  Choice choice;
  choice.text = "hello";
  choice.finishReason = "length";
  choice.promptIds = {1, 2};
  choice.tokenIds = {3, 4, 5};
  Usage usage{2, 3};
  EXPECT_EQ(completionResponse(c, {choice}, usage).dump(),
            R"({"id":"cmpl-1","object":"text_completion","created":5,"model":"m",)"
            R"("system_fingerprint":"qeff-1.0-host",)"
            R"("choices":[{"index":0,"text":"hello","logprobs":null,"finish_reason":"length"}],)"
            R"("usage":{"prompt_tokens":2,"completion_tokens":3,"total_tokens":5}})");
  // Cached prompt tokens: OpenAI's prompt_tokens_details, only when some.
  EXPECT_EQ(usageJson(Usage{9, 3, 8}).dump(),
            R"({"prompt_tokens":9,"completion_tokens":3,"total_tokens":12,)"
            R"("prompt_tokens_details":{"cached_tokens":8}})");
  EXPECT_FALSE(usageJson(Usage{9, 3, 0}).contains("prompt_tokens_details"));
  // Chat messages carry refusal: null.
  EXPECT_EQ(chatResponse(c, {choice}, usage)["choices"][0]["message"].dump(),
            R"({"role":"assistant","content":"hello","refusal":null})");
  Choice second = choice;
  second.index = 1;
  EXPECT_EQ(chatResponse(c, {choice, second}, usage)["choices"][1]["index"], 1);
  Choice delta;
  delta.text = "he";
  EXPECT_EQ(chatChunk(c, delta, /*first=*/true).dump(),
            R"({"id":"cmpl-1","object":"chat.completion.chunk","created":5,"model":"m",)"
            R"("system_fingerprint":"qeff-1.0-host",)"
            R"("choices":[{"index":0,"delta":{"role":"assistant","content":"he"},)"
            R"("logprobs":null,"finish_reason":null}]})");
  delta.text = "";
  delta.finishReason = "stop";
  EXPECT_EQ(chatChunk(c, delta, /*first=*/false)["choices"][0]["delta"].dump(), "{}");
  // With include_usage every chunk but the last says "usage": null.
  c.usageInChunks = true;
  EXPECT_TRUE(completionChunk(c, delta)["usage"].is_null());
  EXPECT_TRUE(completionChunk(c, delta).contains("usage"));
  EXPECT_TRUE(chatChunk(c, delta, false).contains("usage"));
  EXPECT_EQ(usageChunk(c, false, usage)["usage"]["total_tokens"], 5);
  c.usageInChunks = false;
  EXPECT_FALSE(completionChunk(c, delta).contains("usage"));
  c.returnTokenIds = true;
  EXPECT_EQ(completionResponse(c, {choice}, usage)["choices"][0]["prompt_token_ids"].dump(),
            "[1,2]");
  EXPECT_EQ(openAIFinishReason("eos"), "stop");
  EXPECT_EQ(openAIFinishReason("stop_token"), "stop");
  EXPECT_EQ(openAIFinishReason("stop_string"), "stop");
  EXPECT_EQ(openAIFinishReason("constraint_end"), "stop");
  EXPECT_EQ(openAIFinishReason("max_new_tokens"), "length");
  EXPECT_EQ(openAIFinishReason("context_end"), "length");
  ApiError e = badRequest("max_tokens: bad", "max_tokens");
  EXPECT_EQ(openAIErrorBody(e),
            R"({"error":{"message":"max_tokens: bad","type":"invalid_request_error",)"
            R"("param":"max_tokens","code":null}})");
  EXPECT_EQ(sseEvent("[DONE]"), "data: [DONE]\n\n");
}

TEST(Responses, LogprobsShapes) {
  using qeff::runtime::TokenLogprobs;
  TokenNames ids(nullptr, false);
  EXPECT_EQ(ids(7), "token_id:7");
  std::vector<TokenLogprobs> tokens(2);
  tokens[0].token = 7;
  tokens[0].logprob = -0.5;
  tokens[0].top = {{7, -0.5}, {3, -1.25}};
  tokens[1].token = 12;
  tokens[1].logprob = -std::numeric_limits<double>::infinity();
  tokens[1].top = {{4, -0.1}};
  int64_t offset = 3;
  EXPECT_EQ(completionLogprobs(tokens, ids, offset).dump(),
            R"({"tokens":["token_id:7","token_id:12"],"token_logprobs":[-0.5,-9999.0],)"
            R"("top_logprobs":[{"token_id:7":-0.5,"token_id:3":-1.25},)"
            R"({"token_id:12":-9999.0,"token_id:4":-0.1}],"text_offset":[3,13]})");
  EXPECT_EQ(offset, 3 + 10 + 11);
  EXPECT_EQ(chatLogprobs({tokens[0]}, ids).dump(),
            R"({"content":[{"token":"token_id:7","logprob":-0.5,)"
            R"("bytes":[116,111,107,101,110,95,105,100,58,55],"top_logprobs":[)"
            R"({"token":"token_id:7","logprob":-0.5,"bytes":[116,111,107,101,110,95,105,100,58,55]},)"
            R"({"token":"token_id:3","logprob":-1.25,"bytes":[116,111,107,101,110,95,105,100,58,51]}]}]})");
  EXPECT_EQ(textLength("a\xC3\xA9\xE2\x96\x81"), 3);
}

TEST(Choices, SeedsBestOfAndConstraints) {
  std::vector<GenerationJob::Sequence> seqs;
  qeff::runtime::GenerationOptions options;
  options.seed = 41;
  addSequences(seqs, {1, 2}, options, 3);
  ASSERT_EQ(seqs.size(), 3u);
  EXPECT_EQ(seqs[0].options.seed, 41u);
  EXPECT_EQ(seqs[2].options.seed, 43u);
  EXPECT_EQ(seqs[2].prompt, (std::vector<int64_t>{1, 2}));
  options.seed = ~uint64_t(0); // wraps
  addSequences(seqs, {1}, options, 2);
  EXPECT_EQ(seqs[4].options.seed, 0u);

  std::vector<GenerationJob::Part> parts(5);
  auto lp = [](double v) {
    qeff::runtime::TokenLogprobs t;
    t.logprob = v;
    return t;
  };
  parts[1].logprobs = {lp(-1.0), lp(-2.0)};  // -3
  parts[2].logprobs = {lp(-0.5)};            // -0.5
  parts[3].logprobs = {lp(-0.25), lp(-2.75)}; // -3 (tie with 1: the earlier)
  parts[4].logprobs = {lp(-0.1)};
  EXPECT_DOUBLE_EQ(cumulativeLogprob(parts[1]), -3.0);
  EXPECT_EQ(bestCandidates(parts, 1, 3, 2), (std::vector<size_t>{2, 1}));
  EXPECT_EQ(bestCandidates(parts, 1, 3, 3), (std::vector<size_t>{2, 1, 3}));

  ApiError error;
  ResponseFormat text;
  auto none = makeConstraint(text, nullptr, "", error);
  ASSERT_TRUE(none);
  EXPECT_EQ(*none, nullptr);

  // A model without a usable vocabulary: JSON output refused, saying why.
  ResponseFormat json;
  json.type = ResponseFormat::Type::JsonObject;
  EXPECT_FALSE(makeConstraint(json, nullptr, "it has no tokenizer", error));
  EXPECT_EQ(error.param, "response_format");
  EXPECT_NE(error.message.find("not available for this model: it has no tokenizer"),
            std::string::npos)
      << error.message;

  // A vocabulary of one token per printable ASCII character.
  std::vector<std::optional<std::string>> bytes;
  for (char c = ' '; c <= '~'; ++c)
    bytes.push_back(std::string(1, c));
  std::string why;
  auto vocabulary = qeff::structured::Vocabulary::fromBytes(bytes, {}, false, why);
  ASSERT_TRUE(vocabulary) << why;
  auto object = makeConstraint(json, vocabulary, "", error);
  ASSERT_TRUE(object);
  ASSERT_NE(*object, nullptr);
  EXPECT_EQ((*object)->describe(), "JSON object");

  ResponseFormat schema;
  schema.type = ResponseFormat::Type::JsonSchema;
  schema.schema = nlohmann::ordered_json::parse(R"({"type": "string", "pattern": "a"})");
  EXPECT_FALSE(makeConstraint(schema, vocabulary, "", error));
  EXPECT_EQ(error.param, "response_format");
  EXPECT_EQ(error.message.rfind("response_format.json_schema.schema.pattern: ", 0), 0u)
      << error.message;
  schema.param = "guided_json";
  EXPECT_FALSE(makeConstraint(schema, vocabulary, "", error));
  EXPECT_EQ(error.param, "guided_json");
  EXPECT_EQ(error.message.rfind("guided_json.pattern: ", 0), 0u) << error.message;
  schema.schema = nlohmann::ordered_json::parse(R"({"type": "integer", "maximum": 9})");
  auto digits = makeConstraint(schema, vocabulary, "", error);
  ASSERT_TRUE(digits && *digits) << error.message;
  EXPECT_EQ((*digits)->describe(), "JSON schema");
}

} // namespace
