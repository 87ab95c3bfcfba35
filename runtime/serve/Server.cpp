//===- Server.cpp - the HTTP server of `qeff serve` -----------------------===//
//
// Part of qeff. Lifecycle (models, bind, serve, graceful shutdown), the
// cross-cutting handlers (authentication, error bodies, logging, metrics)
// and the routes that do not generate: health, models, metrics. The
// generating routes live in OpenAIRoutes.cpp and V2Routes.cpp.
//
//===----------------------------------------------------------------------===//

#include "runtime/serve/ServerImpl.h"

#include "runtime/structured/JsonConstraint.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <cstdio>
#include <ctime>
#include <future>
#include <iostream>
#include <random>
#include <regex>

#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

using namespace qeff::serve;
using namespace qeff::runtime;
using ojson = nlohmann::ordered_json;

namespace qeff::serve {

RequestLog &requestLog() {
  thread_local RequestLog log;
  return log;
}

ApiError generationFailed(const std::string &error) {
  if (error == "cancelled")
    return ApiError{499, "the client closed the connection: generation cancelled",
                    "invalid_request_error", "", "client_closed_request"};
  return ApiError{500, "generation failed: " + error, "server_error", "", ""};
}

std::string newRequestId(const char *prefix) {
  thread_local std::mt19937_64 rng(std::random_device{}());
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%016llx%08x",
                static_cast<unsigned long long>(rng()),
                static_cast<unsigned>(rng() & 0xffffffffu));
  return std::string(prefix) + buffer;
}

int64_t unixTime() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

} // namespace qeff::serve

namespace {

/// The route a path belongs to, for metrics labels (never the raw path, so
/// the label set stays bounded).
std::string routeOf(const std::string &method, const std::string &path) {
  static const std::vector<std::pair<std::regex, std::string>> routes = {
      {std::regex("/v1/completions"), "/v1/completions"},
      {std::regex("/v1/chat/completions"), "/v1/chat/completions"},
      {std::regex("/v1/models"), "/v1/models"},
      {std::regex("/v1/models/[^/]+"), "/v1/models/{model}"},
      {std::regex("/v2"), "/v2"},
      {std::regex("/v2/health/live"), "/v2/health/live"},
      {std::regex("/v2/health/ready"), "/v2/health/ready"},
      {std::regex("/v2/models/[^/]+(/versions/[^/]+)?"), "/v2/models/{name}"},
      {std::regex("/v2/models/[^/]+(/versions/[^/]+)?/ready"),
       "/v2/models/{name}/ready"},
      {std::regex("/v2/models/[^/]+(/versions/[^/]+)?/generate"),
       "/v2/models/{name}/generate"},
      {std::regex("/v2/models/[^/]+(/versions/[^/]+)?/generate_stream"),
       "/v2/models/{name}/generate_stream"},
      {std::regex("/metrics"), "/metrics"},
      {std::regex("/health"), "/health"},
  };
  for (const auto &[pattern, label] : routes)
    if (std::regex_match(path, pattern))
      return label;
  (void)method;
  return "unmatched";
}

Protocol protocolOf(const std::string &path) {
  if (path.rfind("/v1/", 0) == 0)
    return Protocol::OpenAI;
  if (path.rfind("/v2", 0) == 0)
    return Protocol::V2;
  return Protocol::Plain;
}

bool needsKey(const std::string &path) {
  return path.rfind("/v1/", 0) == 0 || path.rfind("/v2/models", 0) == 0 ||
         path == "/v2";
}

/// Constant-time comparison (the key must not leak through timing).
bool sameKey(const std::string &a, const std::string &b) {
  unsigned char diff = a.size() != b.size();
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

/// `text` safe for one line of the text log: control characters, quotes
/// and backslashes escaped (a request path is client input: a decoded %0A
/// would otherwise forge a log line).
std::string logSafe(const std::string &text) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20 || c == 0x7f) {
      char buffer[8];
      std::snprintf(buffer, sizeof(buffer), "\\x%02x", c);
      out += buffer;
    } else {
      out += char(c);
    }
  }
  return out;
}

std::string isoTime() {
  std::time_t now = std::time(nullptr);
  std::tm tm;
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

} // namespace

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

void Server::Impl::enter() {
  std::lock_guard<std::mutex> lock(inflightMutex);
  ++inflight;
}

void Server::Impl::leave() {
  {
    std::lock_guard<std::mutex> lock(inflightMutex);
    --inflight;
  }
  inflightDone.notify_all();
}

ServedModel *Server::Impl::findModel(const std::string &name, ApiError &error,
                                     const std::string &param) {
  if (name.empty()) {
    if (models.size() == 1)
      return models.begin()->second.get();
    error = badRequest("'" + param + "' is required: this server serves " +
                           std::to_string(models.size()) + " models",
                       param);
    return nullptr;
  }
  auto it = models.find(name);
  if (it != models.end())
    return it->second.get();
  std::string known;
  for (const std::string &n : order)
    known += (known.empty() ? "'" : ", '") + n + "'";
  error.status = 404;
  error.type = "not_found_error";
  error.code = "model_not_found";
  error.param = param;
  error.message = "The model '" + name + "' does not exist; this server serves " +
                  known;
  return nullptr;
}

std::optional<std::vector<int64_t>>
Server::Impl::encode(ServedModel &model, const std::string &text,
                     bool addSpecialTokens, const std::string &param,
                     ApiError &error) {
  if (!model.spec.tokenizer) {
    error = badRequest("model '" + model.spec.name +
                           "' has no tokenizer (no tokenizer.json in its "
                           "artifacts): send the prompt as token ids",
                       param);
    return std::nullopt;
  }
  return model.spec.tokenizer->encode(text, addSpecialTokens);
}

std::optional<ApiError>
Server::Impl::admit(ServedModel &model, const std::shared_ptr<GenerationJob> &job) {
  ApiError error;
  error.status = 503;
  error.type = "server_error";
  error.code = "shutting_down";
  error.message = "The server is shutting down";
  enter();
  if (!draining.load()) {
    switch (model.scheduler->submit(job)) {
    case ModelScheduler::Admission::Queued:
      return std::nullopt;
    case ModelScheduler::Admission::QueueFull:
      error.code = "queue_full";
      error.message = "The server is overloaded: " +
                      std::to_string(options.maxQueue) +
                      " requests are already waiting for model '" +
                      model.spec.name + "' (--max-queue); retry later";
      break;
    case ModelScheduler::Admission::ShuttingDown:
      break;
    }
  }
  leave();
  return error;
}

GenerationJob::News Server::Impl::finish(GenerationJob &job) {
  // A client that went away stops its generation (vLLM aborts the request
  // on disconnect too); its row is then freed at the next scheduler step,
  // or its place in the queue at the next submission. Looked at every
  // 20 ms: a whole request waits in the queue or a row, both bounded.
  if (const Connection *connection = currentConnection())
    while (!job.finishedWithin(std::chrono::milliseconds(20)))
      if (connection->clientGone()) {
        job.cancel();
        break;
      }
  GenerationJob::News news = job.wait();
  leave();
  RequestLog &log = requestLog();
  log.promptTokens = news.promptTokens;
  log.completionTokens = news.completionTokens;
  log.finishReason = news.finishReason;
  log.timeToFirstToken = job.timeToFirstToken();
  return news;
}

void Server::Impl::sendError(httplib::Response &res, const ApiError &error,
                             Protocol protocol) {
  res.status = error.status;
  if (error.status == 503)
    res.set_header("Retry-After", "1");
  if (error.status == 401)
    res.set_header("WWW-Authenticate", "Bearer");
  requestLog().error = error.message;
  res.set_content(protocol == Protocol::V2 ? v2ErrorBody(error)
                                           : openAIErrorBody(error),
                  "application/json");
}

void Server::Impl::log(const httplib::Request &req, const httplib::Response &res) {
  RequestLog &entry = requestLog();
  metrics.countResponse(entry.route, res.status);
  double seconds =
      std::chrono::duration<double>(Clock::now() - entry.start).count();
  std::string line;
  if (options.jsonLog) {
    ojson j;
    j["time"] = isoTime();
    j["remote"] = req.remote_addr;
    j["method"] = req.method;
    j["path"] = req.path;
    j["status"] = res.status;
    j["duration_s"] = seconds;
    if (!entry.model.empty())
      j["model"] = entry.model;
    if (entry.promptTokens >= 0)
      j["prompt_tokens"] = entry.promptTokens;
    if (entry.completionTokens >= 0)
      j["completion_tokens"] = entry.completionTokens;
    if (entry.timeToFirstToken >= 0)
      j["ttft_s"] = entry.timeToFirstToken;
    if (!entry.finishReason.empty())
      j["finish_reason"] = entry.finishReason;
    if (entry.stream)
      j["stream"] = true;
    if (!entry.error.empty())
      j["error"] = entry.error;
    line = dumpJson(j);
  } else {
    char timing[64];
    std::snprintf(timing, sizeof(timing), " %.1fms", seconds * 1e3);
    line = "qeff serve: " + isoTime() + " " + req.remote_addr + " " +
           logSafe(req.method) + " " + logSafe(req.path) + " " +
           std::to_string(res.status) + timing;
    if (!entry.model.empty())
      line += " model=" + logSafe(entry.model);
    if (entry.promptTokens >= 0)
      line += " prompt_tokens=" + std::to_string(entry.promptTokens);
    if (entry.completionTokens >= 0)
      line += " completion_tokens=" + std::to_string(entry.completionTokens);
    if (entry.timeToFirstToken >= 0) {
      std::snprintf(timing, sizeof(timing), " ttft=%.1fms",
                    entry.timeToFirstToken * 1e3);
      line += timing;
    }
    if (!entry.finishReason.empty())
      line += " finish=" + entry.finishReason;
    if (entry.stream)
      line += " stream";
    if (!entry.error.empty())
      line += " error=\"" + logSafe(entry.error) + "\"";
  }
  static std::mutex logMutex;
  std::lock_guard<std::mutex> lock(logMutex);
  std::cerr << line << "\n" << std::flush;
}

//===----------------------------------------------------------------------===//
// Routes without generation
//===----------------------------------------------------------------------===//

void Server::Impl::registerRoutes() {
  TransportOptions transport;
  auto millis = [](double seconds) {
    return std::chrono::milliseconds(int64_t(seconds * 1000));
  };
  transport.requestTimeout = millis(options.requestTimeoutSeconds);
  transport.keepAliveTimeout = millis(options.keepAliveTimeoutSeconds);
  transport.keepAliveRequests = size_t(options.keepAliveRequests);
  transport.backlog = options.listenBacklog;
  transport.maxThreads = options.httpThreads;
  transport.maxReceivingPerClient = options.maxReceivingPerClient;
  transport.maxPendingConnections = size_t(options.maxPendingConnections);
  transport.maxBodyBytes = options.maxBodyBytes;
  http.configure(transport);

  http.set_pre_routing_handler([this](const httplib::Request &req,
                                      httplib::Response &res) {
    RequestLog &entry = requestLog();
    entry = RequestLog();
    entry.start = Clock::now();
    entry.route = routeOf(req.method, req.path);
    // Answers are generated, not files: a Range header is ignored (RFC 9110
    // section 14.2 lets a server), or the library would cut the JSON body
    // to the range and send a fragment as 206. The request object is the
    // library's own non-const one; only its parsed ranges are cleared.
    const_cast<httplib::Request &>(req).ranges.clear();
    if (!options.apiKey.empty() && needsKey(req.path)) {
      const std::string auth = req.get_header_value("Authorization");
      ApiError error;
      error.status = 401;
      error.code = "invalid_api_key";
      if (auth.rfind("Bearer ", 0) != 0) {
        error.message = "Missing API key: send it in an 'Authorization: Bearer "
                        "<key>' header";
      } else if (!sameKey(auth.substr(7), options.apiKey)) {
        error.message = "Incorrect API key provided in the Authorization header";
      }
      if (!error.message.empty()) {
        error.param = "Authorization";
        sendError(res, error, protocolOf(req.path));
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });

  // Error statuses httplib sets itself (no route, body too large, ...) get a
  // JSON body in the protocol of the path.
  http.set_error_handler(httplib::Server::HandlerWithResponse(
      [this](const httplib::Request &req, httplib::Response &res) {
    if (!res.body.empty() || res.content_provider_)
      return httplib::Server::HandlerResponse::Unhandled;
    ApiError error;
    // A request the transport stopped reading: too slow or too large.
    const Connection *connection = currentConnection();
    const std::string failure = connection ? connection->readFailure() : "";
    if (failure == "deadline" || failure == "silence")
      res.status = 408;
    else if (failure == "headers")
      res.status = 431;
    else if (failure == "body")
      res.status = 413;
    if (!failure.empty())
      res.set_header("Connection", "close");
    error.status = res.status;
    if (res.status == 408) {
      error.code = "request_timeout";
      char limit[32];
      if (failure == "deadline") {
        std::snprintf(limit, sizeof(limit), "%g", options.requestTimeoutSeconds);
        error.message = std::string("The request was not received within ") +
                        limit + " s of its first byte (--request-timeout)";
      } else {
        std::snprintf(limit, sizeof(limit), "%g",
                      http.options().readTimeout.count() / 1000.0);
        error.message = std::string("The client sent nothing for ") + limit +
                        " s in the middle of its request";
      }
    } else if (res.status == 431) {
      error.code = "request_header_fields_too_large";
      error.message = "The request line and headers are larger than this "
                      "server accepts (" +
                      std::to_string(http.options().maxHeaderBytes) + " bytes)";
    } else if (res.status == 413) {
      error.code = "request_too_large";
      error.message = "The request body is larger than this server accepts (" +
                      std::to_string(options.maxBodyBytes) +
                      " bytes, --max-body-bytes)";
    } else if (res.status == 404) {
      error.type = "not_found_error";
      error.message = "No route for " + req.method + " " + req.path;
    } else {
      error.message = "The request could not be handled (HTTP " +
                      std::to_string(res.status) + ")";
    }
    sendError(res, error, protocolOf(req.path));
    return httplib::Server::HandlerResponse::Handled;
  }));

  http.set_exception_handler([this](const httplib::Request &req,
                                    httplib::Response &res,
                                    std::exception_ptr ep) {
    ApiError error;
    error.status = 500;
    error.type = "server_error";
    error.message = "internal error";
    try {
      if (ep)
        std::rethrow_exception(ep);
    } catch (const std::exception &e) {
      error.message = std::string("internal error: ") + e.what();
    } catch (...) {
    }
    sendError(res, error, protocolOf(req.path));
  });

  http.set_logger([this](const httplib::Request &req, const httplib::Response &res) {
    log(req, res);
  });

  auto json = [](httplib::Response &res, const ojson &body) {
    res.set_content(dumpJson(body), "application/json");
  };

  http.Get("/v2/health/live", [json](const httplib::Request &,
                                     httplib::Response &res) {
    json(res, {{"live", true}});
  });
  auto ready = [this, json](const httplib::Request &, httplib::Response &res) {
    bool ok = !draining.load();
    res.status = ok ? 200 : 503;
    json(res, {{"ready", ok}});
  };
  http.Get("/v2/health/ready", ready);
  http.Get("/health", ready);

  http.Get("/v2", [this, json](const httplib::Request &, httplib::Response &res) {
    json(res, {{"name", "qeff"},
               {"version", options.version},
               {"extensions", {"generate"}}});
  });

  http.Get("/metrics", [this](const httplib::Request &, httplib::Response &res) {
    res.set_content(metrics.render(), "text/plain; version=0.0.4; charset=utf-8");
  });

  registerOpenAIRoutes();
  registerV2Routes();
}

//===----------------------------------------------------------------------===//
// Lifecycle
//===----------------------------------------------------------------------===//

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() {
  for (auto &[name, model] : impl_->models)
    model->scheduler->drain();
}

Result<std::unique_ptr<Server>> Server::create(ServerOptions options,
                                               std::vector<ServedModelSpec> specs) {
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  if (impl->options.maxQueue < 0)
    return Error{"--max-queue must not be negative"};
  if (impl->options.httpThreads < 1)
    return Error{"the HTTP thread count must be positive"};
  for (ServedModelSpec &spec : specs) {
    if (spec.name.empty())
      return Error{"a served model needs a name (" + spec.artifactDir + ")"};
    if (spec.name.find('/') != std::string::npos)
      return Error{"model name '" + spec.name +
                   "' contains '/', which the /v2/models/{name} routes cannot "
                   "carry; choose another --model-name"};
    if (impl->models.count(spec.name))
      return Error{"two served models are named '" + spec.name + "'"};
    auto model = std::make_unique<ServedModel>();
    model->spec = std::move(spec);
    const tokenizer::Tokenizer *tok =
        model->spec.tokenizer ? &*model->spec.tokenizer : nullptr;
    auto scheduler = ModelScheduler::create(
        model->spec.name, model->spec.artifactDir, model->spec.device,
        model->spec.sessionOptions, tok, impl->metrics, impl->options.maxQueue);
    if (!scheduler)
      return Error{"model '" + model->spec.name + "': " + scheduler.error()};
    if (!model->spec.speculation.method.empty())
      if (Status s = (*scheduler)->speculate(model->spec.speculation,
                                             model->spec.device,
                                             model->spec.sessionOptions);
          !s)
        return Error{"model '" + model->spec.name +
                     "': speculative decoding: " + s.error()};
    model->scheduler = std::move(*scheduler);
    model->scheduler->setPrefixCaching(impl->options.prefixCaching);
    // Once per model: reading a 150k vocabulary takes ~0.2 s.
    if (model->spec.tokenizer)
      model->vocabulary = structured::makeVocabulary(*model->spec.tokenizer,
                                                     model->vocabularyUnavailable);
    else
      model->vocabularyUnavailable = "it has no tokenizer";
    impl->order.push_back(model->spec.name);
    impl->models[model->spec.name] = std::move(model);
  }
  for (auto &[name, model] : impl->models)
    model->scheduler->start();
  impl->registerRoutes();
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

std::vector<std::string> Server::modelNames() const { return impl_->order; }

std::string Server::exchange(const std::string &requestBytes) {
  return impl_->http.exchange(requestBytes);
}

void qeff::serve::tuneAllocatorForServing() {
  // Two arenas per core, as glibc's own default for 32-bit systems; the
  // fixed threshold also turns off its dynamic raising.
  mallopt(M_ARENA_MAX, int(2 * std::max(1u, std::thread::hardware_concurrency())));
  mallopt(M_MMAP_THRESHOLD, 256 << 10);
  mallopt(M_TRIM_THRESHOLD, 1 << 20);
}

Result<int> Server::bind() {
  Impl &s = *impl_;
  if (s.options.port == 0) {
    int port = s.http.bind_to_any_port(s.options.host);
    if (port <= 0)
      return Error{"cannot bind any port on " + s.options.host};
    if (!s.http.applyBacklog())
      return Error{"cannot listen with a backlog of " +
                   std::to_string(s.options.listenBacklog) + ": " +
                   std::strerror(errno)};
    return port;
  }
  if (!s.http.bind_to_port(s.options.host, s.options.port))
    return Error{"cannot listen on " + s.options.host + ":" +
                 std::to_string(s.options.port) +
                 " (in use, or not an address of this host?)"};
  if (!s.http.applyBacklog())
    return Error{"cannot listen with a backlog of " +
                 std::to_string(s.options.listenBacklog) + ": " +
                 std::strerror(errno)};
  return s.options.port;
}

bool Server::serve() {
  Impl &s = *impl_;
  auto listened = std::make_shared<std::promise<void>>();
  std::future<void> listening = listened->get_future();
  std::thread listener([&s, listened] {
    s.http.listen_after_bind();
    listened->set_value();
  });
  // After shutdown(): new requests get 503 while the ones in flight finish
  // (httplib cuts chunked responses short once stopped, so it is stopped
  // only then).
  {
    std::unique_lock<std::mutex> lock(s.inflightMutex);
    s.inflightDone.wait(lock, [&] { return s.draining.load() && s.inflight == 0; });
  }
  s.http.stop();
  for (auto &[name, model] : s.models)
    model->scheduler->drain();
  // listen_after_bind returns when every worker closed its connection; an
  // idle keep-alive connection only notices at its keep-alive timeout.
  if (listening.wait_for(std::chrono::seconds(1)) == std::future_status::ready) {
    listener.join();
    return true;
  }
  listener.detach();
  return false;
}

void Server::shutdown() {
  Impl &s = *impl_;
  {
    std::lock_guard<std::mutex> lock(s.inflightMutex);
    s.draining.store(true);
  }
  s.inflightDone.notify_all();
}

void Server::Impl::stream(
    httplib::Response &res, std::shared_ptr<GenerationJob> job,
    std::function<std::string(const GenerationJob::News &)> render) {
  requestLog().stream = true;
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  res.set_chunked_content_provider(
      "text/event-stream",
      [this, job, render](size_t, httplib::DataSink &sink) {
        GenerationJob::News news;
        if (!job->next(news, std::chrono::milliseconds(1000))) {
          // An SSE comment while nothing happens (queued): it keeps proxies
          // from timing out and reveals a client that went away.
          static const std::string ping = ": ping\n\n";
          if (!sink.write(ping.data(), ping.size())) {
            job->cancel();
            return false;
          }
          return true;
        }
        std::string out = render(news);
        if (news.finished) {
          RequestLog &entry = requestLog();
          entry.promptTokens = news.promptTokens;
          entry.completionTokens = news.completionTokens;
          entry.finishReason = news.finishReason;
          entry.timeToFirstToken = job->timeToFirstToken();
          if (!news.error.empty())
            entry.error = news.error;
        }
        if (!out.empty() && !sink.write(out.data(), out.size())) {
          job->cancel();
          return false;
        }
        if (news.finished)
          sink.done();
        return true;
      },
      [this, job](bool success) {
        if (!success)
          job->cancel();
        leave();
      });
}

namespace {
/// The self-pipe of the termination signals: the handler only writes the
/// signal number into it (async-signal-safe); a thread reads it. Handling
/// the signal in any thread works whatever threads libraries started
/// before main (OpenBLAS does), unlike blocking it and sigwait.
int signalPipe[2] = {-1, -1};

extern "C" void onTerminationSignal(int signal) {
  unsigned char byte = static_cast<unsigned char>(signal);
  ssize_t written = ::write(signalPipe[1], &byte, 1);
  (void)written;
}
} // namespace

void qeff::serve::installTerminationHandler() {
  if (signalPipe[0] < 0 && ::pipe2(signalPipe, O_CLOEXEC) != 0)
    return;
  struct sigaction action = {};
  action.sa_handler = onTerminationSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  // A client that goes away must not kill the server.
  std::signal(SIGPIPE, SIG_IGN);
}

bool qeff::serve::runUntilSignal(Server &server,
                                 const std::function<void(int)> &onSignal) {
  installTerminationHandler();
  std::thread waiter([&server, onSignal] {
    bool stopping = false;
    unsigned char byte;
    while (::read(signalPipe[0], &byte, 1) == 1) {
      if (byte == 0) // serve() returned
        return;
      if (stopping) {
        // A second signal: stop waiting for the requests in flight.
        std::fprintf(stderr, "qeff serve: second signal: exiting now\n");
        std::_Exit(128 + byte);
      }
      stopping = true;
      if (onSignal)
        onSignal(byte);
      server.shutdown();
    }
  });
  bool clean = server.serve();
  unsigned char stop = 0;
  ssize_t written = ::write(signalPipe[1], &stop, 1);
  (void)written;
  waiter.join();
  return clean;
}
