//===- ChatRenderer.cpp - chat templates for /v1/chat/completions ---------===//
//
// Part of qeff. The bridge from the server's ChatRenderer to the chat
// template interpreter (frontend/ChatTemplate): the model's own template,
// rendered with the variables transformers' apply_chat_template gives it.
//
//===----------------------------------------------------------------------===//

#include "runtime/serve/Server.h"

#include "frontend/ChatTemplate/ChatTemplate.h"

#include <memory>

using namespace qeff::serve;

ChatRenderer qeff::serve::loadChatRenderer(const std::string &dir,
                                           std::string &unavailable) {
  absl::StatusOr<chat::ChatTemplateInfo> info = chat::loadChatTemplate(dir);
  if (!info.ok()) {
    unavailable = std::string(info.status().message());
    return {};
  }
  auto shared = std::make_shared<const chat::ChatTemplateInfo>(std::move(*info));
  return [shared](const nlohmann::ordered_json &messages,
                  bool addGenerationPrompt) -> runtime::Result<std::string> {
    absl::StatusOr<std::string> text = shared->tmpl.render(
        chat::makeChatContext(*shared, messages, addGenerationPrompt));
    if (!text.ok())
      return runtime::Error{"the chat template failed: " +
                            std::string(text.status().message())};
    return std::move(*text);
  };
}
