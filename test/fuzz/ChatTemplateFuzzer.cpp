//===- ChatTemplateFuzzer.cpp - the chat-template interpreter -------------===//
//
// The input is a chat template (the Jinja source of tokenizer_config.json's
// chat_template): parsed, then rendered with a two-message conversation
// within tight resource limits. Either step may fail with a message; none may
// crash, hang or exceed the limits.
//
//===----------------------------------------------------------------------===//

#include "frontend/ChatTemplate/ChatTemplate.h"

#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view source(reinterpret_cast<const char *>(data), size);
  absl::StatusOr<qeff::chat::ChatTemplate> tmpl =
      qeff::chat::ChatTemplate::parse(source);
  if (!tmpl.ok())
    return 0;
  nlohmann::ordered_json context = {
      {"messages",
       {{{"role", "system"}, {"content", "Be brief."}},
        {{"role", "user"}, {"content", "Hi <b>there</b> \xc3\xa9"}}}},
      {"tools", nullptr},
      {"documents", nullptr},
      {"add_generation_prompt", true},
      {"bos_token", "<s>"},
      {"eos_token", "</s>"}};
  qeff::chat::RenderLimits limits;
  limits.maxOutputBytes = 1u << 20;
  limits.maxLoopIterations = 1u << 16;
  absl::StatusOr<std::string> out = tmpl->render(context, limits);
  if (out.ok() && out->size() > limits.maxOutputBytes)
    std::abort(); // the output bound was not kept
  return 0;
}
