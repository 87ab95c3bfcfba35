//===- Server.h - the HTTP server of `qeff serve` ---------------*- C++ -*-===//
//
// Part of qeff. An HTTP server (cpp-httplib) over one ModelScheduler per
// served model, speaking OpenAI's API (/v1/completions,
// /v1/chat/completions, /v1/models) and the Triton/KServe v2 protocol
// (health, model metadata and readiness, the generate extension), with
// Prometheus metrics on /metrics and one log line per request.
// docs/serving.md describes the endpoints, errors and metrics.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_SERVE_SERVER_H
#define QEFF_RUNTIME_SERVE_SERVER_H

#include "frontend/Tokenizer/Tokenizer.h"
#include "qeff/runtime/Result.h"
#include "qeff/runtime/Session.h"
#include "runtime/generation/Speculative.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace qeff::serve {

/// Renders a chat (OpenAI `messages`, each content already plain text) into
/// the prompt text with the model's chat template.
using ChatRenderer = std::function<runtime::Result<std::string>(
    const nlohmann::ordered_json &messages, bool addGenerationPrompt)>;

/// The renderer of the chat template of an artifact (or checkpoint)
/// directory (chat_template.jinja, chat_template.json or
/// tokenizer_config.json's chat_template). None there, or one outside the
/// supported Jinja subset: empty, and `unavailable` says why.
ChatRenderer loadChatRenderer(const std::string &dir, std::string &unavailable);

/// One model to serve: its compiled artifact and what the server needs
/// around it.
struct ServedModelSpec {
  std::string name;
  std::string artifactDir;
  runtime::DeviceKind device = runtime::DeviceKind::Host;
  runtime::SessionOptions sessionOptions;
  /// Without one, prompts must be token ids and there is no text.
  std::optional<tokenizer::Tokenizer> tokenizer;
  /// The ids that end a sequence (as `qeff infer` gathers them).
  std::vector<int64_t> eosIds;
  /// Token ids must be below this (0: not checked).
  int64_t vocabSize = 0;
  /// Empty: /v1/chat/completions answers 501 with `chatUnavailable`.
  ChatRenderer chat;
  std::string chatUnavailable;
  /// Speculative decoding (method "" : off).
  runtime::SpeculationSpec speculation;
};

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8000; ///< 0: any free port
  /// Non-empty: /v1/* and /v2/models/* need `Authorization: Bearer <key>`.
  std::string apiKey;
  /// Requests that may wait for a free cache row, per model.
  int64_t maxQueue = 64;
  /// Larger request bodies get 413.
  size_t maxBodyBytes = 4 << 20;
  bool jsonLog = false;
  /// HTTP worker threads at most (each open connection holds one; they
  /// are started on demand).
  int httpThreads = 512;
  /// Headers and body of a request must arrive within this many seconds of
  /// its first byte (408 otherwise).
  double requestTimeoutSeconds = 30;
  /// Idle keep-alive connections close after this many seconds.
  double keepAliveTimeoutSeconds = 30;
  /// Requests per keep-alive connection.
  int64_t keepAliveRequests = 1000;
  /// listen(2) backlog (capped by the kernel's net.core.somaxconn).
  int listenBacklog = 2048;
  /// Requests one client address may be sending at once (from a request's
  /// first byte until its headers and body are in; 0: no limit), enforced
  /// once half the HTTP threads are busy; 429 beyond.
  int maxReceivingPerClient = 32;
  /// Accepted connections that may wait for a worker; 503 beyond.
  int64_t maxPendingConnections = 4096;
  /// Reported by GET /v2.
  std::string version;
  /// A prompt takes the free KV-cache row that already holds its longest
  /// prefix and prefills only the rest (vLLM's --enable-prefix-caching).
  bool prefixCaching = true;
};

class Server {
public:
  /// Opens every model (sessions, engines, scheduler threads).
  static runtime::Result<std::unique_ptr<Server>>
  create(ServerOptions options, std::vector<ServedModelSpec> models);
  ~Server();

  /// Binds the listening socket; returns the port (the chosen one for
  /// port 0).
  runtime::Result<int> bind();
  /// Serves until shutdown(); then waits for the requests in flight (streams
  /// run to their end) and stops the schedulers. Returns false when idle
  /// keep-alive connections were still open after the grace period (the
  /// caller should then exit without destroying the server).
  bool serve();
  /// Stops accepting: new requests get 503, readiness turns false, the
  /// listening socket closes. Safe from any thread (not from a signal
  /// handler: use runUntilSignal).
  void shutdown();

  /// One connection's raw request bytes (one or more pipelined requests)
  /// through the real parser, router and handlers without a socket; the
  /// raw response bytes. For fuzzing and tests.
  std::string exchange(const std::string &requestBytes);

  /// The models' names, in the order given.
  std::vector<std::string> modelNames() const;

  struct Impl;

private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Makes the process's memory go back to the system between requests
/// (call once, before the server's threads start): glibc gives every thread
/// its own malloc arena and raises its mmap threshold after a large block is
/// freed, so request bodies of a few MiB handled on many HTTP threads stay
/// cached in the arenas and RSS ratchets up (95 -> 730 MB under repeated
/// 4 MiB bodies). Arenas are capped and blocks of 256 KiB and more are
/// always mmapped (returned to the system when freed).
void tuneAllocatorForServing();

/// Handles SIGTERM and SIGINT from now on by waking runUntilSignal (and
/// ignores SIGPIPE). Call it early: a signal before it kills the process.
void installTerminationHandler();
/// Serves until SIGTERM or SIGINT arrives, then shuts down gracefully (a
/// second signal exits at once). `onSignal` is told which signal came.
/// Returns serve()'s result.
bool runUntilSignal(Server &server,
                    const std::function<void(int signal)> &onSignal);

} // namespace qeff::serve

#endif // QEFF_RUNTIME_SERVE_SERVER_H
