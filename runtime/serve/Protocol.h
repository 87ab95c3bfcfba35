//===- Protocol.h - OpenAI and KServe-v2 request/response JSON --*- C++ -*-===//
//
// Part of qeff. The wire formats of `qeff serve`, independent of HTTP and of
// the model: parsing and validating request bodies (every error names the
// offending field, as OpenAI's API does), and building response bodies.
//
//  - OpenAI: /v1/completions, /v1/chat/completions (request fields as in
//    OpenAI's API reference; the vLLM extensions top_k, repetition_penalty,
//    ignore_eos, add_generation_prompt and return_token_ids), errors as
//    {"error":{"message","type","param","code"}}.
//  - Triton/KServe v2 generate extension: text_input, parameters{...} (or
//    the same keys at the top level, as TensorRT-LLM's ensemble takes them),
//    text_output; errors as {"error":"message"}.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_SERVE_PROTOCOL_H
#define QEFF_RUNTIME_SERVE_PROTOCOL_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace qeff::serve {

/// A request that cannot be served, with the HTTP status to send.
struct ApiError {
  int status = 400;
  std::string message;
  /// OpenAI's error type: invalid_request_error, authentication_error,
  /// not_found_error, server_error, ...
  std::string type = "invalid_request_error";
  /// The request field at fault ("" when none).
  std::string param;
  /// A machine-readable code ("" when none).
  std::string code;
};

ApiError badRequest(std::string message, std::string param = "");

/// JSON text that never throws: invalid UTF-8 in a string (an error message
/// quoting a request's path or body, say) becomes U+FFFD. Every body the
/// server sends goes through it: nlohmann's default strict handler throws,
/// which is abort() in a build without exceptions.
std::string dumpJson(const nlohmann::ordered_json &j);
std::string dumpJson(const nlohmann::json &j);

/// The body of an OpenAI error response.
std::string openAIErrorBody(const ApiError &error);
/// The body of a KServe-v2 error response.
std::string v2ErrorBody(const ApiError &error);

/// Sampling and stopping, as every protocol names them.
struct SamplingParams {
  std::optional<int64_t> maxTokens; ///< unset: the endpoint's default
  double temperature = 1.0;         ///< OpenAI's default; 0 = greedy
  double topP = 1.0;
  int64_t topK = 0; ///< 0 = off (-1 is accepted for it, as vLLM does)
  double repetitionPenalty = 1.0;
  std::optional<uint64_t> seed; ///< unset: a fresh random seed
  std::vector<std::string> stop;
  bool ignoreEos = false;
};

struct CompletionRequest {
  std::string model; ///< "" when not given
  /// Exactly one of the two.
  std::optional<std::string> promptText;
  std::optional<std::vector<int64_t>> promptIds;
  SamplingParams sampling;
  bool stream = false;
  bool includeUsage = false; ///< stream_options.include_usage
  bool returnTokenIds = false;
};

struct ChatRequest {
  std::string model;
  /// [{"role": ..., "content": "text"}, ...]: content parts joined into
  /// text; keys in the client's order (templates' tojson shows it).
  nlohmann::ordered_json messages;
  bool addGenerationPrompt = true;
  SamplingParams sampling;
  bool stream = false;
  bool includeUsage = false;
  bool returnTokenIds = false;
};

struct GenerateRequest {
  std::string id; ///< echoed back when given
  std::string textInput;
  SamplingParams sampling;
};

/// Parse + validate. On failure `error` says which field is wrong.
std::optional<CompletionRequest> parseCompletionRequest(const std::string &body,
                                                        ApiError &error);
std::optional<ChatRequest> parseChatRequest(const std::string &body,
                                            ApiError &error);
std::optional<GenerateRequest> parseGenerateRequest(const std::string &body,
                                                    ApiError &error);

/// OpenAI's finish_reason for a generator finish reason: "stop" for an EOS
/// token or a stop string, "length" for max_tokens or the end of the context.
std::string openAIFinishReason(const std::string &finishReason);

/// What a finished request produced, for the response bodies.
struct Completion {
  std::string id;
  int64_t created = 0; ///< Unix seconds
  std::string model;
  std::string text;
  std::string finishReason; ///< OpenAI's: stop | length
  std::vector<int64_t> promptIds, tokenIds;
  bool returnTokenIds = false;
};

nlohmann::ordered_json usageJson(int64_t promptTokens, int64_t completionTokens);

/// Whole responses.
nlohmann::ordered_json completionResponse(const Completion &c);
nlohmann::ordered_json chatResponse(const Completion &c);
/// Stream chunks: a text delta (finishReason "" while running), and the
/// usage-only chunk of stream_options.include_usage.
nlohmann::ordered_json completionChunk(const Completion &c, const std::string &delta,
                                       const std::string &finishReason,
                                       const std::vector<int64_t> &tokenIds);
nlohmann::ordered_json chatChunk(const Completion &c, const std::string &delta,
                                 const std::string &finishReason, bool first,
                                 const std::vector<int64_t> &tokenIds);
nlohmann::ordered_json usageChunk(const Completion &c, bool chat,
                                  int64_t completionTokens);

/// One server-sent event: "data: <payload>\n\n".
std::string sseEvent(const std::string &payload);

} // namespace qeff::serve

#endif // QEFF_RUNTIME_SERVE_PROTOCOL_H
