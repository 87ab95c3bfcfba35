//===- ONNXOps.h - onnx dialect operations ----------------------*- C++ -*-===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_DIALECTS_ONNX_ONNXOPS_H
#define QEFF_DIALECTS_ONNX_ONNXOPS_H

#include "dialects/ONNX/ONNXDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dialects/ONNX/ONNXOps.h.inc"

#endif // QEFF_DIALECTS_ONNX_ONNXOPS_H
