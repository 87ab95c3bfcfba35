//===- Responses.cpp - OpenAI response and stream-chunk bodies ------------===//
//
// Part of qeff. The shapes follow OpenAI's API reference (vLLM's extras:
// prompt_token_ids/token_ids with return_token_ids): chat messages carry
// "refusal": null, every body and chunk carries system_fingerprint, and
// with stream_options.include_usage every chunk before the usage one has
// "usage": null.
//
//===----------------------------------------------------------------------===//

#include "runtime/serve/Protocol.h"

using ojson = nlohmann::ordered_json;

namespace qeff::serve {

std::string openAIFinishReason(const std::string &finishReason) {
  if (finishReason == "eos" || finishReason == "stop_token" ||
      finishReason == "stop_string" || finishReason == "constraint_end")
    return "stop";
  if (finishReason == "max_new_tokens" || finishReason == "context_end")
    return "length";
  return finishReason;
}

ojson usageJson(const Usage &usage) {
  ojson u;
  u["prompt_tokens"] = usage.promptTokens;
  u["completion_tokens"] = usage.completionTokens;
  u["total_tokens"] = usage.promptTokens + usage.completionTokens;
  if (usage.cachedTokens > 0)
    u["prompt_tokens_details"] = {{"cached_tokens", usage.cachedTokens}};
  return u;
}

namespace {

ojson envelope(const Completion &c, const char *object) {
  ojson j;
  j["id"] = c.id;
  j["object"] = object;
  j["created"] = c.created;
  j["model"] = c.model;
  j["system_fingerprint"] = c.systemFingerprint;
  return j;
}

ojson finishReason(const std::string &reason) {
  return reason.empty() ? ojson() : ojson(reason);
}

/// The fields after logprobs that every choice shares.
void finishChoice(ojson &choice, const Choice &c, const Completion &env, bool whole) {
  choice["logprobs"] = c.logprobs;
  choice["finish_reason"] = finishReason(c.finishReason);
  if (env.returnTokenIds) {
    if (whole)
      choice["prompt_token_ids"] = c.promptIds;
    choice["token_ids"] = c.tokenIds;
  }
}

/// A whole response: completions' choices carry text, chat's a message.
ojson wholeResponse(const Completion &c, bool chat, const std::vector<Choice> &choices,
                    const Usage &usage) {
  ojson j = envelope(c, chat ? "chat.completion" : "text_completion");
  ojson list = ojson::array();
  for (const Choice &choice : choices) {
    ojson o;
    o["index"] = choice.index;
    if (chat) {
      ojson message;
      message["role"] = "assistant";
      message["content"] = choice.text;
      message["refusal"] = nullptr;
      o["message"] = std::move(message);
    } else {
      o["text"] = choice.text;
    }
    finishChoice(o, choice, c, /*whole=*/true);
    list.push_back(std::move(o));
  }
  j["choices"] = std::move(list);
  j["usage"] = usageJson(usage);
  return j;
}

} // namespace

ojson completionResponse(const Completion &c, const std::vector<Choice> &choices,
                         const Usage &usage) {
  return wholeResponse(c, /*chat=*/false, choices, usage);
}

ojson chatResponse(const Completion &c, const std::vector<Choice> &choices,
                   const Usage &usage) {
  return wholeResponse(c, /*chat=*/true, choices, usage);
}

ojson completionChunk(const Completion &c, const Choice &delta) {
  ojson j = envelope(c, "text_completion");
  ojson choice;
  choice["index"] = delta.index;
  choice["text"] = delta.text;
  finishChoice(choice, delta, c, /*whole=*/false);
  j["choices"] = ojson::array({choice});
  if (c.usageInChunks)
    j["usage"] = nullptr;
  return j;
}

ojson chatChunk(const Completion &c, const Choice &delta, bool first) {
  ojson j = envelope(c, "chat.completion.chunk");
  ojson d = ojson::object();
  if (first)
    d["role"] = "assistant";
  if (first || !delta.text.empty() || delta.finishReason.empty())
    d["content"] = delta.text;
  ojson choice;
  choice["index"] = delta.index;
  choice["delta"] = d;
  finishChoice(choice, delta, c, /*whole=*/false);
  j["choices"] = ojson::array({choice});
  if (c.usageInChunks)
    j["usage"] = nullptr;
  return j;
}

ojson usageChunk(const Completion &c, bool chat, const Usage &usage) {
  ojson j = envelope(c, chat ? "chat.completion.chunk" : "text_completion");
  j["choices"] = ojson::array();
  j["usage"] = usageJson(usage);
  return j;
}

std::string sseEvent(const std::string &payload) {
  return "data: " + payload + "\n\n";
}

} // namespace qeff::serve
