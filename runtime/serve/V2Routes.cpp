//===- V2Routes.cpp - the Triton/KServe v2 endpoints ----------------------===//
//
// Part of qeff. GET /v2/models/{name}[/versions/{v}] (metadata), .../ready,
// and Triton's generate extension: POST .../generate (one JSON object) and
// .../generate_stream (server-sent events `data: {...}`, one per piece of
// text, the last with finish_reason). The health routes live in Server.cpp.
//
//===----------------------------------------------------------------------===//

#include "runtime/serve/ServerImpl.h"

using namespace qeff::serve;
using ojson = nlohmann::ordered_json;

namespace {

/// The generate extension's default, as Triton's vLLM backend has it.
constexpr int64_t kGenerateDefaultMaxTokens = 16;

/// The model of a v2 route (`name`, optionally `/versions/<v>`: only "1").
ServedModel *routeModel(Server::Impl &s, const httplib::Request &req,
                        ApiError &error) {
  ServedModel *model = s.findModel(req.matches[1].str(), error, "name");
  if (!model)
    return nullptr;
  if (req.matches.size() > 2 && req.matches[2].matched &&
      req.matches[2].str() != "1") {
    error.status = 404;
    error.message = "model '" + model->spec.name + "' has no version '" +
                    req.matches[2].str() + "' (its only version is 1)";
    return nullptr;
  }
  return model;
}

ojson outputEvent(const ServedModel &model, const GenerateRequest &request,
                  const std::string &text) {
  ojson j;
  if (!request.id.empty())
    j["id"] = request.id;
  j["model_name"] = model.spec.name;
  j["model_version"] = "1";
  j["text_output"] = text;
  return j;
}

void generate(Server::Impl &s, const httplib::Request &req,
              httplib::Response &res, bool stream) {
  RequestLog &log = requestLog();
  ApiError error;
  ServedModel *model = routeModel(s, req, error);
  if (!model)
    return s.sendError(res, error, Protocol::V2);
  log.model = model->spec.name;
  std::optional<GenerateRequest> request = parseGenerateRequest(req.body, error);
  if (!request)
    return s.sendError(res, error, Protocol::V2);
  auto ids = s.encode(*model, request->textInput, /*addSpecialTokens=*/true,
                      "text_input", error);
  if (!ids)
    return s.sendError(res, error, Protocol::V2);
  auto prepared = s.prepare(*model, std::move(*ids), "text_input",
                            request->sampling, kGenerateDefaultMaxTokens, error);
  if (!prepared)
    return s.sendError(res, error, Protocol::V2);

  auto job = std::make_shared<GenerationJob>(prepared->prompt, prepared->options);
  if (std::optional<ApiError> refused = s.admit(*model, job))
    return s.sendError(res, *refused, Protocol::V2);

  const ServedModel &m = *model;
  GenerateRequest r = *request;
  if (!stream) {
    GenerationJob::News news = s.finish(*job);
    if (!news.error.empty()) {
      ApiError e = generationFailed(news.error);
      return s.sendError(res, e, Protocol::V2);
    }
    ojson body = outputEvent(m, r, news.text);
    body["finish_reason"] = openAIFinishReason(news.finishReason);
    body["usage"] = usageJson(
        Usage{news.promptTokens, news.completionTokens, news.parts[0].cachedTokens});
    res.set_content(dumpJson(body), "application/json");
    return;
  }
  s.stream(res, job, [&m, r](const GenerationJob::News &news) {
    if (news.finished && !news.error.empty()) {
      ApiError e = generationFailed(news.error);
      return sseEvent(v2ErrorBody(e));
    }
    if (news.text.empty() && !news.finished)
      return std::string();
    ojson event = outputEvent(m, r, news.text);
    if (news.finished) {
      event["finish_reason"] = openAIFinishReason(news.finishReason);
      event["usage"] = usageJson(
          Usage{news.promptTokens, news.completionTokens, news.parts[0].cachedTokens});
    }
    return sseEvent(dumpJson(event));
  });
}

} // namespace

void Server::Impl::registerV2Routes() {
  const std::string model = R"(/v2/models/([^/]+)(?:/versions/([^/]+))?)";
  http.Get(model, [this](const httplib::Request &req, httplib::Response &res) {
    ApiError error;
    ServedModel *m = routeModel(*this, req, error);
    if (!m)
      return sendError(res, error, Protocol::V2);
    auto tensor = [](const char *name, const char *type) {
      ojson t;
      t["name"] = name;
      t["datatype"] = type;
      t["shape"] = {1};
      return t;
    };
    ojson body;
    body["name"] = m->spec.name;
    body["versions"] = {"1"};
    body["platform"] = "qeff";
    body["inputs"] = ojson::array({tensor("text_input", "BYTES"), tensor("max_tokens", "INT32"),
                      tensor("stop", "BYTES")});
    body["outputs"] = ojson::array({tensor("text_output", "BYTES")});
    body["parameters"] = {{"ctx_len", m->scheduler->ctxLen()},
                          {"rows", m->scheduler->rows()},
                          {"continuous_batching", m->scheduler->continuousBatching()}};
    res.set_content(dumpJson(body), "application/json");
  });
  http.Get(model + "/ready", [this](const httplib::Request &req,
                                    httplib::Response &res) {
    ApiError error;
    ServedModel *m = routeModel(*this, req, error);
    if (!m)
      return sendError(res, error, Protocol::V2);
    bool ready = !draining.load();
    res.status = ready ? 200 : 503;
    ojson body;
    body["name"] = m->spec.name;
    body["ready"] = ready;
    res.set_content(dumpJson(body), "application/json");
  });
  http.Post(model + "/generate", [this](const httplib::Request &req,
                                        httplib::Response &res) {
    generate(*this, req, res, /*stream=*/false);
  });
  http.Post(model + "/generate_stream", [this](const httplib::Request &req,
                                               httplib::Response &res) {
    generate(*this, req, res, /*stream=*/true);
  });
}
