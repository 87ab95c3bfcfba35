//===- AddedVocabulary.cpp - added and special tokens ---------------------===//
//
// Port of AddedVocabulary::find_matches / extract_and_normalize of HF
// `tokenizers` (tokenizer/added_vocabulary.rs).
//
//===----------------------------------------------------------------------===//

#include "frontend/Tokenizer/AddedVocabulary.h"
#include "frontend/Tokenizer/Unicode.h"

namespace qeff::tokenizer::detail {

void AddedVocabulary::Trie::insert(std::string_view pattern, int token) {
  int node = 0;
  for (char c : pattern) {
    auto key = static_cast<unsigned char>(c);
    auto it = nodes[node].next.find(key);
    if (it == nodes[node].next.end()) {
      nodes.emplace_back();
      int child = static_cast<int>(nodes.size()) - 1;
      nodes[node].next[key] = child;
      node = child;
    } else {
      node = it->second;
    }
  }
  // The first token with a given pattern wins, like aho-corasick's pattern
  // order.
  if (nodes[node].token < 0)
    nodes[node].token = token;
}

bool AddedVocabulary::Trie::find(std::string_view text, size_t from,
                                 size_t &begin, size_t &end, int &token) const {
  if (nodes[0].next.empty())
    return false;
  for (size_t start = from; start < text.size(); ++start) {
    int node = 0;
    int best = -1;
    size_t bestEnd = 0;
    for (size_t pos = start; pos < text.size(); ++pos) {
      auto it = nodes[node].next.find(static_cast<unsigned char>(text[pos]));
      if (it == nodes[node].next.end())
        break;
      node = it->second;
      if (nodes[node].token >= 0) {
        best = nodes[node].token;
        bestEnd = pos + 1;
      }
    }
    if (best >= 0) {
      begin = start;
      end = bestEnd;
      token = best;
      return true;
    }
  }
  return false;
}

void AddedVocabulary::add(const AddedToken &token) {
  if (token.content.empty())
    return;
  auto it = byContent_.find(token.content);
  if (it != byContent_.end()) {
    byId_.erase(tokens_[it->second].id);
    tokens_[it->second] = token;
    byId_[token.id] = it->second;
    return;
  }
  byContent_[token.content] = tokens_.size();
  byId_[token.id] = tokens_.size();
  tokens_.push_back(token);
}

void AddedVocabulary::finalize(const Normalizer *normalizer) {
  raw_ = Trie();
  normalized_ = Trie();
  // HF matches special tokens first, then the others, in insertion order.
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < tokens_.size(); ++i) {
      const AddedToken &token = tokens_[i];
      if (token.special != (pass == 0))
        continue;
      if (!token.normalized) {
        raw_.insert(token.content, static_cast<int>(i));
        continue;
      }
      std::string pattern = token.content;
      if (normalizer)
        normalizer->normalize(pattern);
      if (!pattern.empty())
        normalized_.insert(pattern, static_cast<int>(i));
    }
  }
}

static bool isWordChar(char32_t cp) {
  static const Regex word = [] {
    auto regex = Regex::compile(R"(\w)");
    return regex.ok() ? *regex : Regex();
  }();
  std::string text;
  appendUtf8(text, cp);
  return !word.findAll(text).empty();
}

static char32_t lastChar(std::string_view text) {
  size_t start = text.size() - 1;
  while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80)
    --start;
  return decodeUtf8(text, start);
}

void AddedVocabulary::split(const Piece &piece, const Trie &trie,
                            std::vector<Segment> &out) const {
  const std::string &text = piece.text;
  auto emitText = [&](size_t begin, size_t end) {
    if (end > begin)
      out.push_back(Segment{
          Piece{text.substr(begin, end - begin), piece.atStart && begin == 0},
          -1});
  };
  size_t startOffset = 0;
  size_t searchFrom = 0, begin = 0, end = 0;
  int index = -1;
  while (trie.find(text, searchFrom, begin, end, index)) {
    searchFrom = end;
    const AddedToken &token = tokens_[index];
    size_t start = begin, stop = end;
    if (token.singleWord) {
      bool startOk = start == 0 || !isWordChar(lastChar(text.substr(0, start)));
      size_t pos = stop;
      bool stopOk = stop == text.size() || !isWordChar(decodeUtf8(text, pos));
      if (!startOk || !stopOk)
        continue;
    }
    if (token.lstrip) {
      size_t newStart = start;
      while (newStart > 0) {
        size_t prev = newStart - 1;
        while (prev > 0 &&
               (static_cast<unsigned char>(text[prev]) & 0xC0) == 0x80)
          --prev;
        size_t pos = prev;
        if (!isUnicodeWhitespace(decodeUtf8(text, pos)))
          break;
        newStart = prev;
      }
      start = std::max(newStart, startOffset);
    }
    if (token.rstrip) {
      while (stop < text.size()) {
        size_t pos = stop;
        if (!isUnicodeWhitespace(decodeUtf8(text, pos)))
          break;
        stop = pos;
      }
    }
    emitText(startOffset, start);
    if (stop > start)
      out.push_back(Segment{
          Piece{text.substr(start, stop - start), piece.atStart && start == 0},
          token.id});
    startOffset = stop;
  }
  emitText(startOffset, text.size());
}

std::vector<Segment>
AddedVocabulary::extract(std::string_view text,
                         const Normalizer *normalizer) const {
  std::vector<Segment> first;
  split(Piece{std::string(text), true}, raw_, first);
  std::vector<Segment> result;
  for (Segment &segment : first) {
    if (segment.id >= 0) {
      result.push_back(std::move(segment));
      continue;
    }
    if (normalizer)
      normalizer->normalize(segment.piece.text);
    split(segment.piece, normalized_, result);
  }
  return result;
}

const AddedToken *AddedVocabulary::byId(int64_t id) const {
  auto it = byId_.find(id);
  return it == byId_.end() ? nullptr : &tokens_[it->second];
}

const AddedToken *AddedVocabulary::byContent(std::string_view content) const {
  auto it = byContent_.find(absl::string_view(content.data(), content.size()));
  return it == byContent_.end() ? nullptr : &tokens_[it->second];
}

int64_t AddedVocabulary::maxId() const {
  int64_t result = -1;
  for (const AddedToken &token : tokens_)
    result = std::max(result, token.id);
  return result;
}

} // namespace qeff::tokenizer::detail
