//===- HttpBodyFuzzer.cpp - qeff serve's request bodies -------------------===//
//
// The input is the body of a POST to /v1/completions, /v1/chat/completions
// and /v2/models/{name}/generate: each parser either accepts it or names the
// field at fault, never crashes or allocates without bound.
//
//===----------------------------------------------------------------------===//

#include "runtime/serve/Protocol.h"

#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string body(reinterpret_cast<const char *>(data), size);
  using namespace qeff::serve;
  {
    ApiError error;
    if (!parseCompletionRequest(body, error) && error.message.empty())
      std::abort(); // a refusal must say why
  }
  {
    ApiError error;
    if (!parseChatRequest(body, error) && error.message.empty())
      std::abort();
  }
  {
    ApiError error;
    if (!parseGenerateRequest(body, error) && error.message.empty())
      std::abort();
  }
  return 0;
}
