//===- ONNXVerifiers.h - checks shared by the onnx verifiers ----*- C++ -*-===//
//
// Part of qeff. Each check emits one specific diagnostic on the op and
// returns failure; all accept dynamic sizes and unranked tensors, so they only
// reject what ONNX's rules make wrong for every possible runtime shape.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_DIALECTS_ONNX_ONNXVERIFIERS_H
#define QEFF_DIALECTS_ONNX_ONNXVERIFIERS_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LogicalResult.h"

#include <optional>
#include <string>

namespace mlir::onnx {

/// The shape of `v`'s tensor type, or std::nullopt when it is unranked.
std::optional<ArrayRef<int64_t>> getShape(Value v);

/// "[2, ?, 64]".
std::string formatShape(ArrayRef<int64_t> shape);

/// Maps `axis` in [-rank, rank-1] to [0, rank-1].
int64_t normalizeAxis(int64_t axis, int64_t rank);

/// The static length of the 1-D tensor `v`, or std::nullopt.
std::optional<int64_t> getStaticLength(Value v);

/// Attribute `name` = `axis` lies in [-rank, rank-1].
LogicalResult verifyAxisInRange(Operation *op, StringRef name, int64_t axis,
                                int64_t rank);

/// Every entry of `axes` lies in [-rank, rank-1] and names a distinct axis.
LogicalResult verifyAxesList(Operation *op, StringRef name,
                             ArrayRef<int64_t> axes, int64_t rank);

/// An ONNX boolean attribute (stored as an integer) is 0 or 1.
LogicalResult verifyFlag(Operation *op, StringRef name, int64_t value);

/// `what` ("operand 'K'") has exactly rank `rank` when ranked.
LogicalResult verifyRank(Operation *op, Value v, StringRef what, int64_t rank);

/// `what` has rank at least `minRank` when ranked.
LogicalResult verifyMinRank(Operation *op, Value v, StringRef what,
                            int64_t minRank);

/// The result `v` has rank `rank` when ranked; `why` names the rule.
LogicalResult verifyResultRank(Operation *op, Value v, int64_t rank,
                               StringRef why);

/// `what`'s shape is compatible (dimension by dimension, dynamic matching
/// anything) with `expected`, including its rank.
LogicalResult verifyShape(Operation *op, Value v, StringRef what,
                          ArrayRef<int64_t> expected);

/// `a` and `b` have the same element type.
LogicalResult verifySameElementType(Operation *op, Value a, StringRef aName,
                                    Value b, StringRef bName);

/// `a` and `b` have the same rank when both are ranked.
LogicalResult verifySameRank(Operation *op, Value a, StringRef aName, Value b,
                             StringRef bName);

/// The 1-D tensors `a` and `b` have the same length when both are static.
LogicalResult verifySameLength(Operation *op, Value a, StringRef aName, Value b,
                               StringRef bName);

/// Numpy (multidirectional) broadcasting: the shapes of `inputs` broadcast to
/// one another and to the shape of `result`.
LogicalResult verifyBroadcast(Operation *op, ValueRange inputs, Value result);

/// Unidirectional broadcasting: `what`'s shape broadcasts to `target`.
LogicalResult verifyBroadcastTo(Operation *op, Value v, StringRef what,
                                ArrayRef<int64_t> target);

/// A Scatter `reduction` attribute is "none", "add" or "mul" (opset 16).
LogicalResult verifyReductionMode(Operation *op, StringRef reduction);

/// The index tuple length `k` (the last dimension of `indices`) of
/// GatherND/ScatterND lies in [1, maxLength].
LogicalResult verifyIndexTupleLength(Operation *op, int64_t k,
                                     int64_t maxLength);

/// A variadic operand list holds at least one value.
LogicalResult verifyNonEmpty(Operation *op, ValueRange values, StringRef what);

} // namespace mlir::onnx

#endif // QEFF_DIALECTS_ONNX_ONNXVERIFIERS_H
