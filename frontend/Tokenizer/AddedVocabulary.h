//===- AddedVocabulary.h - added and special tokens -------------*- C++ -*-===//
//
// The tokens of tokenizer.json "added_tokens" (and the special tokens named
// by tokenizer_config.json). As in HF `tokenizers`, the input is first split
// on the non-normalized added tokens, each remaining piece is normalized and
// split again on the normalized ones; only what is left goes through the
// pre-tokenizer and the model. Matching is leftmost-longest, honouring
// single_word, lstrip and rstrip.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_TOKENIZER_ADDEDVOCABULARY_H
#define QEFF_FRONTEND_TOKENIZER_ADDEDVOCABULARY_H

#include "frontend/Tokenizer/Components.h"

#include "absl/container/flat_hash_map.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace qeff::tokenizer::detail {

struct AddedToken {
  std::string content;
  int64_t id = -1;
  bool special = false;
  bool singleWord = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = false;
};

/// A piece of input after added-token extraction: either an added token
/// (`id` >= 0) or normalized text for the pre-tokenizer.
struct Segment {
  Piece piece;
  int64_t id = -1;
};

class AddedVocabulary {
public:
  /// Adds or replaces (by content) a token; empty contents are ignored.
  void add(const AddedToken &token);
  /// Builds the matchers; call after the last add(). `normalizer` (may be
  /// null) normalizes the contents of tokens marked normalized.
  void finalize(const Normalizer *normalizer);

  /// Splits `text` on added tokens, normalizing the text in between.
  std::vector<Segment> extract(std::string_view text,
                               const Normalizer *normalizer) const;

  const AddedToken *byId(int64_t id) const;
  const AddedToken *byContent(std::string_view content) const;
  int64_t maxId() const;
  bool empty() const { return tokens_.empty(); }

private:
  /// A byte trie over token contents for leftmost-longest search.
  struct Trie {
    struct Node {
      absl::flat_hash_map<unsigned char, int> next;
      int token = -1; // index into tokens_
    };
    std::vector<Node> nodes{1};
    void insert(std::string_view pattern, int token);
    /// Leftmost-longest match at or after `from`: {begin, end, token}.
    bool find(std::string_view text, size_t from, size_t &begin, size_t &end,
              int &token) const;
  };

  void split(const Piece &piece, const Trie &trie,
             std::vector<Segment> &out) const;

  std::vector<AddedToken> tokens_;
  absl::flat_hash_map<std::string, size_t> byContent_;
  absl::flat_hash_map<int64_t, size_t> byId_;
  Trie raw_;
  Trie normalized_;
};

} // namespace qeff::tokenizer::detail

#endif // QEFF_FRONTEND_TOKENIZER_ADDEDVOCABULARY_H
