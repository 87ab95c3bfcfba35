//===- Passes.h - qeff -> onnx lowering pass --------------------*- C++ -*-===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_LOWERING_TOONNX_PASSES_H
#define QEFF_LOWERING_TOONNX_PASSES_H

#include "dialects/ONNX/ONNXDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::qeff {

#define GEN_PASS_DECL
#include "lowering/ToONNX/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lowering/ToONNX/Passes.h.inc"

} // namespace mlir::qeff

#endif // QEFF_LOWERING_TOONNX_PASSES_H
