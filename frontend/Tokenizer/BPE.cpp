//===- BPE.cpp - byte-pair-encoding model ---------------------------------===//
//
// A port of the BPE model of Hugging Face `tokenizers` (models/bpe/model.rs
// and word.rs) for inference: a word is split into characters (with byte
// fallback and unk handling as HF does, quirks included), then merges are
// applied from a priority queue ordered by (rank, position).
//
//===----------------------------------------------------------------------===//

#include "frontend/Tokenizer/Components.h"
#include "frontend/Tokenizer/Unicode.h"

#include "absl/strings/str_format.h"

#include <queue>

namespace qeff::tokenizer::detail {

static constexpr int64_t kMaxId = (int64_t(1) << 31) - 1;

static uint64_t pairKey(int64_t a, int64_t b) {
  return (static_cast<uint64_t>(a) << 32) | static_cast<uint64_t>(b);
}

absl::StatusOr<BpeModel> BpeModel::build(Vocab vocab, const Merges &merges,
                                         BpeOptions options,
                                         const JsonPath &path) {
  BpeModel model;
  model.options_ = std::move(options);
  model.vocab_ = std::move(vocab);
  for (const auto &[token, id] : model.vocab_) {
    if (id < 0 || id > kMaxId)
      return jsonError(path / "vocab", strCat("id ", id, " of token '", token,
                                              "' is out of range"));
    model.vocabR_[id] = token;
    model.maxId_ = std::max(model.maxId_, id);
  }

  const std::string &prefix = model.options_.continuingSubwordPrefix;
  model.merges_.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto &[left, right] = merges[rank];
    auto leftId = model.tokenToId(left);
    auto rightId = model.tokenToId(right);
    if (!leftId || !rightId)
      return jsonError(path / "merges",
                       strCat("merge ", rank, " ('", left, "', '", right,
                              "') uses a token not in the vocabulary"));
    std::string_view rightTail = right;
    if (!prefix.empty() && rightTail.substr(0, prefix.size()) == prefix)
      rightTail.remove_prefix(prefix.size());
    auto newId = model.tokenToId(strCat(left, rightTail));
    if (!newId)
      return jsonError(path / "merges",
                       strCat("merge ", rank, " ('", left, "', '", right,
                              "') produces a token not in the "
                              "vocabulary"));
    // As HF collects merges into a map, a repeated pair keeps the last rank.
    model.merges_[pairKey(*leftId, *rightId)] =
        Merge{static_cast<uint32_t>(rank), *newId};
  }

  if (model.options_.unkToken) {
    model.unkId_ = model.tokenToId(*model.options_.unkToken);
    if (!model.unkId_)
      return jsonError(path / "unk_token",
                       strCat("unk token '", *model.options_.unkToken,
                              "' is not in the vocabulary"));
  }
  if (model.options_.byteFallback) {
    model.byteIds_.assign(256, -1);
    for (int b = 0; b < 256; ++b)
      if (auto id = model.tokenToId(absl::StrFormat("<0x%02X>", b)))
        model.byteIds_[b] = *id;
  }
  return model;
}

absl::StatusOr<BpeModel> BpeModel::fromJson(const Json &json,
                                            const JsonPath &path) {
  if (!json.is_object())
    return jsonError(path, "expected an object");
  // Untagged models (no "type") are accepted when they look like BPE.
  if (const Json *type = findMember(json, "type")) {
    if (!type->is_string())
      return jsonError(path / "type", "expected a string");
    std::string name = type->get<std::string>();
    if (name != "BPE")
      return unsupported(
          path / "type",
          strCat("model '", name, "' (only BPE models are implemented)"));
  } else if (!findMember(json, "merges")) {
    return unsupported(path, "model without \"type\" and \"merges\" "
                             "(only BPE models are implemented)");
  }

  BpeOptions options;
  auto unk = getOptString(json, path, "unk_token");
  if (!unk.ok())
    return unk.status();
  options.unkToken = *unk;
  for (auto [key, field] :
       {std::pair{"continuing_subword_prefix",
                  &options.continuingSubwordPrefix},
        std::pair{"end_of_word_suffix", &options.endOfWordSuffix}}) {
    auto value = getOptString(json, path, key);
    if (!value.ok())
      return value.status();
    *field = value->value_or("");
  }
  for (auto [key, field] :
       {std::pair{"fuse_unk", &options.fuseUnk},
        std::pair{"byte_fallback", &options.byteFallback},
        std::pair{"ignore_merges", &options.ignoreMerges}}) {
    auto value = getBool(json, path, key, false);
    if (!value.ok())
      return value.status();
    *field = *value;
  }
  if (const Json *dropout = findMember(json, "dropout")) {
    if (!dropout->is_number())
      return jsonError(path / "dropout", "expected a number or null");
    if (dropout->get<double>() != 0.0)
      return unsupported(path / "dropout",
                         "BPE dropout (non-deterministic encoding)");
  }

  const Json *vocabJson = findMember(json, "vocab");
  if (!vocabJson || !vocabJson->is_object())
    return jsonError(path / "vocab", "expected an object of token -> id");
  Vocab vocab;
  vocab.reserve(vocabJson->size());
  for (const auto &[token, id] : vocabJson->items()) {
    if (!id.is_number_integer())
      return jsonError(path / "vocab",
                       strCat("id of token '", token, "' is not an integer"));
    vocab[token] = id.get<int64_t>();
  }

  const Json *mergesJson = findMember(json, "merges");
  Merges merges;
  if (mergesJson) {
    if (!mergesJson->is_array())
      return jsonError(path / "merges", "expected an array");
    merges.reserve(mergesJson->size());
    for (size_t i = 0; i < mergesJson->size(); ++i) {
      const Json &merge = (*mergesJson)[i];
      if (merge.is_string()) {
        // Legacy form "a b"; tokens themselves cannot contain a space here.
        const auto &text = merge.get_ref<const std::string &>();
        size_t space = text.find(' ');
        if (space == std::string::npos)
          return jsonError((path / "merges")[i],
                           strCat("merge '", text,
                                  "' is not two tokens separated by "
                                  "a space"));
        merges.emplace_back(text.substr(0, space), text.substr(space + 1));
      } else if (merge.is_array() && merge.size() == 2 &&
                 merge[0].is_string() && merge[1].is_string()) {
        merges.emplace_back(merge[0].get<std::string>(),
                            merge[1].get<std::string>());
      } else {
        return jsonError((path / "merges")[i],
                         "expected \"a b\" or [\"a\", \"b\"]");
      }
    }
  }
  return build(std::move(vocab), merges, std::move(options), path);
}

std::optional<int64_t> BpeModel::tokenToId(std::string_view token) const {
  auto it = vocab_.find(absl::string_view(token.data(), token.size()));
  if (it == vocab_.end())
    return std::nullopt;
  return it->second;
}

const std::string *BpeModel::idToToken(int64_t id) const {
  auto it = vocabR_.find(id);
  return it == vocabR_.end() ? nullptr : &it->second;
}

namespace {
struct Symbol {
  int64_t id;
  int prev;
  int next;
  size_t len; // 0 once merged into its left neighbour
};
struct QueuedMerge {
  uint32_t rank;
  int pos;
  int64_t newId;
  // std::priority_queue is a max-heap: invert to pop the lowest rank, then
  // the leftmost position.
  bool operator<(const QueuedMerge &other) const {
    if (rank != other.rank)
      return rank > other.rank;
    return pos > other.pos;
  }
};
} // namespace

void BpeModel::tokenize(std::string_view word,
                        std::vector<int64_t> &out) const {
  if (word.empty())
    return;
  if (options_.ignoreMerges) {
    if (auto id = tokenToId(word)) {
      out.push_back(*id);
      return;
    }
  }

  // HF BPE::merge_word: characters to symbols.
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  auto add = [&](int64_t id, size_t len) {
    int index = static_cast<int>(symbols.size());
    symbols.push_back(Symbol{id, index - 1, index + 1, len});
  };
  std::optional<std::pair<int64_t, size_t>> pendingUnk;
  std::string buffer;
  for (size_t pos = 0; pos < word.size();) {
    size_t begin = pos;
    pos += std::min(utf8SeqLen(static_cast<unsigned char>(word[pos])),
                    word.size() - pos);
    size_t byteLen = pos - begin;
    buffer.clear();
    if (begin != 0)
      buffer += options_.continuingSubwordPrefix;
    buffer.append(word.substr(begin, byteLen));
    if (pos == word.size())
      buffer += options_.endOfWordSuffix;

    if (auto id = tokenToId(buffer)) {
      if (pendingUnk) {
        add(pendingUnk->first, pendingUnk->second);
        pendingUnk.reset();
      }
      add(*id, byteLen);
      continue;
    }
    if (options_.byteFallback && !byteIds_.empty()) {
      bool all = true;
      for (char c : buffer)
        all = all && byteIds_[static_cast<unsigned char>(c)] >= 0;
      if (all) {
        // HF adds the byte tokens without flushing a pending unk first.
        for (char c : buffer)
          add(byteIds_[static_cast<unsigned char>(c)], 1);
        continue;
      }
    }
    if (unkId_) {
      if (pendingUnk && options_.fuseUnk) {
        pendingUnk->second += byteLen;
      } else {
        if (pendingUnk)
          add(pendingUnk->first, pendingUnk->second);
        pendingUnk = std::make_pair(*unkId_, byteLen);
      }
    }
  }
  if (pendingUnk)
    add(pendingUnk->first, pendingUnk->second);
  if (symbols.empty())
    return;
  symbols.back().next = -1;

  // HF Word::merge_all.
  std::priority_queue<QueuedMerge> queue;
  auto lookup = [&](int64_t a, int64_t b) -> const Merge * {
    auto it = merges_.find(pairKey(a, b));
    return it == merges_.end() ? nullptr : &it->second;
  };
  for (size_t i = 0; i + 1 < symbols.size(); ++i)
    if (const Merge *m = lookup(symbols[i].id, symbols[i + 1].id))
      queue.push(QueuedMerge{m->rank, static_cast<int>(i), m->newId});

  while (!queue.empty()) {
    QueuedMerge top = queue.top();
    queue.pop();
    Symbol &current = symbols[top.pos];
    if (current.len == 0 || current.next == -1)
      continue;
    int nextPos = current.next;
    Symbol right = symbols[nextPos];
    const Merge *valid = lookup(current.id, right.id);
    if (!valid || valid->newId != top.newId)
      continue; // stale queue entry

    current.id = top.newId;
    current.len += right.len;
    current.next = right.next;
    symbols[nextPos].len = 0;
    if (right.next >= 0)
      symbols[right.next].prev = top.pos;

    if (current.prev >= 0)
      if (const Merge *m = lookup(symbols[current.prev].id, current.id))
        queue.push(QueuedMerge{m->rank, current.prev, m->newId});
    if (current.next >= 0)
      if (const Merge *m = lookup(current.id, symbols[current.next].id))
        queue.push(QueuedMerge{m->rank, top.pos, m->newId});
  }

  for (const Symbol &symbol : symbols)
    if (symbol.len != 0)
      out.push_back(symbol.id);
}

} // namespace qeff::tokenizer::detail
