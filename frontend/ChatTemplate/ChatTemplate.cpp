//===- ChatTemplate.cpp - The public API: parse and render ----------------===//

#include "frontend/ChatTemplate/ChatTemplate.h"

#include "frontend/ChatTemplate/Ast.h"
#include "frontend/ChatTemplate/Interpreter.h"

#include <new>

namespace qeff::chat {

ChatTemplate::ChatTemplate(std::shared_ptr<const detail::Template> impl)
    : impl(std::move(impl)) {}

const std::string &ChatTemplate::source() const { return impl->source; }

absl::StatusOr<ChatTemplate> ChatTemplate::parse(std::string_view source) {
  try {
    return ChatTemplate(detail::parseTemplate(source));
  } catch (const detail::TemplateError &e) {
    return absl::Status(e.code, "chat template: " + e.message);
  } catch (const std::bad_alloc &) {
    return absl::ResourceExhaustedError("chat template: out of memory");
  }
}

namespace {

template <typename Json>
absl::StatusOr<std::string> renderJson(const detail::Template &tmpl,
                                       const Json &context,
                                       const RenderLimits &limits) {
  try {
    return detail::render(tmpl, detail::Value::fromJson(context), limits);
  } catch (const detail::TemplateError &e) {
    if (e.raised)
      return absl::Status(e.code, e.message);
    return absl::Status(e.code, "chat template: " + e.message);
  } catch (const std::bad_alloc &) {
    return absl::ResourceExhaustedError("chat template: out of memory");
  }
}

} // namespace

absl::StatusOr<std::string>
ChatTemplate::render(const nlohmann::json &context) const {
  return renderJson(*impl, context, RenderLimits());
}

absl::StatusOr<std::string>
ChatTemplate::render(const nlohmann::ordered_json &context) const {
  return renderJson(*impl, context, RenderLimits());
}

absl::StatusOr<std::string>
ChatTemplate::render(const nlohmann::ordered_json &context,
                     const RenderLimits &limits) const {
  return renderJson(*impl, context, limits);
}

nlohmann::ordered_json makeChatContext(const ChatTemplateInfo &info,
                                       nlohmann::ordered_json messages,
                                       bool addGenerationPrompt,
                                       nlohmann::ordered_json tools) {
  nlohmann::ordered_json context = nlohmann::ordered_json::object();
  context["messages"] = std::move(messages);
  context["tools"] = std::move(tools);
  context["documents"] = nullptr;
  context["add_generation_prompt"] = addGenerationPrompt;
  context["bos_token"] = info.bosToken;
  context["eos_token"] = info.eosToken;
  return context;
}

} // namespace qeff::chat
