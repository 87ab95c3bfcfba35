//===- HFTranslation.cpp - qeff-translate registrations for HF import -----===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/HFTranslation.h"
#include "frontend/HF/Importers/FamilyRegistry.h"
#include "dialects/QEff/QEffDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

namespace {
/// The checkpoint directory of the translation's input: the directory
/// itself (qeff-translate names the buffer after a directory input), or the
/// directory of its config.json.
std::string checkpointDirOf(const llvm::SourceMgr &sourceMgr) {
  llvm::StringRef input =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())->getBufferIdentifier();
  if (llvm::sys::fs::is_directory(input))
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
  static TranslateRegistration summary(
      "import-hf-summary",
      "print a short summary of a Hugging Face checkpoint (class, family, "
      "sizes, parameters, dtype, bytes)",
      [](const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
         llvm::raw_ostream &os, MLIRContext *context) {
        return summarizeHFCheckpoint(checkpointDirOf(*sourceMgr), context, os);
      });
}
