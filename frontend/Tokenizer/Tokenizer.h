//===- Tokenizer.h - Hugging Face BPE tokenizers in C++ ---------*- C++ -*-===//
//
// QEffTokenizer loads a Hugging Face `tokenizer.json` (plus
// `tokenizer_config.json` when present) and encodes / decodes exactly as the
// HF `tokenizers` library does for BPE models:
//
//  - byte-level BPE (GPT-2, StarCoder, CodeGen, Llama 3): ByteLevel and Split
//    pre-tokenizers with their regexes, byte <-> unicode table, ByteLevel
//    decoder;
//  - SentencePiece-style BPE (Llama 2, Mistral, TinyStories): Prepend/Replace
//    normalizers or Metaspace, byte fallback to <0xNN>, unk, the
//    Replace/ByteFallback/Fuse/Strip decoders;
//  - added and special tokens (split out before normalization, with lstrip,
//    rstrip, single_word and normalized), TemplateProcessing post-processor
//    or tokenizer_config's add_bos_token / add_eos_token.
//
// GPT-2 style vocab.json + merges.txt (or OpenAI's encoder.json + vocab.bpe)
// pairs load with fromVocabAndMerges. Unsupported features (Unigram or
// WordPiece models, NFC and other normalizers, ...) are load errors naming
// the feature; nothing is silently approximated. No exception leaves the API.
//
// Example:
//   auto tok = qeff::tokenizer::Tokenizer::fromDirectory("stories260K-hf");
//   if (!tok.ok()) return tok.status();
//   std::vector<int64_t> ids = tok->encode("Once upon a time");
//   // ids == {1, 403, 407, 261, 378}
//   std::string text = tok->decode(ids, /*skipSpecialTokens=*/true);
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_TOKENIZER_TOKENIZER_H
#define QEFF_FRONTEND_TOKENIZER_TOKENIZER_H

#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qeff::tokenizer {

using TokenId = int64_t;

namespace detail {
class TokenizerImpl;
} // namespace detail

/// Which pre-tokenizer a bare vocab + merges pair uses (those files do not
/// say; tokenizer.json does).
enum class BpeFlavor {
  /// GPT-2 / GPT-J / CodeGen: ByteLevel with the GPT-2 regex.
  Gpt2,
  /// Llama 3: Split on the Llama-3 regex, then ByteLevel; ignore_merges.
  Llama3,
};

/// An immutable tokenizer; cheap to copy (copies share the loaded tables) and
/// safe to use from several threads.
class Tokenizer {
public:
  // Moves are copies (of a shared pointer), so a moved-from Tokenizer stays
  // usable: there is no empty state.
  Tokenizer(const Tokenizer &) = default;
  Tokenizer &operator=(const Tokenizer &) = default;

  /// Loads `tokenizerJson` and, when given, `tokenizerConfig`
  /// (tokenizer_config.json: add_bos_token, add_eos_token, bos_token,
  /// eos_token, clean_up_tokenization_spaces).
  static absl::StatusOr<Tokenizer>
  fromFile(const std::string &tokenizerJson,
           const std::optional<std::string> &tokenizerConfig = std::nullopt);

  /// Loads a checkpoint directory: tokenizer.json (+ tokenizer_config.json),
  /// else vocab.json + merges.txt, else encoder.json + vocab.bpe (both with
  /// BpeFlavor::Gpt2). generation_config.json's eos_token_id, when present,
  /// is added to eosIds().
  static absl::StatusOr<Tokenizer> fromDirectory(const std::string &dir);

  /// Loads a GPT-2 format pair: `vocabJson` maps token -> id and `merges` is
  /// merges.txt / vocab.bpe ("#version" header, one "a b" pair per line).
  /// "<|endoftext|>", when in the vocabulary, is a special token and BOS/EOS.
  static absl::StatusOr<Tokenizer>
  fromVocabAndMerges(const std::string &vocabJson, const std::string &merges,
                     BpeFlavor flavor = BpeFlavor::Gpt2);

  /// Parses tokenizer.json (and tokenizer_config.json when non-empty) from
  /// memory; `name` labels error messages.
  static absl::StatusOr<Tokenizer>
  fromJsonText(std::string_view tokenizerJson,
               std::string_view tokenizerConfig = {},
               std::string_view name = "tokenizer.json");

  /// Token ids of `text`. Invalid UTF-8 is first replaced by U+FFFD, as
  /// Python would when decoding the bytes with errors="replace". With
  /// `addSpecialTokens`, the post-processor adds BOS/EOS as configured.
  /// Added tokens in the text are always recognised (as in HF).
  std::vector<TokenId> encode(std::string_view text,
                              bool addSpecialTokens = true) const;

  /// Text of `ids` through the decoder; unknown ids are skipped (as in HF).
  /// With `skipSpecialTokens`, special added tokens (BOS, EOS, ...) are
  /// dropped. Applies transformers' clean_up_tokenization_spaces when the
  /// tokenizer_config asks for it.
  std::string decode(absl::Span<const TokenId> ids,
                     bool skipSpecialTokens = false) const;

  /// The BOS id (tokenizer_config bos_token, else the first special token of
  /// the post-processor template), if any.
  std::optional<TokenId> bosId() const;
  /// The EOS ids (tokenizer_config eos_token plus generation_config.json's
  /// eos_token_id when loaded from a directory); may be empty.
  const std::vector<TokenId> &eosIds() const;
  /// True when encode(text, true) prepends BOS.
  bool addsBos() const;

  std::optional<std::string> idToToken(TokenId id) const;
  std::optional<TokenId> tokenToId(std::string_view token) const;
  /// True for added tokens marked "special".
  bool isSpecial(TokenId id) const;
  /// The bytes token `id` adds to decode(ids, /*skipSpecialTokens=*/true)'s
  /// text when it follows other ids (`atStart`: when it is the first id
  /// decoded, e.g. SentencePiece's leading space is then stripped):
  /// byte-level characters mapped back to bytes, the metaspace "▁" as a
  /// space, <0xNN> as the byte NN. Raw: a token may hold part of a UTF-8
  /// character (decode() replaces what stays incomplete by U+FFFD). The
  /// concatenation of the shares is decode()'s text whenever it is valid
  /// UTF-8, except for clean_up_tokenization_spaces (cleansUpSpaces()).
  /// nullopt for special tokens (decode skips them), unknown ids, and
  /// decoders whose output for a lone token cannot tell its share.
  std::optional<std::string> tokenBytes(TokenId id, bool atStart = false) const;
  /// True when decode() applies transformers' clean_up_tokenization_spaces
  /// (" ," -> "," and the like) to its text.
  bool cleansUpSpaces() const;
  /// One past the largest id (model vocabulary and added tokens): the size an
  /// embedding table needs.
  size_t vocabSize() const;

private:
  explicit Tokenizer(std::shared_ptr<const detail::TokenizerImpl> impl)
      : impl_(std::move(impl)) {}
  std::shared_ptr<const detail::TokenizerImpl> impl_;
  friend class detail::TokenizerImpl;
  friend class DecodeStream;
};

/// Incremental detokenizer for a generation loop: feed ids as they are
/// produced and get back only the newly completed text. Text is held back
/// while it ends in an incomplete UTF-8 sequence (a byte-fallback or
/// byte-level token that is part of a multi-byte character), so every chunk
/// is valid UTF-8 and the chunks concatenate to decode(allIds).
class DecodeStream {
public:
  explicit DecodeStream(Tokenizer tokenizer, bool skipSpecialTokens = true)
      : tokenizer_(std::move(tokenizer)), skipSpecial_(skipSpecialTokens) {}

  /// Adds one id; returns the text it completes ("" when none yet).
  std::string step(TokenId id);
  /// Given all ids generated so far (a prefix-extension of the previous
  /// call's), adds the new ones and returns the text they complete.
  std::string update(absl::Span<const TokenId> allIds);
  /// Returns the held-back remainder (with U+FFFD for incomplete bytes).
  std::string flush();

private:
  std::string rawStep(TokenId id);
  std::string decodeWindow() const;
  /// Applies clean_up_tokenization_spaces (when configured) to emitted text,
  /// holding back its unstable tail in held_ until `final`.
  std::string cleanUp(std::string raw, bool final);

  Tokenizer tokenizer_;
  bool skipSpecial_;
  size_t seen_ = 0;
  /// A window of recent ids; decoding it in context keeps leading spaces.
  std::vector<TokenId> window_;
  /// Number of ids at the front of window_ that are context only.
  size_t prefixLen_ = 0;
  /// Decoded text of window_[0, readLen_), already emitted past the prefix.
  std::string prefixText_;
  /// Decoded text not yet emitted because clean-up could still change it.
  std::string held_;
};

} // namespace qeff::tokenizer

#endif // QEFF_FRONTEND_TOKENIZER_TOKENIZER_H
