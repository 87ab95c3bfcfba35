//===- HttpBodyFuzzer.cpp - qeff serve's request bodies -------------------===//
//
// The input is the body of a POST to /v1/completions, /v1/chat/completions
// and /v2/models/{name}/generate. Each parser either accepts it or names the
// field at fault, and its refusal serializes (an error quoting invalid
// UTF-8 once aborted the server); then the body goes through the real
// server (ServeFuzzUtil.h) on each route, and the responses must be well
// formed.
//
//===----------------------------------------------------------------------===//

#include "runtime/serve/Protocol.h"
#include "test/fuzz/ServeFuzzUtil.h"

#include <cstdlib>
#include <string>

namespace {

void refusalSerializes(const qeff::serve::ApiError &error) {
  using namespace qeff::serve;
  if (error.message.empty())
    std::abort(); // a refusal must say why
  if (!nlohmann::json::accept(openAIErrorBody(error)) ||
      !nlohmann::json::accept(v2ErrorBody(error)))
    std::abort();
}

std::string post(const std::string &path, const std::string &body) {
  return "POST " + path +
         " HTTP/1.1\r\nHost: fuzz\r\nContent-Type: application/json\r\n"
         "Content-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string body(reinterpret_cast<const char *>(data), size);
  using namespace qeff::serve;
  {
    ApiError error;
    if (!parseCompletionRequest(body, error))
      refusalSerializes(error);
  }
  {
    ApiError error;
    if (!parseChatRequest(body, error))
      refusalSerializes(error);
  }
  {
    ApiError error;
    if (!parseGenerateRequest(body, error))
      refusalSerializes(error);
  }
  Server *server = qeff::fuzz::fuzzServer();
  for (const char *path :
       {"/v1/completions", "/v1/chat/completions", "/v2/models/m/generate"})
    qeff::fuzz::checkResponses(server->exchange(post(path, body)));
  return 0;
}
