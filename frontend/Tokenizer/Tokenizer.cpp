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

namespace {
/// transformers' clean_up_tokenization, applied rule by rule in this order.
constexpr std::pair<std::string_view, std::string_view> kCleanUpRules[] = {
    {" .", "."},     {" ?", "?"},     {" !", "!"},   {" ,", ","},
    {" ' ", "'"},    {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"},
    {" 've", "'ve"}, {" 're", "'re"}};
/// Every text a rule can rewrite as one unit: each rule's pattern, and the
/// chains where removing " ' " lets a later rule match from the space before
/// it ("  ' m" -> " 'm" -> "'m"). All start with a space; none is longer
/// than 6 bytes.
constexpr std::string_view kCleanUpUnits[] = {
    " .",    " ?",    " !",     " ,",     " ' ",    " n't",  " 'm",
    " 's",   " 've",  " 're",   "  ' m",  "  ' s",  "  ' ve", "  ' re"};
} // namespace

std::string cleanUpTokenization(std::string text) {
  for (const auto &[from, to] : kCleanUpRules)
    text = replaceAll(text, from, to);
  return text;
}

size_t cleanUpStablePrefix(std::string_view text) {
  // A split at k is stable when no unit can match across it: a unit
  // starting at s < k reaching past k whose known bytes agree with it.
  auto straddles = [&](size_t s, size_t k) {
    for (std::string_view unit : kCleanUpUnits) {
      if (s + unit.size() <= k)
        continue;
      size_t known = std::min(unit.size(), text.size() - s);
      if (text.compare(s, known, unit.substr(0, known)) == 0)
        return true;
    }
    return false;
  };
  size_t k = text.size();
  for (;;) {
    size_t from = k >= 6 ? k - 6 : 0, s = from;
    while (s < k && !(text[s] == ' ' && straddles(s, k)))
      ++s;
    if (s == k)
      return k;
    k = s; // split before that unit's space instead
  }
}

std::string TokenizerImpl::decode(absl::Span<const TokenId> ids,
                                  bool skipSpecialTokens, bool cleanUp) const {
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
  if (cleanUp && cleanUpTokenizationSpaces)
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

std::optional<std::string> Tokenizer::tokenBytes(TokenId id,
                                                 bool atStart) const {
  try {
    std::string token;
    if (const detail::AddedToken *added = impl_->added.byId(id)) {
      if (added->special)
        return std::nullopt;
      token = added->content;
    } else if (const std::string *text = impl_->model.idToToken(id)) {
      // decode() skips a model token spelled like a special added token.
      const detail::AddedToken *same = impl_->added.byContent(*text);
      if (same && same->special)
        return std::nullopt;
      token = *text;
    } else {
      return std::nullopt;
    }
    // Without a decoder, decode() joins the tokens with spaces.
    if (!impl_->decoder)
      return atStart ? token : " " + token;
    bool joined = false;
    if (!impl_->decoder->rawToken(token, atStart, joined))
      return std::nullopt;
    return token;
  } catch (...) {
    return std::nullopt;
  }
}

bool Tokenizer::cleansUpSpaces() const {
  return impl_->cleanUpTokenizationSpaces;
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
// leading spaces right), emit what extends the previous text. The window is
// decoded without clean_up_tokenization_spaces, which is not prefix-stable
// (" ." -> "." once the "." arrives); the clean-up runs on the emitted text
// instead, holding back the bytes a later token could still change.
std::string DecodeStream::rawStep(TokenId id) {
  ++seen_;
  window_.push_back(id);
  std::string text = decodeWindow();
  if (text.size() <= prefixText_.size() || endsWithReplacementChar(text))
    return {};
  std::string fresh = text.compare(0, prefixText_.size(), prefixText_) == 0
                          ? text.substr(prefixText_.size())
                          : text; // decoder not prefix-stable: emit window
  window_.erase(window_.begin(), window_.begin() + prefixLen_);
  prefixLen_ = window_.size();
  prefixText_ = decodeWindow();
  return fresh;
}

std::string DecodeStream::decodeWindow() const {
  return tokenizer_.impl_->decode(window_, skipSpecial_, /*cleanUp=*/false);
}

std::string DecodeStream::cleanUp(std::string raw, bool final) {
  if (!tokenizer_.impl_->cleanUpTokenizationSpaces)
    return raw;
  held_ += raw;
  size_t k = final ? held_.size() : detail::cleanUpStablePrefix(held_);
  std::string out = detail::cleanUpTokenization(held_.substr(0, k));
  held_.erase(0, k);
  return out;
}

std::string DecodeStream::step(TokenId id) {
  return cleanUp(rawStep(id), /*final=*/false);
}

std::string DecodeStream::update(absl::Span<const TokenId> allIds) {
  std::string out;
  for (size_t i = seen_; i < allIds.size(); ++i)
    out += step(allIds[i]);
  return out;
}

std::string DecodeStream::flush() {
  std::string text = decodeWindow();
  std::string rest =
      text.size() > prefixText_.size() ? text.substr(prefixText_.size()) : "";
  prefixLen_ = window_.size();
  prefixText_ = std::move(text);
  return cleanUp(std::move(rest), /*final=*/true);
}

} // namespace qeff::tokenizer
