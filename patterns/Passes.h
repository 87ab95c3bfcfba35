//===- Passes.h - qeff device rewrites --------------------------*- C++ -*-===//
//
// Part of qeff. The generated pass declarations, the pattern populators and
// the device pipeline.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_PATTERNS_PASSES_H
#define QEFF_PATTERNS_PASSES_H

#include "dialects/QEff/QEffDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace mlir::qeff {

#define GEN_PASS_DECL
#include "patterns/Passes.h.inc"

/// The DRR rewrites of KVRetainedState.td.
void populateKVRetainedStatePatterns(RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "patterns/Passes.h.inc"

} // namespace mlir::qeff

#endif // QEFF_PATTERNS_PASSES_H
