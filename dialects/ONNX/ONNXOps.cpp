//===- ONNXOps.cpp - onnx op verifiers ------------------------------------===//
//
// Part of qeff. Verifiers check what the ONNX specification makes checkable
// from types and attributes alone.
//
//===----------------------------------------------------------------------===//

#include "dialects/ONNX/ONNXOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::onnx;

LogicalResult GenericOp::verify() {
  if (getOpType().empty())
    return emitOpError("op_type must not be empty");
  return success();
}

#define GET_OP_CLASSES
#include "dialects/ONNX/ONNXOps.cpp.inc"
