//===- GGUFTokenizer.h - tokenizer.ggml.* as tokenizer.json -----*- C++ -*-===//
//
// Part of qeff. The tokenizer of a GGUF file written as the Hugging Face
// tokenizer.json (+ tokenizer_config.json with the chat template and the
// BOS/EOS settings) it stands for, so that everything downstream (qeff run,
// qeff serve, the artifact directory) loads it like any checkpoint's. What
// transformers' GGUF loader builds (integrations/ggml.py GGUFLlamaConverter,
// GGUFGPTConverter, GGUFQwen2Converter), per tokenizer.ggml.model:
//   llama: SentencePiece-style BPE, merges generated from the vocabulary and
//     scores (convert_slow_tokenizer.generate_merges), byte fallback,
//     Prepend/Replace normalizer (add_space_prefix), the Replace/ByteFallback/
//     Fuse/Strip decoder;
//   gpt2: byte-level BPE with the file's merges and the pre-tokenizer named
//     by tokenizer.ggml.pre (gpt-2/default, llama-bpe, qwen2, mpt/gpt-neox/
//     olmo; others are refused by name).
// Control tokens (token_type 3) become special added tokens, user-defined
// ones (4) normal added tokens.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_GGUF_GGUFTOKENIZER_H
#define QEFF_FRONTEND_GGUF_GGUFTOKENIZER_H

#include "frontend/GGUF/GGUFFile.h"

#include <string>

namespace qeff::gguf {

struct GGUFTokenizerFiles {
  std::string tokenizerJson;
  std::string tokenizerConfigJson;
};

/// Errors name the file and the tokenizer.ggml key at fault.
absl::StatusOr<GGUFTokenizerFiles> ggufTokenizerFiles(const GGUFFile &file);

} // namespace qeff::gguf

#endif // QEFF_FRONTEND_GGUF_GGUFTOKENIZER_H
