//===- HFTranslation.cpp - qeff-translate registrations for HF import -----===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/HFTranslation.h"
#include "frontend/HF/Importers/FamilyRegistry.h"
#include "frontend/GGUF/GGUFModel.h"
#include "frontend/GGUF/ModelWeights.h"
#include "frontend/HF/SafeTensors.h"
#include "frontend/Quant/Fp8.h"
#include "dialects/QEff/QEffDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

namespace {
/// The --dump-hf-weights stream: the safetensors header (every tensor f32,
/// name order), then each tensor decoded a few rows at a time.
LogicalResult dumpCheckpointWeights(const std::string &path, MLIRContext *context,
                                    llvm::raw_ostream &os) {
  Location loc = FileLineColLoc::get(context, path, 0, 0);
  auto weights = ::qeff::gguf::openModelWeights(path);
  if (!weights.ok())
    return emitError(loc) << std::string(weights.status().message());
  const ::qeff::hf::Checkpoint &ckpt = **weights;
  std::string header = "{";
  uint64_t offset = 0;
  std::vector<std::string> names = ckpt.tensorNames();
  for (const std::string &name : names) {
    const ::qeff::hf::TensorInfo *info = ckpt.find(name);
    uint64_t bytes = uint64_t(info->numElements()) * 4;
    std::string shape;
    for (int64_t d : info->shape)
      shape += (shape.empty() ? "" : ",") + std::to_string(d);
    std::string quoted;
    for (char ch : name) {
      if (ch == '"' || ch == '\\')
        quoted += '\\';
      if (static_cast<unsigned char>(ch) < 0x20)
        quoted += "?";
      else
        quoted += ch;
    }
    header += (header.size() > 1 ? "," : "") + std::string("\"") + quoted +
              "\":{\"dtype\":\"F32\",\"shape\":[" + shape + "],\"data_offsets\":[" +
              std::to_string(offset) + "," + std::to_string(offset + bytes) + "]}";
    offset += bytes;
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');
  uint64_t n = header.size();
  char prefix[8];
  for (int i = 0; i < 8; ++i)
    prefix[i] = char((n >> (8 * i)) & 0xff);
  os.write(prefix, 8);
  os << header;
  std::vector<float> row;
  for (const std::string &name : names) {
    auto view = ckpt.get(name);
    if (!view.ok())
      return emitError(loc) << std::string(view.status().message());
    const ::qeff::hf::TensorInfo *info = view->info;
    int64_t numel = info->numElements();
    int64_t rows = info->shape.size() >= 2 ? info->shape[0] : 1;
    int64_t cols = rows ? numel / rows : 0;
    row.resize(size_t(cols));
    for (int64_t r = 0; r < rows; ++r) {
      if (view->source) {
        view->source->decode(r, r + 1, 0, cols, row.data(), cols);
      } else if (::qeff::hf::isFloatingPoint(info->dtype)) {
        size_t elem = ::qeff::hf::dtypeSize(info->dtype);
        for (int64_t c = 0; c < cols; ++c)
          row[size_t(c)] = ::qeff::quant::loadAsF32(view->data + r * cols * elem, info->dtype, c);
      } else {
        return emitError(loc) << "tensor '" << name << "' has dtype "
                              << std::string(::qeff::hf::dtypeName(info->dtype))
                              << ", which is no weight (not floating point)";
      }
      os.write(reinterpret_cast<const char *>(row.data()), size_t(cols) * 4);
    }
  }
  return success();
}

/// The checkpoint directory of the translation's input: the directory
/// itself (qeff-translate names the buffer after a directory input), or the
/// directory of its config.json.
std::string checkpointDirOf(const llvm::SourceMgr &sourceMgr) {
  llvm::StringRef input =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())->getBufferIdentifier();
  if (llvm::sys::fs::is_directory(input) || ::qeff::gguf::isGGUFPath(input.str()))
    return input.str();
  llvm::StringRef dir = llvm::sys::path::parent_path(input);
  return dir.empty() ? "." : dir.str();
}
} // namespace

void ::qeff::hf::registerHFImportTranslations() {
  static TranslateToMLIRRegistration importHF(
      "import-hf",
      "import a Hugging Face checkpoint (its directory or config.json) into "
      "qeff IR",
      [](const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
         MLIRContext *context) -> OwningOpRef<Operation *> {
        OwningOpRef<ModuleOp> module =
            importHFCheckpoint(checkpointDirOf(*sourceMgr), context);
        if (!module)
          return nullptr;
        return OwningOpRef<Operation *>(module.release());
      },
      [](DialectRegistry &registry) {
        registry.insert<mlir::qeff::QEffDialect, func::FuncDialect>();
      });
  // The dense weights as the importer sees them (decoded quantized groups,
  // GGUF tensors under HF names), every tensor as f32, written as one
  // .safetensors stream: what `qeff compile` exports, checkable bit for bit
  // against a library's own dequantizer.
  static TranslateRegistration dumpWeights(
      "dump-hf-weights",
      "write the weights of a checkpoint (directory or GGUF file) as the "
      "importer sees them, decoded to f32, as a .safetensors stream",
      [](const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
         llvm::raw_ostream &os, MLIRContext *context) {
        return dumpCheckpointWeights(checkpointDirOf(*sourceMgr), context, os);
      });
  static TranslateRegistration summary(
      "import-hf-summary",
      "print a short summary of a Hugging Face checkpoint (class, family, "
      "sizes, parameters, dtype, bytes)",
      [](const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
         llvm::raw_ostream &os, MLIRContext *context) {
        return summarizeHFCheckpoint(checkpointDirOf(*sourceMgr), context, os);
      });
}
