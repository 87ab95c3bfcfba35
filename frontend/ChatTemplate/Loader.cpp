//===- Loader.cpp - Finding a checkpoint's chat template ------------------===//
//
// transformers reads the template from chat_template.jinja (newest), from
// chat_template.json, or from tokenizer_config.json's `chat_template`; the
// special tokens come from tokenizer_config.json, as plain strings or
// AddedToken objects.
//
//===----------------------------------------------------------------------===//

#include "frontend/ChatTemplate/ChatTemplate.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace qeff::chat {
namespace {

constexpr std::uintmax_t kMaxFileBytes = 256u << 20;

absl::StatusOr<std::string> readFile(const std::filesystem::path &path) {
  std::error_code ec;
  std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec)
    return absl::NotFoundError(path.string() + ": " + ec.message());
  if (size > kMaxFileBytes)
    return absl::InvalidArgumentError(path.string() + ": file of " +
                                      std::to_string(size) +
                                      " bytes is too large");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return absl::NotFoundError(path.string() + ": cannot open");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

absl::StatusOr<nlohmann::json> readJson(const std::filesystem::path &path) {
  absl::StatusOr<std::string> text = readFile(path);
  if (!text.ok())
    return text.status();
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded())
    return absl::InvalidArgumentError(path.string() + ": not valid JSON");
  if (!j.is_object())
    return absl::InvalidArgumentError(path.string() +
                                      ": expected a JSON object");
  return j;
}

// tokenizer_config.json's chat_template: a string, or a list of named
// templates of which transformers applies "default".
absl::StatusOr<std::string> templateField(const nlohmann::json &field,
                                          const std::string &where) {
  if (field.is_string())
    return field.get<std::string>();
  if (field.is_array()) {
    for (const nlohmann::json &entry : field) {
      if (!entry.is_object() || !entry.contains("name") ||
          !entry.contains("template") || !entry["name"].is_string() ||
          !entry["template"].is_string())
        return absl::InvalidArgumentError(
            where + ": chat_template list entries must be {\"name\": string, "
                    "\"template\": string}");
      if (entry["name"] == "default")
        return entry["template"].get<std::string>();
    }
    return absl::InvalidArgumentError(
        where + ": chat_template is a list of named templates without a "
                "\"default\" one");
  }
  return absl::InvalidArgumentError(
      where + ": chat_template must be a string or a list of {name, template}");
}

absl::StatusOr<std::string> specialToken(const nlohmann::json &config,
                                         const char *key,
                                         const std::string &where) {
  if (!config.contains(key) || config[key].is_null())
    return std::string();
  const nlohmann::json &v = config[key];
  if (v.is_string())
    return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string())
    return v["content"].get<std::string>();
  return absl::InvalidArgumentError(where + ": " + key +
                                    " must be a string or {\"content\": "
                                    "string}");
}

} // namespace

absl::StatusOr<ChatTemplateInfo>
loadChatTemplate(const std::string &checkpointOrArtifactDir) {
  namespace fs = std::filesystem;
  fs::path dir(checkpointOrArtifactDir);
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return absl::NotFoundError(checkpointOrArtifactDir +
                               ": not a directory");
  fs::path configPath = dir / "tokenizer_config.json";
  nlohmann::json config = nlohmann::json::object();
  bool haveConfig = fs::exists(configPath, ec);
  if (haveConfig) {
    absl::StatusOr<nlohmann::json> parsed = readJson(configPath);
    if (!parsed.ok())
      return parsed.status();
    config = std::move(*parsed);
  }

  std::string source, origin;
  fs::path jinjaPath = dir / "chat_template.jinja";
  fs::path jsonPath = dir / "chat_template.json";
  if (fs::exists(jinjaPath, ec)) {
    absl::StatusOr<std::string> text = readFile(jinjaPath);
    if (!text.ok())
      return text.status();
    source = std::move(*text);
    origin = jinjaPath.string();
  } else if (fs::exists(jsonPath, ec)) {
    absl::StatusOr<nlohmann::json> j = readJson(jsonPath);
    if (!j.ok())
      return j.status();
    if (!j->contains("chat_template"))
      return absl::InvalidArgumentError(jsonPath.string() +
                                        ": no \"chat_template\" field");
    absl::StatusOr<std::string> t =
        templateField((*j)["chat_template"], jsonPath.string());
    if (!t.ok())
      return t.status();
    source = std::move(*t);
    origin = jsonPath.string();
  } else if (config.contains("chat_template") &&
             !config["chat_template"].is_null()) {
    absl::StatusOr<std::string> t =
        templateField(config["chat_template"], configPath.string());
    if (!t.ok())
      return t.status();
    source = std::move(*t);
    origin = configPath.string() + " (chat_template)";
  } else {
    return absl::NotFoundError(
        checkpointOrArtifactDir +
        ": no chat template (looked for chat_template.jinja, "
        "chat_template.json and tokenizer_config.json's chat_template)");
  }

  absl::StatusOr<ChatTemplate> tmpl = ChatTemplate::parse(source);
  if (!tmpl.ok())
    return absl::Status(tmpl.status().code(),
                        origin + ": " + std::string(tmpl.status().message()));
  absl::StatusOr<std::string> bos =
      specialToken(config, "bos_token", configPath.string());
  if (!bos.ok())
    return bos.status();
  absl::StatusOr<std::string> eos =
      specialToken(config, "eos_token", configPath.string());
  if (!eos.ok())
    return eos.status();
  return ChatTemplateInfo{std::move(*tmpl), std::move(*bos), std::move(*eos)};
}

} // namespace qeff::chat
