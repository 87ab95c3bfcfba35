//===- ONNXVerifiers.cpp - checks shared by the onnx verifiers ------------===//
//
// Part of qeff. Every message emitted here is exercised by
// test/dialects/ONNX/invalid.mlir.
//
//===----------------------------------------------------------------------===//

#include "dialects/ONNX/ONNXVerifiers.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::onnx;

namespace {
/// Two dimension sizes agree unless both are static and differ.
bool compatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}
} // namespace

std::optional<ArrayRef<int64_t>> mlir::onnx::getShape(Value v) {
  if (auto ranked = llvm::dyn_cast<RankedTensorType>(v.getType()))
    return ranked.getShape();
  return std::nullopt;
}

std::string mlir::onnx::formatShape(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << '[';
  llvm::interleaveComma(shape, os, [&](int64_t d) {
    if (ShapedType::isDynamic(d))
      os << '?';
    else
      os << d;
  });
  os << ']';
  return s;
}

int64_t mlir::onnx::normalizeAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

std::optional<int64_t> mlir::onnx::getStaticLength(Value v) {
  std::optional<ArrayRef<int64_t>> shape = getShape(v);
  if (!shape || shape->size() != 1 || ShapedType::isDynamic((*shape)[0]))
    return std::nullopt;
  return (*shape)[0];
}

LogicalResult mlir::onnx::verifyAxisInRange(Operation *op, StringRef name,
                                            int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return op->emitOpError()
           << "'" << name << "' = " << axis << " is out of range [" << -rank
           << ", " << rank - 1 << "] for rank " << rank;
  return success();
}

LogicalResult mlir::onnx::verifyAxesList(Operation *op, StringRef name,
                                         ArrayRef<int64_t> axes, int64_t rank) {
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t axis : axes) {
    if (failed(verifyAxisInRange(op, name, axis, rank)))
      return failure();
    if (!seen.insert(normalizeAxis(axis, rank)).second)
      return op->emitOpError() << "'" << name << "' names axis "
                               << normalizeAxis(axis, rank) << " twice";
  }
  return success();
}

LogicalResult mlir::onnx::verifyFlag(Operation *op, StringRef name,
                                     int64_t value) {
  if (value != 0 && value != 1)
    return op->emitOpError()
           << "'" << name << "' must be 0 or 1, got " << value;
  return success();
}

LogicalResult mlir::onnx::verifyRank(Operation *op, Value v, StringRef what,
                                     int64_t rank) {
  std::optional<ArrayRef<int64_t>> shape = getShape(v);
  if (shape && static_cast<int64_t>(shape->size()) != rank)
    return op->emitOpError() << what << " must have rank " << rank
                             << ", got rank " << shape->size();
  return success();
}

LogicalResult mlir::onnx::verifyMinRank(Operation *op, Value v, StringRef what,
                                        int64_t minRank) {
  std::optional<ArrayRef<int64_t>> shape = getShape(v);
  if (shape && static_cast<int64_t>(shape->size()) < minRank)
    return op->emitOpError() << what << " must have rank >= " << minRank
                             << ", got rank " << shape->size();
  return success();
}

LogicalResult mlir::onnx::verifyResultRank(Operation *op, Value v, int64_t rank,
                                           StringRef why) {
  std::optional<ArrayRef<int64_t>> shape = getShape(v);
  if (shape && static_cast<int64_t>(shape->size()) != rank)
    return op->emitOpError() << "result rank " << shape->size()
                             << " does not match the expected rank " << rank
                             << " (" << why << ")";
  return success();
}

LogicalResult mlir::onnx::verifyShape(Operation *op, Value v, StringRef what,
                                      ArrayRef<int64_t> expected) {
  std::optional<ArrayRef<int64_t>> shape = getShape(v);
  if (!shape)
    return success();
  if (shape->size() != expected.size() ||
      !llvm::all_of(llvm::zip(*shape, expected), [](auto pair) {
        return compatible(std::get<0>(pair), std::get<1>(pair));
      }))
    return op->emitOpError()
           << what << " shape " << formatShape(*shape)
           << " is incompatible with the expected " << formatShape(expected);
  return success();
}

LogicalResult mlir::onnx::verifySameElementType(Operation *op, Value a,
                                                StringRef aName, Value b,
                                                StringRef bName) {
  Type ta = llvm::cast<ShapedType>(a.getType()).getElementType();
  Type tb = llvm::cast<ShapedType>(b.getType()).getElementType();
  if (ta != tb)
    return op->emitOpError()
           << "'" << aName << "' element type " << ta << " does not match '"
           << bName << "' element type " << tb;
  return success();
}

LogicalResult mlir::onnx::verifySameRank(Operation *op, Value a,
                                         StringRef aName, Value b,
                                         StringRef bName) {
  std::optional<ArrayRef<int64_t>> sa = getShape(a), sb = getShape(b);
  if (sa && sb && sa->size() != sb->size())
    return op->emitOpError()
           << "'" << aName << "' has rank " << sa->size() << " but '" << bName
           << "' has rank " << sb->size();
  return success();
}

LogicalResult mlir::onnx::verifySameLength(Operation *op, Value a,
                                           StringRef aName, Value b,
                                           StringRef bName) {
  std::optional<int64_t> la = getStaticLength(a), lb = getStaticLength(b);
  if (la && lb && *la != *lb)
    return op->emitOpError() << "'" << aName << "' has length " << *la
                             << " but '" << bName << "' has length " << *lb;
  return success();
}

LogicalResult mlir::onnx::verifyBroadcast(Operation *op, ValueRange inputs,
                                          Value result) {
  SmallVector<ArrayRef<int64_t>> shapes;
  for (Value v : inputs) {
    std::optional<ArrayRef<int64_t>> shape = getShape(v);
    if (!shape)
      return success();
    shapes.push_back(*shape);
  }
  size_t rank = 0;
  for (ArrayRef<int64_t> s : shapes)
    rank = std::max(rank, s.size());

  // Per output dimension (aligned from the right): the one static size other
  // than 1 if there is one, 1 if all sizes are static 1, dynamic otherwise.
  SmallVector<int64_t> expected(rank, 1);
  SmallVector<int> sourceOf(rank, -1);
  for (size_t i = 0; i < rank; ++i) {
    bool anyDynamic = false;
    for (auto [idx, s] : llvm::enumerate(shapes)) {
      if (i + s.size() < rank)
        continue;
      int64_t d = s[i + s.size() - rank];
      if (ShapedType::isDynamic(d)) {
        anyDynamic = true;
        continue;
      }
      if (d == 1)
        continue;
      if (sourceOf[i] >= 0 && expected[i] != d)
        return op->emitOpError()
               << "operands #" << sourceOf[i] << " and #" << idx
               << " are not broadcastable: shapes "
               << formatShape(shapes[sourceOf[i]]) << " and " << formatShape(s);
      expected[i] = d;
      sourceOf[i] = idx;
    }
    if (sourceOf[i] < 0 && anyDynamic)
      expected[i] = ShapedType::kDynamic;
  }

  std::optional<ArrayRef<int64_t>> resultShape = getShape(result);
  if (!resultShape)
    return success();
  if (resultShape->size() != rank ||
      !llvm::all_of(llvm::zip(*resultShape, expected), [](auto pair) {
        return compatible(std::get<0>(pair), std::get<1>(pair));
      }))
    return op->emitOpError() << "result shape " << formatShape(*resultShape)
                             << " does not match the broadcast operand shape "
                             << formatShape(expected);
  return success();
}

LogicalResult mlir::onnx::verifyBroadcastTo(Operation *op, Value v,
                                            StringRef what,
                                            ArrayRef<int64_t> target) {
  std::optional<ArrayRef<int64_t>> shape = getShape(v);
  if (!shape)
    return success();
  bool ok = shape->size() <= target.size();
  for (size_t i = 0; ok && i < shape->size(); ++i) {
    int64_t d = (*shape)[shape->size() - 1 - i];
    int64_t t = target[target.size() - 1 - i];
    ok = d == 1 || compatible(d, t);
  }
  if (!ok)
    return op->emitOpError()
           << what << " of shape " << formatShape(*shape)
           << " does not broadcast to " << formatShape(target);
  return success();
}

LogicalResult mlir::onnx::verifyReductionMode(Operation *op,
                                              StringRef reduction) {
  if (reduction != "none" && reduction != "add" && reduction != "mul")
    return op->emitOpError()
           << "'reduction' must be 'none', 'add' or 'mul', got '" << reduction
           << "'";
  return success();
}

LogicalResult mlir::onnx::verifyIndexTupleLength(Operation *op, int64_t k,
                                                 int64_t maxLength) {
  if (!ShapedType::isDynamic(k) && (k < 1 || k > maxLength))
    return op->emitOpError() << "last dimension of 'indices' is " << k
                             << ", must be in [1, " << maxLength << "]";
  return success();
}

LogicalResult mlir::onnx::verifyNonEmpty(Operation *op, ValueRange values,
                                         StringRef what) {
  if (values.empty())
    return op->emitOpError() << "expects at least one " << what;
  return success();
}
