//===- OpenAIRoutes.cpp - the OpenAI-compatible endpoints -----------------===//
//
// Part of qeff. POST /v1/completions, POST /v1/chat/completions (whole or
// streamed as server-sent events ending in `data: [DONE]`), GET /v1/models
// and GET /v1/models/{model}.
//
//===----------------------------------------------------------------------===//

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
  bool stream = false, includeUsage = false, returnTokenIds = false;
};

void generate(Server::Impl &s, const httplib::Request &req,
              httplib::Response &res, bool chat) {
  (void)req;
  RequestLog &log = requestLog();
  ApiError error;
  std::optional<CompletionRequest> completion;
  std::optional<ChatRequest> chatRequest;
  Common c;
  if (chat) {
    chatRequest = parseChatRequest(req.body, error);
    if (!chatRequest)
      return s.sendError(res, error, Protocol::OpenAI);
    c = {chatRequest->model, chatRequest->sampling, chatRequest->stream,
         chatRequest->includeUsage, chatRequest->returnTokenIds};
  } else {
    completion = parseCompletionRequest(req.body, error);
    if (!completion)
      return s.sendError(res, error, Protocol::OpenAI);
    c = {completion->model, completion->sampling, completion->stream,
         completion->includeUsage, completion->returnTokenIds};
  }
  ServedModel *model = s.findModel(c.model, error);
  if (!model)
    return s.sendError(res, error, Protocol::OpenAI);
  log.model = model->spec.name;

  // The prompt's tokens.
  std::vector<int64_t> prompt;
  std::string promptParam = chat ? "messages" : "prompt";
  if (chat) {
    if (!model->spec.chat) {
      ApiError e;
      e.status = 501;
      e.type = "not_implemented";
      e.param = "messages";
      e.message = "Chat completions are not available for model '" +
                  model->spec.name + "': " + model->spec.chatUnavailable;
      return s.sendError(res, e, Protocol::OpenAI);
    }
    qeff::runtime::Result<std::string> text =
        model->spec.chat(chatRequest->messages, chatRequest->addGenerationPrompt);
    if (!text)
      return s.sendError(res, badRequest("messages: " + text.error(), "messages"),
                         Protocol::OpenAI);
    // The template writes the special tokens itself (as HF's
    // apply_chat_template, which tokenizes without adding them).
    auto ids = s.encode(*model, *text, /*addSpecialTokens=*/false, "messages", error);
    if (!ids)
      return s.sendError(res, error, Protocol::OpenAI);
    prompt = std::move(*ids);
  } else if (completion->promptText) {
    auto ids = s.encode(*model, *completion->promptText, /*addSpecialTokens=*/true,
                        "prompt", error);
    if (!ids)
      return s.sendError(res, error, Protocol::OpenAI);
    prompt = std::move(*ids);
  } else {
    prompt = *completion->promptIds;
  }
  auto prepared = s.prepare(*model, std::move(prompt), promptParam, c.sampling,
                            chat ? -1 : kCompletionDefaultMaxTokens, error);
  if (!prepared)
    return s.sendError(res, error, Protocol::OpenAI);

  auto job = std::make_shared<GenerationJob>(prepared->prompt, prepared->options);
  if (std::optional<ApiError> refused = s.admit(*model, job))
    return s.sendError(res, *refused, Protocol::OpenAI);

  Completion out;
  out.id = newRequestId(chat ? "chatcmpl-" : "cmpl-");
  out.created = unixTime();
  out.model = model->spec.name;
  out.promptIds = prepared->prompt;
  out.returnTokenIds = c.returnTokenIds;

  if (!c.stream) {
    GenerationJob::News news = s.finish(*job);
    if (!news.error.empty()) {
      ApiError e{500, "generation failed: " + news.error, "server_error", "", ""};
      return s.sendError(res, e, Protocol::OpenAI);
    }
    out.text = news.text;
    out.tokenIds = news.tokens;
    out.finishReason = openAIFinishReason(news.finishReason);
    res.set_content(dumpJson(chat ? chatResponse(out) : completionResponse(out)),
                    "application/json");
    return;
  }

  bool includeUsage = c.includeUsage;
  auto first = std::make_shared<bool>(true);
  s.stream(res, job, [out, chat, includeUsage, first](const GenerationJob::News &news) {
    std::string events;
    if (news.finished && !news.error.empty()) {
      ApiError e{500, "generation failed: " + news.error, "server_error", "", ""};
      return sseEvent(openAIErrorBody(e)) + sseEvent("[DONE]");
    }
    std::string reason = news.finished ? openAIFinishReason(news.finishReason) : "";
    if (!news.text.empty() || !news.tokens.empty() || news.finished) {
      ojson chunk = chat ? chatChunk(out, news.text, reason, *first, news.tokens)
                         : completionChunk(out, news.text, reason, news.tokens);
      events += sseEvent(dumpJson(chunk));
      *first = false;
    }
    if (news.finished) {
      if (includeUsage)
        events += sseEvent(dumpJson(usageChunk(out, chat, news.completionTokens)));
      events += sseEvent("[DONE]");
    }
    return events;
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
