//===- TokenizerFuzzer.cpp - tokenizer.json (+ config) load, encode, decode ===//
//
// Input: tokenizer.json, optionally "\n----\n" and a tokenizer_config.json.
// A tokenizer that loads encodes and decodes a fixed text and its own ids.

#include "frontend/Tokenizer/Tokenizer.h"
#include "test/fuzz/FuzzUtil.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto [json, config] = qeff::fuzz::splitTwo(data, size);
  auto tok = qeff::tokenizer::Tokenizer::fromJsonText(json, config, "fuzz");
  if (!tok.ok())
    return 0;
  for (std::string_view text : {"Hello world! 12 €\n\t<s>", "", "  a  b "}) {
    std::vector<int64_t> ids = tok->encode(text, /*addSpecialTokens=*/true);
    (void)tok->decode(ids, /*skipSpecialTokens=*/false);
  }
  std::vector<int64_t> some = {0, 1, 2, 3, 100, 255, 256, 1000000};
  (void)tok->decode(some, /*skipSpecialTokens=*/true);
  return 0;
}
