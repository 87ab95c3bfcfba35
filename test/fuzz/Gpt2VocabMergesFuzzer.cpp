//===- Gpt2VocabMergesFuzzer.cpp - vocab.json + merges.txt ----------------===//
//
// Input: vocab.json "\n----\n" merges.txt.

#include "frontend/Tokenizer/Tokenizer.h"
#include "test/fuzz/FuzzUtil.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto [vocab, merges] = qeff::fuzz::splitTwo(data, size);
  std::string vocabPath = qeff::fuzz::writeScratch("vocab.json", vocab);
  std::string mergesPath = qeff::fuzz::writeScratch("merges.txt", merges);
  auto tok = qeff::tokenizer::Tokenizer::fromVocabAndMerges(
      vocabPath, mergesPath, qeff::tokenizer::BpeFlavor::Gpt2);
  if (!tok.ok())
    return 0;
  std::vector<int64_t> ids = tok->encode("Hello world, lower upper", true);
  (void)tok->decode(ids, false);
  return 0;
}
