//===- OpenAIRoutes.cpp - the OpenAI-compatible endpoints -----------------===//
//
// Part of qeff. POST /v1/completions, POST /v1/chat/completions (whole or
// streamed as server-sent events ending in `data: [DONE]`), GET /v1/models
// and GET /v1/models/{model}.
//
//===----------------------------------------------------------------------===//

#include "runtime/serve/Choices.h"
#include "runtime/serve/Logprobs.h"
#include "runtime/serve/ServerImpl.h"

using namespace qeff::serve;
using ojson = nlohmann::ordered_json;

namespace {

/// OpenAI's default max_tokens of /v1/completions; chat defaults to the rest
/// of the context.
constexpr int64_t kCompletionDefaultMaxTokens = 16;

/// The fields completions and chat share, after parsing.
struct Common {
  std::string model;
  SamplingParams sampling;
  OutputOptions output;
  int64_t n = 1;
  std::optional<int64_t> bestOf;
};

/// What the responses of one request need besides the job's news.
struct Request {
  bool chat = false, echo = false;
  Completion envelope;
  OutputOptions output;
  /// The prompts' tokens, and their text for echo.
  std::vector<std::vector<int64_t>> prompts;
  std::vector<std::string> echoTexts;
  int64_t n = 1, perPrompt = 1, promptTokens = 0;
  bool bestOf = false;
  /// Logprobs were asked for (best_of computes them anyway, to rank).
  bool logprobs = false;
  const qeff::tokenizer::Tokenizer *tokenizer = nullptr;
};

/// The prompts of a request as tokens (and, for echo, as text).
bool promptTokens(Server::Impl &s, ServedModel &model,
                  const std::optional<CompletionRequest> &completion,
                  const std::optional<ChatRequest> &chat, Request &r,
                  ApiError &error) {
  if (chat) {
    if (!model.spec.chat) {
      error.status = 501;
      error.type = "not_implemented";
      error.param = "messages";
      error.message = "Chat completions are not available for model '" +
                      model.spec.name + "': " + model.spec.chatUnavailable;
      return false;
    }
    qeff::runtime::Result<std::string> text =
        model.spec.chat(chat->messages, chat->addGenerationPrompt);
    if (!text) {
      error = badRequest("messages: " + text.error(), "messages");
      return false;
    }
    // The template writes the special tokens itself (as HF's
    // apply_chat_template, which tokenizes without adding them).
    auto ids = s.encode(model, *text, chat->addSpecialTokens, "messages", error);
    if (!ids)
      return false;
    r.prompts.push_back(std::move(*ids));
    return true;
  }
  for (const PromptInput &p : completion->prompts) {
    if (p.text) {
      auto ids = s.encode(model, *p.text, completion->addSpecialTokens, "prompt", error);
      if (!ids)
        return false;
      r.prompts.push_back(std::move(*ids));
      r.echoTexts.push_back(*p.text);
    } else {
      r.prompts.push_back(*p.ids);
      // As vLLM: a token prompt is echoed as its decoding.
      if (r.echo && !model.spec.tokenizer) {
        error = badRequest("echo of a token-id prompt needs a tokenizer, and model '" +
                               model.spec.name + "' has none",
                           "echo");
        return false;
      }
      r.echoTexts.push_back(r.echo ? model.spec.tokenizer->decode(*p.ids, false) : "");
    }
  }
  return true;
}

/// OpenAI's system_fingerprint names the backend configuration the output
/// depends on besides the model and the request: here qeff's version and
/// the device ("qeff-<version>-host" or "-qaic").
std::string systemFingerprint(const Server::Impl &s, const ServedModel &model) {
  return "qeff-" + s.options.version + "-" +
         (model.spec.device == qeff::runtime::DeviceKind::Qaic ? "qaic" : "host");
}

/// Choice `index` from one sequence's whole (`whole`) or new output.
Choice makeChoice(const Request &r, size_t prompt, int64_t index,
                  const GenerationJob::Part &part, bool prependEcho, bool whole,
                  int64_t &textOffset) {
  Choice c;
  c.index = index;
  c.text = (prependEcho ? r.echoTexts[prompt] : "") + part.text;
  c.finishReason = part.justFinished ? openAIFinishReason(part.finishReason) : "";
  c.promptIds = r.prompts[prompt];
  c.tokenIds = part.tokens;
  if (r.logprobs && (whole || !part.tokens.empty())) {
    TokenNames names(r.tokenizer, r.output.returnTokensAsTokenIds);
    c.logprobs = r.chat ? chatLogprobs(part.logprobs, names)
                        : completionLogprobs(part.logprobs, names, textOffset);
  }
  return c;
}

/// The prompt tokens usage reports as cached: for each prompt, its first
/// sequence's (usage counts each prompt once, however many sequences share
/// it; the hit metric counts every sequence's).
int64_t cachedPromptTokens(const Request &r, const GenerationJob::News &news) {
  int64_t cached = 0;
  for (size_t p = 0; p < r.prompts.size(); ++p)
    if (p * r.perPrompt < news.parts.size())
      cached += news.parts[p * r.perPrompt].cachedTokens;
  return cached;
}

/// The whole response of a finished job.
ojson wholeResponse(const Request &r, const GenerationJob::News &news) {
  std::vector<Choice> choices;
  Usage usage{r.promptTokens, 0, cachedPromptTokens(r, news)};
  for (size_t p = 0; p < r.prompts.size(); ++p) {
    std::vector<size_t> picked;
    if (r.bestOf)
      picked = bestCandidates(news.parts, p * r.perPrompt, r.perPrompt, r.n);
    else
      for (int64_t j = 0; j < r.n; ++j)
        picked.push_back(p * r.perPrompt + j);
    for (size_t j = 0; j < picked.size(); ++j) {
      const GenerationJob::Part &part = news.parts[picked[j]];
      int64_t offset = 0;
      choices.push_back(makeChoice(r, p, p * r.n + j, part, r.echo, /*whole=*/true,
                                   offset));
      usage.completionTokens += part.tokens.size();
    }
  }
  return r.chat ? chatResponse(r.envelope, choices, usage)
                : completionResponse(r.envelope, choices, usage);
}

/// The state of a stream between pieces of news.
struct StreamState {
  std::vector<bool> started;
  std::vector<int64_t> textOffset;
};

/// The events of one piece of news of a stream (n choices per prompt, no
/// best_of: sequence i is choice i).
std::string streamEvents(const Request &r, StreamState &state,
                         const GenerationJob::News &news) {
  if (news.finished && !news.error.empty()) {
    ApiError e = generationFailed(news.error);
    return sseEvent(openAIErrorBody(e)) + sseEvent("[DONE]");
  }
  std::string events;
  for (size_t i = 0; i < news.parts.size(); ++i) {
    const GenerationJob::Part &part = news.parts[i];
    if (part.text.empty() && part.tokens.empty() && !part.justFinished)
      continue;
    size_t prompt = i / r.perPrompt;
    Choice delta = makeChoice(r, prompt, i, part, r.echo && !state.started[i],
                              /*whole=*/false, state.textOffset[i]);
    events += sseEvent(dumpJson(r.chat ? chatChunk(r.envelope, delta, !state.started[i])
                                       : completionChunk(r.envelope, delta)));
    state.started[i] = true;
  }
  if (news.finished) {
    if (r.output.includeUsage)
      events += sseEvent(dumpJson(usageChunk(
          r.envelope, r.chat,
          Usage{r.promptTokens, news.completionTokens, cachedPromptTokens(r, news)})));
    events += sseEvent("[DONE]");
  }
  return events;
}

void generate(Server::Impl &s, const httplib::Request &req,
              httplib::Response &res, bool chat) {
  RequestLog &log = requestLog();
  ApiError error;
  std::optional<CompletionRequest> completion;
  std::optional<ChatRequest> chatRequest;
  Common c;
  Request r;
  r.chat = chat;
  if (chat) {
    chatRequest = parseChatRequest(req.body, error);
    if (!chatRequest)
      return s.sendError(res, error, Protocol::OpenAI);
    c = {chatRequest->model, chatRequest->sampling, chatRequest->output,
         chatRequest->n, chatRequest->bestOf};
  } else {
    completion = parseCompletionRequest(req.body, error);
    if (!completion)
      return s.sendError(res, error, Protocol::OpenAI);
    c = {completion->model, completion->sampling, completion->output,
         completion->n, completion->bestOf};
    r.echo = completion->echo;
  }
  ServedModel *model = s.findModel(c.model, error);
  if (!model)
    return s.sendError(res, error, Protocol::OpenAI);
  log.model = model->spec.name;
  if (!s.checkDeviceSampling(*model, c.sampling, c.bestOf, c.n, error))
    return s.sendError(res, error, Protocol::OpenAI);
  if (!promptTokens(s, *model, completion, chatRequest, r, error))
    return s.sendError(res, error, Protocol::OpenAI);
  auto constraint = makeConstraint(c.sampling.responseFormat, model->vocabulary,
                                   model->vocabularyUnavailable, error);
  if (!constraint)
    return s.sendError(res, error, Protocol::OpenAI);

  // n choices per prompt, or best_of candidates of which n are returned.
  r.n = c.n;
  r.bestOf = c.bestOf && *c.bestOf > c.n;
  r.perPrompt = r.bestOf ? *c.bestOf : c.n;
  r.logprobs = c.sampling.logprobs.has_value();
  r.output = c.output;
  r.tokenizer = model->spec.tokenizer ? &*model->spec.tokenizer : nullptr;
  std::vector<GenerationJob::Sequence> sequences;
  for (size_t p = 0; p < r.prompts.size(); ++p) {
    std::string param = chat ? "messages" : "prompt";
    auto prepared = s.prepare(*model, r.prompts[p], param, c.sampling,
                              chat ? -1 : kCompletionDefaultMaxTokens, error);
    if (!prepared) {
      if (r.prompts.size() > 1)
        error.message = "prompt " + std::to_string(p) + ": " + error.message;
      return s.sendError(res, error, Protocol::OpenAI);
    }
    prepared->options.constraint = *constraint;
    // The constraint reads the text as decode(generated tokens) spells it
    // (runtime/structured/JsonConstraint.h): the text is then exactly the
    // JSON it matched, without the prompt's continuation spacing.
    if (*constraint)
      prepared->options.decodeAfterPrompt = false;
    if (r.bestOf && prepared->options.logprobs < 0)
      prepared->options.logprobs = 0; // to rank the candidates
    r.promptTokens += prepared->prompt.size();
    addSequences(sequences, prepared->prompt, prepared->options, r.perPrompt);
  }

  auto job = std::make_shared<GenerationJob>(std::move(sequences), r.promptTokens);
  if (std::optional<ApiError> refused = s.admit(*model, job))
    return s.sendError(res, *refused, Protocol::OpenAI);

  r.envelope.id = newRequestId(chat ? "chatcmpl-" : "cmpl-");
  r.envelope.created = unixTime();
  r.envelope.model = model->spec.name;
  r.envelope.systemFingerprint = systemFingerprint(s, *model);
  r.envelope.returnTokenIds = c.output.returnTokenIds;
  r.envelope.usageInChunks = c.output.stream && c.output.includeUsage;

  if (!c.output.stream) {
    GenerationJob::News news = s.finish(*job);
    if (!news.error.empty()) {
      ApiError e = generationFailed(news.error);
      return s.sendError(res, e, Protocol::OpenAI);
    }
    res.set_content(dumpJson(wholeResponse(r, news)), "application/json");
    return;
  }
  auto state = std::make_shared<StreamState>();
  state->started.assign(job->sequences(), false);
  state->textOffset.assign(job->sequences(), 0);
  s.stream(res, job, [r = std::move(r), state](const GenerationJob::News &news) {
    return streamEvents(r, *state, news);
  });
}

ojson modelCard(const ServedModel &model, int64_t created) {
  ojson m;
  m["id"] = model.spec.name;
  m["object"] = "model";
  m["created"] = created;
  m["owned_by"] = "qeff";
  m["max_model_len"] = model.scheduler->ctxLen();
  return m;
}

} // namespace

void Server::Impl::registerOpenAIRoutes() {
  http.Post("/v1/completions", [this](const httplib::Request &req,
                                      httplib::Response &res) {
    generate(*this, req, res, /*chat=*/false);
  });
  http.Post("/v1/chat/completions", [this](const httplib::Request &req,
                                           httplib::Response &res) {
    generate(*this, req, res, /*chat=*/true);
  });
  const int64_t started = unixTime();
  http.Get("/v1/models", [this, started](const httplib::Request &,
                                         httplib::Response &res) {
    ojson data = ojson::array();
    for (const std::string &name : order)
      data.push_back(modelCard(*models.at(name), started));
    ojson body;
    body["object"] = "list";
    body["data"] = data;
    res.set_content(dumpJson(body), "application/json");
  });
  http.Get(R"(/v1/models/([^/]+))", [this, started](const httplib::Request &req,
                                                    httplib::Response &res) {
    ApiError error;
    ServedModel *model = findModel(req.matches[1].str(), error);
    if (!model)
      return sendError(res, error, Protocol::OpenAI);
    res.set_content(dumpJson(modelCard(*model, started)), "application/json");
  });
}
