//===- ONNXDialect.cpp - onnx dialect registration ------------------------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "dialects/ONNX/ONNXDialect.h"
#include "dialects/ONNX/ONNXOps.h"

using namespace mlir;
using namespace mlir::onnx;

#include "dialects/ONNX/ONNXDialect.cpp.inc"

void ONNXDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/ONNX/ONNXOps.cpp.inc"
      >();
}
