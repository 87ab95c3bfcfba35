//===- Loader.cpp - building a Tokenizer from files -----------------------===//
//
// tokenizer.json (+ tokenizer_config.json), GPT-2 style vocab + merges pairs,
// and checkpoint directories. Every failure is an absl::Status naming the
// file and the field; exceptions (nlohmann's, bad_alloc) are caught here.
//
//===----------------------------------------------------------------------===//

#include "frontend/Tokenizer/Tokenizer.h"
#include "frontend/Tokenizer/TokenizerImpl.h"
#include "frontend/Tokenizer/Unicode.h"

#include "support/SafeFile.h"

#include "absl/strings/numbers.h"

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

namespace qeff::tokenizer {

using detail::AddedToken;
using detail::findMember;
using detail::Json;
using detail::jsonError;
using detail::JsonPath;
using detail::strCat;
using detail::TokenizerImpl;

namespace {

/// A whole tokenizer or config file: a regular file (a FIFO or device is
/// refused, never blocked on) of bounded size.
absl::StatusOr<std::string> readFile(const std::string &path) {
  std::string text, error;
  if (!support::readRegularFile(path, support::kTokenizerFileLimit, text, error)) {
    std::error_code ec;
    return std::filesystem::exists(path, ec) ? absl::InvalidArgumentError(error)
                                             : absl::NotFoundError(error);
  }
  return text;
}

/// The deepest nesting of arrays/objects in JSON text (strings skipped).
size_t nestingDepth(std::string_view text) {
  size_t depth = 0, deepest = 0;
  bool inString = false, escaped = false;
  for (char c : text) {
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"')
      inString = true;
    else if (c == '[' || c == '{')
      deepest = std::max(deepest, ++depth);
    else if ((c == ']' || c == '}') && depth > 0)
      --depth;
  }
  return deepest;
}

/// Tokenizer components (Sequence normalizers, pre-tokenizers, decoders,
/// post-processors) are built recursively from the JSON: its depth bounds
/// the recursion. Real tokenizer files nest less than 10 levels.
constexpr size_t kMaxJsonDepth = 64;

absl::StatusOr<Json> parseJson(std::string_view text, std::string_view name) {
  if (size_t depth = nestingDepth(text); depth > kMaxJsonDepth)
    return absl::InvalidArgumentError(
        strCat(name, ": nests ", depth, " levels deep (the limit is ", kMaxJsonDepth, ")"));
  Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    // Parse again for nlohmann's message with the byte position.
    std::string message = "not valid JSON";
    try {
      Json ignored = Json::parse(text);
      (void)ignored;
    } catch (const Json::exception &e) {
      message = strCat("not valid JSON: ", e.what());
    }
    return absl::InvalidArgumentError(strCat(name, ": ", message));
  }
  if (!json.is_object())
    return absl::InvalidArgumentError(
        strCat(name, ": expected a JSON object at the top level"));
  return json;
}

/// A token given as "<s>" or as {"content": "<s>", ...} in tokenizer_config.
absl::StatusOr<std::optional<std::string>>
configToken(const Json &config, const JsonPath &path, std::string_view key) {
  const Json *value = findMember(config, key);
  if (!value)
    return std::optional<std::string>();
  if (value->is_string())
    return std::optional<std::string>(value->get<std::string>());
  if (value->is_object())
    if (const Json *content = findMember(*value, "content");
        content && content->is_string())
      return std::optional<std::string>(content->get<std::string>());
  return jsonError(path / key, "expected a string or {\"content\": ...}");
}

absl::Status parseAddedTokens(const Json &root, const JsonPath &path,
                              TokenizerImpl &impl) {
  const Json *list = findMember(root, "added_tokens");
  if (!list)
    return absl::OkStatus();
  if (!list->is_array())
    return jsonError(path / "added_tokens", "expected an array");
  for (size_t i = 0; i < list->size(); ++i) {
    const Json &entry = (*list)[i];
    JsonPath here = (path / "added_tokens")[i];
    if (!entry.is_object())
      return jsonError(here, "expected an object");
    const Json *id = findMember(entry, "id");
    if (!id || !id->is_number_integer() || id->get<int64_t>() < 0 ||
        id->get<int64_t>() > INT32_MAX)
      return jsonError(here / "id", "expected a non-negative integer id");
    AddedToken token;
    token.id = id->get<int64_t>();
    auto content = detail::getString(entry, here, "content");
    if (!content.ok())
      return content.status();
    token.content = *std::move(content);
    for (auto [key, field, fallback] :
         {std::tuple{"special", &token.special, false},
          std::tuple{"single_word", &token.singleWord, false},
          std::tuple{"lstrip", &token.lstrip, false},
          std::tuple{"rstrip", &token.rstrip, false},
          std::tuple{"normalized", &token.normalized, true}}) {
      auto value = detail::getBool(entry, here, key, fallback);
      if (!value.ok())
        return value.status();
      *field = *value;
    }
    impl.added.add(token);
  }
  return absl::OkStatus();
}

/// Applies tokenizer_config.json: special tokens, add_bos/add_eos, cleanup.
absl::Status applyConfig(const Json &config, const JsonPath &path,
                         TokenizerImpl &impl) {
  // transformers registers the named special tokens as special added tokens.
  for (const char *key : {"bos_token", "eos_token", "unk_token", "pad_token"}) {
    auto name = configToken(config, path, key);
    if (!name.ok())
      return name.status();
    if (!*name || impl.added.byContent(**name))
      continue;
    if (auto id = impl.model.tokenToId(**name))
      impl.added.add(AddedToken{**name, *id, /*special=*/true});
  }
  if (const Json *decoderMap = findMember(config, "added_tokens_decoder")) {
    if (!decoderMap->is_object())
      return jsonError(path / "added_tokens_decoder", "expected an object");
    for (const auto &[key, entry] : decoderMap->items()) {
      JsonPath here = path / "added_tokens_decoder" / key;
      int64_t id = -1;
      if (!absl::SimpleAtoi(key, &id) || id < 0 || id > INT32_MAX)
        return jsonError(here, "key is not a token id");
      auto content = detail::getString(entry, here, "content");
      if (!content.ok())
        return content.status();
      if (impl.added.byId(id) || impl.added.byContent(*content))
        continue; // tokenizer.json already defines it
      auto special = detail::getBool(entry, here, "special", false);
      if (!special.ok())
        return special.status();
      impl.added.add(AddedToken{*content, id, *special});
    }
  }

  auto bosName = configToken(config, path, "bos_token");
  if (!bosName.ok())
    return bosName.status();
  if (*bosName) {
    impl.bos = impl.tokenToId(**bosName);
    if (!impl.bos)
      return jsonError(path / "bos_token",
                       strCat("'", **bosName, "' is not in the vocabulary"));
  }
  auto eosName = configToken(config, path, "eos_token");
  if (!eosName.ok())
    return eosName.status();
  if (*eosName) {
    auto eos = impl.tokenToId(**eosName);
    if (!eos)
      return jsonError(path / "eos_token",
                       strCat("'", **eosName, "' is not in the vocabulary"));
    impl.eos = {*eos};
  }

  auto cleanUp =
      detail::getBool(config, path, "clean_up_tokenization_spaces", false);
  if (!cleanUp.ok())
    return cleanUp.status();
  impl.cleanUpTokenizationSpaces = *cleanUp;

  // LlamaTokenizerFast (and friends) rebuild the post-processor from
  // add_bos_token / add_eos_token; a key left out keeps what the
  // tokenizer.json template did.
  bool hasBos = findMember(config, "add_bos_token");
  bool hasEos = findMember(config, "add_eos_token");
  if (!hasBos && !hasEos)
    return absl::OkStatus();
  std::vector<TokenId> empty;
  if (impl.postProcessor)
    impl.postProcessor->process(empty);
  auto addBos =
      detail::getBool(config, path, "add_bos_token",
                      impl.bos && !empty.empty() && empty.front() == *impl.bos);
  if (!addBos.ok())
    return addBos.status();
  auto addEos = detail::getBool(config, path, "add_eos_token",
                                !impl.eos.empty() && !empty.empty() &&
                                    empty.back() == impl.eos.front());
  if (!addEos.ok())
    return addEos.status();
  if (*addBos && !impl.bos)
    return jsonError(path / "add_bos_token", "true but no bos_token is set");
  if (*addEos && impl.eos.empty())
    return jsonError(path / "add_eos_token", "true but no eos_token is set");
  std::vector<TokenId> prefix, suffix;
  if (*addBos)
    prefix.push_back(*impl.bos);
  if (*addEos)
    suffix.push_back(impl.eos.front());
  impl.postProcessor =
      detail::makeAffixProcessor(std::move(prefix), std::move(suffix));
  return absl::OkStatus();
}

/// A BPE model without merges splits every word into single characters.
/// Hugging Face tokenizers loads an empty merge list (and refuses a missing
/// one, "Missing vocab/merges"); but when the vocabulary holds tokens longer
/// than a character that only merges produce, the merges were lost and every
/// encoding would silently differ from the model's training. Refused then;
/// a character-level vocabulary (plus added tokens, the unk token and byte
/// fallback tokens) is accepted.
absl::Status checkMerges(const Json &model, const JsonPath &path, const TokenizerImpl &impl) {
  const Json *merges = findMember(model, "merges");
  if (!merges)
    return jsonError(path / "merges",
                     "missing (a BPE model needs its merge list, even an empty one)");
  if (!merges->empty())
    return absl::OkStatus();
  auto member = [&](std::string_view key) {
    const Json *value = findMember(model, key);
    return value && value->is_string() ? value->get<std::string>() : std::string();
  };
  std::string prefix = member("continuing_subword_prefix");
  std::string suffix = member("end_of_word_suffix");
  std::string unk = member("unk_token");
  const Json *vocab = findMember(model, "vocab");
  if (!vocab)
    return absl::OkStatus(); // BpeModel::fromJson refused it already
  for (const auto &entry : vocab->items()) {
    const std::string &token = entry.key();
    std::string_view piece = token;
    if (!prefix.empty() && piece.size() > prefix.size() && piece.substr(0, prefix.size()) == prefix)
      piece.remove_prefix(prefix.size());
    if (!suffix.empty() && piece.size() > suffix.size() &&
        piece.substr(piece.size() - suffix.size()) == suffix)
      piece.remove_suffix(suffix.size());
    bool byteToken = piece.size() == 6 && piece.substr(0, 3) == "<0x" && piece.back() == '>';
    if (piece.empty() || detail::utf8SeqLen(static_cast<unsigned char>(piece[0])) == piece.size() ||
        byteToken || token == unk || impl.added.byContent(token))
      continue;
    std::string example = detail::sanitizeUtf8(std::string_view(token).substr(0, 32));
    return jsonError(path / "merges",
                     strCat("empty, but the vocabulary has tokens that only merges produce "
                            "(e.g. '", example, "'): without its merges the tokenizer would "
                            "encode every word character by character"));
  }
  return absl::OkStatus();
}

/// The ids the post-processor adds must be tokens: of the vocabulary or
/// added. Anything else would reach the model as an id it has no embedding
/// for.
absl::Status checkPostProcessorIds(const TokenizerImpl &impl, const JsonPath &path) {
  if (!impl.postProcessor)
    return absl::OkStatus();
  std::vector<TokenId> ids;
  impl.postProcessor->process(ids);
  for (TokenId id : ids)
    if (!impl.model.idToToken(id) && !impl.added.byId(id))
      return jsonError(path, strCat("adds token id ", id, ", which is neither in the "
                                    "vocabulary nor an added token"));
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<TokenizerImpl>>
buildFromJson(std::string_view text, std::string_view configText,
              std::string_view name, std::string_view configName) {
  auto root = parseJson(text, name);
  if (!root.ok())
    return root.status();
  JsonPath path{std::string(name), ""};
  auto impl = std::make_shared<TokenizerImpl>();

  const Json *model = findMember(*root, "model");
  if (!model)
    return jsonError(path / "model", "missing (the tokenizer model)");
  auto bpe = detail::BpeModel::fromJson(*model, path / "model");
  if (!bpe.ok())
    return bpe.status();
  impl->model = *std::move(bpe);

  if (const Json *json = findMember(*root, "normalizer")) {
    auto normalizer = detail::parseNormalizer(*json, path / "normalizer");
    if (!normalizer.ok())
      return normalizer.status();
    impl->normalizer = *std::move(normalizer);
  }
  if (const Json *json = findMember(*root, "pre_tokenizer")) {
    auto pre = detail::parsePreTokenizer(*json, path / "pre_tokenizer");
    if (!pre.ok())
      return pre.status();
    impl->preTokenizer = *std::move(pre);
  }
  if (const Json *json = findMember(*root, "post_processor")) {
    auto post = detail::parsePostProcessor(*json, path / "post_processor");
    if (!post.ok())
      return post.status();
    impl->postProcessor = *std::move(post);
  }
  if (const Json *json = findMember(*root, "decoder")) {
    auto decoder = detail::parseDecoder(*json, path / "decoder");
    if (!decoder.ok())
      return decoder.status();
    impl->decoder = *std::move(decoder);
  }
  if (absl::Status status = parseAddedTokens(*root, path, *impl); !status.ok())
    return status;

  // Without a config, BOS is the template's leading special token.
  std::vector<TokenId> empty;
  if (impl->postProcessor)
    impl->postProcessor->process(empty);
  if (!empty.empty() && impl->added.byId(empty.front()))
    impl->bos = empty.front();

  if (!configText.empty()) {
    auto config = parseJson(configText, configName);
    if (!config.ok())
      return config.status();
    if (absl::Status status =
            applyConfig(*config, JsonPath{std::string(configName), ""}, *impl);
        !status.ok())
      return status;
  }
  if (absl::Status status = checkMerges(*model, path / "model", *impl); !status.ok())
    return status;
  if (absl::Status status = checkPostProcessorIds(*impl, path / "post_processor");
      !status.ok())
    return status;
  impl->added.finalize(impl->normalizer.get());
  return impl;
}

/// merges.txt / vocab.bpe: "#version" lines skipped, then "a b" per line.
absl::StatusOr<detail::BpeModel::Merges>
parseMergesText(std::string_view text, std::string_view name) {
  detail::BpeModel::Merges merges;
  size_t lineNo = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos)
      eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++lineNo;
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    if (line.substr(0, 8) == "#version")
      continue;
    size_t space = line.find(' ');
    if (space == std::string_view::npos ||
        line.find(' ', space + 1) != std::string_view::npos)
      return absl::InvalidArgumentError(
          strCat(name, ": line ", lineNo,
                 ": expected two tokens separated by one space"));
    merges.emplace_back(std::string(line.substr(0, space)),
                        std::string(line.substr(space + 1)));
  }
  return merges;
}

absl::StatusOr<std::shared_ptr<TokenizerImpl>>
loadVocabAndMerges(const std::string &vocabPath, const std::string &mergesPath,
                   BpeFlavor flavor) {
  auto vocabText = readFile(vocabPath);
  if (!vocabText.ok())
    return vocabText.status();
  auto mergesText = readFile(mergesPath);
  if (!mergesText.ok())
    return mergesText.status();
  auto vocabJson = parseJson(*vocabText, vocabPath);
  if (!vocabJson.ok())
    return vocabJson.status();
  detail::BpeModel::Vocab vocab;
  for (const auto &[token, id] : vocabJson->items()) {
    if (!id.is_number_integer())
      return jsonError(JsonPath{vocabPath, token}, "id is not an integer");
    vocab[token] = id.get<int64_t>();
  }
  auto merges = parseMergesText(*mergesText, mergesPath);
  if (!merges.ok())
    return merges.status();
  // A GPT-2 vocab without merges would encode every byte alone: silently
  // wrong token ids, not a tokenizer.
  if (merges->empty())
    return absl::InvalidArgumentError(
        strCat(mergesPath, ": no merges (a GPT-2 BPE tokenizer needs its merge list)"));

  detail::BpeOptions options;
  options.ignoreMerges = flavor == BpeFlavor::Llama3;
  auto model = detail::BpeModel::build(std::move(vocab), *merges, options,
                                       JsonPath{mergesPath, ""});
  if (!model.ok())
    return model.status();
  auto impl = std::make_shared<TokenizerImpl>();
  impl->model = *std::move(model);
  impl->preTokenizer = flavor == BpeFlavor::Llama3
                           ? detail::makeLlama3PreTokenizer()
                           : detail::makeGpt2PreTokenizer();
  impl->decoder = detail::makeByteLevelDecoder();
  if (auto eot = impl->model.tokenToId("<|endoftext|>")) {
    impl->added.add(AddedToken{"<|endoftext|>", *eot, /*special=*/true});
    impl->bos = *eot;
    impl->eos = {*eot};
  }
  impl->added.finalize(nullptr);
  return impl;
}

absl::StatusOr<std::shared_ptr<TokenizerImpl>>
loadJsonFiles(const std::string &tokenizerJson,
              const std::optional<std::string> &tokenizerConfig) {
  auto text = readFile(tokenizerJson);
  if (!text.ok())
    return text.status();
  std::string configText;
  if (tokenizerConfig) {
    auto config = readFile(*tokenizerConfig);
    if (!config.ok())
      return config.status();
    configText = *std::move(config);
  }
  return buildFromJson(*text, configText, tokenizerJson,
                       tokenizerConfig.value_or(""));
}

/// Wraps a loader result in the public handle.
absl::StatusOr<Tokenizer>
wrap(absl::StatusOr<std::shared_ptr<TokenizerImpl>> impl) {
  if (!impl.ok())
    return impl.status();
  return TokenizerImpl::wrap(*std::move(impl));
}

/// Present at all (a FIFO or device counts: readFile then refuses it by name
/// rather than the loader reporting the file missing).
bool fileExists(const std::filesystem::path &path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

/// generation_config.json eos_token_id (an int or a list of ints).
absl::Status addGenerationEos(const std::string &path, TokenizerImpl &impl) {
  auto text = readFile(path);
  if (!text.ok())
    return text.status();
  auto json = parseJson(*text, path);
  if (!json.ok())
    return json.status();
  const Json *eos = findMember(*json, "eos_token_id");
  if (!eos)
    return absl::OkStatus();
  std::vector<Json> values =
      eos->is_array() ? eos->get<std::vector<Json>>() : std::vector<Json>{*eos};
  for (const Json &value : values) {
    if (!value.is_number_integer() || value.get<int64_t>() < 0)
      return jsonError(JsonPath{path, "eos_token_id"},
                       "expected an id or a list of ids");
    TokenId id = value.get<int64_t>();
    if (std::find(impl.eos.begin(), impl.eos.end(), id) == impl.eos.end())
      impl.eos.push_back(id);
  }
  return absl::OkStatus();
}

} // namespace

absl::StatusOr<Tokenizer>
Tokenizer::fromJsonText(std::string_view tokenizerJson,
                        std::string_view tokenizerConfig,
                        std::string_view name) {
  try {
    return wrap(buildFromJson(tokenizerJson, tokenizerConfig, name,
                              "tokenizer_config.json"));
  } catch (const std::exception &e) {
    return absl::InternalError(strCat(name, ": ", e.what()));
  }
}

absl::StatusOr<Tokenizer>
Tokenizer::fromFile(const std::string &tokenizerJson,
                    const std::optional<std::string> &tokenizerConfig) {
  try {
    return wrap(loadJsonFiles(tokenizerJson, tokenizerConfig));
  } catch (const std::exception &e) {
    return absl::InternalError(strCat(tokenizerJson, ": ", e.what()));
  }
}

absl::StatusOr<Tokenizer>
Tokenizer::fromVocabAndMerges(const std::string &vocabJson,
                              const std::string &merges, BpeFlavor flavor) {
  try {
    return wrap(loadVocabAndMerges(vocabJson, merges, flavor));
  } catch (const std::exception &e) {
    return absl::InternalError(strCat(vocabJson, ": ", e.what()));
  }
}

absl::StatusOr<Tokenizer> Tokenizer::fromDirectory(const std::string &dir) {
  try {
    std::filesystem::path root(dir);
    absl::StatusOr<std::shared_ptr<TokenizerImpl>> impl = absl::NotFoundError(
        strCat(dir, ": no tokenizer.json, vocab.json + merges.txt or "
                    "encoder.json + vocab.bpe"));
    if (fileExists(root / "tokenizer.json")) {
      std::optional<std::string> config;
      if (fileExists(root / "tokenizer_config.json"))
        config = (root / "tokenizer_config.json").string();
      impl = loadJsonFiles((root / "tokenizer.json").string(), config);
    } else if (fileExists(root / "vocab.json") &&
               fileExists(root / "merges.txt")) {
      impl =
          loadVocabAndMerges((root / "vocab.json").string(),
                             (root / "merges.txt").string(), BpeFlavor::Gpt2);
    } else if (fileExists(root / "encoder.json") &&
               fileExists(root / "vocab.bpe")) {
      impl = loadVocabAndMerges((root / "encoder.json").string(),
                                (root / "vocab.bpe").string(), BpeFlavor::Gpt2);
    } else if (fileExists(root / "tokenizer.model")) {
      return absl::UnimplementedError(strCat(
          dir, ": only tokenizer.model (SentencePiece) found; unsupported "
               "without a tokenizer.json"));
    }
    if (!impl.ok())
      return impl.status();
    if (fileExists(root / "generation_config.json"))
      if (absl::Status status = addGenerationEos(
              (root / "generation_config.json").string(), **impl);
          !status.ok())
        return status;
    return wrap(std::move(impl));
  } catch (const std::exception &e) {
    return absl::InternalError(strCat(dir, ": ", e.what()));
  }
}

} // namespace qeff::tokenizer
