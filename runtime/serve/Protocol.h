//===- Protocol.h - OpenAI and KServe-v2 request/response JSON --*- C++ -*-===//
//
// Part of qeff. The wire formats of `qeff serve`, independent of HTTP and of
// the model: parsing and validating request bodies (every error names the
// offending field, as OpenAI's API does), and building response bodies.
//
//  - OpenAI: /v1/completions, /v1/chat/completions (request fields as in
//    OpenAI's API reference, with vLLM's sampling extensions: top_k, min_p,
//    repetition_penalty, stop_token_ids, min_tokens, ignore_eos, ...; a
//    field that would change the output and is not implemented is refused
//    by name), errors as {"error":{"message","type","param","code"}}.
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
#include <utility>
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

/// Bounds of one request (docs/serving.md, "Limits"): they keep the work
/// and memory a request can ask for proportionate.
/// Sequences (prompts x max(n, best_of)) one request may generate.
constexpr int64_t kMaxSequencesPerRequest = 128;
/// Stop strings per request, and bytes per stop string.
constexpr size_t kMaxStopStrings = 64;
constexpr size_t kMaxStopStringBytes = 256;
/// Stop token ids per request.
constexpr size_t kMaxStopTokenIds = 256;
/// logprobs / top_logprobs at most (OpenAI's and vLLM's limit).
constexpr int64_t kMaxLogprobs = 20;

/// A constraint on the output's form: OpenAI's response_format (or vLLM's
/// guided_json). The grammar of json_object/json_schema is built from it.
struct ResponseFormat {
  enum class Type { Text, JsonObject, JsonSchema };
  Type type = Type::Text;
  /// json_schema.name, .strict and .schema (null when not given; always
  /// an object when given, its keys in the client's order: properties are
  /// generated in that order).
  std::string name;
  bool strict = false;
  nlohmann::ordered_json schema;
  /// The request field it came from ("response_format" or "guided_json"),
  /// for errors.
  std::string param = "response_format";
};

/// Sampling and stopping, as every protocol names them.
struct SamplingParams {
  std::optional<int64_t> maxTokens; ///< unset: the endpoint's default
  double temperature = 1.0;         ///< OpenAI's default; 0 = greedy
  double topP = 1.0;
  int64_t topK = 0; ///< 0 = off (-1 is accepted for it, as vLLM does)
  double minP = 0.0;
  double repetitionPenalty = 1.0;
  double presencePenalty = 0.0, frequencyPenalty = 0.0;
  /// (token id, bias clamped to [-100, 100]), ids not yet checked against
  /// the vocabulary.
  std::vector<std::pair<int64_t, double>> logitBias;
  std::optional<uint64_t> seed; ///< unset: a fresh random seed
  std::vector<std::string> stop;
  std::vector<int64_t> stopTokenIds;
  int64_t minTokens = 0;
  bool includeStopStrInOutput = false;
  bool skipSpecialTokens = true;
  bool ignoreEos = false;
  /// Set: each token's logprob and this many alternatives (0..20).
  std::optional<int64_t> logprobs;
  ResponseFormat responseFormat;
};

/// How the OpenAI routes render logprobs' tokens and ids.
struct OutputOptions {
  bool stream = false;
  bool includeUsage = false;           ///< stream_options.include_usage
  bool returnTokenIds = false;         ///< vLLM's return_token_ids
  bool returnTokensAsTokenIds = false; ///< vLLM's: "token_id:<id>" strings
};

/// One prompt of /v1/completions: text, or token ids.
struct PromptInput {
  std::optional<std::string> text;
  std::optional<std::vector<int64_t>> ids;
};

struct CompletionRequest {
  std::string model; ///< "" when not given
  /// At least one.
  std::vector<PromptInput> prompts;
  SamplingParams sampling;
  OutputOptions output;
  /// Choices per prompt; with bestOf, candidates per prompt (>= n) of which
  /// the n with the highest cumulative logprob are returned.
  int64_t n = 1;
  std::optional<int64_t> bestOf;
  bool echo = false;
  bool addSpecialTokens = true;
};

struct ChatRequest {
  std::string model;
  /// [{"role": ..., "content": "text"}, ...]: content parts joined into
  /// text; keys in the client's order (templates' tojson shows it).
  nlohmann::ordered_json messages;
  bool addGenerationPrompt = true;
  bool addSpecialTokens = false;
  SamplingParams sampling;
  OutputOptions output;
  int64_t n = 1;
  std::optional<int64_t> bestOf;
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
/// or stop token, a stop string or the constraint's end, "length" for
/// max_tokens or the end of the context.
std::string openAIFinishReason(const std::string &finishReason);

/// The envelope of a response: what every choice and chunk shares.
struct Completion {
  std::string id;
  int64_t created = 0; ///< Unix seconds
  std::string model;
  /// "qeff-<version>-<device>": what the output depends on besides the
  /// model and the request.
  std::string systemFingerprint;
  bool returnTokenIds = false;
  /// stream_options.include_usage: every chunk but the usage one carries
  /// "usage": null.
  bool usageInChunks = false;
};

/// One choice, whole or (in a stream chunk) what is new.
struct Choice {
  int64_t index = 0;
  std::string text;
  std::string finishReason; ///< OpenAI's: stop | length; "" while running
  std::vector<int64_t> promptIds, tokenIds;
  /// null, or the rendered logprobs (Logprobs.h).
  nlohmann::ordered_json logprobs;
};

struct Usage {
  int64_t promptTokens = 0, completionTokens = 0;
  /// Prompt tokens taken from the prefix cache: shown as OpenAI's
  /// prompt_tokens_details.cached_tokens when positive (as vLLM with
  /// --enable-prompt-tokens-details).
  int64_t cachedTokens = 0;
};
nlohmann::ordered_json usageJson(const Usage &usage);

/// Whole responses.
nlohmann::ordered_json completionResponse(const Completion &c,
                                          const std::vector<Choice> &choices,
                                          const Usage &usage);
nlohmann::ordered_json chatResponse(const Completion &c,
                                    const std::vector<Choice> &choices,
                                    const Usage &usage);
/// Stream chunks of one choice (its new text, tokens and logprobs; the
/// finish reason on its last), and the usage-only chunk of
/// stream_options.include_usage. `first`: the choice's first chat chunk
/// (it carries the role).
nlohmann::ordered_json completionChunk(const Completion &c, const Choice &delta);
nlohmann::ordered_json chatChunk(const Completion &c, const Choice &delta,
                                 bool first);
nlohmann::ordered_json usageChunk(const Completion &c, bool chat,
                                  const Usage &usage);

/// One server-sent event: "data: <payload>\n\n".
std::string sseEvent(const std::string &payload);

} // namespace qeff::serve

#endif // QEFF_RUNTIME_SERVE_PROTOCOL_H
