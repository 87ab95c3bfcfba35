//===- ServeFuzzUtil.h - a real `qeff serve` for the HTTP fuzz targets -*- C++ -*-===//
//
// Part of qeff. The HTTP targets send their input through a real Server
// (parser, router, authentication, handlers, scheduler, generation on the
// host device, error bodies, response writer) with Server::exchange, and
// check the bytes that come back.
//
// The served model is the continuous-batching seed of ArtifactFuzzer
// (tiny-llama-f32-cb: 2 layers, vocabulary 64, ctx_len 16, 2 cache rows)
// with a character-level BPE tokenizer of 54 tokens written here (so text
// prompts map into the model's vocabulary) and a small chat template.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_TEST_FUZZ_SERVEFUZZUTIL_H
#define QEFF_TEST_FUZZ_SERVEFUZZUTIL_H

#include "runtime/serve/Server.h"
#include "test/fuzz/FuzzUtil.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#ifndef QEFF_SOURCE_DIR
#error "QEFF_SOURCE_DIR must name the source tree (test/fuzz/CMakeLists.txt)"
#endif

namespace qeff::fuzz {

inline std::string readSourceFile(const std::string &relative) {
  std::ifstream in(std::string(QEFF_SOURCE_DIR) + "/" + relative, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// tokenizer.json of a character-level BPE: <unk>, <s>, </s>, lowercase
/// letters, digits, punctuation JSON needs, and a few merges.
inline std::string tinyTokenizerJson() {
  nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
  int id = 0;
  for (const char *special : {"<unk>", "<s>", "</s>"})
    vocab[special] = id++;
  std::string chars = "abcdefghijklmnopqrstuvwxyz0123456789 .,{}\":[]-";
  for (char c : chars)
    vocab[std::string(1, c)] = id++;
  for (const char *merged : {"th", "he", "the", "an", "in"})
    vocab[merged] = id++;
  nlohmann::ordered_json added = nlohmann::ordered_json::array();
  for (int i = 0; i < 3; ++i)
    added.push_back({{"id", i},
                     {"content", i == 0 ? "<unk>" : i == 1 ? "<s>" : "</s>"},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", true}});
  nlohmann::ordered_json tok;
  tok["version"] = "1.0";
  tok["added_tokens"] = added;
  tok["normalizer"] = nullptr;
  tok["pre_tokenizer"] = nullptr;
  tok["post_processor"] = nullptr;
  tok["decoder"] = nullptr;
  tok["model"] = {{"type", "BPE"},
                  {"unk_token", "<unk>"},
                  {"vocab", vocab},
                  {"merges", {"t h", "h e", "th e", "a n", "i n"}}};
  return tok.dump();
}

/// The server, built once per process; null (and a message) when the seed
/// artifact cannot be opened, which fails the target's first input.
inline serve::Server *fuzzServer() {
  static std::unique_ptr<serve::Server> server = [] {
    std::unique_ptr<serve::Server> none;
    std::string seed =
        readSourceFile("test/fuzz/corpus/ArtifactFuzzer/tiny-llama-f32-cb");
    size_t at = seed.find("\n----\n");
    if (at == std::string::npos) {
      std::fprintf(stderr, "fuzz server: the tiny-llama-f32-cb seed is missing\n");
      return none;
    }
    std::string dir = scratchDir() + "/served";
    std::filesystem::create_directories(dir);
    writeScratch("served/model.onnx", std::string_view(seed).substr(0, at));
    writeScratch("served/specializations.json", std::string_view(seed).substr(at + 6));
    writeScratch("served/tokenizer.json", tinyTokenizerJson());
    writeScratch("served/tokenizer_config.json",
                 R"({"bos_token": "<s>", "eos_token": "</s>", "chat_template": )"
                 R"("{% for m in messages %}{{ m.role }}: {{ m.content }}\n)"
                 R"({% endfor %}{% if add_generation_prompt %}assistant: {% endif %}"})");
    auto tokenizer = tokenizer::Tokenizer::fromDirectory(dir);
    if (!tokenizer.ok()) {
      std::fprintf(stderr, "fuzz server: %s\n",
                   std::string(tokenizer.status().message()).c_str());
      return none;
    }
    serve::ServedModelSpec spec;
    spec.name = "m";
    spec.artifactDir = dir;
    spec.sessionOptions.numThreads = 1;
    spec.tokenizer = *tokenizer;
    spec.eosIds = {2};
    spec.vocabSize = 64;
    spec.chat = serve::loadChatRenderer(dir, spec.chatUnavailable);
    serve::ServerOptions options;
    options.apiKey = ""; // the key check has a unit test; fuzz the routes
    options.maxQueue = 4;
    options.maxBodyBytes = 64 << 10;
    std::vector<serve::ServedModelSpec> specs;
    specs.push_back(std::move(spec));
    auto created = serve::Server::create(options, std::move(specs));
    if (!created) {
      std::fprintf(stderr, "fuzz server: %s\n", created.error().c_str());
      return none;
    }
    return std::move(*created);
  }();
  if (!server)
    std::abort();
  return server.get();
}

/// Checks one raw HTTP response (of possibly several pipelined ones):
/// a status line, and a JSON body that parses wherever the response says
/// it is JSON and is not chunked. Aborts on a malformed response or a
/// 500 (an internal error is a bug whatever the input).
inline void checkResponses(const std::string &raw) {
  size_t pos = 0;
  while (pos < raw.size()) {
    if (raw.compare(pos, 9, "HTTP/1.1 ") != 0)
      std::abort();
    int status = std::atoi(raw.c_str() + pos + 9);
    if (status < 100 || status > 599 || status == 500)
      std::abort();
    size_t headersEnd = raw.find("\r\n\r\n", pos);
    if (headersEnd == std::string::npos)
      std::abort();
    if (status < 200) { // interim (100 Continue): no body
      pos = headersEnd + 4;
      continue;
    }
    std::string headers = raw.substr(pos, headersEnd - pos);
    for (char &c : headers)
      c = char(std::tolower(static_cast<unsigned char>(c)));
    size_t body = headersEnd + 4;
    // The answer to HEAD has the headers of a GET and no body: here it is
    // followed by the next response or by nothing.
    if (body == raw.size() || raw.compare(body, 9, "HTTP/1.1 ") == 0) {
      pos = body;
      continue;
    }
    size_t length = std::string::npos;
    if (size_t at = headers.find("\r\ncontent-length: "); at != std::string::npos)
      length = std::strtoull(headers.c_str() + at + 18, nullptr, 10);
    if (headers.find("transfer-encoding: chunked") != std::string::npos) {
      // Server-sent events: every "data: " line but [DONE] is JSON.
      size_t end = raw.find("\r\n0\r\n\r\n", body);
      if (end == std::string::npos)
        std::abort();
      std::string events = raw.substr(body, end - body);
      for (size_t at = events.find("data: "); at != std::string::npos;
           at = events.find("data: ", at + 6)) {
        size_t eol = events.find('\n', at);
        std::string payload = events.substr(at + 6, eol - at - 6);
        if (payload != "[DONE]" && !nlohmann::json::accept(payload))
          std::abort();
      }
      pos = end + 7;
      continue;
    }
    if (length == std::string::npos || body + length > raw.size())
      std::abort();
    // A compressed body (Accept-Encoding: gzip) is not checked.
    if (headers.find("content-type: application/json") != std::string::npos &&
        headers.find("content-encoding:") == std::string::npos &&
        !nlohmann::json::accept(raw.substr(body, length)))
      std::abort();
    pos = body + length;
  }
}

} // namespace qeff::fuzz

#endif // QEFF_TEST_FUZZ_SERVEFUZZUTIL_H
