//===- ExportTranslation.cpp - qeff-translate --export-onnx ---------------===//
//
// Part of qeff. Registers the exporter as an mlir-translate translation:
//
//   qeff-translate --export-onnx in.mlir --onnx-output-dir=DIR
//       [--onnx-model-name=model] [--onnx-checkpoint-dir=DIR]
//       [--onnx-weights-dtype=f16] [--onnx-no-check]
//
// and prints the one-line export report to the output (stdout by default).
//
//===----------------------------------------------------------------------===//

#include "lowering/Export/ONNXExporter.h"

#include "dialects/ONNX/ONNXDialect.h"
#include "dialects/QEff/QEffDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"

namespace mlir::qeff {

void registerONNXExportTranslation() {
  static llvm::cl::OptionCategory category("ONNX export options");
  static llvm::cl::opt<std::string> outputDir(
      "onnx-output-dir",
      llvm::cl::desc("--export-onnx: directory to write <name>.onnx and "
                     "<name>.onnx.data into"),
      llvm::cl::value_desc("dir"), llvm::cl::cat(category));
  static llvm::cl::opt<std::string> modelName(
      "onnx-model-name", llvm::cl::desc("--export-onnx: base file name"),
      llvm::cl::init("model"), llvm::cl::cat(category));
  static llvm::cl::opt<std::string> checkpointDir(
      "onnx-checkpoint-dir",
      llvm::cl::desc("--export-onnx: checkpoint the qeff.weight ops name "
                     "(default: the module's qeff.checkpoint_dir, relative "
                     "to the input file)"),
      llvm::cl::value_desc("dir"), llvm::cl::cat(category));
  static llvm::cl::opt<std::string> weightsDType(
      "onnx-weights-dtype",
      llvm::cl::desc("--export-onnx: storage of float weights: 'ir' (the "
                     "weight's IR element type, default) or 'f16' (clipped "
                     "to +-65504, Cast back where the IR type differs)"),
      llvm::cl::init("ir"), llvm::cl::cat(category));
  static llvm::cl::opt<bool> noCheck(
      "onnx-no-check",
      llvm::cl::desc("--export-onnx: skip onnx::checker and shape inference"),
      llvm::cl::init(false), llvm::cl::cat(category));

  static TranslateFromMLIRRegistration registration(
      "export-onnx",
      "write an onnx-dialect module as <name>.onnx + <name>.onnx.data",
      [](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("--export-onnx expects a builtin.module");
        // Errors at the module's location, without the module attached
        // (printing the op on a diagnostic would dump the whole model).
        if (outputDir.empty())
          return emitError(module.getLoc(),
                           "--export-onnx needs --onnx-output-dir=<dir>");
        ExportOptions options;
        options.outputDir = outputDir;
        options.modelName = modelName;
        options.checkpointDir = checkpointDir;
        options.validate = !noCheck;
        if (weightsDType == "f16")
          options.weightsDType = ExportWeightsDType::F16;
        else if (weightsDType == "bf16")
          options.weightsDType = ExportWeightsDType::BF16;
        else if (weightsDType != "ir" && weightsDType != "f32" &&
                 !weightsDType.empty())
          return emitError(module.getLoc(),
                           "--onnx-weights-dtype must be 'ir', 'f16' or 'bf16', got '")
                 << weightsDType << "'";
        ExportReport report;
        if (failed(exportONNX(module, options, &report)))
          return failure();
        os << formatExportReport(report) << "\n";
        return success();
      },
      [](DialectRegistry &registry) {
        registry.insert<func::FuncDialect, QEffDialect, onnx::ONNXDialect>();
      });
}

} // namespace mlir::qeff
