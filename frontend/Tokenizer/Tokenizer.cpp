//===- Tokenizer.cpp - encode, decode and streaming decode ----------------===//
//
// Runs the pipeline of a loaded tokenizer (see Loader.cpp for loading):
// added-token extraction + normalization, pre-tokenization, BPE, post-
// processing; and ids -> tokens -> decoder chain -> text.
//
//===----------------------------------------------------------------------===//

#include "frontend/Tokenizer/Tokenizer.h"
#include "frontend/Tokenizer/TokenizerImpl.h"
#include "frontend/Tokenizer/Unicode.h"

namespace qeff::tokenizer {
namespace detail {

std::vector<TokenId> TokenizerImpl::encode(std::string_view text,
                                           bool addSpecialTokens) const {
  std::string clean = sanitizeUtf8(text);
  std::vector<TokenId> ids;
  for (Segment &segment : added.extract(clean, normalizer.get())) {
    if (segment.id >= 0) {
      ids.push_back(segment.id);
      continue;
    }
    std::vector<Piece> pieces;
    pieces.push_back(std::move(segment.piece));
    if (preTokenizer)
      preTokenizer->preTokenize(pieces);
    for (const Piece &piece : pieces)
      model.tokenize(piece.text, ids);
  }
  if (addSpecialTokens && postProcessor)
    postProcessor->process(ids);
  return ids;
}

/// transformers' PreTrainedTokenizerBase.clean_up_tokenization.
static std::string cleanUpTokenization(std::string text) {
  static const std::pair<std::string_view, std::string_view> kRules[] = {
      {" .", "."},     {" ?", "?"},     {" !", "!"},   {" ,", ","},
      {" ' ", "'"},    {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"},
      {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto &[from, to] : kRules)
    text = replaceAll(text, from, to);
  return text;
}

std::string TokenizerImpl::decode(absl::Span<const TokenId> ids,
                                  bool skipSpecialTokens) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (TokenId id : ids) {
    if (const AddedToken *token = added.byId(id)) {
      if (!(skipSpecialTokens && token->special))
        tokens.push_back(token->content);
      continue;
    }
    if (const std::string *token = model.idToToken(id)) {
      // HF checks specialness by content: a model token spelled like a
      // special added token is skipped too.
      const AddedToken *same = added.byContent(*token);
      if (!(skipSpecialTokens && same && same->special))
        tokens.push_back(*token);
    }
  }
  std::string text;
  if (decoder) {
    decoder->decodeChain(tokens);
    for (const std::string &token : tokens)
      text += token;
  } else {
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (i)
        text += ' ';
      text += tokens[i];
    }
  }
  if (cleanUpTokenizationSpaces)
    text = cleanUpTokenization(std::move(text));
  return text;
}

std::optional<TokenId> TokenizerImpl::tokenToId(std::string_view token) const {
  if (const AddedToken *addedToken = added.byContent(token))
    return addedToken->id;
  return model.tokenToId(token);
}

} // namespace detail

//===----------------------------------------------------------------------===//
// Tokenizer
//===----------------------------------------------------------------------===//

std::vector<TokenId> Tokenizer::encode(std::string_view text,
                                       bool addSpecialTokens) const {
  try {
    return impl_->encode(text, addSpecialTokens);
  } catch (...) {
    // Only std::bad_alloc can get here; the API promises no exceptions.
    return {};
  }
}

std::string Tokenizer::decode(absl::Span<const TokenId> ids,
                              bool skipSpecialTokens) const {
  try {
    return impl_->decode(ids, skipSpecialTokens);
  } catch (...) {
    return {};
  }
}

std::optional<TokenId> Tokenizer::bosId() const { return impl_->bos; }

const std::vector<TokenId> &Tokenizer::eosIds() const { return impl_->eos; }

bool Tokenizer::addsBos() const {
  if (!impl_->bos || !impl_->postProcessor)
    return false;
  std::vector<TokenId> ids;
  impl_->postProcessor->process(ids);
  return !ids.empty() && ids.front() == *impl_->bos;
}

std::optional<std::string> Tokenizer::idToToken(TokenId id) const {
  if (const detail::AddedToken *token = impl_->added.byId(id))
    return token->content;
  if (const std::string *token = impl_->model.idToToken(id))
    return *token;
  return std::nullopt;
}

std::optional<TokenId> Tokenizer::tokenToId(std::string_view token) const {
  return impl_->tokenToId(token);
}

bool Tokenizer::isSpecial(TokenId id) const {
  const detail::AddedToken *token = impl_->added.byId(id);
  return token && token->special;
}

size_t Tokenizer::vocabSize() const {
  return static_cast<size_t>(
      std::max(impl_->model.maxId(), impl_->added.maxId()) + 1);
}

//===----------------------------------------------------------------------===//
// DecodeStream
//===----------------------------------------------------------------------===//

static bool endsWithReplacementChar(const std::string &text) {
  return text.size() >= 3 &&
         text.compare(text.size() - 3, 3, "\xEF\xBF\xBD") == 0;
}

// The scheme of HF's DecodeStream: decode a short window of ids whose first
// `prefixLen_` ids were already emitted (decoding them as context keeps
// leading spaces right), emit what extends the previous text.
std::string DecodeStream::step(TokenId id) {
  ++seen_;
  window_.push_back(id);
  std::string text = tokenizer_.decode(window_, skipSpecial_);
  if (text.size() <= prefixText_.size() || endsWithReplacementChar(text))
    return {};
  std::string fresh = text.compare(0, prefixText_.size(), prefixText_) == 0
                          ? text.substr(prefixText_.size())
                          : text; // decoder not prefix-stable: emit window
  window_.erase(window_.begin(), window_.begin() + prefixLen_);
  prefixLen_ = window_.size();
  prefixText_ = tokenizer_.decode(window_, skipSpecial_);
  return fresh;
}

std::string DecodeStream::update(absl::Span<const TokenId> allIds) {
  std::string out;
  for (size_t i = seen_; i < allIds.size(); ++i)
    out += step(allIds[i]);
  return out;
}

std::string DecodeStream::flush() {
  std::string text = tokenizer_.decode(window_, skipSpecial_);
  std::string rest =
      text.size() > prefixText_.size() ? text.substr(prefixText_.size()) : "";
  prefixLen_ = window_.size();
  prefixText_ = std::move(text);
  return rest;
}

} // namespace qeff::tokenizer
