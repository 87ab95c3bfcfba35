//===- NamedTokenizers.h - the tokenizers of test/data by name --*- C++ -*-===//
//
// One of each kind of tokenizer the test data holds, loaded by name, for
// tests that run over several kinds (token bytes, constrained decoding).
// Needs QEFF_TEST_DATA_DIR (the test/data directory).
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_TEST_UNIT_TOKENIZER_NAMEDTOKENIZERS_H
#define QEFF_TEST_UNIT_TOKENIZER_NAMEDTOKENIZERS_H

#include "frontend/Tokenizer/Tokenizer.h"

#include <gtest/gtest.h>

#include <string>

namespace qeff::test {

/// "stories260K" (512-token SentencePiece BPE with byte fallback, the
/// bundled model's), "llama2", "mistral" (32k, the same kind), "gpt2"
/// (50k byte-level BPE from vocab + merges), "llama3" (128k, the same),
/// "qwen2" (151k byte-level BPE with added tokens), "gpt-neox" (50k
/// byte-level tokenizer.json). Aborts the test binary when the data cannot
/// be loaded: the tests using it need it.
inline tokenizer::Tokenizer namedTokenizer(const std::string &name) {
  const std::string data = QEFF_TEST_DATA_DIR;
  const std::string t = data + "/tokenizers/";
  using tokenizer::Tokenizer;
  absl::StatusOr<Tokenizer> tok = absl::NotFoundError("no tokenizer " + name);
  if (name == "stories260K")
    tok = Tokenizer::fromDirectory(data + "/models/stories260K-hf");
  else if (name == "llama2")
    tok = Tokenizer::fromFile(
        t + "llama2/tokenizer.hf-internal-testing.json",
        t + "llama2/tokenizer_config.hf-internal-testing.json");
  else if (name == "mistral")
    tok = Tokenizer::fromFile(t + "mistral/tokenizer.json",
                              t + "mistral/tokenizer_config.json");
  else if (name == "gpt2")
    tok = Tokenizer::fromVocabAndMerges(t + "gpt2/encoder.json",
                                        t + "gpt2/vocab.bpe");
  else if (name == "llama3")
    tok = Tokenizer::fromVocabAndMerges(t + "llama3/encoder.json",
                                        t + "llama3/vocab.bpe",
                                        tokenizer::BpeFlavor::Llama3);
  else if (name == "qwen2")
    tok = Tokenizer::fromFile(t + "qwen2/tokenizer.json",
                              t + "qwen2/tokenizer_config.json");
  else if (name == "gpt-neox")
    tok = Tokenizer::fromFile(t + "gpt-neox/tokenizer.json");
  if (!tok.ok()) {
    ADD_FAILURE() << name << ": " << tok.status();
    std::abort();
  }
  return *std::move(tok);
}

} // namespace qeff::test

#endif // QEFF_TEST_UNIT_TOKENIZER_NAMEDTOKENIZERS_H
