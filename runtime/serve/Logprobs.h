//===- Logprobs.h - OpenAI logprobs bodies ----------------------*- C++ -*-===//
//
// Part of qeff. The logprobs of generated tokens as OpenAI's two APIs show
// them: completions' {tokens, token_logprobs, top_logprobs, text_offset}
// and chat's {"content": [{token, logprob, bytes, top_logprobs}]}.
// Logprobs below -9999 (only -inf) are shown as -9999, as vLLM does (JSON
// has no infinity).
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_SERVE_LOGPROBS_H
#define QEFF_RUNTIME_SERVE_LOGPROBS_H

#include "runtime/generation/Generator.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace qeff::serve {

/// The string shown for a token id: its text alone (special tokens kept,
/// a SentencePiece word-start space restored, as vLLM's
/// convert_ids_list_to_tokens), or "token_id:<id>" (vLLM's
/// return_tokens_as_token_ids, and always without a tokenizer).
class TokenNames {
public:
  TokenNames(const tokenizer::Tokenizer *tokenizer, bool asIds)
      : tokenizer_(asIds ? nullptr : tokenizer) {}
  std::string operator()(int64_t id) const;

private:
  const tokenizer::Tokenizer *tokenizer_;
};

/// Characters (Unicode code points, as Python's len) of UTF-8 `text`.
int64_t textLength(const std::string &text);

/// Completions' logprobs of `tokens`: top_logprobs maps the chosen token
/// and the alternatives to their logprobs (up to k + 1 entries, as OpenAI
/// and vLLM); text_offset starts at `textOffset` (characters into the
/// choice's text), which is advanced past the tokens.
nlohmann::ordered_json completionLogprobs(const std::vector<runtime::TokenLogprobs> &tokens,
                                          const TokenNames &names,
                                          int64_t &textOffset);

/// Chat's logprobs of `tokens`: top_logprobs lists the alternatives, most
/// likely first.
nlohmann::ordered_json chatLogprobs(const std::vector<runtime::TokenLogprobs> &tokens,
                                    const TokenNames &names);

} // namespace qeff::serve

#endif // QEFF_RUNTIME_SERVE_LOGPROBS_H
