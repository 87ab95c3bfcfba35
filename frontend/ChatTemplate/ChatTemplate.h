//===- ChatTemplate.h - Hugging Face chat templates (Jinja) -----*- C++ -*-===//
//
// QEffChatTemplate renders a model's `chat_template` (the Jinja source in
// tokenizer_config.json) exactly as Hugging Face transformers'
// `apply_chat_template` does: jinja2's ImmutableSandboxedEnvironment with
// trim_blocks, lstrip_blocks and the loopcontrols extension, the globals
// `raise_exception` and `strftime_now`, and transformers' own `tojson` filter
// (json.dumps with ensure_ascii=False).
//
// Only the subset of Jinja that real chat templates use is implemented (see
// docs/chat-templates.md). Anything else is a parse error naming line:column
// and the construct, reported by ChatTemplate::parse, so an unsupported
// template is refused when the model loads, never rendered into a wrong
// prompt. Rendering errors (raise_exception, undefined attributes, type
// errors) are statuses; the interpreter bounds nesting depth, loop
// iterations, macro recursion and output size so that no template can hang
// or exhaust memory. Parse and render keep no global state.
//
// Example:
//   auto info = qeff::chat::loadChatTemplate("stories260K-chat");
//   if (!info.ok()) return info.status();
//   nlohmann::ordered_json messages = {{{"role", "user"}, {"content", "Hi"}}};
//   absl::StatusOr<std::string> prompt = info->tmpl.render(
//       qeff::chat::makeChatContext(*info, messages, /*addGenerationPrompt=*/true));
//   // *prompt == "<|user|>\nHi</s>\n<|assistant|>\n" (Zephyr's template)
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_CHATTEMPLATE_CHATTEMPLATE_H
#define QEFF_FRONTEND_CHATTEMPLATE_CHATTEMPLATE_H

#include "absl/status/statusor.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace qeff::chat {

namespace detail {
struct Template;
} // namespace detail

/// Resource bounds for one render. A template exceeding one fails with
/// ResourceExhausted naming the bound.
struct RenderLimits {
  /// Bytes of output, and of any single string or list built on the way.
  size_t maxOutputBytes = 8u << 20;
  /// Loop iterations summed over all loops of one render.
  uint64_t maxLoopIterations = 1u << 20;
  /// Nested macro calls.
  unsigned maxCallDepth = 64;
};

/// A parsed chat template. Cheap to copy (the syntax tree is shared and
/// immutable); render is const and may run concurrently from many threads.
class ChatTemplate {
public:
  /// Lexes and parses `source`. Syntax errors and constructs outside the
  /// supported subset are InvalidArgument errors "line L:C: ...".
  static absl::StatusOr<ChatTemplate> parse(std::string_view source);

  /// Renders with the variables of the JSON object `context` (messages,
  /// add_generation_prompt, bos_token, eos_token, tools, ...). Objects keep
  /// nlohmann::json's key order (sorted); use the ordered_json overload to
  /// keep the caller's order, as Python dicts do (it shows in `tojson`).
  /// raise_exception(msg) yields InvalidArgument with exactly `msg`; other
  /// template errors are InvalidArgument "line L:C: ..."; exceeded limits
  /// ResourceExhausted.
  absl::StatusOr<std::string> render(const nlohmann::json &context) const;
  absl::StatusOr<std::string> render(const nlohmann::ordered_json &context) const;

  /// The same with explicit resource limits.
  absl::StatusOr<std::string> render(const nlohmann::ordered_json &context,
                                     const RenderLimits &limits) const;

  /// The template source as given to parse.
  const std::string &source() const;

private:
  explicit ChatTemplate(std::shared_ptr<const detail::Template> impl);
  std::shared_ptr<const detail::Template> impl;
};

/// A checkpoint's (or artifact's) chat template with its special tokens.
struct ChatTemplateInfo {
  ChatTemplate tmpl;
  std::string bosToken, eosToken;
};

/// The variables transformers' apply_chat_template renders with: `messages`,
/// `tools` (null when there are none, so `tools is defined` holds as in
/// transformers), `documents` (null), `add_generation_prompt`, `bos_token`
/// and `eos_token`. Callers add template kwargs (e.g. `enable_thinking`) to
/// the returned object.
nlohmann::ordered_json makeChatContext(const ChatTemplateInfo &info,
                                       nlohmann::ordered_json messages,
                                       bool addGenerationPrompt,
                                       nlohmann::ordered_json tools = nullptr);

/// Loads the chat template of an HF checkpoint or qeff artifact directory:
/// `chat_template.jinja`, else `chat_template.json` ({"chat_template": ...}),
/// else tokenizer_config.json's `chat_template` (a string, or a list of
/// {name, template} of which "default" is used). bos/eos come from
/// tokenizer_config.json as strings or AddedToken objects ({"content": ...});
/// absent ones are "". No template anywhere is NotFound; a malformed file or
/// a template outside the supported subset is InvalidArgument naming the
/// file.
absl::StatusOr<ChatTemplateInfo>
loadChatTemplate(const std::string &checkpointOrArtifactDir);

} // namespace qeff::chat

#endif // QEFF_FRONTEND_CHATTEMPLATE_CHATTEMPLATE_H
