//===- Vocabulary.h - a tokenizer's vocabulary as bytes ---------*- C++ -*-===//
//
// Part of qeff. What constrained decoding needs from a tokenizer, read once
// and shared by every constraint on it: the bytes each token adds to the
// decoded text (Tokenizer::tokenBytes, also as the first token), tries of
// those bytes in depth-first order (a mask walks a trie with the matcher,
// skipping every subtree the matcher refuses at its root), and for the
// common case of a step inside a string, which tokens stay inside it and
// how many characters they add (so such a step only walks the few tokens
// holding a quote). Those string tables exist for the states a string is
// in between tokens: between characters, inside a raw UTF-8 character
// (a byte-level token may end there), after a space the clean-up guard
// watches; they are built on first use.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_STRUCTURED_VOCABULARY_H
#define QEFF_RUNTIME_STRUCTURED_VOCABULARY_H

#include "runtime/structured/Lexemes.h"

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace qeff::tokenizer {
class Tokenizer;
} // namespace qeff::tokenizer

namespace qeff::structured {

/// Token byte strings in a trie whose nodes are in depth-first order:
/// node i's subtree is [i, end).
struct TokenTrie {
  struct Node {
    uint32_t end = 0;
    uint32_t idsBegin = 0, idsEnd = 0; // tokens spelled exactly so
    uint16_t depth = 0;
    uint8_t byte = 0;
  };
  std::vector<Node> nodes; // [0]: the root (empty prefix)
  std::vector<int32_t> ids;
  uint16_t maxDepth = 0;

  void build(std::vector<std::pair<std::string_view, int32_t>> entries);
};

/// Tokens longer than this are never allowed (no real vocabulary has any).
constexpr size_t kMaxTokenBytes = 1024;

class Vocabulary {
public:
  /// Reads `tokenizer`'s vocabulary. Fails (naming the character) when a
  /// printable ASCII character has no token of its own: JSON output could
  /// then reach a state no token continues.
  static std::shared_ptr<const Vocabulary>
  fromTokenizer(const tokenizer::Tokenizer &tokenizer, std::string &error);
  /// From explicit bytes per id (nullopt: never allowed); `atStart` empty:
  /// the same as `middle`. For tests and tokenizer-less callers.
  static std::shared_ptr<const Vocabulary>
  fromBytes(std::vector<std::optional<std::string>> middle,
            std::vector<std::optional<std::string>> atStart, bool guardCleanUp,
            std::string &error);

  size_t size() const { return middle_.size(); }
  /// The bytes token `id` adds (as the first token when `atStart`), or
  /// nullptr when the token is never allowed.
  const std::string *bytes(int64_t id, bool atStart) const;
  const TokenTrie &trie(bool atStart) const {
    return atStart && !start_.nodes.empty() ? start_ : trie_;
  }
  /// From one string-body state: the tokens that stay inside the string,
  /// as (code points begun, id), fewest first, and a trie of those that
  /// close it (the rest cannot follow whatever the string's limits).
  struct StringTable {
    std::vector<std::pair<uint32_t, int32_t>> stay;
    TokenTrie quotes;
  };
  /// The table for `state`, or nullptr when there is none for it (an
  /// escape sequence in progress).
  const StringTable *stringTable(const StringState &state) const;
  bool guardCleanUp() const { return guardCleanUp_; }
  /// Every byte 0x80-0xFF is a token of its own.
  bool allBytes() const { return allBytes_; }

private:
  bool init(std::string &error);

  std::vector<std::optional<std::string>> middle_, atStart_;
  bool guardCleanUp_ = false;
  bool allBytes_ = false;
  TokenTrie trie_, start_;
  /// Tables for the states of tableIndex(), built on first use.
  static constexpr size_t kTables = 10;
  mutable std::array<std::once_flag, kTables> tableOnce_;
  mutable std::array<std::unique_ptr<StringTable>, kTables> tables_;
};

} // namespace qeff::structured

#endif // QEFF_RUNTIME_STRUCTURED_VOCABULARY_H
