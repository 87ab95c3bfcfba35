//===- TokenizerImpl.h - the loaded tokenizer pipeline ----------*- C++ -*-===//
//
// The state behind qeff::tokenizer::Tokenizer: model, pipeline stages, added
// vocabulary and the special-token facts read from tokenizer_config.json.
// Built by Loader.cpp, run by Tokenizer.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_TOKENIZER_TOKENIZERIMPL_H
#define QEFF_FRONTEND_TOKENIZER_TOKENIZERIMPL_H

#include "frontend/Tokenizer/AddedVocabulary.h"
#include "frontend/Tokenizer/Components.h"
#include "frontend/Tokenizer/Tokenizer.h"

#include <memory>
#include <optional>
#include <vector>

namespace qeff::tokenizer::detail {

class TokenizerImpl {
public:
  BpeModel model;
  std::unique_ptr<const Normalizer> normalizer;
  std::unique_ptr<const PreTokenizer> preTokenizer;
  std::unique_ptr<const PostProcessor> postProcessor;
  std::unique_ptr<const Decoder> decoder;
  AddedVocabulary added;

  std::optional<TokenId> bos;
  std::vector<TokenId> eos;
  bool cleanUpTokenizationSpaces = false;

  std::vector<TokenId> encode(std::string_view text,
                              bool addSpecialTokens) const;
  /// `cleanUp`: apply clean_up_tokenization_spaces when configured.
  std::string decode(absl::Span<const TokenId> ids, bool skipSpecialTokens,
                     bool cleanUp = true) const;
  std::optional<TokenId> tokenToId(std::string_view token) const;

  /// Wraps a finished implementation in the public handle.
  static Tokenizer wrap(std::shared_ptr<const TokenizerImpl> impl) {
    return Tokenizer(std::move(impl));
  }
};

/// transformers' PreTrainedTokenizerBase.clean_up_tokenization.
std::string cleanUpTokenization(std::string text);

/// The longest prefix of `text` that clean_up_tokenization maps the same way
/// whatever text follows: cleanUp(text[0, k) + rest) ==
/// cleanUp(text[0, k)) + cleanUp(text[k, ...) + rest) for every `rest`.
size_t cleanUpStablePrefix(std::string_view text);

} // namespace qeff::tokenizer::detail

#endif // QEFF_FRONTEND_TOKENIZER_TOKENIZERIMPL_H
