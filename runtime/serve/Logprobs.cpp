//===- Logprobs.cpp - OpenAI logprobs bodies ------------------------------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "runtime/serve/Logprobs.h"

#include "frontend/Tokenizer/Tokenizer.h"

#include <algorithm>

using ojson = nlohmann::ordered_json;
using qeff::runtime::TokenLogprobs;

namespace qeff::serve {

namespace {

/// SentencePiece's word-start marker (U+2581).
const std::string kSpaceMarker = "\xE2\x96\x81";

double shown(double logprob) { return std::max(logprob, -9999.0); }

} // namespace

std::string TokenNames::operator()(int64_t id) const {
  if (!tokenizer_)
    return "token_id:" + std::to_string(id);
  const int64_t single[] = {id};
  std::string text = tokenizer_->decode(single, /*skipSpecialTokens=*/false);
  // Decoding one token drops the space its piece starts with (Metaspace's
  // first-token rule); put back as many as the piece has markers.
  if (std::optional<std::string> piece = tokenizer_->idToToken(id)) {
    size_t markers = 0;
    while (piece->compare(markers * kSpaceMarker.size(), kSpaceMarker.size(),
                          kSpaceMarker) == 0)
      ++markers;
    size_t spaces = text.find_first_not_of(' ');
    spaces = spaces == std::string::npos ? text.size() : spaces;
    if (markers > spaces)
      text.insert(0, markers - spaces, ' ');
  }
  return text;
}

int64_t textLength(const std::string &text) {
  return std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  });
}

ojson completionLogprobs(const std::vector<TokenLogprobs> &tokens,
                         const TokenNames &names, int64_t &textOffset) {
  ojson strings = ojson::array(), logprobs = ojson::array(), tops = ojson::array(),
        offsets = ojson::array();
  for (const TokenLogprobs &t : tokens) {
    std::string name = names(t.token);
    strings.push_back(name);
    logprobs.push_back(shown(t.logprob));
    // The chosen token first, then the alternatives (vLLM's order).
    ojson top = ojson::object();
    top[name] = shown(t.logprob);
    for (const auto &[id, logprob] : t.top) {
      std::string other = names(id);
      if (!top.contains(other))
        top[other] = shown(logprob);
    }
    tops.push_back(std::move(top));
    offsets.push_back(textOffset);
    textOffset += textLength(name);
  }
  ojson j;
  j["tokens"] = std::move(strings);
  j["token_logprobs"] = std::move(logprobs);
  j["top_logprobs"] = std::move(tops);
  j["text_offset"] = std::move(offsets);
  return j;
}

namespace {
ojson chatEntry(const std::string &name, double logprob) {
  ojson e;
  e["token"] = name;
  e["logprob"] = shown(logprob);
  ojson bytes = ojson::array();
  for (unsigned char c : name)
    bytes.push_back(int(c));
  e["bytes"] = std::move(bytes);
  return e;
}
} // namespace

ojson chatLogprobs(const std::vector<TokenLogprobs> &tokens, const TokenNames &names) {
  ojson content = ojson::array();
  for (const TokenLogprobs &t : tokens) {
    ojson entry = chatEntry(names(t.token), t.logprob);
    ojson top = ojson::array();
    for (const auto &[id, logprob] : t.top)
      top.push_back(chatEntry(names(id), logprob));
    entry["top_logprobs"] = std::move(top);
    content.push_back(std::move(entry));
  }
  ojson j;
  j["content"] = std::move(content);
  return j;
}

} // namespace qeff::serve
