//===- qeff-chat-template.cpp - Render a chat template (test tool) --------===//
//
// Usage: qeff-chat-template <checkpoint_dir> <context.json>
//
// Loads the chat template of <checkpoint_dir> the way qeff does
// (loadChatTemplate), renders it with the JSON object in <context.json>
// (bos_token / eos_token default to the checkpoint's), and writes the prompt
// to stdout byte for byte. Errors go to stderr as "error: <message>" with exit
// status 1; a template's raise_exception exits 2 with its message.
//
//===----------------------------------------------------------------------===//

#include "frontend/ChatTemplate/ChatTemplate.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <checkpoint_dir> <context.json>\n", argv[0]);
    return 64;
  }
  auto info = qeff::chat::loadChatTemplate(argv[1]);
  if (!info.ok()) {
    std::fprintf(stderr, "error: %s\n", info.status().ToString().c_str());
    return 1;
  }
  std::ifstream in(argv[2], std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::ordered_json context =
      nlohmann::ordered_json::parse(text.str(), nullptr, false);
  if (!in || context.is_discarded() || !context.is_object()) {
    std::fprintf(stderr, "error: %s: not a JSON object\n", argv[2]);
    return 1;
  }
  if (!context.contains("bos_token"))
    context["bos_token"] = info->bosToken;
  if (!context.contains("eos_token"))
    context["eos_token"] = info->eosToken;
  absl::StatusOr<std::string> prompt = info->tmpl.render(context);
  if (!prompt.ok()) {
    std::string message(prompt.status().message());
    bool raised = message.rfind("chat template", 0) != 0;
    std::fprintf(stderr, "error: %s\n", message.c_str());
    return raised ? 2 : 1;
  }
  std::fwrite(prompt->data(), 1, prompt->size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}
