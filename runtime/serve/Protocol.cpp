//===- Protocol.cpp - OpenAI and KServe-v2 request parsing ----------------===//
//
// Part of qeff. Request bodies into request structs, every error naming its
// field; the response bodies are built in Responses.cpp.
//
//===----------------------------------------------------------------------===//

#include "runtime/serve/Protocol.h"

#include "frontend/HF/JsonUtil.h"
#include "support/CheckedMath.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iterator>
#include <limits>

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

namespace qeff::serve {

ApiError badRequest(std::string message, std::string param) {
  ApiError e;
  e.status = 400;
  e.message = std::move(message);
  e.param = std::move(param);
  return e;
}

std::string dumpJson(const ojson &j) {
  return j.dump(-1, ' ', false, ojson::error_handler_t::replace);
}

std::string dumpJson(const json &j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string openAIErrorBody(const ApiError &error) {
  ojson inner;
  inner["message"] = error.message;
  inner["type"] = error.type;
  inner["param"] = error.param.empty() ? ojson() : ojson(error.param);
  inner["code"] = error.code.empty() ? ojson() : ojson(error.code);
  ojson body;
  body["error"] = inner;
  return dumpJson(body);
}

std::string v2ErrorBody(const ApiError &error) {
  ojson body;
  body["error"] = error.message;
  return dumpJson(body);
}

namespace {

constexpr double kNoLimit = std::numeric_limits<double>::infinity();

const char *typeName(const json &v) {
  if (v.is_number_integer())
    return "integer";
  if (v.is_number())
    return "number";
  return v.type_name();
}

/// Reads the fields of one JSON object, each check naming the field.
class Fields {
public:
  Fields(const json &object, std::string prefix, ApiError &error)
      : object_(object), prefix_(std::move(prefix)), error_(error) {}

  bool failed() const { return failed_; }
  /// For a nested object's failure (its error already written).
  bool markFailed() {
    failed_ = true;
    return false;
  }
  bool has(const char *key) const {
    auto it = object_.find(key);
    return it != object_.end() && !it->is_null();
  }
  const json *get(const char *key) const {
    auto it = object_.find(key);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }
  std::string name(const char *key) const { return prefix_ + key; }

  bool fail(const char *key, const std::string &message) {
    if (!failed_)
      error_ = badRequest(name(key) + ": " + message, name(key));
    failed_ = true;
    return false;
  }
  bool wrongType(const char *key, const char *want) {
    return fail(key, std::string("must be ") + want + ", got " +
                         typeName(*get(key)));
  }

  bool string(const char *key, std::string &out) {
    const json *v = get(key);
    if (!v)
      return true;
    if (!v->is_string())
      return wrongType(key, "a string");
    out = v->get<std::string>();
    return true;
  }
  bool boolean(const char *key, bool &out) {
    const json *v = get(key);
    if (!v)
      return true;
    if (!v->is_boolean())
      return wrongType(key, "a boolean");
    out = v->get<bool>();
    return true;
  }
  bool number(const char *key, double &out, double min, double max) {
    const json *v = get(key);
    if (!v)
      return true;
    if (!v->is_number())
      return wrongType(key, "a number");
    double d = v->get<double>();
    if (!(d >= min && d <= max))
      return fail(key, (max == kNoLimit ? "must be at least " + fmt(min)
                                        : "must be between " + fmt(min) +
                                              " and " + fmt(max)) +
                           ", got " + dumpJson(*v));
    out = d;
    return true;
  }
  bool integer(const char *key, std::optional<int64_t> &out, int64_t min,
               int64_t max = std::numeric_limits<int64_t>::max()) {
    const json *v = get(key);
    if (!v)
      return true;
    if (!v->is_number_integer())
      return wrongType(key, "an integer");
    if (v->is_number_unsigned() &&
        v->get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
      return fail(key, "is too large: " + dumpJson(*v));
    int64_t i = v->get<int64_t>();
    if (i < min || i > max)
      return fail(key, (max == std::numeric_limits<int64_t>::max()
                            ? "must be at least " + std::to_string(min)
                            : "must be between " + std::to_string(min) + " and " +
                                  std::to_string(max)) +
                           ", got " + std::to_string(i));
    out = i;
    return true;
  }
  /// An array of token ids (non-negative integers), at most `maxCount`.
  bool tokenIds(const char *key, std::vector<int64_t> &out, size_t maxCount) {
    const json *v = get(key);
    if (!v)
      return true;
    if (!v->is_array())
      return wrongType(key, "an array of token ids");
    if (v->size() > maxCount)
      return fail(key, "holds " + std::to_string(v->size()) +
                           " token ids; at most " + std::to_string(maxCount) +
                           " are accepted");
    out.clear();
    for (size_t i = 0; i < v->size(); ++i) {
      const json &id = (*v)[i];
      if (!id.is_number_integer() || (!id.is_number_unsigned() && id.get<int64_t>() < 0) ||
          (id.is_number_unsigned() &&
           id.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())))
        return fail(key, "element " + std::to_string(i) +
                             " must be a token id (a non-negative integer), got " +
                             dumpJson(id));
      out.push_back(id.get<int64_t>());
    }
    return true;
  }
  /// A string or an array of strings.
  bool strings(const char *key, std::vector<std::string> &out) {
    const json *v = get(key);
    if (!v)
      return true;
    if (v->is_string()) {
      out = {v->get<std::string>()};
      return true;
    }
    if (!v->is_array())
      return wrongType(key, "a string or an array of strings");
    out.clear();
    for (size_t i = 0; i < v->size(); ++i) {
      if (!(*v)[i].is_string())
        return fail(key, "element " + std::to_string(i) + " must be a string, got " +
                             typeName((*v)[i]));
      out.push_back((*v)[i].get<std::string>());
    }
    return true;
  }
  /// Refuses a feature qeff does not implement unless it has its neutral
  /// value.
  bool unsupportedUnless(const char *key, const std::function<bool(const json &)> &neutral,
                         const std::string &what) {
    const json *v = get(key);
    if (v && !neutral(*v))
      return fail(key, what + " is not supported by qeff serve");
    return true;
  }

private:
  static std::string fmt(double d) {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%g", d);
    return buffer;
  }

  const json &object_;
  std::string prefix_;
  ApiError &error_;
  bool failed_ = false;
};

bool isZero(const json &v) { return v.is_number() && v.get<double>() == 0; }
bool isOne(const json &v) { return v.is_number() && v.get<double>() == 1; }
bool isFalse(const json &v) { return v.is_boolean() && !v.get<bool>(); }
bool isTrue(const json &v) { return v.is_boolean() && v.get<bool>(); }
bool isEmpty(const json &v) {
  return ((v.is_object() || v.is_array()) && v.empty()) ||
         (v.is_string() && v.get<std::string>().empty());
}
bool never(const json &) { return false; }
bool isNoneOrAuto(const json &v) { return v.is_string() && (v == "none" || v == "auto"); }

/// A field qeff does not implement: refused (400 naming it) unless it has
/// a value that changes nothing. Absent and null are always fine.
struct Unsupported {
  const char *key;
  bool (*neutral)(const json &);
  const char *what;
};

/// vLLM's sampling and request extensions qeff does not implement, for
/// every generating route.
const Unsupported kUnsupportedSampling[] = {
    {"use_beam_search", isFalse, "use_beam_search (beam search)"},
    {"length_penalty", isOne, "length_penalty (beam search)"},
    {"prompt_logprobs", never,
     "prompt_logprobs (the device artifacts return logits for the last "
     "position of the prompt only)"},
    {"truncate_prompt_tokens", never, "truncate_prompt_tokens"},
    {"allowed_token_ids", never, "allowed_token_ids"},
    {"bad_words", isEmpty, "bad_words"},
    {"logprob_token_ids", never, "logprob_token_ids"},
    {"spaces_between_special_tokens", isTrue,
     "spaces_between_special_tokens other than true"},
    {"guided_regex", never, "guided_regex"},
    {"guided_choice", never, "guided_choice"},
    {"guided_grammar", never, "guided_grammar"},
    {"structured_outputs", never, "structured_outputs"},
    {"watermarking", isFalse, "watermarking"},
    {"repetition_detection", never, "repetition_detection"},
    {"thinking_token_budget", [](const json &v) { return v.is_number() && v.get<double>() == -1; },
     "thinking_token_budget"},
    {"vllm_xargs", isEmpty, "vllm_xargs"},
    {"kv_transfer_params", never, "kv_transfer_params"},
    {"prompt_embeds", never, "prompt_embeds"},
    {"priority", isZero, "priority other than 0 (no priority scheduling)"},
};

/// OpenAI chat fields qeff does not implement.
const Unsupported kUnsupportedChat[] = {
    {"tools", isEmpty, "tools (function calling)"},
    {"functions", isEmpty, "functions (function calling)"},
    {"tool_choice", isNoneOrAuto,
     "tool_choice other than \"none\" or \"auto\" (function calling)"},
    {"function_call", isNoneOrAuto, "function_call (function calling)"},
    {"audio", never, "audio output"},
    {"modalities",
     [](const json &v) { return v.is_array() && v.size() == 1 && v[0] == "text"; },
     "modalities other than [\"text\"]"},
    {"prediction", never, "prediction (predicted outputs)"},
    {"reasoning_effort", never, "reasoning_effort"},
    {"verbosity", never, "verbosity"},
    {"web_search_options", never, "web_search_options"},
    {"echo", isFalse, "echo (vLLM's chat echo)"},
    {"continue_final_message", isFalse, "continue_final_message"},
    {"chat_template", never, "chat_template (a template per request)"},
    {"chat_template_kwargs", isEmpty, "chat_template_kwargs"},
    {"documents", never, "documents"},
    {"mm_processor_kwargs", never, "mm_processor_kwargs"},
};

bool refuseUnsupported(Fields &f, const Unsupported *begin, const Unsupported *end) {
  for (const Unsupported *u = begin; u != end; ++u)
    f.unsupportedUnless(u->key, u->neutral, u->what);
  return !f.failed();
}

/// The body as a JSON object. Parsed without exceptions (the tools linked
/// with this library build nlohmann-json without them), refusing duplicate
/// keys and deep nesting.
std::optional<json> parseObject(const std::string &body, ApiError &error) {
  absl::StatusOr<json> root =
      qeff::hf::detail::parseJson(body, "request", "the body", "field");
  if (!root.ok()) {
    error = badRequest(std::string(root.status().message()));
    return std::nullopt;
  }
  if (!root->is_object()) {
    error = badRequest(std::string("request: the body must be a JSON object, got ") +
                       typeName(*root));
    return std::nullopt;
  }
  return std::move(*root);
}

/// Stop strings within the limits (kMaxStopStrings of at most
/// kMaxStopStringBytes each).
bool checkStops(Fields &f, const char *key, const std::vector<std::string> &stops) {
  if (stops.size() > kMaxStopStrings)
    return f.fail(key, "holds " + std::to_string(stops.size()) +
                           " stop strings; at most " +
                           std::to_string(kMaxStopStrings) + " are accepted");
  for (size_t i = 0; i < stops.size(); ++i)
    if (stops[i].size() > kMaxStopStringBytes)
      return f.fail(key, "element " + std::to_string(i) + " is " +
                             std::to_string(stops[i].size()) +
                             " bytes long; stop strings may have at most " +
                             std::to_string(kMaxStopStringBytes));
  return true;
}

/// logit_bias: {"<token id>": bias}, the bias clamped to [-100, 100] as
/// OpenAI and vLLM do.
bool readLogitBias(Fields &f, std::vector<std::pair<int64_t, double>> &out) {
  const json *v = f.get("logit_bias");
  if (!v)
    return true;
  if (!v->is_object())
    return f.wrongType("logit_bias", "an object of token id -> bias");
  out.clear();
  for (auto it = v->begin(); it != v->end(); ++it) {
    const std::string &key = it.key();
    int64_t id = -1;
    auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (key.empty() || ec != std::errc() || end != key.data() + key.size() || id < 0)
      return f.fail("logit_bias", "key '" + key +
                                      "' is not a token id (a non-negative integer)");
    if (!it.value().is_number())
      return f.fail("logit_bias", "the bias of token " + key + " must be a number, got " +
                                      typeName(it.value()));
    double bias = it.value().get<double>();
    if (!std::isfinite(bias))
      return f.fail("logit_bias", "the bias of token " + key + " must be finite");
    out.emplace_back(id, std::clamp(bias, -100.0, 100.0));
  }
  return true;
}

/// The sampling fields every protocol spells the same way (vLLM's
/// SamplingParams names); a field that is absent leaves its value as it was.
bool readCommonSampling(Fields &f, SamplingParams &s) {
  std::optional<int64_t> maxTokens, topK, seed, minTokens;
  f.integer("max_tokens", maxTokens, 1);
  if (maxTokens)
    s.maxTokens = maxTokens;
  f.number("temperature", s.temperature, 0, kNoLimit);
  f.number("top_p", s.topP, 0, 1);
  if (f.has("top_p") && s.topP == 0)
    f.fail("top_p", "must be greater than 0");
  f.integer("top_k", topK, -1);
  if (topK)
    s.topK = *topK < 0 ? 0 : *topK;
  f.number("min_p", s.minP, 0, 1);
  f.number("repetition_penalty", s.repetitionPenalty, 0, kNoLimit);
  if (f.has("repetition_penalty") && s.repetitionPenalty == 0)
    f.fail("repetition_penalty", "must be greater than 0");
  // OpenAI's range.
  f.number("presence_penalty", s.presencePenalty, -2, 2);
  f.number("frequency_penalty", s.frequencyPenalty, -2, 2);
  readLogitBias(f, s.logitBias);
  f.integer("seed", seed, std::numeric_limits<int64_t>::min());
  if (seed)
    s.seed = uint64_t(*seed);
  f.boolean("ignore_eos", s.ignoreEos);
  f.tokenIds("stop_token_ids", s.stopTokenIds, kMaxStopTokenIds);
  f.integer("min_tokens", minTokens, 0);
  if (minTokens)
    s.minTokens = *minTokens;
  f.boolean("include_stop_str_in_output", s.includeStopStrInOutput);
  f.boolean("skip_special_tokens", s.skipSpecialTokens);
  refuseUnsupported(f, std::begin(kUnsupportedSampling), std::end(kUnsupportedSampling));
  return !f.failed();
}

/// response_format (OpenAI) or guided_json (vLLM's extension): parsed
/// into `out`; whether the model can honour it is the route's business.
bool readResponseFormat(Fields &f, ResponseFormat &out, ApiError &error) {
  if (const json *v = f.get("response_format")) {
    if (!v->is_object())
      return f.wrongType("response_format", "an object");
    Fields rf(*v, "response_format.", error);
    std::string type;
    if (!rf.has("type"))
      rf.fail("type", "is required");
    rf.string("type", type);
    if (rf.failed())
      return f.markFailed();
    if (type == "json_object") {
      out.type = ResponseFormat::Type::JsonObject;
    } else if (type == "json_schema") {
      out.type = ResponseFormat::Type::JsonSchema;
      const json *schema = rf.get("json_schema");
      if (!schema)
        rf.fail("json_schema", "is required when type is \"json_schema\"");
      else if (!schema->is_object())
        rf.wrongType("json_schema", "an object");
      if (rf.failed())
        return f.markFailed();
      Fields js(*schema, "response_format.json_schema.", error);
      if (!js.has("name"))
        js.fail("name", "is required");
      js.string("name", out.name);
      // OpenAI's rule for the name.
      if (!js.failed() &&
          (out.name.empty() || out.name.size() > 64 ||
           out.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                      "0123456789_-") != std::string::npos))
        js.fail("name", "must be 1 to 64 letters, digits, '_' or '-'");
      js.boolean("strict", out.strict);
      if (const json *body = js.get("schema")) {
        if (!body->is_object())
          js.wrongType("schema", "an object (a JSON schema)");
        else
          out.schema = *body;
      }
      std::string description;
      js.string("description", description);
      if (js.failed())
        return f.markFailed();
    } else if (type != "text") {
      rf.fail("type", "must be \"text\", \"json_object\" or \"json_schema\", got '" +
                          type + "'");
      return f.markFailed();
    }
  }
  if (const json *v = f.get("guided_json")) {
    if (out.type != ResponseFormat::Type::Text)
      return f.fail("guided_json", "give either response_format or guided_json, not both");
    json schema = *v;
    if (v->is_string())
      schema = json::parse(v->get<std::string>(), nullptr, /*allow_exceptions=*/false);
    if (!schema.is_object())
      return f.fail("guided_json", "must be a JSON schema (an object, or a string "
                                   "holding one)");
    out.type = ResponseFormat::Type::JsonSchema;
    out.name = "guided_json";
    out.schema = std::move(schema);
    out.param = "guided_json";
  }
  return !f.failed();
}

/// The schema of `out` again from the body, with its keys in the client's
/// order (the body was read into maps, which sort them).
void keepSchemaOrder(const std::string &body, ResponseFormat &out) {
  if (out.type != ResponseFormat::Type::JsonSchema || out.schema.is_null())
    return;
  ojson ordered = ojson::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!ordered.is_object())
    return;
  ojson schema;
  if (out.param == "guided_json") {
    schema = ordered["guided_json"];
    if (schema.is_string())
      schema = ojson::parse(schema.get<std::string>(), nullptr, false);
  } else {
    schema = ordered["response_format"]["json_schema"]["schema"];
  }
  if (schema.is_object())
    out.schema = std::move(schema);
}

/// n and best_of; best_of is not streamed (as vLLM refuses it).
bool readChoices(Fields &f, int64_t &n, std::optional<int64_t> &bestOf, bool stream) {
  std::optional<int64_t> count;
  f.integer("n", count, 1, kMaxSequencesPerRequest);
  if (count)
    n = *count;
  f.integer("best_of", bestOf, 1, kMaxSequencesPerRequest);
  if (bestOf && *bestOf < n)
    return f.fail("best_of", "must be at least n (" + std::to_string(n) + "), got " +
                                 std::to_string(*bestOf));
  if (bestOf && *bestOf > 1 && stream)
    return f.fail("best_of", "is not supported with stream (the best candidates "
                             "are known only at the end)");
  return !f.failed();
}

/// The OpenAI fields both routes share: sampling, stop, choices, stream
/// and output options, response_format.
bool readOpenAI(Fields &f, SamplingParams &s, OutputOptions &o, int64_t &n,
                std::optional<int64_t> &bestOf, bool chat, ApiError &error) {
  readCommonSampling(f, s);
  if (chat && !s.maxTokens) {
    std::optional<int64_t> maxTokens;
    f.integer("max_completion_tokens", maxTokens, 1);
    s.maxTokens = maxTokens;
  }
  f.strings("stop", s.stop);
  checkStops(f, "stop", s.stop);
  f.boolean("stream", o.stream);
  if (const json *options = f.get("stream_options")) {
    if (!options->is_object())
      return f.wrongType("stream_options", "an object");
    Fields so(*options, "stream_options.", error);
    so.boolean("include_usage", o.includeUsage);
    so.unsupportedUnless("continuous_usage_stats", isFalse, "continuous_usage_stats");
    if (so.failed())
      return f.markFailed();
  }
  readChoices(f, n, bestOf, o.stream);
  f.boolean("return_token_ids", o.returnTokenIds);
  f.boolean("return_tokens_as_token_ids", o.returnTokensAsTokenIds);
  readResponseFormat(f, s.responseFormat, error);
  return !f.failed();
}

/// The prompt of /v1/completions: a string, token ids, or an array of
/// either (one choice group per prompt).
bool readPrompts(Fields &f, std::vector<PromptInput> &prompts) {
  const json *prompt = f.get("prompt");
  if (!prompt)
    return f.fail("prompt", "is required");
  auto ids = [&](const json &array, const std::string &at) -> bool {
    if (array.empty())
      return f.fail("prompt", at + "is an empty array of token ids");
    std::vector<int64_t> out;
    for (size_t i = 0; i < array.size(); ++i) {
      const json &id = array[i];
      if (!id.is_number_integer() || (!id.is_number_unsigned() && id.get<int64_t>() < 0) ||
          (id.is_number_unsigned() &&
           id.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())))
        return f.fail("prompt", at + "element " + std::to_string(i) +
                                    " must be a token id (a non-negative integer), got " +
                                    dumpJson(id));
      out.push_back(id.get<int64_t>());
    }
    prompts.push_back({std::nullopt, std::move(out)});
    return true;
  };
  if (prompt->is_string()) {
    prompts.push_back({prompt->get<std::string>(), std::nullopt});
    return true;
  }
  if (!prompt->is_array())
    return f.wrongType("prompt", "a string, an array of token ids, or an array of those");
  if (prompt->empty())
    return f.fail("prompt", "is an empty array");
  const json &first = (*prompt)[0];
  if (!first.is_string() && !first.is_array())
    return ids(*prompt, "");
  // Several prompts: all strings or all token-id arrays (as OpenAI).
  if (int64_t(prompt->size()) > kMaxSequencesPerRequest)
    return f.fail("prompt", "holds " + std::to_string(prompt->size()) +
                                " prompts; at most " +
                                std::to_string(kMaxSequencesPerRequest) +
                                " are accepted");
  for (size_t i = 0; i < prompt->size(); ++i) {
    const json &p = (*prompt)[i];
    std::string at = "prompt " + std::to_string(i) + ": ";
    if (first.is_string() && p.is_string())
      prompts.push_back({p.get<std::string>(), std::nullopt});
    else if (first.is_array() && p.is_array()) {
      if (!ids(p, at))
        return false;
    } else
      return f.fail("prompt", at + "must be a " +
                                  (first.is_string() ? "string" : "token-id array") +
                                  " like the first, got " + typeName(p));
  }
  return true;
}

/// Sequences the request asks for, within kMaxSequencesPerRequest.
bool checkSequences(Fields &f, size_t prompts, int64_t n,
                    const std::optional<int64_t> &bestOf) {
  int64_t total = 0;
  int64_t perPrompt = std::max(n, bestOf.value_or(1));
  if (!qeff::support::checkedMul(int64_t(prompts), perPrompt, total) ||
      total > kMaxSequencesPerRequest)
    return f.fail(bestOf && *bestOf > n ? "best_of" : "n",
                  std::to_string(prompts) + " prompts x " + std::to_string(perPrompt) +
                      " sequences each is more than the " +
                      std::to_string(kMaxSequencesPerRequest) +
                      " sequences one request may generate");
  return true;
}

} // namespace

std::optional<CompletionRequest> parseCompletionRequest(const std::string &body,
                                                        ApiError &error) {
  std::optional<json> root = parseObject(body, error);
  if (!root)
    return std::nullopt;
  CompletionRequest r;
  Fields f(*root, "", error);
  f.string("model", r.model);
  readPrompts(f, r.prompts);
  readOpenAI(f, r.sampling, r.output, r.n, r.bestOf, /*chat=*/false, error);
  keepSchemaOrder(body, r.sampling.responseFormat);
  // logprobs: the number of alternatives per token (0..20); false or null:
  // none.
  if (const json *v = f.get("logprobs"); v && !isFalse(*v)) {
    std::optional<int64_t> k;
    if (f.integer("logprobs", k, 0, kMaxLogprobs))
      r.sampling.logprobs = k;
  }
  f.boolean("echo", r.echo);
  if (r.echo && r.sampling.logprobs)
    f.fail("echo", "echo together with logprobs is not supported: it asks for "
                   "the logprobs of the prompt's tokens, and the device artifacts "
                   "return logits for the last position of the prompt only "
                   "(send echo or logprobs, not both)");
  f.boolean("add_special_tokens", r.addSpecialTokens);
  f.unsupportedUnless("suffix", isEmpty, "suffix");
  if (!f.failed())
    checkSequences(f, r.prompts.size(), r.n, r.bestOf);
  if (f.failed())
    return std::nullopt;
  return r;
}

std::optional<ChatRequest> parseChatRequest(const std::string &body,
                                            ApiError &error) {
  std::optional<json> root = parseObject(body, error);
  if (!root)
    return std::nullopt;
  ChatRequest r;
  Fields f(*root, "", error);
  f.string("model", r.model);
  const json *messages = f.get("messages");
  if (!messages)
    f.fail("messages", "is required");
  else if (!messages->is_array())
    f.wrongType("messages", "an array of messages");
  else if (messages->empty())
    f.fail("messages", "is empty: give at least one message");
  else {
    // The same body again, keeping the client's key order.
    ojson ordered = ojson::parse(body, nullptr, /*allow_exceptions=*/false);
    r.messages = ojson::array();
    for (size_t i = 0; i < messages->size() && !f.failed(); ++i) {
      const json &m = (*messages)[i];
      std::string at = "messages[" + std::to_string(i) + "]";
      if (!m.is_object()) {
        error = badRequest(at + ": must be an object, got " + typeName(m), at);
        return std::nullopt;
      }
      ojson message = ordered["messages"][i];
      Fields mf(m, at + ".", error);
      std::string role;
      if (!mf.has("role"))
        mf.fail("role", "is required");
      mf.string("role", role);
      const json *content = mf.get("content");
      if (content && content->is_array()) {
        // Content parts: the text parts, joined by newlines (as vLLM does).
        std::string text;
        for (size_t k = 0; k < content->size(); ++k) {
          const json &part = (*content)[k];
          std::string partAt = at + ".content[" + std::to_string(k) + "]";
          // value("type", "") throws when "type" is not a string (a
          // number took the server down: HttpBodyFuzzer).
          auto type = part.is_object() ? part.find("type") : part.end();
          if (!part.is_object() || type == part.end() || !type->is_string() ||
              type->get<std::string>() != "text" ||
              !part.contains("text") || !part["text"].is_string()) {
            error = badRequest(partAt + ": only {\"type\": \"text\", \"text\": ...} "
                                        "parts are supported",
                               partAt);
            return std::nullopt;
          }
          if (k)
            text += "\n";
          text += part["text"].get<std::string>();
        }
        message["content"] = text;
      } else if (content && !content->is_string()) {
        mf.wrongType("content", "a string or an array of text parts");
      } else if (!content && role != "assistant") {
        mf.fail("content", "is required");
      }
      if (mf.failed())
        return std::nullopt;
      r.messages.push_back(std::move(message));
    }
  }
  readOpenAI(f, r.sampling, r.output, r.n, r.bestOf, /*chat=*/true, error);
  keepSchemaOrder(body, r.sampling.responseFormat);
  // logprobs: true, with top_logprobs alternatives per token (0..20).
  bool logprobs = false;
  std::optional<int64_t> top;
  f.boolean("logprobs", logprobs);
  f.integer("top_logprobs", top, 0, kMaxLogprobs);
  if (top && *top > 0 && !logprobs)
    f.fail("top_logprobs", "needs \"logprobs\": true");
  if (logprobs)
    r.sampling.logprobs = top.value_or(0);
  f.boolean("add_generation_prompt", r.addGenerationPrompt);
  f.boolean("add_special_tokens", r.addSpecialTokens);
  refuseUnsupported(f, std::begin(kUnsupportedChat), std::end(kUnsupportedChat));
  if (!f.failed())
    checkSequences(f, 1, r.n, r.bestOf);
  if (f.failed())
    return std::nullopt;
  return r;
}

std::optional<GenerateRequest> parseGenerateRequest(const std::string &body,
                                                    ApiError &error) {
  std::optional<json> root = parseObject(body, error);
  if (!root)
    return std::nullopt;
  GenerateRequest r;
  Fields f(*root, "", error);
  f.string("id", r.id);
  const json *text = f.get("text_input");
  if (!text)
    f.fail("text_input", "is required");
  else if (text->is_string())
    r.textInput = text->get<std::string>();
  else if (text->is_array() && text->size() == 1 && (*text)[0].is_string())
    r.textInput = (*text)[0].get<std::string>();
  else
    f.wrongType("text_input", "a string");
  if (f.failed())
    return std::nullopt;

  // Sampling from `parameters` (Triton's vLLM backend, which takes vLLM's
  // SamplingParams) and from top-level inputs (TensorRT-LLM's ensemble:
  // max_tokens, stop_words, ...). One text_output: no choices, no logprobs.
  auto readFrom = [&](const json &object, const std::string &prefix) {
    Fields p(object, prefix, error);
    readCommonSampling(p, r.sampling);
    std::vector<std::string> stop;
    p.strings("stop", stop);
    p.strings("stop_words", stop);
    if (!stop.empty())
      r.sampling.stop = stop;
    checkStops(p, p.has("stop_words") ? "stop_words" : "stop", stop);
    bool stream = false;
    p.boolean("stream", stream);
    p.unsupportedUnless("n", isOne, "n other than 1 (one text_output)");
    p.unsupportedUnless("best_of", isOne, "best_of other than 1 (one text_output)");
    p.unsupportedUnless("logprobs", isFalse, "logprobs (no output carries them)");
    p.unsupportedUnless("response_format", never, "response_format");
    p.unsupportedUnless("guided_json", never, "guided_json");
    return !p.failed();
  };
  if (!readFrom(*root, ""))
    return std::nullopt;
  if (const json *params = f.get("parameters")) {
    if (!params->is_object()) {
      f.wrongType("parameters", "an object");
      return std::nullopt;
    }
    if (!readFrom(*params, "parameters."))
      return std::nullopt;
  }
  return r;
}

} // namespace qeff::serve
