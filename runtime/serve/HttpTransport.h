//===- HttpTransport.h - connections of `qeff serve` ------------*- C++ -*-===//
//
// Part of qeff. cpp-httplib (Debian's 0.11.4) parses and routes requests;
// this class owns what happens to a connection around that, because the
// library's own connection loop lets one slow or bursty client starve the
// server:
//
//  - whole-request deadlines: headers and body must arrive within
//    `requestTimeout` of the request's first byte (the library's read
//    timeout restarts with every byte, so a client trickling one byte a
//    second holds a worker forever); a late request gets 408;
//  - a byte budget per request (the library reads a header line of any
//    length into memory): past it the request gets 431 or 413;
//  - a per-client limit on requests being received at once, enforced once
//    half the workers are busy (429 beyond it: a slow sender holds at most
//    that many workers, while a client whose requests arrive promptly never
//    reaches it), a worker pool that grows
//    on demand up to `maxThreads` and shrinks when idle, a bounded number of
//    connections waiting for a worker (503 + Retry-After beyond it), and
//    idle keep-alive connections that give their worker up as soon as
//    another connection waits for one (as nginx reuses idle keep-alive
//    connections when it runs short);
//  - a listen backlog of `backlog` (the library listens with 5, so a burst
//    of connects waits for SYN retransmits) and `keepAliveRequests` requests
//    per connection (the library's default is 5).
//
// It also gives a handler its connection (currentConnection): whether the
// client has gone away, so a whole (not streamed) generation can be
// cancelled. And `exchange` runs raw request bytes through the real parser
// and router without a socket, for the fuzz target and unit tests.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_SERVE_HTTPTRANSPORT_H
#define QEFF_RUNTIME_SERVE_HTTPTRANSPORT_H

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace qeff::serve {

struct TransportOptions {
  /// Headers and body of one request must arrive within this long of its
  /// first byte.
  std::chrono::milliseconds requestTimeout{30000};
  /// Longest silence while a request is being read (the library's read
  /// timeout).
  std::chrono::milliseconds readTimeout{5000};
  /// A response write that makes no progress for this long ends the
  /// connection (a client that stopped reading).
  std::chrono::milliseconds writeTimeout{30000};
  /// An idle keep-alive connection is closed after this long.
  std::chrono::milliseconds keepAliveTimeout{30000};
  /// Requests per connection before the server closes it.
  size_t keepAliveRequests = 1000;
  /// listen(2) backlog (the kernel caps it at net.core.somaxconn).
  int backlog = 2048;
  /// Worker threads at most; each open connection holds one.
  int maxThreads = 512;
  /// Requests one client address may be sending at once, from a request's
  /// first byte until its headers and body are in, enforced once half the
  /// worker threads are busy (0: no limit).
  int maxReceivingPerClient = 32;
  /// Accepted connections that may wait for a worker; more get 503.
  size_t maxPendingConnections = 4096;
  /// Bytes of one request's line and headers at most.
  size_t maxHeaderBytes = 64 << 10;
  /// Bytes of one request's body at most (as the library's payload limit).
  size_t maxBodyBytes = 4 << 20;
};

/// The connection a handler runs on (see currentConnection()).
class Connection {
public:
  /// The client's address ("" for an in-memory exchange).
  const std::string &peer() const { return peer_; }
  /// The client closed the connection (or reset it). Never true for an
  /// in-memory exchange.
  bool clientGone() const;
  /// Why reading the current request failed: "" (it did not), "deadline"
  /// (requestTimeout passed), "silence" (nothing for readTimeout),
  /// "headers" or "body" (past the byte budget). The connection then
  /// closes after the response.
  const std::string &readFailure() const { return readFailure_; }

private:
  friend class HttpTransport;
  friend class ConnectionStream;
  int fd_ = -1;
  std::string peer_;
  std::string readFailure_;
};

/// The connection of the request being handled on this thread, or null
/// outside a handler.
Connection *currentConnection();

class WorkerPool;

class HttpTransport : public httplib::Server {
public:
  HttpTransport();
  ~HttpTransport() override;

  /// Call before bind: applies the limits (and the library's own
  /// keep-alive count, timeouts and payload limit).
  void configure(const TransportOptions &options);
  const TransportOptions &options() const { return options_; }

  /// After bind_to_port/bind_to_any_port: listens again with the
  /// configured backlog. False (errno set) when listen(2) fails.
  bool applyBacklog();

  /// One connection's worth of raw request bytes (possibly several
  /// pipelined requests) through the parser and router, without a socket;
  /// returns the raw response bytes. For fuzzing and tests.
  std::string exchange(const std::string &requestBytes);

  /// Connections being served and waiting for a worker (for /metrics).
  int64_t openConnections() const { return open_.load(); }

private:
  bool process_and_close_socket(socket_t sock) override;
  /// Waits for the next request's first byte; false when the connection
  /// should close instead (idle for requestTimeout before the first
  /// request or keepAliveTimeout between requests, server stopping, the
  /// worker is wanted by a waiting connection, or the client closed).
  bool awaitRequest(int fd, bool first);
  /// Answers 503 without reading the request, and closes (on the accept
  /// thread, for a connection that cannot even wait for a worker).
  void refuse(int fd);

  TransportOptions options_;
  /// Created when listening starts (before any connection is served).
  std::unique_ptr<WorkerPool> pool_;
  std::mutex clientsMutex_;
  /// Client address -> its requests being received.
  std::map<std::string, int> clients_;
  std::atomic<int64_t> open_{0};
};

} // namespace qeff::serve

#endif // QEFF_RUNTIME_SERVE_HTTPTRANSPORT_H
