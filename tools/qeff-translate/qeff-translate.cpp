//===- qeff-translate.cpp - translations into and out of qeff IR ----------===//
//
// Part of qeff. mlir-translate for qeff: --import-hf (checkpoint directory
// or its config.json -> qeff IR) and --export-onnx (onnx dialect ->
// ModelProto) register here.
//
//===----------------------------------------------------------------------===//

#include "dialects/ONNX/ONNXDialect.h"
#include "frontend/GGUF/GGUFModel.h"
#include "frontend/HF/Importers/HFTranslation.h"
#include "lowering/Export/ONNXExporter.h"
#include "dialects/QEff/QEffDialect.h"
#include "tools/QEffVersion.h"
#include "support/DiagnosticPrinter.h"
#include "support/SafeFile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Support/ToolUtilities.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <memory>
#include <optional>
#include <string>

#include <unistd.h>

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

/// mlir-translate's driver for qeff, with one difference: the input may be a
/// directory (a checkpoint for --import-hf), handed to the translation as an
/// empty buffer named after the directory. mlirTranslateMain can only open
/// files, and rewriting argv to point it at <dir>/config.json would also
/// rewrite directory *option values* (--onnx-output-dir, ...). Only the
/// input names a checkpoint; every other argument keeps its meaning.
int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerQEffTranslations();
  qeff::hf::registerHFImportTranslations();
  mlir::qeff::registerONNXExportTranslation();

  static llvm::cl::opt<std::string> inputFilename(
      llvm::cl::Positional,
      llvm::cl::desc("<input .mlir file, or checkpoint directory>"),
      llvm::cl::init("-"));
  static llvm::cl::opt<std::string> outputFilename(
      "o", llvm::cl::desc("Output filename"), llvm::cl::value_desc("filename"),
      llvm::cl::init("-"));
  static llvm::cl::opt<bool> splitInputFile(
      "split-input-file",
      llvm::cl::desc("Split the input file into pieces and process each "
                     "chunk independently"),
      llvm::cl::init(false));
  static llvm::cl::opt<bool> verifyDiagnostics(
      "verify-diagnostics",
      llvm::cl::desc("Check that emitted diagnostics match expected-* lines "
                     "on the corresponding line"),
      llvm::cl::init(false));
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerTranslationCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  static llvm::cl::opt<const mlir::Translation *, false,
                       mlir::TranslationParser>
      translation("", llvm::cl::desc("Translations to perform"),
                  llvm::cl::Required);
  qeff::addVersionPrinter("qeff-translate");
  llvm::cl::ParseCommandLineOptions(argc, argv, "qeff translation driver\n");

  mlir::DefaultTimingManager tm;
  mlir::applyDefaultTimingManagerCLOptions(tm);
  mlir::TimingScope timing = tm.getRootScope();

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input;
  // A directory (an HF checkpoint) or a GGUF file is named, not read: the
  // translation opens (and maps) it itself.
  if (inputFilename != "-" && (llvm::sys::fs::is_directory(inputFilename) ||
                               qeff::gguf::isGGUFPath(inputFilename))) {
    input = llvm::MemoryBuffer::getMemBuffer("", inputFilename);
  } else if (inputFilename != "-") {
    // A named input is read only when it is a regular file: a FIFO would
    // block and a device (a config.json symlinked to /dev/zero) never end.
    uint64_t size = 0;
    int fd = qeff::support::openRegularFile(inputFilename, size, errorMessage);
    if (fd >= 0) {
      auto buffer = llvm::MemoryBuffer::getOpenFile(
          fd, inputFilename, size, /*RequiresNullTerminator=*/true,
          /*IsVolatile=*/false, translation->getInputAlignment());
      if (buffer)
        input = std::move(*buffer);
      else
        errorMessage = inputFilename + ": " + buffer.getError().message();
      ::close(fd);
    }
  } else if (std::optional<llvm::Align> align = translation->getInputAlignment()) {
    input = mlir::openInputFile(inputFilename, *align, &errorMessage);
  } else {
    input = mlir::openInputFile(inputFilename, &errorMessage);
  }
  if (!input) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }

  auto processBuffer = [&](std::unique_ptr<llvm::MemoryBuffer> buffer,
                           llvm::raw_ostream &os) -> mlir::LogicalResult {
    mlir::MLIRContext context;
    context.allowUnregisteredDialects(false);
    context.printOpOnDiagnostic(!verifyDiagnostics);
    auto sourceMgr = std::make_shared<llvm::SourceMgr>();
    sourceMgr->AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
    if (verifyDiagnostics) {
      mlir::SourceMgrDiagnosticVerifierHandler handler(*sourceMgr, &context);
      (void)(*translation)(sourceMgr, os, &context);
      return handler.verify();
    }
    qeff::support::DiagnosticPrinter handler(*sourceMgr, &context);
    return (*translation)(sourceMgr, os, &context);
  };
  mlir::LogicalResult result =
      splitInputFile
          ? mlir::splitAndProcessBuffer(std::move(input), processBuffer,
                                        output->os())
          : processBuffer(std::move(input), output->os());
  if (mlir::failed(result))
    return 1;
  output->keep();
  return 0;
}
