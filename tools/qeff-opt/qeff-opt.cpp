//===- qeff-opt.cpp - the qeff optimizer driver ---------------------------===//
//
// Part of qeff. mlir-opt for qeff: parses, verifies and transforms .mlir files
// using exactly the dialects and passes qeff uses.
//
//===----------------------------------------------------------------------===//

#include "dialects/ONNX/ONNXDialect.h"
#include "dialects/QEff/QEffDialect.h"
#include "lowering/ToONNX/Passes.h"
#include "patterns/Passes.h"
#include "tools/QEffVersion.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::func::FuncDialect, mlir::qeff::QEffDialect,
                  mlir::onnx::ONNXDialect>();
  // Generic cleanups a pipeline author expects (canonicalize, cse, ...).
  mlir::registerTransformsPasses();
  mlir::qeff::registerQEffToONNXPasses();
  mlir::qeff::registerQEffPatternsPasses();
  mlir::qeff::registerDevicePipeline();
  qeff::addVersionPrinter("qeff-opt");
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "qeff optimizer driver\n", registry));
}
