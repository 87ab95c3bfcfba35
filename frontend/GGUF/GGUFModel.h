//===- GGUFModel.h - a GGUF file as a Hugging Face checkpoint ---*- C++ -*-===//
//
// Part of qeff. A llama.cpp GGUF model file seen as the Hugging Face
// checkpoint it was converted from: `general.architecture` and the
// `<arch>.*` hyper-parameters become config.json (class and fields), the
// tensors (`token_embd`, `blk.N.attn_q`, ...) a Checkpoint under the HF
// names, decoded while streaming (GGMLSource) with llama.cpp's conversion
// undone where it changed them (convert_hf_to_gguf.py of ggml-org/llama.cpp@
// 150f157acf0f: the llama Q/K row permutation, GPT-2's transposed Conv1D
// weights, Gemma's `norm + 1`, Falcon's fused QKV order, StableLM's stacked
// per-head norms), and `tokenizer.ggml.*` a tokenizer.json (GGUFTokenizer.h).
// A missing `output.weight` means tied embeddings. Architectures: llama
// (Mistral files too), qwen2, gemma, gemma2, phi3, gpt2, falcon, starcoder2,
// stablelm; others (qwen3 included: qeff has no Qwen3 class) are refused by
// name.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_GGUF_GGUFMODEL_H
#define QEFF_FRONTEND_GGUF_GGUFMODEL_H

#include "frontend/GGUF/GGUFFile.h"
#include "frontend/HF/Checkpoint.h"

#include <map>
#include <memory>
#include <string>

namespace qeff::gguf {

/// Whether `path` names a GGUF file (a regular file whose first four bytes
/// are "GGUF", or any path ending in ".gguf").
bool isGGUFPath(const std::string &path);

struct GGUFModel {
  std::shared_ptr<const GGUFFile> file;
  /// The Hugging Face files it stands for, by name: config.json,
  /// generation_config.json and, when the file has a tokenizer,
  /// tokenizer.json and tokenizer_config.json (with the chat template).
  std::map<std::string, std::string> hfFiles;
  /// The weights under HF names.
  std::unique_ptr<hf::Checkpoint> checkpoint;
  /// Set when the file has a tokenizer that cannot be made into a loadable
  /// tokenizer.json (a placeholder vocabulary without merges, say): why; the
  /// tokenizer files are then left out (the model runs on token ids).
  std::string tokenizerProblem;
};

/// Opens `path`. Without `withWeights` only the HF files are made (the
/// tensor infos are still validated). Errors name the file and the key or
/// tensor at fault.
absl::StatusOr<GGUFModel> openGGUFModel(const std::string &path,
                                        bool withWeights = true);

} // namespace qeff::gguf

#endif // QEFF_FRONTEND_GGUF_GGUFMODEL_H
