//===- Components.h - tokenizer pipeline components -------------*- C++ -*-===//
//
// The stages of a Hugging Face `tokenizers` pipeline as QEffTokenizer models
// them: normalizer -> pre-tokenizer -> BPE model -> post-processor, and the
// decoder chain back to text. Each is parsed from its tokenizer.json object;
// anything not implemented is an error naming the feature. Internal to
// QEffTokenizer: the public API is Tokenizer.h.
//
// Text flows as plain UTF-8 strings (offsets are not tracked: qeff needs ids,
// not alignments). `Piece::atStart` carries the one offset fact the pipeline
// needs: whether a piece begins at the start of the original input
// (Metaspace's prepend_scheme "first").
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_TOKENIZER_COMPONENTS_H
#define QEFF_FRONTEND_TOKENIZER_COMPONENTS_H

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace qeff::tokenizer::detail {

using Json = nlohmann::json;

//===----------------------------------------------------------------------===//
// JSON access with errors naming the file and the field
//===----------------------------------------------------------------------===//

/// The location of a JSON value: file name and dotted field path
/// ("model.merges[3]").
struct JsonPath {
  std::string file;
  std::string field;

  JsonPath operator/(std::string_view key) const;
  JsonPath operator[](size_t index) const;
};

/// "<file>: field '<field>': <message>" as InvalidArgument.
absl::Status jsonError(const JsonPath &path, std::string_view message);
/// "<file>: field '<field>': unsupported <what>" as Unimplemented.
absl::Status unsupported(const JsonPath &path, std::string_view what);

/// The member `key` of `object`, or nullptr when absent or JSON null.
const Json *findMember(const Json &object, std::string_view key);
/// Required string member.
absl::StatusOr<std::string> getString(const Json &object, const JsonPath &path,
                                      std::string_view key);
/// Optional string member (absent or null -> nullopt).
absl::StatusOr<std::optional<std::string>>
getOptString(const Json &object, const JsonPath &path, std::string_view key);
/// Optional bool member with a default.
absl::StatusOr<bool> getBool(const Json &object, const JsonPath &path,
                             std::string_view key, bool fallback);
/// Optional unsigned integer member with a default.
absl::StatusOr<int64_t> getInt(const Json &object, const JsonPath &path,
                               std::string_view key, int64_t fallback);
/// The "type" tag of a component object.
absl::StatusOr<std::string> getType(const Json &object, const JsonPath &path);

/// The steps of a `Sequence` component: the array member `key`, each element
/// parsed by `parse(element, path)` (the component's own parser).
template <typename T, typename Parse>
absl::StatusOr<std::vector<std::unique_ptr<const T>>>
parseSequence(const Json &object, const JsonPath &path, std::string_view key,
              Parse parse) {
  const Json *list = findMember(object, key);
  if (!list || !list->is_array())
    return jsonError(path / key, "expected an array");
  std::vector<std::unique_ptr<const T>> steps;
  for (size_t i = 0; i < list->size(); ++i) {
    auto step = parse((*list)[i], (path / key)[i]);
    if (!step.ok())
      return step.status();
    steps.push_back(*std::move(step));
  }
  return steps;
}
/// A single character given as a one-code-point string ("▁").
absl::StatusOr<std::string> getChar(const Json &object, const JsonPath &path,
                                    std::string_view key,
                                    std::string_view fallback);

/// The `pattern` of Replace / Split: {"String": s} or {"Regex": r}, compiled
/// to a matcher returning [begin, end) byte ranges.
using Matcher =
    std::function<std::vector<std::pair<size_t, size_t>>(std::string_view)>;
absl::StatusOr<Matcher> parsePattern(const Json &object, const JsonPath &path);
/// `text` with every match of `matcher` replaced by `content` (the Replace
/// normalizer and decoder); unchanged when nothing matches.
void replaceMatches(const Matcher &matcher, const std::string &content,
                    std::string &text);

//===----------------------------------------------------------------------===//
// Pipeline stages
//===----------------------------------------------------------------------===//

/// A piece of text between pipeline stages.
struct Piece {
  std::string text;
  /// Begins at offset 0 of the original input.
  bool atStart = false;
};

/// How a split keeps its delimiters (HF SplitDelimiterBehavior).
enum class SplitBehavior {
  Removed,
  Isolated,
  MergedWithPrevious,
  MergedWithNext,
  Contiguous
};

/// Splits `piece` at the ranges `matches` (sorted, non-overlapping) with HF's
/// NormalizedString::split semantics; empty results are dropped.
void splitPiece(const Piece &piece,
                const std::vector<std::pair<size_t, size_t>> &matches,
                SplitBehavior behavior, bool invert, std::vector<Piece> &out);

class Normalizer {
public:
  virtual ~Normalizer() = default;
  virtual void normalize(std::string &text) const = 0;
};
absl::StatusOr<std::unique_ptr<const Normalizer>>
parseNormalizer(const Json &json, const JsonPath &path);

class PreTokenizer {
public:
  virtual ~PreTokenizer() = default;
  /// Replaces `pieces` by their pre-tokenized sub-pieces.
  virtual void preTokenize(std::vector<Piece> &pieces) const = 0;
};
absl::StatusOr<std::unique_ptr<const PreTokenizer>>
parsePreTokenizer(const Json &json, const JsonPath &path);

/// The pre-tokenizer of the GPT-2 family (ByteLevel with its regex).
std::unique_ptr<const PreTokenizer> makeGpt2PreTokenizer();
/// The pre-tokenizer of Llama 3 (Split on its regex, then ByteLevel).
std::unique_ptr<const PreTokenizer> makeLlama3PreTokenizer();

class Decoder {
public:
  virtual ~Decoder() = default;
  /// HF Decoder::decode_chain: rewrites the token strings in place.
  virtual void decodeChain(std::vector<std::string> &tokens) const = 0;
  /// What decodeChain makes of one token among others, as raw bytes (no
  /// UTF-8 clean-up: a token may hold part of a character). `atStart`: the
  /// token begins the text. `joined`: an earlier step joined the tokens into
  /// one text, so steps acting on each token now see the whole text. False
  /// when the result of a lone token cannot tell the token's share.
  virtual bool rawToken(std::string &token, bool atStart, bool &joined) const;
};
absl::StatusOr<std::unique_ptr<const Decoder>>
parseDecoder(const Json &json, const JsonPath &path);
std::unique_ptr<const Decoder> makeByteLevelDecoder();

/// Adds the special tokens of a single sequence (post_processor).
class PostProcessor {
public:
  virtual ~PostProcessor() = default;
  virtual void process(std::vector<int64_t> &ids) const = 0;
};
absl::StatusOr<std::unique_ptr<const PostProcessor>>
parsePostProcessor(const Json &json, const JsonPath &path);
/// `prefix` + sequence + `suffix` (transformers' add_bos/add_eos template).
std::unique_ptr<const PostProcessor>
makeAffixProcessor(std::vector<int64_t> prefix, std::vector<int64_t> suffix);

//===----------------------------------------------------------------------===//
// BPE model
//===----------------------------------------------------------------------===//

struct BpeOptions {
  std::optional<std::string> unkToken;
  std::string continuingSubwordPrefix;
  std::string endOfWordSuffix;
  bool fuseUnk = false;
  bool byteFallback = false;
  bool ignoreMerges = false;
};

/// HF `tokenizers` BPE (models/bpe): merges applied by rank, lowest first,
/// leftmost on ties; byte fallback to <0xNN> tokens, then unk.
class BpeModel {
public:
  using Vocab = absl::flat_hash_map<std::string, int64_t>;
  using Merges = std::vector<std::pair<std::string, std::string>>;

  /// From the tokenizer.json "model" object (type BPE).
  static absl::StatusOr<BpeModel> fromJson(const Json &model,
                                           const JsonPath &path);
  /// From a vocabulary and ordered merges; `path` names their origin.
  static absl::StatusOr<BpeModel> build(Vocab vocab, const Merges &merges,
                                        BpeOptions options,
                                        const JsonPath &path);

  /// Appends the ids of one pre-tokenized word.
  void tokenize(std::string_view word, std::vector<int64_t> &out) const;

  std::optional<int64_t> tokenToId(std::string_view token) const;
  const std::string *idToToken(int64_t id) const;
  /// Largest id in the vocabulary (-1 when empty).
  int64_t maxId() const { return maxId_; }
  size_t size() const { return vocab_.size(); }

private:
  struct Merge {
    uint32_t rank;
    int64_t newId;
  };
  Vocab vocab_;
  absl::flat_hash_map<int64_t, std::string> vocabR_;
  absl::flat_hash_map<uint64_t, Merge> merges_;
  BpeOptions options_;
  std::optional<int64_t> unkId_;
  int64_t maxId_ = -1;
  /// <0xNN> ids when byte_fallback is on and all 256 exist, else -1.
  std::vector<int64_t> byteIds_;
};

} // namespace qeff::tokenizer::detail

#endif // QEFF_FRONTEND_TOKENIZER_COMPONENTS_H
