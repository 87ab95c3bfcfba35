//===- ModelPath.cpp - what a model path given to qeff is -----------------===//
//
// Part of qeff. See ModelPath.h.
//
//===----------------------------------------------------------------------===//

#include "tools/qeff/ModelPath.h"

#include "frontend/GGUF/GGUFModel.h"
#include "frontend/HF/ModelConfig.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

namespace qeff::tool {

namespace {
std::string join(const std::string &dir, llvm::StringRef name) {
  llvm::SmallString<256> p(dir);
  llvm::sys::path::append(p, name);
  return std::string(p.str());
}
} // namespace

ModelPathKind classifyModelPath(const std::string &path, std::string &error) {
  if (llvm::sys::fs::is_directory(path)) {
    if (llvm::sys::fs::exists(join(path, "qeff-manifest.json")))
      return ModelPathKind::Artifacts;
    if (llvm::sys::fs::exists(join(path, "config.json")))
      return ModelPathKind::Checkpoint;
    error = path + " holds neither compiled artifacts (qeff-manifest.json) nor a "
                   "Hugging Face checkpoint (config.json)";
    return ModelPathKind::Invalid;
  }
  if (!llvm::sys::fs::exists(path)) {
    error = path + " does not exist (expected artifacts, a checkpoint directory or a GGUF file)";
    return ModelPathKind::Invalid;
  }
  if (gguf::isGGUFPath(path))
    return ModelPathKind::GGUF;
  error = path + " is a file but not a GGUF file (expected artifacts, a checkpoint "
                 "directory or a GGUF file)";
  return ModelPathKind::Invalid;
}

absl::StatusOr<hf::JsonConfig> checkpointConfig(const std::string &path) {
  if (!llvm::sys::fs::is_directory(path) && gguf::isGGUFPath(path)) {
    auto model = gguf::openGGUFModel(path, /*withWeights=*/false);
    if (!model.ok())
      return model.status();
    return hf::JsonConfig::parse(model->hfFiles["config.json"], path);
  }
  return hf::readConfigJson(join(path, "config.json"));
}

absl::StatusOr<tokenizer::Tokenizer> checkpointTokenizer(const std::string &path) {
  if (!llvm::sys::fs::is_directory(path) && gguf::isGGUFPath(path)) {
    auto model = gguf::openGGUFModel(path, /*withWeights=*/false);
    if (!model.ok())
      return model.status();
    if (!model->hfFiles.count("tokenizer.json"))
      return absl::NotFoundError(path + ": the GGUF file has no tokenizer (tokenizer.ggml.*)");
    return tokenizer::Tokenizer::fromJsonText(model->hfFiles["tokenizer.json"],
                                              model->hfFiles["tokenizer_config.json"]);
  }
  return tokenizer::Tokenizer::fromDirectory(path);
}

} // namespace qeff::tool
