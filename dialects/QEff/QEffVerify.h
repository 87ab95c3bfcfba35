//===- QEffVerify.h - shared helpers of the qeff verifiers ------*- C++ -*-===//
//
// Part of qeff. Rank, dimension and type checks with the verifiers' message
// forms, shared by QEffOps.cpp and QEffSamplerOps.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_DIALECTS_QEFF_QEFFVERIFY_H
#define QEFF_DIALECTS_QEFF_QEFFVERIFY_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir::qeff::verify {

/// Two dimension sizes agree unless both are static and differ.
inline bool compatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

inline ArrayRef<int64_t> shapeOf(Value v) {
  return llvm::cast<RankedTensorType>(v.getType()).getShape();
}

inline Type elementTypeOf(Value v) {
  return llvm::cast<RankedTensorType>(v.getType()).getElementType();
}

inline LogicalResult checkRank(Operation *op, Value v, StringRef what, int64_t rank,
                        StringRef layout) {
  int64_t actual = llvm::cast<RankedTensorType>(v.getType()).getRank();
  if (actual != rank)
    return op->emitOpError() << what << " must be rank " << rank << " ("
                             << layout << "), got rank " << actual;
  return success();
}

/// Checks `actual` against `expected` dimension by dimension (kDynamic in
/// either matches anything).
inline LogicalResult checkDims(Operation *op, Value v, StringRef what,
                        ArrayRef<int64_t> expected, StringRef layout) {
  ArrayRef<int64_t> actual = shapeOf(v);
  if (actual.size() != expected.size())
    return op->emitOpError() << what << " must be rank " << expected.size()
                             << " (" << layout << "), got rank "
                             << actual.size();
  for (auto [i, pair] : llvm::enumerate(llvm::zip(actual, expected)))
    if (!compatible(std::get<0>(pair), std::get<1>(pair)))
      return op->emitOpError()
             << what << " dimension " << i << " is " << std::get<0>(pair)
             << " but " << layout << " requires " << std::get<1>(pair);
  return success();
}

inline LogicalResult checkSameType(Operation *op, Value v, Value ref, StringRef what,
                            StringRef refWhat) {
  if (v.getType() != ref.getType())
    return op->emitOpError() << what << " type " << v.getType()
                             << " must match the " << refWhat << " type "
                             << ref.getType();
  return success();
}

inline constexpr int64_t kDyn = ShapedType::kDynamic;

} // namespace mlir::qeff::verify

#endif // QEFF_DIALECTS_QEFF_QEFFVERIFY_H
