//===- ONNXDialect.h - the onnx dialect -------------------------*- C++ -*-===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_DIALECTS_ONNX_ONNXDIALECT_H
#define QEFF_DIALECTS_ONNX_ONNXDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialects/ONNX/ONNXDialect.h.inc"

#endif // QEFF_DIALECTS_ONNX_ONNXDIALECT_H
