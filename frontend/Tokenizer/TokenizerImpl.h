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
  std::string decode(absl::Span<const TokenId> ids,
                     bool skipSpecialTokens) const;
  std::optional<TokenId> tokenToId(std::string_view token) const;

  /// Wraps a finished implementation in the public handle.
  static Tokenizer wrap(std::shared_ptr<const TokenizerImpl> impl) {
    return Tokenizer(std::move(impl));
  }
};

} // namespace qeff::tokenizer::detail

#endif // QEFF_FRONTEND_TOKENIZER_TOKENIZERIMPL_H
