//===- qeff-translate.cpp - translations into and out of qeff IR ----------===//
//
// Part of qeff. mlir-translate for qeff: --import-hf (checkpoint -> qeff IR)
// and --export-onnx (onnx dialect -> ModelProto) register here.
//
//===----------------------------------------------------------------------===//

#include "dialects/ONNX/ONNXDialect.h"
#include "dialects/QEff/QEffDialect.h"
#include "tools/QEffVersion.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"

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

int main(int argc, char **argv) {
  registerQEffTranslations();
  qeff::addVersionPrinter("qeff-translate");
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "qeff translation driver\n"));
}
