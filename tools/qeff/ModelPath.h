//===- ModelPath.h - what a model path given to qeff is ---------*- C++ -*-===//
//
// Part of qeff. Every command that takes a model (compile, infer, serve,
// model cards) accepts compiled artifacts, a Hugging Face checkpoint
// directory (bf16/f32 or pre-quantized) or a GGUF file. These helpers tell
// them apart with one clear error for anything else, and read a
// checkpoint's config and tokenizer whichever form it has (a GGUF file's
// come from its metadata).
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_TOOLS_QEFF_MODELPATH_H
#define QEFF_TOOLS_QEFF_MODELPATH_H

#include "frontend/HF/JsonConfig.h"
#include "frontend/Tokenizer/Tokenizer.h"

#include <string>

namespace qeff::tool {

enum class ModelPathKind { Artifacts, Checkpoint, GGUF, Invalid };

/// Artifacts (a directory with qeff-manifest.json), Checkpoint (a directory
/// with config.json), GGUF (a GGUF file); otherwise Invalid with `error`
/// saying what the path is and what was expected.
ModelPathKind classifyModelPath(const std::string &path, std::string &error);

/// config.json of a checkpoint directory or GGUF file.
absl::StatusOr<hf::JsonConfig> checkpointConfig(const std::string &path);

/// The tokenizer of a checkpoint directory or GGUF file.
absl::StatusOr<tokenizer::Tokenizer> checkpointTokenizer(const std::string &path);

} // namespace qeff::tool

#endif // QEFF_TOOLS_QEFF_MODELPATH_H
