//===- FamilyRegistry.cpp - HF architecture class -> family importer ------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/FamilyRegistry.h"

#include "support/SafeFile.h"
#include "frontend/HF/Importers/DecoderBuilder.h"
#include "frontend/GGUF/GGUFModel.h"
#include "frontend/Quant/QuantCheckpoint.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace mlir;

namespace qeff::hf {

#define QEFF_FAMILY(fn) Family fn();
#include "frontend/HF/Importers/Families.def"

const std::vector<Family> &registeredFamilies() {
  static const std::vector<Family> families = {
#define QEFF_FAMILY(fn) fn(),
#include "frontend/HF/Importers/Families.def"
  };
  return families;
}

const Family *findFamily(llvm::StringRef name) {
  for (const Family &family : registeredFamilies())
    if (llvm::is_contained(family.architectures, name))
      return &family;
  for (const Family &family : registeredFamilies())
    if (llvm::is_contained(family.modelTypes, name))
      return &family;
  return nullptr;
}

std::string supportedArchitecturesList() {
  std::vector<std::string> names;
  for (const Family &family : registeredFamilies())
    names.insert(names.end(), family.architectures.begin(),
                 family.architectures.end());
  llvm::sort(names);
  return llvm::join(names, ", ");
}

/// n_inner = null means 4 * n_embd (GPT-2, GPT-J, CodeGen, GPT-BigCode).
absl::Status defaultInnerToFourTimesHidden(ModelConfig &c) {
  if (!c.raw->has("n_inner"))
    c.intermediateSize = 4 * c.hiddenSize;
  return absl::OkStatus();
}

/// GPT-J and CodeGen: `rotary_dim` (null: the whole head) as
/// partial_rotary_factor, so that ModelConfig::rotaryDim() gives it.
absl::Status gptjStyleRotary(ModelConfig &c) {
  auto rotary = c.raw->getOptionalInt("rotary_dim");
  if (!rotary.ok())
    return rotary.status();
  int64_t dim = rotary->value_or(c.headDim);
  if (dim <= 0 || dim % 2 != 0 || dim > c.headDim)
    return c.raw->fieldError(
        "rotary_dim", "must be a positive even number <= head_dim (" +
                          std::to_string(c.headDim) + "), got " +
                          std::to_string(dim));
  c.partialRotaryFactor = double(dim) / double(c.headDim);
  return defaultInnerToFourTimesHidden(c);
}

namespace {
llvm::StringRef messageOf(const absl::Status &status) {
  return llvm::StringRef(status.message().data(), status.message().size());
}

/// num_hidden_layers against the checkpoint: the layer indices of tensor
/// names (`<...>.layers.<i>.` / `.h.<i>.` / `.blocks.<i>.`) must reach
/// num_hidden_layers - 1, so that a config claiming 10 000 layers over a
/// 2-layer checkpoint is refused before any IR is built.
LogicalResult checkLayerCount(Location loc, llvm::StringRef configPath,
                              const ModelConfig &config, const Checkpoint &weights) {
  int64_t maxIndex = -1;
  bool found = false;
  for (const std::string &name : weights.tensorNames()) {
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::StringRef(name).split(parts, '.');
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      if (parts[i] != "layers" && parts[i] != "h" && parts[i] != "blocks")
        continue;
      int64_t index;
      if (parts[i + 1].getAsInteger(10, index))
        continue;
      found = true;
      maxIndex = std::max(maxIndex, index);
    }
  }
  if (found && config.numHiddenLayers > maxIndex + 1)
    return emitError(loc) << configPath << ": num_hidden_layers is "
                          << config.numHiddenLayers
                          << " but the checkpoint's tensors have layers 0.." << maxIndex
                          << " only";
  return success();
}

/// Everything read from a checkpoint directory before building IR.
struct LoadedCheckpoint {
  const Family *family = nullptr;
  ModelConfig config;
  std::unique_ptr<Checkpoint> weights;
  std::string configText;
};

FailureOr<LoadedCheckpoint> load(llvm::StringRef dir, MLIRContext *context) {
  // A GGUF file stands for a whole checkpoint: its metadata is the config,
  // its tensors the weights (frontend/GGUF).
  bool gguf = ::qeff::gguf::isGGUFPath(dir.str()) && !llvm::sys::fs::is_directory(dir);
  llvm::SmallString<256> configPath(dir);
  if (!gguf)
    llvm::sys::path::append(configPath, "config.json");
  // Line 0 for a GGUF file: it is binary, there is no line to show.
  Location loc = FileLineColLoc::get(context, configPath, gguf ? 0 : 1, gguf ? 0 : 1);
  if (!gguf && !llvm::sys::fs::is_directory(dir))
    return emitError(FileLineColLoc::get(context, dir, 1, 1))
           << dir << ": not a checkpoint directory or GGUF file";

  std::optional<::qeff::gguf::GGUFModel> ggufModel;
  absl::StatusOr<JsonConfig> json = absl::UnknownError("");
  if (gguf) {
    auto opened = ::qeff::gguf::openGGUFModel(dir.str());
    if (!opened.ok())
      return emitError(loc) << messageOf(opened.status());
    ggufModel = std::move(*opened);
    json = JsonConfig::parse(ggufModel->hfFiles.at("config.json"),
                             (dir + " (metadata as config.json)").str());
  } else {
    json = readConfigJson(configPath.str().str());
  }
  if (!json.ok())
    return emitError(loc) << messageOf(json.status());
  auto architecture = architectureOf(*json);
  if (!architecture.ok())
    return emitError(loc) << messageOf(architecture.status());

  LoadedCheckpoint loaded;
  loaded.family = findFamily(*architecture);
  if (!loaded.family)
    return emitError(loc) << configPath << ": architecture '" << *architecture
                          << "' is not supported; supported classes: "
                          << supportedArchitecturesList();
  auto config = ModelConfig::fromJson(*json, loaded.family->defaults());
  if (!config.ok())
    return emitError(loc) << messageOf(config.status());
  loaded.config = std::move(*config);
  if (loaded.family->configure) {
    absl::Status status = loaded.family->configure(loaded.config);
    if (!status.ok())
      return emitError(loc) << messageOf(status);
  }

  if (ggufModel) {
    loaded.weights = std::move(ggufModel->checkpoint);
  } else {
    // Quantized checkpoints are decoded here, as the weights stream
    // (frontend/Quant): the importer sees dense weights only.
    auto weights = ::qeff::quant::openDenseCheckpoint(dir.str(), *json);
    if (!weights.ok())
      return emitError(FileLineColLoc::get(context, dir, 1, 1))
             << messageOf(weights.status());
    loaded.weights = std::move(*weights);
  }
  if (failed(checkLayerCount(loc, configPath, loaded.config, *loaded.weights)))
    return failure();

  // The text again for diagnostics: bounded and regular files only, like the
  // first read (a symlink to /dev/zero must not grow memory).
  std::string text, error;
  if (ggufModel)
    loaded.configText = ggufModel->hfFiles.at("config.json");
  else if (::qeff::support::readRegularFile(configPath.str().str(),
                                            ::qeff::support::kConfigFileLimit, text, error))
    loaded.configText = std::move(text);
  return loaded;
}
} // namespace

OwningOpRef<ModuleOp> importHFCheckpoint(llvm::StringRef dir, MLIRContext *context,
                                         std::shared_ptr<const Checkpoint> *opened) {
  context->loadDialect<mlir::qeff::QEffDialect, func::FuncDialect>();
  FailureOr<LoadedCheckpoint> loaded = load(dir, context);
  if (failed(loaded))
    return nullptr;
  OwningOpRef<ModuleOp> module;
  {
    DecoderBuilder builder(context, *loaded->family, loaded->config,
                           *loaded->weights, dir.str(), loaded->configText);
    module = loaded->family->build(builder);
  }
  if (module && opened)
    *opened = std::move(loaded->weights);
  return module;
}

LogicalResult summarizeHFCheckpoint(llvm::StringRef dir, MLIRContext *context,
                                    llvm::raw_ostream &os) {
  FailureOr<LoadedCheckpoint> loaded = load(dir, context);
  if (failed(loaded))
    return failure();
  const ModelConfig &c = loaded->config;
  const Checkpoint &w = *loaded->weights;
  std::map<std::string, int64_t> dtypes;
  for (const std::string &name : w.tensorNames()) {
    const DenseSource *source = w.decodedSource(name);
    dtypes[source ? source->format() : std::string(dtypeName(w.find(name)->dtype))] +=
        w.find(name)->numElements();
  }
  os << "checkpoint:    " << dir << "\n"
     << "architecture:  " << c.architecture << "\n"
     << "family:        " << loaded->family->name << "\n"
     << "layers:        " << c.numHiddenLayers << "\n"
     << "hidden:        " << c.hiddenSize << " (intermediate "
     << c.intermediateSize << ")\n"
     << "heads:         " << c.numAttentionHeads << " (head_dim " << c.headDim
     << ")\n"
     << "kv heads:      " << c.numKeyValueHeads << "\n"
     << "vocab:         " << c.vocabSize << "\n"
     << "context:       " << c.maxPositionEmbeddings << " positions";
  if (c.slidingWindow)
    os << ", sliding window " << *c.slidingWindow;
  os << "\n"
     << "parameters:    " << w.totalElements() << "\n"
     << "dtype:         ";
  llvm::interleaveComma(dtypes, os, [&](const auto &entry) {
    os << entry.first << " (" << entry.second << " values)";
  });
  os << "\n"
     << "weight bytes:  " << w.totalBytes() << " in " << w.filePaths().size()
     << (w.filePaths().size() == 1 ? " file" : " files")
     << (w.isSharded() ? " (sharded)" : "") << "\n";
  return success();
}

} // namespace qeff::hf
