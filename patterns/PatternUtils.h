//===- PatternUtils.h - helpers shared by the DRR rewrites ------*- C++ -*-===//
//
// Part of qeff. Native constraints and builders the topic .td files call:
// they find @forward's I/O roles by the `qeff.name` of its arguments and
// results, and compute the result types of the ops the rewrites create.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_PATTERNS_PATTERNUTILS_H
#define QEFF_PATTERNS_PATTERNUTILS_H

#include "dialects/QEff/QEffOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::qeff {

/// The `qeff.name` of a function argument ("" for other values).
StringRef ioNameOf(Value value);
/// The argument of the function enclosing `op` named `name`; null if none.
Value functionArgumentNamed(Operation *op, StringRef name);

/// A `past_key.{i}` / `past_value.{i}` function argument.
bool isCacheInput(Value value);
/// The `position_ids` argument of the function holding `value`.
Value positionIdsOf(Value value);
/// ctx_len (dim 2) of a [B, H, ctx_len, D] cache as an I64 attribute.
IntegerAttr ctxLenOf(OpBuilder &builder, Value cache);
/// [B, 1, S, ctx_len] i1: the mask of query [B, H, S, D] over `cache`.
Type maskTypeOf(Value query, Value cache);
/// [B, 1, N] for a [B, S, N] value.
Type lastTokenTypeOf(Value value);
/// The linear op producing the `logits` result of @forward, not yet reduced
/// to the last token.
bool isLogitsHead(Value value);

/// A copy of the linear op defining `linear` applied to `input` instead.
Value linearOn(OpBuilder &builder, Value linear, Value input);

} // namespace mlir::qeff

#endif // QEFF_PATTERNS_PATTERNUTILS_H
