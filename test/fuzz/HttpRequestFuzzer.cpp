//===- HttpRequestFuzzer.cpp - whole HTTP requests into qeff serve --------===//
//
// The input is the raw bytes a client sends on one connection: request
// lines, headers (methods, paths with percent-escapes, Content-Length,
// chunked bodies, Authorization, Expect, ...) and bodies, possibly several
// pipelined requests. They go through the real server (ServeFuzzUtil.h):
// cpp-httplib's parser, the pre-routing authentication, every route, the
// handlers and the generation they start, and the error handler; every
// response that comes back must be well formed (a status line, JSON bodies
// that parse, no 500).
//
//===----------------------------------------------------------------------===//

#include "test/fuzz/ServeFuzzUtil.h"

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string request(reinterpret_cast<const char *>(data), size);
  qeff::fuzz::checkResponses(qeff::fuzz::fuzzServer()->exchange(request));
  return 0;
}
