//===- qeff-translate.cpp - translations into and out of qeff IR ----------===//
//
// Part of qeff. mlir-translate for qeff: --import-hf (checkpoint -> qeff IR)
// and --export-onnx (onnx dialect -> ModelProto) register here.
//
//===----------------------------------------------------------------------===//

#include "dialects/ONNX/ONNXDialect.h"
#include "frontend/HF/Importers/HFTranslation.h"
#include "lowering/Export/ONNXExporter.h"
#include "dialects/QEff/QEffDialect.h"
#include "tools/QEffVersion.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <string>
#include <vector>

static void registerQEffTranslations() {
  // Round trip through qeff's dialects; the identity translation every
  // translate tool offers, useful to check a file parses and verifies.
  static mlir::TranslateFromMLIRRegistration roundTrip(
      "qeff-to-mlir", "print qeff/onnx IR back as MLIR",
      [](mlir::Operation *op, llvm::raw_ostream &os) {
        op->print(os);
        os << "\n";
        return mlir::success();
      },
      [](mlir::DialectRegistry &registry) {
        registry.insert<mlir::func::FuncDialect, mlir::qeff::QEffDialect,
                        mlir::onnx::ONNXDialect>();
      });
}

/// Checkpoint importers read a directory; mlir-translate reads a file. A
/// directory argument is replaced by its config.json, whose path the importer
/// uses to find the rest of the checkpoint.
static std::vector<std::string> directoriesToConfigJson(int argc, char **argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i].empty() || args[i][0] == '-' ||
        !llvm::sys::fs::is_directory(args[i]))
      continue;
    if (i > 0 && (args[i - 1] == "-o" || args[i - 1] == "--o"))
      continue;
    llvm::SmallString<256> config(args[i]);
    llvm::sys::path::append(config, "config.json");
    args[i] = std::string(config.str());
  }
  return args;
}

int main(int argc, char **argv) {
  registerQEffTranslations();
  qeff::hf::registerHFImportTranslations();
  mlir::qeff::registerONNXExportTranslation();
  std::vector<std::string> args = directoriesToConfigJson(argc, argv);
  std::vector<char *> newArgv;
  for (std::string &arg : args)
    newArgv.push_back(arg.data());
  newArgv.push_back(nullptr);
  argv = newArgv.data();
  qeff::addVersionPrinter("qeff-translate");
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "qeff translation driver\n"));
}
