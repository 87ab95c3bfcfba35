//===- TestTokenizers.h - vocabularies for the tests ------------*- C++ -*-===//
//
// Part of qeff's tests. Tokenizers of test/data (NamedTokenizers.h), each
// loaded once per test binary with its Vocabulary.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_TEST_UNIT_STRUCTURED_TESTTOKENIZERS_H
#define QEFF_TEST_UNIT_STRUCTURED_TESTTOKENIZERS_H

#include "runtime/structured/JsonConstraint.h"
#include "test/unit/Tokenizer/NamedTokenizers.h"

#include <gtest/gtest.h>

#include <map>

namespace qeff::test {

struct TestVocab {
  std::string name;
  tokenizer::Tokenizer tokenizer;
  std::shared_ptr<const structured::Vocabulary> vocab;
};

/// "stories260K", "llama2", "gpt2" or "qwen2" (namedTokenizer) with its
/// vocabulary; aborts the test binary when the data cannot be loaded.
inline const TestVocab &testVocab(const std::string &name) {
  static std::map<std::string, std::unique_ptr<TestVocab>> cache;
  if (auto it = cache.find(name); it != cache.end())
    return *it->second;
  tokenizer::Tokenizer tok = namedTokenizer(name);
  std::string error;
  auto vocab = structured::makeVocabulary(tok, error);
  if (!vocab) {
    ADD_FAILURE() << name << ": " << error;
    std::abort();
  }
  auto entry = std::make_unique<TestVocab>(TestVocab{name, tok, vocab});
  return *(cache[name] = std::move(entry));
}

} // namespace qeff::test

#endif // QEFF_TEST_UNIT_STRUCTURED_TESTTOKENIZERS_H
