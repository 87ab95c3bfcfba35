//===- Tokenizer.cpp - qeff._qeff.Tokenizer: tokenizer and chat template --===//
//
// Part of qeff. qeff's tokenizer (frontend/Tokenizer) and chat template
// interpreter (frontend/ChatTemplate) over a checkpoint or artifact
// directory. Messages cross as JSON text (the Python side dumps them), so the
// template sees exactly what transformers' apply_chat_template would give it.
//
//===----------------------------------------------------------------------===//

#include "python/Bindings.h"

#include "frontend/ChatTemplate/ChatTemplate.h"
#include "frontend/Tokenizer/Tokenizer.h"

#include <pybind11/stl.h>

#include <filesystem>
#include <optional>

namespace qeff::python {

namespace {

class PyTokenizer {
public:
  explicit PyTokenizer(const std::string &path) : path_(path) {
    std::error_code ec;
    bool isDir = std::filesystem::is_directory(path, ec);
    std::optional<absl::StatusOr<tokenizer::Tokenizer>> loaded;
    {
      py::gil_scoped_release release;
      if (isDir) {
        loaded.emplace(tokenizer::Tokenizer::fromDirectory(path));
      } else {
        // tokenizer.json, with the tokenizer_config.json beside it if any.
        std::filesystem::path config =
            std::filesystem::path(path).parent_path() / "tokenizer_config.json";
        std::optional<std::string> configPath;
        if (std::filesystem::exists(config, ec))
          configPath = config.string();
        loaded.emplace(tokenizer::Tokenizer::fromFile(path, configPath));
      }
    }
    if (!loaded->ok())
      throw Error(std::string(loaded->status().message()));
    tokenizer_.emplace(std::move(**loaded));
    if (isDir)
      dir_ = path;
  }

  std::vector<int64_t> encode(const std::string &text, bool addSpecial) const {
    return tokenizer_->encode(text, addSpecial);
  }

  py::str decode(const std::vector<int64_t> &ids, bool skipSpecial) const {
    std::string text = tokenizer_->decode(ids, skipSpecial);
    return py::reinterpret_steal<py::str>(
        PyUnicode_DecodeUTF8(text.data(), py::ssize_t(text.size()), "replace"));
  }

  /// The directory's chat template rendered over `messagesJson` (a JSON
  /// list) with `extraJson` (a JSON object of template variables).
  std::string renderChat(const std::string &messagesJson, bool addGenerationPrompt,
                         const std::string &toolsJson,
                         const std::string &extraJson) {
    if (dir_.empty())
      throw Error("the tokenizer was loaded from " + path_ +
                  ", not a directory: the chat template lives in the directory "
                  "(chat_template.jinja, chat_template.json or "
                  "tokenizer_config.json)");
    if (!chat_) {
      auto info = chat::loadChatTemplate(dir_);
      if (!info.ok())
        throw Error(std::string(info.status().message()));
      chat_.emplace(std::move(*info));
    }
    auto messages = nlohmann::ordered_json::parse(messagesJson, nullptr, false);
    auto tools = nlohmann::ordered_json::parse(toolsJson, nullptr, false);
    auto extra = nlohmann::ordered_json::parse(extraJson, nullptr, false);
    if (messages.is_discarded() || tools.is_discarded() || extra.is_discarded() ||
        !extra.is_object())
      throw py::value_error("messages, tools and template variables must be "
                            "JSON-serializable");
    nlohmann::ordered_json context = chat::makeChatContext(
        *chat_, std::move(messages), addGenerationPrompt, std::move(tools));
    for (auto &[key, value] : extra.items())
      context[key] = value;
    absl::StatusOr<std::string> text = chat_->tmpl.render(context);
    if (!text.ok())
      throw Error(std::string(text.status().message()));
    return *text;
  }

  std::string path_, dir_;
  std::optional<tokenizer::Tokenizer> tokenizer_;
  std::optional<chat::ChatTemplateInfo> chat_;
};

} // namespace

void bindTokenizer(py::module_ &m) {
  py::class_<PyTokenizer>(m, "Tokenizer")
      .def(py::init<const std::string &>(), py::arg("path"))
      .def("encode", &PyTokenizer::encode, py::arg("text"),
           py::arg("add_special_tokens") = true)
      .def("decode", &PyTokenizer::decode, py::arg("ids"),
           py::arg("skip_special_tokens") = false)
      .def("_render_chat", &PyTokenizer::renderChat, py::arg("messages_json"),
           py::arg("add_generation_prompt"), py::arg("tools_json"),
           py::arg("extra_json"))
      .def_property_readonly("bos_id",
                             [](const PyTokenizer &t) { return t.tokenizer_->bosId(); })
      .def_property_readonly("eos_ids",
                             [](const PyTokenizer &t) { return t.tokenizer_->eosIds(); })
      .def_property_readonly("vocab_size",
                             [](const PyTokenizer &t) { return t.tokenizer_->vocabSize(); })
      .def("token_to_id", [](const PyTokenizer &t, const std::string &token) {
        return t.tokenizer_->tokenToId(token);
      })
      .def("id_to_token", [](const PyTokenizer &t, int64_t id) {
        return t.tokenizer_->idToToken(id);
      });
}

} // namespace qeff::python
