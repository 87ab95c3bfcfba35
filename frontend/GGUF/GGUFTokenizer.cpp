//===- GGUFTokenizer.cpp - tokenizer.ggml.* as tokenizer.json -------------===//
//
// Part of qeff. See GGUFTokenizer.h.
//
//===----------------------------------------------------------------------===//

#include "frontend/GGUF/GGUFTokenizer.h"

#include "frontend/Quant/QuantUtil.h"

#include "absl/strings/str_cat.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <unordered_map>

namespace qeff::gguf {

using quant::cat;

namespace {

using OJson = nlohmann::ordered_json;

constexpr const char *kLlama3Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char *kQwen2Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

enum TokenType { kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4,
                 kUnused = 5, kByte = 6 };

/// Code-point boundaries of a UTF-8 string (offsets of every character
/// start, and the end).
std::vector<size_t> charBoundaries(const std::string &s) {
  std::vector<size_t> b;
  for (size_t i = 0; i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80)
      b.push_back(i);
  b.push_back(s.size());
  return b;
}

/// convert_slow_tokenizer.generate_merges(vocab, vocab_scores): for each
/// piece (in id order) its splits into two known pieces, ordered by the
/// halves' ids; all sorted (stably) by score, then the halves' lengths in
/// characters, descending.
std::vector<std::pair<std::string, std::string>>
generateMerges(const std::vector<std::string> &tokens, const std::vector<double> &scores,
               const std::unordered_map<std::string, int64_t> &vocab) {
  struct Merge {
    size_t piece; ///< token index (the score's)
    size_t split; ///< byte offset of the split
    size_t lenL, lenR;
    int64_t idL, idR;
    size_t order; ///< position before the final sort (keeps it stable)
  };
  std::vector<Merge> merges;
  std::unordered_map<std::string, bool> seen;
  for (size_t t = 0; t < tokens.size(); ++t) {
    const std::string &piece = tokens[t];
    // dict(vocab_scores): a repeated piece keeps its first position.
    if (vocab.at(piece) != int64_t(t))
      continue;
    std::vector<size_t> b = charBoundaries(piece);
    std::vector<Merge> local;
    for (size_t k = 1; k + 1 < b.size(); ++k) {
      auto l = vocab.find(piece.substr(0, b[k]));
      auto r = vocab.find(piece.substr(b[k]));
      if (l != vocab.end() && r != vocab.end())
        local.push_back({t, b[k], k, b.size() - 1 - k, l->second, r->second, 0});
    }
    std::sort(local.begin(), local.end(), [](const Merge &x, const Merge &y) {
      return std::tie(x.idL, x.idR) < std::tie(y.idL, y.idR);
    });
    merges.insert(merges.end(), local.begin(), local.end());
  }
  for (size_t k = 0; k < merges.size(); ++k)
    merges[k].order = k;
  std::sort(merges.begin(), merges.end(), [&](const Merge &x, const Merge &y) {
    double sx = scores[x.piece], sy = scores[y.piece];
    if (sx != sy)
      return sx > sy;
    if (x.lenL != y.lenL)
      return x.lenL > y.lenL;
    if (x.lenR != y.lenR)
      return x.lenR > y.lenR;
    return x.order < y.order;
  });
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(merges.size());
  for (const Merge &m : merges)
    out.emplace_back(tokens[m.piece].substr(0, m.split), tokens[m.piece].substr(m.split));
  return out;
}

OJson addedToken(int64_t id, const std::string &content, bool special) {
  return OJson{{"id", id},         {"content", content}, {"single_word", false},
               {"lstrip", false},  {"rstrip", false},    {"normalized", !special},
               {"special", special}};
}

OJson templateProcessor(const std::vector<std::string> &tokens, std::optional<int64_t> bos,
                        std::optional<int64_t> eos) {
  OJson single = OJson::array(), pair = OJson::array(), specials = OJson::object();
  auto special = [&](int64_t id) {
    const std::string &t = tokens[static_cast<size_t>(id)];
    specials[t] = {{"id", t}, {"ids", {id}}, {"tokens", {t}}};
    return OJson{{"SpecialToken", {{"id", t}, {"type_id", 0}}}};
  };
  if (bos)
    single.push_back(special(*bos));
  single.push_back({{"Sequence", {{"id", "A"}, {"type_id", 0}}}});
  if (eos)
    single.push_back(special(*eos));
  pair = single;
  if (bos)
    pair.push_back({{"SpecialToken", {{"id", tokens[size_t(*bos)]}, {"type_id", 1}}}});
  pair.push_back({{"Sequence", {{"id", "B"}, {"type_id", 1}}}});
  if (eos)
    pair.push_back({{"SpecialToken", {{"id", tokens[size_t(*eos)]}, {"type_id", 1}}}});
  return {{"type", "TemplateProcessing"}, {"single", single}, {"pair", pair},
          {"special_tokens", specials}};
}

} // namespace

absl::StatusOr<GGUFTokenizerFiles> ggufTokenizerFiles(const GGUFFile &f) {
  QEFF_QUANT_ASSIGN(std::string model, f.getString("tokenizer.ggml.model"));
  QEFF_QUANT_ASSIGN(const std::vector<Value> *tokenValues,
                    f.getArray("tokenizer.ggml.tokens", Value::Type::String));
  std::vector<std::string> tokens;
  tokens.reserve(tokenValues->size());
  for (const Value &v : *tokenValues)
    tokens.push_back(v.s);
  if (tokens.empty())
    return f.keyError("tokenizer.ggml.tokens", "is empty");
  int64_t n = int64_t(tokens.size());
  std::vector<int64_t> types(tokens.size(), kNormal);
  if (f.find("tokenizer.ggml.token_type")) {
    QEFF_QUANT_ASSIGN(const std::vector<Value> *tv,
                      f.getArray("tokenizer.ggml.token_type", Value::Type::I32));
    if (tv->size() != tokens.size())
      return f.keyError("tokenizer.ggml.token_type",
                        cat("has ", tv->size(), " entries for ", n, " tokens"));
    for (size_t i = 0; i < tv->size(); ++i)
      types[i] = *(*tv)[i].asInt();
  }
  auto tokenId = [&](const char *key) -> absl::StatusOr<std::optional<int64_t>> {
    if (!f.find(key))
      return std::optional<int64_t>();
    QEFF_QUANT_ASSIGN(int64_t id, f.getInt(key));
    if (id < 0 || id >= n)
      return f.keyError(key, cat("is ", id, ", not a token id (", n, " tokens)"));
    return std::optional<int64_t>(id);
  };
  QEFF_QUANT_ASSIGN(std::optional<int64_t> bos, tokenId("tokenizer.ggml.bos_token_id"));
  QEFF_QUANT_ASSIGN(std::optional<int64_t> eos, tokenId("tokenizer.ggml.eos_token_id"));
  QEFF_QUANT_ASSIGN(std::optional<int64_t> unk, tokenId("tokenizer.ggml.unknown_token_id"));
  QEFF_QUANT_ASSIGN(std::optional<int64_t> pad, tokenId("tokenizer.ggml.padding_token_id"));
  bool spm = model == "llama";
  QEFF_QUANT_ASSIGN(bool addBos, f.getBool("tokenizer.ggml.add_bos_token", spm));
  QEFF_QUANT_ASSIGN(bool addEos, f.getBool("tokenizer.ggml.add_eos_token", false));

  std::unordered_map<std::string, int64_t> vocabIndex;
  OJson vocab = OJson::object();
  for (int64_t i = 0; i < n; ++i)
    if (vocabIndex.emplace(tokens[size_t(i)], i).second)
      vocab[tokens[size_t(i)]] = i;

  OJson tj = OJson::object();
  tj["version"] = "1.0";
  tj["truncation"] = nullptr;
  tj["padding"] = nullptr;
  OJson added = OJson::array();
  for (int64_t i = 0; i < n; ++i) {
    int64_t type = types[size_t(i)];
    bool isUnk = spm && unk && *unk == i;
    if (type == kControl || isUnk)
      added.push_back(addedToken(i, tokens[size_t(i)], true));
    else if (type == kUserDefined)
      added.push_back(addedToken(i, tokens[size_t(i)], false));
  }
  tj["added_tokens"] = added;
  OJson bpe = {{"type", "BPE"},          {"dropout", nullptr},
               {"unk_token", nullptr},   {"continuing_subword_prefix", nullptr},
               {"end_of_word_suffix", nullptr}, {"fuse_unk", spm},
               {"byte_fallback", spm},   {"ignore_merges", false}};
  OJson tokenizerConfig = OJson::object();
  if (spm) {
    std::vector<double> scores(tokens.size(), 0.0);
    if (f.find("tokenizer.ggml.scores")) {
      QEFF_QUANT_ASSIGN(const std::vector<Value> *sv,
                        f.getArray("tokenizer.ggml.scores", Value::Type::F32));
      if (sv->size() != tokens.size())
        return f.keyError("tokenizer.ggml.scores",
                          cat("has ", sv->size(), " entries for ", n, " tokens"));
      for (size_t i = 0; i < sv->size(); ++i)
        scores[i] = *(*sv)[i].asDouble();
    }
    QEFF_QUANT_ASSIGN(bool prefix, f.getBool("tokenizer.ggml.add_space_prefix", true));
    OJson replace = {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\u2581"}};
    if (prefix)
      tj["normalizer"] = {{"type", "Sequence"},
                          {"normalizers", {{{"type", "Prepend"}, {"prepend", "\u2581"}}, replace}}};
    else
      tj["normalizer"] = replace;
    tj["pre_tokenizer"] = nullptr;
    tj["post_processor"] = templateProcessor(tokens, addBos ? bos : std::nullopt,
                                             addEos ? eos : std::nullopt);
    OJson decoders = {{{"type", "Replace"}, {"pattern", {{"String", "\u2581"}}}, {"content", " "}},
                      {{"type", "ByteFallback"}},
                      {{"type", "Fuse"}}};
    if (prefix)
      decoders.push_back({{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}});
    tj["decoder"] = {{"type", "Sequence"}, {"decoders", decoders}};
    if (unk)
      bpe["unk_token"] = tokens[size_t(*unk)];
    bpe["vocab"] = std::move(vocab);
    OJson merges = OJson::array();
    for (auto &[l, r] : generateMerges(tokens, scores, vocabIndex))
      merges.push_back(OJson::array({l, r}));
    bpe["merges"] = std::move(merges);
    tokenizerConfig["tokenizer_class"] = "LlamaTokenizerFast";
    tokenizerConfig["legacy"] = true;
  } else if (model == "gpt2") {
    std::string pre = "default";
    if (f.find("tokenizer.ggml.pre")) {
      QEFF_QUANT_ASSIGN(pre, f.getString("tokenizer.ggml.pre"));
    }
    OJson byteLevelRegex = {{"type", "ByteLevel"}, {"add_prefix_space", false},
                            {"trim_offsets", true}, {"use_regex", true}};
    OJson byteLevelPlain = {{"type", "ByteLevel"}, {"add_prefix_space", false},
                            {"trim_offsets", false}, {"use_regex", false}};
    auto split = [](const char *regex) {
      return OJson{{"type", "Split"}, {"pattern", {{"Regex", regex}}},
                   {"behavior", "Isolated"}, {"invert", false}};
    };
    tj["normalizer"] = nullptr;
    if (pre == "default" || pre == "gpt-2" || pre == "gpt2") {
      tj["pre_tokenizer"] = byteLevelRegex;
    } else if (pre == "llama-bpe" || pre == "llama3" || pre == "smaug-bpe") {
      tj["pre_tokenizer"] = {{"type", "Sequence"},
                             {"pretokenizers", {split(kLlama3Regex), byteLevelPlain}}};
      bpe["ignore_merges"] = true;
    } else if (pre == "qwen2") {
      tj["normalizer"] = {{"type", "NFC"}};
      tj["pre_tokenizer"] = {{"type", "Sequence"},
                             {"pretokenizers", {split(kQwen2Regex), byteLevelPlain}}};
    } else if (pre == "mpt" || pre == "gpt-neox" || pre == "olmo") {
      tj["normalizer"] = {{"type", "NFC"}};
      tj["pre_tokenizer"] = byteLevelRegex;
    } else {
      return f.keyError("tokenizer.ggml.pre",
                        "is '" + pre +
                            "', a pre-tokenizer qeff does not implement (supported: default, "
                            "gpt-2, llama-bpe, qwen2, mpt, gpt-neox, olmo)");
    }
    tj["post_processor"] = addBos || addEos
                               ? templateProcessor(tokens, addBos ? bos : std::nullopt,
                                                   addEos ? eos : std::nullopt)
                               : byteLevelPlain;
    tj["decoder"] = {{"type", "ByteLevel"}, {"add_prefix_space", true},
                     {"trim_offsets", true}, {"use_regex", true}};
    QEFF_QUANT_ASSIGN(const std::vector<Value> *mv,
                      f.getArray("tokenizer.ggml.merges", Value::Type::String));
    OJson merges = OJson::array();
    for (const Value &m : *mv) {
      size_t space = m.s.find(' ', 1);
      if (space == std::string::npos)
        return f.keyError("tokenizer.ggml.merges",
                          "holds '" + m.s + "', which is not two tokens separated by a space");
      merges.push_back(OJson::array({m.s.substr(0, space), m.s.substr(space + 1)}));
    }
    bpe["vocab"] = std::move(vocab);
    bpe["merges"] = std::move(merges);
    tokenizerConfig["tokenizer_class"] = "PreTrainedTokenizerFast";
  } else {
    return f.keyError("tokenizer.ggml.model",
                      "is '" + model +
                          "'; supported tokenizer models: llama (SentencePiece BPE), gpt2 "
                          "(byte-level BPE)");
  }
  tj["model"] = std::move(bpe);

  tokenizerConfig["add_bos_token"] = addBos;
  tokenizerConfig["add_eos_token"] = addEos;
  if (bos)
    tokenizerConfig["bos_token"] = tokens[size_t(*bos)];
  if (eos)
    tokenizerConfig["eos_token"] = tokens[size_t(*eos)];
  if (unk)
    tokenizerConfig["unk_token"] = tokens[size_t(*unk)];
  if (pad)
    tokenizerConfig["pad_token"] = tokens[size_t(*pad)];
  tokenizerConfig["clean_up_tokenization_spaces"] = false;
  if (f.find("tokenizer.chat_template")) {
    QEFF_QUANT_ASSIGN(std::string chat, f.getString("tokenizer.chat_template"));
    tokenizerConfig["chat_template"] = chat;
  }
  GGUFTokenizerFiles out;
  out.tokenizerJson = tj.dump(-1, ' ', false, OJson::error_handler_t::replace);
  out.tokenizerConfigJson = tokenizerConfig.dump(2, ' ', false, OJson::error_handler_t::replace) + "\n";
  return out;
}

} // namespace qeff::gguf
