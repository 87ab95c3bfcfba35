//===- JsonSchemaFuzzer.cpp - response_format into constrained decoding ---===//
//
// The input is the `response_format` object of a request (a JSON schema
// from the network). It goes where the server sends it: checked and
// compiled into a constraint on the bundled stories260K tokenizer's
// vocabulary (a refusal must say why and name response_format), then a
// generation stands in for the model: at each step a pseudo-random allowed
// token (the input's hash seeds the choice) is taken, up to 400 tokens,
// ending where the constraint allows. What the engine relies on must hold:
// an allowed token is accepted, a state that cannot end allows some token,
// and an output that ended parses as JSON.
//
//===----------------------------------------------------------------------===//

#include "frontend/Tokenizer/Tokenizer.h"
#include "runtime/structured/JsonConstraint.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

#ifndef QEFF_SOURCE_DIR
#error "QEFF_SOURCE_DIR must name the source tree (test/fuzz/CMakeLists.txt)"
#endif

namespace {

std::shared_ptr<const qeff::structured::Vocabulary> vocabulary() {
  static std::shared_ptr<const qeff::structured::Vocabulary> v = [] {
    auto tokenizer = qeff::tokenizer::Tokenizer::fromDirectory(
        std::string(QEFF_SOURCE_DIR) + "/test/data/models/stories260K-hf");
    if (!tokenizer.ok()) {
      std::fprintf(stderr, "JsonSchemaFuzzer: %s\n",
                   std::string(tokenizer.status().message()).c_str());
      std::abort();
    }
    std::string error;
    auto vocab = qeff::structured::makeVocabulary(*tokenizer, error);
    if (!vocab) {
      std::fprintf(stderr, "JsonSchemaFuzzer: %s\n", error.c_str());
      std::abort();
    }
    return vocab;
  }();
  return v;
}

uint64_t next(uint64_t &state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  nlohmann::ordered_json format =
      nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (format.is_discarded())
    return 0;
  std::string error;
  auto vocab = vocabulary();
  auto constraint = qeff::structured::makeResponseFormatConstraint(
      vocab, format, "response_format", error);
  if (!constraint) {
    // {"type": "text"} has no constraint and no error; any refusal names
    // the field.
    if (!error.empty() && error.rfind("response_format", 0) != 0)
      std::abort();
    return 0;
  }
  uint64_t rng = std::hash<std::string>()(text);
  auto matcher = constraint->start();
  std::string output;
  std::vector<uint8_t> allowed;
  std::vector<int64_t> candidates;
  for (int step = 0; step < 400 && !matcher->mustEnd(); ++step) {
    if (matcher->canEnd() && next(rng) % 8 == 0)
      break;
    allowed.assign(vocab->size(), 0);
    matcher->allowedTokens(allowed);
    candidates.clear();
    for (size_t id = 0; id < allowed.size(); ++id)
      if (allowed[id])
        candidates.push_back(int64_t(id));
    if (candidates.empty()) {
      if (!matcher->canEnd())
        std::abort(); // a dead end: the engine would fail the request
      break;
    }
    int64_t token = candidates[next(rng) % candidates.size()];
    const std::string *bytes = vocab->bytes(token, /*atStart=*/step == 0);
    if (!bytes || !matcher->accept(token))
      std::abort(); // allowed but refused
    output += *bytes;
  }
  if ((matcher->mustEnd() || matcher->canEnd()) &&
      !nlohmann::json::accept(output))
    std::abort(); // an output that may end must be JSON
  return 0;
}
