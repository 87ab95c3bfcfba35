//===- Protocol.cpp - OpenAI and KServe-v2 request/response JSON ----------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "runtime/serve/Protocol.h"

#include "frontend/HF/JsonUtil.h"

#include <cstdio>
#include <functional>
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
  bool integer(const char *key, std::optional<int64_t> &out, int64_t min) {
    const json *v = get(key);
    if (!v)
      return true;
    if (!v->is_number_integer())
      return wrongType(key, "an integer");
    if (v->is_number_unsigned() &&
        v->get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
      return fail(key, "is too large: " + dumpJson(*v));
    int64_t i = v->get<int64_t>();
    if (i < min)
      return fail(key, "must be at least " + std::to_string(min) + ", got " +
                           std::to_string(i));
    out = i;
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
bool isFalse(const json &v) { return v.is_boolean() && !v.get<bool>(); }
bool isOne(const json &v) { return v.is_number_integer() && v.get<int64_t>() == 1; }
bool isEmpty(const json &v) { return (v.is_object() || v.is_array()) && v.empty(); }

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

/// The sampling fields every protocol spells the same way; a field that is
/// absent leaves its value as it was.
bool readCommonSampling(Fields &f, SamplingParams &s) {
  std::optional<int64_t> maxTokens, topK, seed;
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
  f.number("repetition_penalty", s.repetitionPenalty, 0, kNoLimit);
  if (f.has("repetition_penalty") && s.repetitionPenalty == 0)
    f.fail("repetition_penalty", "must be greater than 0");
  f.integer("seed", seed, std::numeric_limits<int64_t>::min());
  if (seed)
    s.seed = uint64_t(*seed);
  f.boolean("ignore_eos", s.ignoreEos);
  return !f.failed();
}

/// OpenAI's sampling fields: the common ones, stop, and refusals of what
/// qeff does not implement.
bool readSampling(Fields &f, SamplingParams &s, bool chat) {
  readCommonSampling(f, s);
  if (chat && !s.maxTokens) {
    std::optional<int64_t> maxTokens;
    f.integer("max_completion_tokens", maxTokens, 1);
    s.maxTokens = maxTokens;
  }
  f.strings("stop", s.stop);
  f.unsupportedUnless("n", isOne, "n other than 1 (one choice per request)");
  f.unsupportedUnless("best_of", isOne, "best_of other than 1");
  f.unsupportedUnless("presence_penalty", isZero, "presence_penalty");
  f.unsupportedUnless("frequency_penalty", isZero, "frequency_penalty");
  f.unsupportedUnless("logit_bias", isEmpty, "logit_bias");
  f.unsupportedUnless("logprobs",
                      [](const json &v) { return isFalse(v) || isZero(v); },
                      "logprobs");
  return !f.failed();
}

bool readStream(Fields &f, bool &stream, bool &includeUsage, ApiError &error) {
  f.boolean("stream", stream);
  if (const json *o = f.get("stream_options")) {
    if (!o->is_object())
      return f.wrongType("stream_options", "an object");
    Fields options(*o, "stream_options.", error);
    options.boolean("include_usage", includeUsage);
    if (options.failed())
      return f.markFailed();
  }
  return !f.failed();
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
  const json *prompt = f.get("prompt");
  if (!prompt) {
    f.fail("prompt", "is required");
  } else if (prompt->is_string()) {
    r.promptText = prompt->get<std::string>();
  } else if (prompt->is_array()) {
    const json *p = prompt;
    // One prompt, possibly wrapped: ["text"] or [[ids]].
    if (p->size() == 1 && ((*p)[0].is_string() || (*p)[0].is_array()))
      p = &(*p)[0];
    if (prompt->size() > 1 && ((*prompt)[0].is_string() || (*prompt)[0].is_array()))
      f.fail("prompt", "holds " + std::to_string(prompt->size()) +
                           " prompts: qeff serve takes one prompt per request");
    else if (p->is_string())
      r.promptText = p->get<std::string>();
    else if (p->empty())
      f.fail("prompt", "is an empty array of token ids");
    else {
      std::vector<int64_t> ids;
      for (size_t i = 0; i < p->size() && !f.failed(); ++i) {
        const json &id = (*p)[i];
        if (!id.is_number_integer() || id.get<int64_t>() < 0)
          f.fail("prompt", "element " + std::to_string(i) +
                               " must be a token id (a non-negative integer), got " +
                               dumpJson(id));
        else
          ids.push_back(id.get<int64_t>());
      }
      r.promptIds = std::move(ids);
    }
  } else {
    f.wrongType("prompt", "a string or an array of token ids");
  }
  readSampling(f, r.sampling, /*chat=*/false);
  readStream(f, r.stream, r.includeUsage, error);
  f.boolean("return_token_ids", r.returnTokenIds);
  f.unsupportedUnless("echo", isFalse, "echo");
  f.unsupportedUnless("suffix", [](const json &v) { return v.is_string() && v.get<std::string>().empty(); },
                      "suffix");
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
  readSampling(f, r.sampling, /*chat=*/true);
  readStream(f, r.stream, r.includeUsage, error);
  f.boolean("add_generation_prompt", r.addGenerationPrompt);
  f.boolean("return_token_ids", r.returnTokenIds);
  f.unsupportedUnless("tools", isEmpty, "tools (function calling)");
  f.unsupportedUnless("functions", isEmpty, "functions (function calling)");
  f.unsupportedUnless("top_logprobs", isZero, "top_logprobs");
  f.unsupportedUnless(
      "response_format",
      [](const json &v) { return v.is_object() && v.value("type", "") == "text"; },
      "response_format other than {\"type\": \"text\"}");
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

  // Sampling from `parameters` (Triton's vLLM backend) and from top-level
  // inputs (TensorRT-LLM's ensemble: max_tokens, stop_words, ...).
  auto readFrom = [&](const json &object, const std::string &prefix) {
    Fields p(object, prefix, error);
    readCommonSampling(p, r.sampling);
    std::vector<std::string> stop;
    p.strings("stop", stop);
    p.strings("stop_words", stop);
    if (!stop.empty())
      r.sampling.stop = stop;
    bool stream = false;
    p.boolean("stream", stream);
    p.unsupportedUnless(
        "bad_words",
        [](const json &v) {
          return (v.is_string() && v.get<std::string>().empty()) || isEmpty(v);
        },
        "bad_words");
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

std::string openAIFinishReason(const std::string &finishReason) {
  if (finishReason == "eos" || finishReason == "stop_string")
    return "stop";
  if (finishReason == "max_new_tokens" || finishReason == "context_end")
    return "length";
  return finishReason;
}

ojson usageJson(int64_t promptTokens, int64_t completionTokens) {
  ojson u;
  u["prompt_tokens"] = promptTokens;
  u["completion_tokens"] = completionTokens;
  u["total_tokens"] = promptTokens + completionTokens;
  return u;
}

namespace {
ojson envelope(const Completion &c, const char *object) {
  ojson j;
  j["id"] = c.id;
  j["object"] = object;
  j["created"] = c.created;
  j["model"] = c.model;
  return j;
}
} // namespace

ojson completionResponse(const Completion &c) {
  ojson j = envelope(c, "text_completion");
  ojson choice;
  choice["index"] = 0;
  choice["text"] = c.text;
  choice["logprobs"] = nullptr;
  choice["finish_reason"] = c.finishReason;
  if (c.returnTokenIds) {
    choice["prompt_token_ids"] = c.promptIds;
    choice["token_ids"] = c.tokenIds;
  }
  j["choices"] = ojson::array({choice});
  j["usage"] = usageJson(c.promptIds.size(), c.tokenIds.size());
  return j;
}

ojson chatResponse(const Completion &c) {
  ojson j = envelope(c, "chat.completion");
  ojson message;
  message["role"] = "assistant";
  message["content"] = c.text;
  ojson choice;
  choice["index"] = 0;
  choice["message"] = message;
  choice["logprobs"] = nullptr;
  choice["finish_reason"] = c.finishReason;
  if (c.returnTokenIds) {
    choice["prompt_token_ids"] = c.promptIds;
    choice["token_ids"] = c.tokenIds;
  }
  j["choices"] = ojson::array({choice});
  j["usage"] = usageJson(c.promptIds.size(), c.tokenIds.size());
  return j;
}

ojson completionChunk(const Completion &c, const std::string &delta,
                      const std::string &finishReason,
                      const std::vector<int64_t> &tokenIds) {
  ojson j = envelope(c, "text_completion");
  ojson choice;
  choice["index"] = 0;
  choice["text"] = delta;
  choice["logprobs"] = nullptr;
  choice["finish_reason"] = finishReason.empty() ? ojson() : ojson(finishReason);
  if (c.returnTokenIds)
    choice["token_ids"] = tokenIds;
  j["choices"] = ojson::array({choice});
  return j;
}

ojson chatChunk(const Completion &c, const std::string &delta,
                const std::string &finishReason, bool first,
                const std::vector<int64_t> &tokenIds) {
  ojson j = envelope(c, "chat.completion.chunk");
  ojson d = ojson::object();
  if (first)
    d["role"] = "assistant";
  if (first || !delta.empty() || finishReason.empty())
    d["content"] = delta;
  ojson choice;
  choice["index"] = 0;
  choice["delta"] = d;
  choice["logprobs"] = nullptr;
  choice["finish_reason"] = finishReason.empty() ? ojson() : ojson(finishReason);
  if (c.returnTokenIds)
    choice["token_ids"] = tokenIds;
  j["choices"] = ojson::array({choice});
  return j;
}

ojson usageChunk(const Completion &c, bool chat, int64_t completionTokens) {
  ojson j = envelope(c, chat ? "chat.completion.chunk" : "text_completion");
  j["choices"] = ojson::array();
  j["usage"] = usageJson(c.promptIds.size(), completionTokens);
  return j;
}

std::string sseEvent(const std::string &payload) {
  return "data: " + payload + "\n\n";
}

} // namespace qeff::serve
