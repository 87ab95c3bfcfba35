//===- Vocabulary.cpp - a tokenizer's vocabulary as bytes -----------------===//
//
// Part of qeff. See Vocabulary.h.
//
//===----------------------------------------------------------------------===//

#include "runtime/structured/Vocabulary.h"
#include "runtime/structured/Lexemes.h"

#include "frontend/Tokenizer/Tokenizer.h"

#include <algorithm>
#include <cstdio>

namespace qeff::structured {

void TokenTrie::build(
    std::vector<std::pair<std::string_view, int32_t>> entries) {
  std::sort(entries.begin(), entries.end());
  nodes.assign(1, Node{});
  ids.clear();
  maxDepth = 0;
  std::vector<uint32_t> path{0}; // path[d]: the node at depth d
  std::string_view previous;
  for (const auto &[text, id] : entries) {
    size_t common = 0;
    while (common < previous.size() && common < text.size() &&
           previous[common] == text[common])
      ++common;
    while (path.size() > common + 1) {
      nodes[path.back()].end = uint32_t(nodes.size());
      path.pop_back();
    }
    for (size_t d = common; d < text.size(); ++d) {
      Node node;
      node.depth = uint16_t(d + 1);
      node.byte = uint8_t(text[d]);
      path.push_back(uint32_t(nodes.size()));
      nodes.push_back(node);
    }
    Node &last = nodes[path.back()];
    if (last.idsBegin == last.idsEnd)
      last.idsBegin = last.idsEnd = uint32_t(ids.size());
    ids.push_back(id);
    ++last.idsEnd;
    maxDepth = std::max<uint16_t>(maxDepth, uint16_t(text.size()));
    previous = text;
  }
  while (!path.empty()) {
    nodes[path.back()].end = uint32_t(nodes.size());
    path.pop_back();
  }
}

std::shared_ptr<const Vocabulary>
Vocabulary::fromTokenizer(const tokenizer::Tokenizer &tokenizer,
                          std::string &error) {
  const size_t n = tokenizer.vocabSize();
  std::vector<std::optional<std::string>> middle(n), atStart(n);
  for (size_t id = 0; id < n; ++id) {
    middle[id] = tokenizer.tokenBytes(int64_t(id), false);
    atStart[id] = tokenizer.tokenBytes(int64_t(id), true);
  }
  return fromBytes(std::move(middle), std::move(atStart),
                   tokenizer.cleansUpSpaces(), error);
}

std::shared_ptr<const Vocabulary>
Vocabulary::fromBytes(std::vector<std::optional<std::string>> middle,
                      std::vector<std::optional<std::string>> atStart,
                      bool guardCleanUp, std::string &error) {
  auto vocab = std::make_shared<Vocabulary>();
  vocab->middle_ = std::move(middle);
  vocab->atStart_ = std::move(atStart);
  vocab->guardCleanUp_ = guardCleanUp;
  if (!vocab->init(error))
    return nullptr;
  return vocab;
}

static bool validUtf8(const std::string &text) {
  StringState s;
  uint32_t high = 0;
  for (char c : text) {
    if (uint8_t(c) < 0x80) {
      if (s.phase != StringState::Body)
        return false; // a character cut short
      continue;
    }
    if (stepString(s, high, uint8_t(c), false).result == StringResult::Dead)
      return false;
  }
  return s.phase == StringState::Body;
}

bool Vocabulary::init(std::string &error) {
  auto usable = [](std::optional<std::string> &bytes) {
    if (bytes && (bytes->empty() || bytes->size() > kMaxTokenBytes))
      bytes.reset(); // an empty share would let a sequence stall
  };
  bool single[256] = {};
  for (auto &bytes : middle_) {
    usable(bytes);
    if (bytes && bytes->size() == 1)
      single[uint8_t((*bytes)[0])] = true;
  }
  if (atStart_.size() != middle_.size())
    atStart_.assign(middle_.size(), std::nullopt);
  for (auto &bytes : atStart_)
    usable(bytes);
  for (int c = 0x20; c < 0x7F; ++c)
    if (!single[c]) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", c);
      error = std::string("the tokenizer has no token for '") + char(c) +
              "' (" + hex +
              ") alone; JSON output needs one for every printable ASCII "
              "character";
      return false;
    }
  allBytes_ =
      std::all_of(single + 0x80, single + 0x100, [](bool b) { return b; });
  if (!allBytes_) {
    // Without a token per byte, a token ending inside a character could be
    // a dead end: keep whole characters only.
    for (auto *list : {&middle_, &atStart_})
      for (auto &bytes : *list)
        if (bytes && !validUtf8(*bytes))
          bytes.reset();
  }

  std::vector<std::pair<std::string_view, int32_t>> entries, startEntries;
  bool startDiffers = false;
  for (size_t id = 0; id < middle_.size(); ++id) {
    const auto &bytes = middle_[id];
    const auto &first = atStart_[id];
    startDiffers = startDiffers || bytes != first;
    if (first)
      startEntries.push_back({*first, int32_t(id)});
    if (bytes)
      entries.push_back({*bytes, int32_t(id)});
  }
  trie_.build(std::move(entries));
  if (startDiffers)
    start_.build(std::move(startEntries));
  return true;
}

/// The string-body states with a table: between characters (with the
/// clean-up guard clear, after ' ', after " n"), and inside a raw
/// character (each way the next continuation byte can be limited); -1 for
/// the rest.
static int tableIndex(const StringState &s) {
  if (s.phase == StringState::Body)
    return s.guard <= 2 ? s.guard : -1;
  if (s.phase != StringState::Utf8)
    return -1;
  static const uint8_t kUtf8[][3] = {
      {1, 0x80, 0xBF}, {2, 0xA0, 0xBF}, {2, 0x80, 0x9F}, {2, 0x80, 0xBF},
      {3, 0x90, 0xBF}, {3, 0x80, 0x8F}, {3, 0x80, 0xBF}};
  for (int i = 0; i < 7; ++i)
    if (s.need == kUtf8[i][0] && s.lo == kUtf8[i][1] && s.hi == kUtf8[i][2])
      return 3 + i;
  return -1;
}

const Vocabulary::StringTable *
Vocabulary::stringTable(const StringState &state) const {
  int index = tableIndex(state);
  if (index < 0)
    return nullptr;
  std::call_once(tableOnce_[index], [&] {
    auto table = std::make_unique<StringTable>();
    std::vector<std::pair<std::string_view, int32_t>> quotes;
    for (size_t id = 0; id < middle_.size(); ++id) {
      if (!middle_[id])
        continue;
      StringState s = state;
      uint32_t high = 0, chars = 0;
      StringResult result = StringResult::More;
      for (char c : *middle_[id]) {
        StringStep step = stepString(s, high, uint8_t(c), guardCleanUp_);
        result = step.result;
        if (result != StringResult::More)
          break;
        chars += step.newChar;
      }
      if (result == StringResult::More)
        table->stay.push_back({chars, int32_t(id)});
      else if (result == StringResult::Closed)
        quotes.push_back({*middle_[id], int32_t(id)});
    }
    std::sort(table->stay.begin(), table->stay.end());
    table->quotes.build(std::move(quotes));
    tables_[index] = std::move(table);
  });
  return tables_[index].get();
}

const std::string *Vocabulary::bytes(int64_t id, bool atStart) const {
  if (id < 0 || size_t(id) >= middle_.size())
    return nullptr;
  const auto &bytes = atStart ? atStart_[id] : middle_[id];
  return bytes ? &*bytes : nullptr;
}

} // namespace qeff::structured
