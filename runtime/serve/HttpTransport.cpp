//===- HttpTransport.cpp - connections of `qeff serve` --------------------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "runtime/serve/HttpTransport.h"

#include "runtime/serve/Protocol.h"
#include "runtime/serve/WorkerPool.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace qeff::serve;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

thread_local Connection *tlsConnection = nullptr;

/// Whole milliseconds to `deadline`, rounded up (a poll for them does not
/// return before it).
int millisUntil(Clock::time_point deadline) {
  auto left = std::chrono::ceil<milliseconds>(deadline - Clock::now());
  return int(std::clamp<int64_t>(left.count(), 0, 1 << 30));
}

/// poll(2) for one descriptor, restarted on EINTR with the time left.
int pollOne(int fd, short events, int timeoutMs, short *revents = nullptr) {
  Clock::time_point deadline = Clock::now() + milliseconds(timeoutMs);
  while (true) {
    pollfd p{fd, events, 0};
    int r = ::poll(&p, 1, millisUntil(deadline));
    if (r < 0 && errno == EINTR)
      continue;
    if (revents)
      *revents = p.revents;
    return r;
  }
}

void addressOf(int fd, bool local, std::string &ip, int &port) {
  sockaddr_storage addr;
  socklen_t len = sizeof(addr);
  ip.clear();
  port = 0;
  int r = local ? ::getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &len)
                : ::getpeername(fd, reinterpret_cast<sockaddr *>(&addr), &len);
  if (r != 0)
    return;
  char buffer[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    auto *a = reinterpret_cast<sockaddr_in *>(&addr);
    ::inet_ntop(AF_INET, &a->sin_addr, buffer, sizeof(buffer));
    port = ntohs(a->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    auto *a = reinterpret_cast<sockaddr_in6 *>(&addr);
    ::inet_ntop(AF_INET6, &a->sin6_addr, buffer, sizeof(buffer));
    port = ntohs(a->sin6_port);
  }
  ip = buffer;
}

} // namespace

namespace qeff::serve {

Connection *currentConnection() { return tlsConnection; }

bool Connection::clientGone() const {
  if (fd_ < 0)
    return false;
  short revents = 0;
  if (pollOne(fd_, POLLIN | POLLRDHUP, 0, &revents) <= 0)
    return false;
  if (revents & (POLLERR | POLLHUP | POLLRDHUP | POLLNVAL))
    return true;
  // Readable: a pipelined next request (the client is still there) or EOF.
  char byte;
  ssize_t n = ::recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
                    errno != EINTR);
}

//===----------------------------------------------------------------------===//
// The stream a request is read from and its response written to
//===----------------------------------------------------------------------===//

/// A socket with a read buffer, the request's deadline and byte budget.
/// The library reads request lines a byte at a time, so the buffer matters.
/// It also tells when the request has been received in full (its headers
/// and Content-Length body, or the response started), for the per-client
/// count of requests being received.
class ConnectionStream : public httplib::Stream {
public:
  ConnectionStream(Connection &connection, const TransportOptions &options,
                   std::function<void()> onReceived)
      : connection_(connection), options_(options),
        onReceived_(std::move(onReceived)) {}
  ~ConnectionStream() override { received(); }

  /// The next request starts: its deadline and budget.
  void beginRequest() {
    received();
    receiving_ = true;
    deadline_ = Clock::now() + options_.requestTimeout;
    headerBytes_ = bodyBytes_ = 0;
    headers_.clear();
    tail_ = 0;
    inBody_ = false;
    bodyLength_ = -1;
    responding_ = false;
    connection_.readFailure_.clear();
  }

  bool is_readable() const override {
    if (start_ < end_)
      return true;
    return waitReadable();
  }
  bool is_writable() const override {
    return pollOne(connection_.fd_, POLLOUT,
                   int(options_.writeTimeout.count())) > 0;
  }

  ssize_t read(char *ptr, size_t size) override {
    if (responding_ || !connection_.readFailure_.empty())
      return -1;
    if (start_ == end_) {
      if (!waitReadable())
        return -1;
      ssize_t n;
      do
        n = ::recv(connection_.fd_, buffer_, sizeof(buffer_), 0);
      while (n < 0 && errno == EINTR);
      if (n <= 0)
        return n;
      start_ = 0;
      end_ = size_t(n);
    }
    size_t n = std::min(size, end_ - start_);
    // The library reads the request line and headers a byte at a time, so
    // their end ("\r\n\r\n" or "\n\n") is seen exactly; until then the
    // header budget applies, after it the body's (with room for chunked
    // framing: the library checks the payload itself).
    size_t i = 0;
    if (!inBody_) {
      for (; i < n && !inBody_; ++i) {
        char c = buffer_[start_ + i];
        headers_ += char(std::tolower(static_cast<unsigned char>(c)));
        tail_ = (tail_ << 8) | uint8_t(c);
        inBody_ = (tail_ & 0xffffffffu) == 0x0d0a0d0au || (tail_ & 0xffffu) == 0x0a0au;
        if (++headerBytes_ > options_.maxHeaderBytes) {
          connection_.readFailure_ = "headers";
          return -1;
        }
      }
      if (inBody_)
        headersDone();
    }
    if (inBody_ && i < n) {
      for (size_t k = i; k < n; ++k)
        tail_ = (tail_ << 8) | uint8_t(buffer_[start_ + k]);
      bodyBytes_ += n - i;
      if (bodyBytes_ > options_.maxBodyBytes * 2 + (64u << 10)) {
        connection_.readFailure_ = "body";
        return -1;
      }
      if (bodyLength_ >= 0 && bodyBytes_ >= size_t(bodyLength_))
        received();
    }
    std::memcpy(ptr, buffer_ + start_, n);
    start_ += n;
    return ssize_t(n);
  }

  ssize_t write(const char *ptr, size_t size) override {
    // The response has started: the request is complete, its deadline no
    // longer applies. Not so for the interim "100 Continue" the library
    // writes (in one piece) before reading a body sent with
    // "Expect: 100-continue", as curl does for large bodies.
    static const char kContinue[] = "HTTP/1.1 100 ";
    if (!(size >= sizeof(kContinue) - 1 &&
          std::memcmp(ptr, kContinue, sizeof(kContinue) - 1) == 0)) {
      responding_ = true;
      received();
    }
    if (!is_writable())
      return -1;
    ssize_t n;
    do
      n = ::send(connection_.fd_, ptr, size, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n;
  }

  void get_remote_ip_and_port(std::string &ip, int &port) const override {
    addressOf(connection_.fd_, false, ip, port);
  }
  void get_local_ip_and_port(std::string &ip, int &port) const override {
    addressOf(connection_.fd_, true, ip, port);
  }
  socket_t socket() const override { return connection_.fd_; }

  /// Bytes received but not yet read (a pipelined request's start).
  bool hasBuffered() const { return start_ < end_; }
  /// Part of a response was written for the current request.
  bool responding() const { return responding_; }
  /// Bytes of the current request read so far.
  size_t consumed() const { return headerBytes_ + bodyBytes_; }

  /// After a response: reads and drops what is left of the request's body
  /// (a request answered without reading it, e.g. a 401 from the
  /// authentication check, or a 413), so that the next request on the
  /// connection starts at its first byte. False when the connection must
  /// close instead: a chunked body not seen to its end, or a rest larger
  /// than the body limit or slower than the request's deadline.
  bool skipRestOfBody() {
    if (!inBody_)
      return true; // nothing of the request after its headers
    if (bodyLength_ < 0)
      // Chunked: complete when the last bytes read were the last chunk
      // ("0\r\n\r\n", no trailers).
      return (tail_ & 0xffffffffffull) == 0x300d0a0d0aull;
    if (size_t(bodyLength_) <= bodyBytes_)
      return true;
    size_t rest = size_t(bodyLength_) - bodyBytes_;
    if (rest > options_.maxBodyBytes)
      return false;
    responding_ = false; // read() refuses to read once a response started
    char sink[4096];
    while (rest > 0) {
      ssize_t n = read(sink, std::min(rest, sizeof(sink)));
      if (n <= 0)
        return false;
      rest -= size_t(n);
    }
    return true;
  }

private:
  /// The header block is in: how much body follows. Only for the count of
  /// requests being received (the library parses the request for real);
  /// a chunked body counts until the response starts.
  void headersDone() {
    bodyLength_ = 0;
    if (headers_.find("\ntransfer-encoding:") != std::string::npos) {
      bodyLength_ = -1;
      return;
    }
    size_t at = headers_.find("\ncontent-length:");
    if (at != std::string::npos)
      bodyLength_ = std::strtoll(headers_.c_str() + at + 16, nullptr, 10);
    if (bodyLength_ <= 0)
      received();
  }

  void received() {
    if (receiving_) {
      receiving_ = false;
      if (onReceived_)
        onReceived_();
    }
  }

  bool waitReadable() const {
    int untilDeadline = millisUntil(deadline_);
    if (untilDeadline <= 0) {
      connection_.readFailure_ = "deadline";
      return false;
    }
    bool deadlineFirst = untilDeadline <= options_.readTimeout.count();
    int wait = deadlineFirst ? untilDeadline : int(options_.readTimeout.count());
    if (pollOne(connection_.fd_, POLLIN, wait) > 0)
      return true;
    connection_.readFailure_ = deadlineFirst ? "deadline" : "silence";
    return false;
  }

  Connection &connection_;
  const TransportOptions &options_;
  std::function<void()> onReceived_;
  bool receiving_ = false;
  Clock::time_point deadline_ = Clock::now();
  size_t headerBytes_ = 0, bodyBytes_ = 0;
  std::string headers_; ///< lowercased, at most maxHeaderBytes
  uint64_t tail_ = 0; ///< the last bytes read, newest lowest
  bool inBody_ = false;
  int64_t bodyLength_ = -1;
  bool responding_ = false;
  char buffer_[4096];
  size_t start_ = 0, end_ = 0;
};

namespace {

/// The in-memory stream of HttpTransport::exchange.
class MemoryStream : public httplib::Stream {
public:
  MemoryStream(const std::string &in, std::string &out) : in_(in), out_(out) {}
  bool is_readable() const override { return pos_ < in_.size(); }
  bool is_writable() const override { return true; }
  ssize_t read(char *ptr, size_t size) override {
    size_t n = std::min(size, in_.size() - pos_);
    std::memcpy(ptr, in_.data() + pos_, n);
    pos_ += n;
    return ssize_t(n);
  }
  ssize_t write(const char *ptr, size_t size) override {
    out_.append(ptr, size);
    return ssize_t(size);
  }
  void get_remote_ip_and_port(std::string &ip, int &port) const override {
    ip = "";
    port = 0;
  }
  void get_local_ip_and_port(std::string &ip, int &port) const override {
    ip = "";
    port = 0;
  }
  socket_t socket() const override { return INVALID_SOCKET; }
  bool done() const { return pos_ >= in_.size(); }

private:
  const std::string &in_;
  std::string &out_;
  size_t pos_ = 0;
};

} // namespace

//===----------------------------------------------------------------------===//
// HttpTransport
//===----------------------------------------------------------------------===//

HttpTransport::HttpTransport() { configure(TransportOptions()); }

HttpTransport::~HttpTransport() = default;

void HttpTransport::configure(const TransportOptions &options) {
  options_ = options;
  options_.keepAliveRequests = std::max<size_t>(1, options_.keepAliveRequests);
  set_keep_alive_max_count(options_.keepAliveRequests);
  // What the Keep-Alive response header announces.
  set_keep_alive_timeout(time_t(
      std::chrono::ceil<std::chrono::seconds>(options_.keepAliveTimeout).count()));
  set_payload_max_length(options_.maxBodyBytes);
  // The library deletes the queue it is given when listening ends; the
  // pool itself stays with the transport, so that no pointer to it dangles.
  struct Forward : httplib::TaskQueue {
    explicit Forward(WorkerPool &pool) : pool(pool) {}
    void enqueue(std::function<void()> fn) override { pool.enqueue(std::move(fn)); }
    void shutdown() override { pool.shutdown(); }
    WorkerPool &pool;
  };
  new_task_queue = [this] {
    pool_ = std::make_unique<WorkerPool>(size_t(std::max(1, options_.maxThreads)),
                                         options_.maxPendingConnections);
    return new Forward(*pool_);
  };
}

bool HttpTransport::applyBacklog() {
  return ::listen(svr_sock_, std::max(1, options_.backlog)) == 0;
}

bool HttpTransport::awaitRequest(int fd, bool first) {
  // Before the first request of a connection the client gets the request
  // timeout to start (a busy client may connect well before it writes);
  // between requests, the keep-alive timeout. Either way the worker goes to
  // a waiting connection when the pool can grow no more: at once between
  // requests, after a second before the first.
  Clock::time_point began = Clock::now();
  Clock::time_point deadline =
      began + (first ? options_.requestTimeout : options_.keepAliveTimeout);
  while (true) {
    if (svr_sock_ == INVALID_SOCKET)
      return false; // stopping
    if (pool_ && (!first || Clock::now() - began >= std::chrono::seconds(1)) &&
        pool_->starved())
      return false;
    short revents = 0;
    int r = pollOne(fd, POLLIN, std::min(50, millisUntil(deadline)), &revents);
    if (r < 0)
      return false;
    if (r > 0) {
      if (revents & (POLLERR | POLLNVAL))
        return false;
      char byte;
      ssize_t n = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
      return n > 0;
    }
    if (Clock::now() >= deadline)
      return false;
  }
}

namespace {

const char *reasonPhrase(int status) {
  switch (status) {
  case 408:
    return "Request Timeout";
  case 431:
    return "Request Header Fields Too Large";
  case 429:
    return "Too Many Requests";
  default:
    return "Service Unavailable";
  }
}

std::string seconds(milliseconds d) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", d.count() / 1000.0);
  return buffer;
}

/// An OpenAI-shaped error response that closes the connection, written
/// without blocking (a fresh or idle socket's send buffer has room).
void writeError(int fd, int status, const std::string &code,
                const std::string &message) {
  ApiError error;
  error.status = status;
  error.type = status < 500 && status != 429 ? "invalid_request_error"
                                             : "server_error";
  error.code = code;
  error.message = message;
  std::string body = openAIErrorBody(error);
  std::string response = "HTTP/1.1 " + std::to_string(status) + " " +
                         reasonPhrase(status) +
                         "\r\nContent-Type: application/json\r\nContent-Length: " +
                         std::to_string(body.size()) + "\r\n" +
                         (status == 429 || status == 503 ? "Retry-After: 1\r\n" : "") +
                         "Connection: close\r\n\r\n" + body;
  ssize_t sent = ::send(fd, response.data(), response.size(),
                        MSG_NOSIGNAL | MSG_DONTWAIT);
  (void)sent;
}

} // namespace

namespace {

/// Closes a connection whose client may still be sending (a request refused
/// before it was read): stop writing, read and discard what comes for a
/// short while (a quarter second: the worker is held meanwhile), then
/// close, so that the client has read the answer before a reset can drop
/// it (nginx's lingering close, shortened).
void lingeringClose(int fd) {
  ::shutdown(fd, SHUT_WR);
  char sink[16384];
  Clock::time_point end = Clock::now() + milliseconds(250);
  size_t drained = 0;
  while (drained < (16u << 20)) {
    int wait = millisUntil(end);
    if (wait <= 0 || pollOne(fd, POLLIN, wait) <= 0)
      break;
    ssize_t n = ::recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
    if (n <= 0)
      break;
    drained += size_t(n);
  }
  ::close(fd);
}

} // namespace

void HttpTransport::refuse(int fd) {
  writeError(fd, 503, "overloaded",
             "The server is overloaded: " +
                 std::to_string(options_.maxPendingConnections) +
                 " connections are already waiting for a worker; retry later");
  ::close(fd);
}

bool HttpTransport::process_and_close_socket(socket_t sock) {
  if (WorkerPool::refusing()) {
    refuse(sock);
    return false;
  }
  Connection connection;
  connection.fd_ = sock;
  int port = 0;
  addressOf(sock, false, connection.peer_, port);
  ++open_;
  tlsConnection = &connection;
  // The per-client limit counts requests being received: from their first
  // byte until their headers and body are in. A client whose requests
  // arrive promptly never reaches it, however many connections it opens; a
  // slow sender (slowloris) holds at most the limit's workers once they
  // grow scarce.
  const int limit = options_.maxReceivingPerClient;
  auto receivedOne = [this, &connection] {
    std::lock_guard<std::mutex> lock(clientsMutex_);
    auto it = clients_.find(connection.peer_);
    if (it != clients_.end() && --it->second <= 0)
      clients_.erase(it);
  };
  ConnectionStream stream(connection, options_,
                          limit > 0 ? std::function<void()>(receivedOne)
                                    : std::function<void()>());
  bool ret = false;
  bool linger = false;
  for (size_t left = options_.keepAliveRequests; left > 0; --left) {
    bool first = left == options_.keepAliveRequests;
    if (!stream.hasBuffered() && !awaitRequest(sock, first))
      break;
    if (limit > 0) {
      // Enforced once workers grow scarce (half of them busy): until then
      // a client sending many large bodies at once costs nobody anything.
      bool scarce =
          pool_ && pool_->busy() * 2 >= size_t(std::max(1, options_.maxThreads));
      std::lock_guard<std::mutex> lock(clientsMutex_);
      int &receiving = clients_[connection.peer_];
      if (scarce && receiving >= limit) {
        linger = true;
        writeError(sock, 429, "too_many_connections",
                   "Too many requests being sent at once from " + connection.peer_ +
                       ": at most " + std::to_string(limit) +
                       " (--max-receiving-per-client)");
        break;
      }
      ++receiving;
    }
    stream.beginRequest();
    bool closed = false;
    ret = process_request(stream, /*close_connection=*/left == 1, closed, nullptr);
    if (!connection.readFailure_.empty()) {
      // The library answers a request it could not read in full with the
      // error handler's 400 (mapped to 408/413/431 there), except when the
      // request line itself was cut: then it writes nothing.
      const std::string &why = connection.readFailure_;
      if (!stream.responding() && stream.consumed() > 0) {
        if (why == "headers")
          writeError(sock, 431, "request_header_fields_too_large",
                     "The request line is longer than this server accepts (" +
                         std::to_string(options_.maxHeaderBytes) + " bytes)");
        else
          writeError(sock, 408, "request_timeout",
                     why == "deadline"
                         ? "The request was not received within " +
                               seconds(options_.requestTimeout) +
                               " s of its first byte (--request-timeout)"
                         : "The client sent nothing for " +
                               seconds(options_.readTimeout) +
                               " s in the middle of its request");
      }
      linger = true;
      break;
    }
    if (!ret || closed || !stream.skipRestOfBody())
      break;
  }
  tlsConnection = nullptr;
  --open_;
  if (linger) {
    lingeringClose(sock);
  } else {
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
  }
  return ret;
}

std::string HttpTransport::exchange(const std::string &requestBytes) {
  std::string out;
  MemoryStream stream(requestBytes, out);
  Connection connection;
  Connection *outer = tlsConnection;
  tlsConnection = &connection;
  // The library ends chunked responses early while the server is "shutting
  // down", which it takes an unbound listening socket to mean.
  int placeholder = -1;
  if (svr_sock_ == INVALID_SOCKET) {
    placeholder = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    svr_sock_ = placeholder;
  }
  for (size_t left = options_.keepAliveRequests; left > 0 && !stream.done(); --left) {
    bool closed = false;
    connection.readFailure_.clear();
    if (!process_request(stream, left == 1, closed, nullptr) || closed)
      break;
  }
  if (placeholder >= 0) {
    svr_sock_ = INVALID_SOCKET;
    ::close(placeholder);
  }
  tlsConnection = outer;
  return out;
}

} // namespace qeff::serve
