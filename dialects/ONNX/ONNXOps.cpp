//===- ONNXOps.cpp - onnx op verifiers ------------------------------------===//
//
// Part of qeff. Verifiers check what the ONNX specification (opset 17) makes
// checkable from types and attributes alone, built from the shared checks of
// ONNXVerifiers.h; every message is exercised by
// test/dialects/ONNX/invalid.mlir.
//
//===----------------------------------------------------------------------===//

#include "dialects/ONNX/ONNXOps.h"
#include "dialects/ONNX/ONNXVerifiers.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::onnx;

namespace {
constexpr int64_t kDynamic = ShapedType::kDynamic;

/// `shape` with dimension `axis` set to 1 (`keep`) or removed.
SmallVector<int64_t> reduceShape(ArrayRef<int64_t> shape,
                                 ArrayRef<int64_t> axes, bool keep) {
  SmallVector<int64_t> out;
  for (auto [i, d] : llvm::enumerate(shape)) {
    bool reduced = llvm::any_of(axes, [&, i = i](int64_t a) {
      return normalizeAxis(a, shape.size()) == static_cast<int64_t>(i);
    });
    if (!reduced)
      out.push_back(d);
    else if (keep)
      out.push_back(1);
  }
  return out;
}

/// K of `[..., M, K]` for the left and `[..., K, N]` for the right operand.
LogicalResult verifyInnerDims(Operation *op, int64_t kA, int64_t kB) {
  if (!ShapedType::isDynamic(kA) && !ShapedType::isDynamic(kB) && kA != kB)
    return op->emitOpError() << "inner dimensions disagree: K is " << kA
                             << " for 'A' and " << kB << " for 'B'";
  return success();
}
} // namespace

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

#define ONNX_BINARY_VERIFIER(Op)                                               \
  LogicalResult Op::verify() {                                                 \
    return verifyBroadcast(*this, getOperands(), getC());                      \
  }
ONNX_BINARY_VERIFIER(AddOp)
ONNX_BINARY_VERIFIER(SubOp)
ONNX_BINARY_VERIFIER(MulOp)
ONNX_BINARY_VERIFIER(DivOp)
ONNX_BINARY_VERIFIER(ModOp)
ONNX_BINARY_VERIFIER(EqualOp)
ONNX_BINARY_VERIFIER(LessOp)
ONNX_BINARY_VERIFIER(GreaterOp)
ONNX_BINARY_VERIFIER(LessOrEqualOp)
ONNX_BINARY_VERIFIER(GreaterOrEqualOp)
ONNX_BINARY_VERIFIER(AndOp)
#undef ONNX_BINARY_VERIFIER

LogicalResult PowOp::verify() {
  if (failed(verifySameElementType(*this, getZ(), "Z", getX(), "X")))
    return failure();
  return verifyBroadcast(*this, getOperands(), getZ());
}

LogicalResult WhereOp::verify() {
  if (failed(verifySameElementType(*this, getY(), "Y", getX(), "X")) ||
      failed(verifySameElementType(*this, getOutput(), "output", getX(), "X")))
    return failure();
  return verifyBroadcast(*this, getOperands(), getOutput());
}

LogicalResult ClipOp::verify() {
  if ((getMin() && failed(verifyRank(*this, getMin(), "operand 'min'", 0))) ||
      (getMax() && failed(verifyRank(*this, getMax(), "operand 'max'", 0))))
    return failure();
  if (std::optional<ArrayRef<int64_t>> shape = getShape(getInput()))
    return verifyShape(*this, getOutput(), "result", *shape);
  return success();
}

LogicalResult MinOp::verify() {
  // SameOperandsAndResultElementType already requires one input.
  return verifyBroadcast(*this, getData_0(), getMin());
}

LogicalResult MaxOp::verify() {
  // SameOperandsAndResultElementType already requires one input.
  return verifyBroadcast(*this, getData_0(), getMax());
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::verify() {
  if (failed(verifyMinRank(*this, getA(), "operand 'A'", 1)) ||
      failed(verifyMinRank(*this, getB(), "operand 'B'", 1)))
    return failure();
  std::optional<ArrayRef<int64_t>> a = getShape(getA()), b = getShape(getB());
  if (!a || !b)
    return success();
  int64_t kB = b->size() == 1 ? (*b)[0] : (*b)[b->size() - 2];
  if (failed(verifyInnerDims(*this, a->back(), kB)))
    return failure();

  // Batch dimensions broadcast; M and N follow unless the operand is 1-D.
  ArrayRef<int64_t> batchA = a->drop_back(std::min<size_t>(a->size(), 2));
  ArrayRef<int64_t> batchB = b->drop_back(std::min<size_t>(b->size(), 2));
  size_t rank = std::max(batchA.size(), batchB.size());
  SmallVector<int64_t> expected;
  for (size_t i = 0; i < rank; ++i) {
    auto dim = [&](ArrayRef<int64_t> s) -> int64_t {
      return i + s.size() < rank ? 1 : s[i + s.size() - rank];
    };
    int64_t da = dim(batchA), db = dim(batchB);
    if (da == 1 || (ShapedType::isDynamic(da) && db != 1))
      expected.push_back(db);
    else if (db == 1 || ShapedType::isDynamic(db) || da == db)
      expected.push_back(da);
    else
      return emitOpError() << "batch dimensions of 'A' " << formatShape(batchA)
                           << " and 'B' " << formatShape(batchB)
                           << " do not broadcast";
  }
  if (a->size() >= 2)
    expected.push_back((*a)[a->size() - 2]);
  if (b->size() >= 2)
    expected.push_back(b->back());
  return verifyShape(*this, getY(), "result", expected);
}

LogicalResult GemmOp::verify() {
  if (failed(verifyFlag(*this, "transA", getTransA())) ||
      failed(verifyFlag(*this, "transB", getTransB())) ||
      failed(verifyRank(*this, getA(), "operand 'A'", 2)) ||
      failed(verifyRank(*this, getB(), "operand 'B'", 2)) ||
      failed(verifyRank(*this, getY(), "result 'Y'", 2)))
    return failure();
  std::optional<ArrayRef<int64_t>> a = getShape(getA()), b = getShape(getB());
  int64_t m = kDynamic, n = kDynamic;
  if (a && b) {
    int64_t kA = getTransA() ? (*a)[0] : (*a)[1];
    int64_t kB = getTransB() ? (*b)[1] : (*b)[0];
    if (failed(verifyInnerDims(*this, kA, kB)))
      return failure();
  }
  if (a)
    m = getTransA() ? (*a)[1] : (*a)[0];
  if (b)
    n = getTransB() ? (*b)[0] : (*b)[1];
  if (getC() && failed(verifyBroadcastTo(*this, getC(), "operand 'C'", {m, n})))
    return failure();
  return verifyShape(*this, getY(), "result", {m, n});
}

//===----------------------------------------------------------------------===//
// Softmax, reductions, ArgMax, TopK, CumSum
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::verify() {
  std::optional<ArrayRef<int64_t>> shape = getShape(getInput());
  return success(!shape || succeeded(verifyAxisInRange(*this, "axis", getAxis(),
                                                       shape->size())));
}

/// ReduceMean / ReduceMax: `axes` attribute, `keepdims`.
template <typename Op> static LogicalResult verifyReduceWithAxesAttr(Op op) {
  if (failed(verifyFlag(op, "keepdims", op.getKeepdims())))
    return failure();
  std::optional<ArrayRef<int64_t>> shape = getShape(op.getData());
  if (!shape)
    return success();
  SmallVector<int64_t> axes;
  if (op.getAxes() && !op.getAxes()->empty())
    axes.assign(op.getAxes()->begin(), op.getAxes()->end());
  else
    axes = llvm::to_vector(llvm::seq<int64_t>(0, shape->size()));
  if (failed(verifyAxesList(op, "axes", axes, shape->size())))
    return failure();
  return verifyShape(op, op.getReduced(), "result",
                     reduceShape(*shape, axes, op.getKeepdims() != 0));
}

LogicalResult ReduceMeanOp::verify() { return verifyReduceWithAxesAttr(*this); }
LogicalResult ReduceMaxOp::verify() { return verifyReduceWithAxesAttr(*this); }

LogicalResult ReduceSumOp::verify() {
  if (failed(verifyFlag(*this, "keepdims", getKeepdims())) ||
      failed(
          verifyFlag(*this, "noop_with_empty_axes", getNoopWithEmptyAxes())) ||
      (getAxes() && failed(verifyRank(*this, getAxes(), "operand 'axes'", 1))))
    return failure();
  std::optional<ArrayRef<int64_t>> shape = getShape(getData());
  if (!shape)
    return success();
  int64_t rank = shape->size();
  if (getKeepdims() || (getNoopWithEmptyAxes() && !getAxes()))
    return verifyResultRank(*this, getReduced(), rank,
                            getKeepdims() ? "keepdims = 1"
                                          : "noop_with_empty_axes = 1");
  if (!getAxes())
    return verifyResultRank(*this, getReduced(), 0,
                            "all axes reduced, keepdims = 0");
  if (std::optional<int64_t> n = getStaticLength(getAxes()); n && *n > 0)
    return verifyResultRank(*this, getReduced(), rank - *n,
                            "input rank minus the length of 'axes'");
  return success();
}

LogicalResult ArgMaxOp::verify() {
  if (failed(verifyFlag(*this, "keepdims", getKeepdims())) ||
      failed(verifyFlag(*this, "select_last_index", getSelectLastIndex())))
    return failure();
  std::optional<ArrayRef<int64_t>> shape = getShape(getData());
  if (!shape)
    return success();
  int64_t axis = getAxis();
  if (failed(verifyAxisInRange(*this, "axis", axis, shape->size())))
    return failure();
  return verifyShape(*this, getReduced(), "result",
                     reduceShape(*shape, {axis}, getKeepdims() != 0));
}

LogicalResult TopKOp::verify() {
  if (failed(verifyFlag(*this, "largest", getLargest())) ||
      failed(verifyFlag(*this, "sorted", getSorted())) ||
      failed(verifyRank(*this, getK(), "operand 'K'", 1)) ||
      failed(verifySameElementType(*this, getValues(), "Values", getX(), "X")))
    return failure();
  if (std::optional<int64_t> n = getStaticLength(getK()); n && *n != 1)
    return emitOpError() << "operand 'K' must hold exactly one element, got "
                         << *n;
  std::optional<ArrayRef<int64_t>> shape = getShape(getX());
  if (!shape)
    return success();
  int64_t axis = getAxis();
  if (failed(verifyAxisInRange(*this, "axis", axis, shape->size())))
    return failure();
  SmallVector<int64_t> expected(*shape);
  expected[normalizeAxis(axis, shape->size())] = kDynamic;
  if (failed(verifyShape(*this, getValues(), "result 'Values'", expected)) ||
      failed(verifyShape(*this, getIndices(), "result 'Indices'", expected)))
    return failure();
  return success();
}

LogicalResult CumSumOp::verify() {
  if (failed(verifyFlag(*this, "exclusive", getExclusive())) ||
      failed(verifyFlag(*this, "reverse", getReverse())) ||
      failed(verifyRank(*this, getAxis(), "operand 'axis'", 0)))
    return failure();
  return success();
}

LogicalResult LayerNormalizationOp::verify() {
  if (getStats().size() > 2)
    return emitOpError() << "expects at most 2 optional results (Mean, "
                            "InvStdDev), got "
                         << getStats().size();
  int64_t stash = getStashType();
  if (stash != 1 && stash != 10 && stash != 11 && stash != 16)
    return emitOpError() << "'stash_type' must be a float TensorProto data "
                            "type (1, 10, 11 or 16), got "
                         << stash;
  if (failed(verifySameElementType(*this, getY(), "Y", getX(), "X")))
    return failure();
  std::optional<ArrayRef<int64_t>> shape = getShape(getX());
  if (!shape)
    return success();
  int64_t axis = getAxis();
  if (failed(verifyAxisInRange(*this, "axis", axis, shape->size())) ||
      failed(verifyShape(*this, getY(), "result 'Y'", *shape)))
    return failure();
  ArrayRef<int64_t> normalized =
      shape->drop_front(normalizeAxis(axis, shape->size()));
  if (failed(verifyBroadcastTo(*this, getScale(), "operand 'Scale'",
                               normalized)) ||
      (getB() &&
       failed(verifyBroadcastTo(*this, getB(), "operand 'B'", normalized))))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Gather and scatter
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::verify() {
  if (failed(verifyMinRank(*this, getData(), "operand 'data'", 1)))
    return failure();
  std::optional<ArrayRef<int64_t>> data = getShape(getData());
  if (!data)
    return success();
  int64_t axis = getAxis();
  if (failed(verifyAxisInRange(*this, "axis", axis, data->size())))
    return failure();
  std::optional<ArrayRef<int64_t>> indices = getShape(getIndices());
  if (!indices)
    return success();
  axis = normalizeAxis(axis, data->size());
  SmallVector<int64_t> expected(data->take_front(axis));
  llvm::append_range(expected, *indices);
  llvm::append_range(expected, data->drop_front(axis + 1));
  return verifyShape(*this, getOutput(), "result", expected);
}

LogicalResult GatherNDOp::verify() {
  std::optional<ArrayRef<int64_t>> data = getShape(getData()),
                                   indices = getShape(getIndices());
  if (!data || !indices)
    return success();
  int64_t r = data->size(), q = indices->size(), b = getBatchDims();
  if (b < 0 || b >= std::min(r, q))
    return emitOpError() << "'batch_dims' = " << b
                         << " must be in [0, min(rank of 'data', rank of "
                            "'indices')) = [0, "
                         << std::min(r, q) << ")";
  int64_t k = indices->back();
  if (failed(verifyIndexTupleLength(*this, k, r - b)))
    return failure();
  if (ShapedType::isDynamic(k))
    return success();
  SmallVector<int64_t> expected(indices->drop_back());
  llvm::append_range(expected, data->drop_front(b + k));
  return verifyShape(*this, getOutput(), "result", expected);
}

LogicalResult GatherElementsOp::verify() {
  std::optional<ArrayRef<int64_t>> data = getShape(getData());
  if (data && failed(verifyAxisInRange(*this, "axis", getAxis(), data->size())))
    return failure();
  if (failed(verifySameRank(*this, getIndices(), "indices", getData(), "data")))
    return failure();
  if (std::optional<ArrayRef<int64_t>> indices = getShape(getIndices()))
    return verifyShape(*this, getOutput(), "result", *indices);
  return success();
}

LogicalResult ScatterNDOp::verify() {
  if (failed(verifyReductionMode(*this, getReduction())))
    return failure();
  if (failed(verifyMinRank(*this, getIndices(), "operand 'indices'", 1)))
    return failure();
  std::optional<ArrayRef<int64_t>> data = getShape(getData()),
                                   indices = getShape(getIndices());
  if (!data || !indices)
    return success();
  int64_t k = indices->back();
  if (failed(verifyIndexTupleLength(*this, k, data->size())))
    return failure();
  if (ShapedType::isDynamic(k))
    return success();
  SmallVector<int64_t> expected(indices->drop_back());
  llvm::append_range(expected, data->drop_front(k));
  return verifyShape(*this, getUpdates(), "operand 'updates'", expected);
}

LogicalResult ScatterElementsOp::verify() {
  if (failed(verifyReductionMode(*this, getReduction())))
    return failure();
  std::optional<ArrayRef<int64_t>> data = getShape(getData());
  if (data && failed(verifyAxisInRange(*this, "axis", getAxis(), data->size())))
    return failure();
  if (failed(verifySameRank(*this, getIndices(), "indices", getData(), "data")))
    return failure();
  if (std::optional<ArrayRef<int64_t>> indices = getShape(getIndices()))
    return verifyShape(*this, getUpdates(), "operand 'updates'", *indices);
  return success();
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  if (failed(verifyFlag(*this, "allowzero", getAllowzero())) ||
      failed(verifyRank(*this, getShape(), "operand 'shape'", 1)))
    return failure();
  if (std::optional<int64_t> n = getStaticLength(getShape()))
    if (failed(verifyResultRank(*this, getReshaped(), *n,
                                "the length of 'shape'")))
      return failure();
  auto in = llvm::dyn_cast<RankedTensorType>(getData().getType());
  auto out = llvm::dyn_cast<RankedTensorType>(getReshaped().getType());
  if (in && out && in.hasStaticShape() && out.hasStaticShape() &&
      in.getNumElements() != out.getNumElements())
    return emitOpError() << "result has " << out.getNumElements()
                         << " elements but 'data' has " << in.getNumElements();
  return success();
}

LogicalResult TransposeOp::verify() {
  std::optional<ArrayRef<int64_t>> shape = mlir::onnx::getShape(getData());
  if (!shape)
    return success();
  int64_t rank = shape->size();
  SmallVector<int64_t> perm;
  if (getPerm())
    perm.assign(getPerm()->begin(), getPerm()->end());
  else
    perm = llvm::to_vector(llvm::reverse(llvm::seq<int64_t>(0, rank)));
  if (static_cast<int64_t>(perm.size()) != rank)
    return emitOpError() << "'perm' has " << perm.size()
                         << " entries but 'data' has rank " << rank;
  SmallVector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return emitOpError() << "'perm' " << formatShape(perm)
                           << " is not a permutation of [0, " << rank << ")";
    seen[p] = true;
  }
  SmallVector<int64_t> expected;
  for (int64_t p : perm)
    expected.push_back((*shape)[p]);
  return verifyShape(*this, getTransposed(), "result", expected);
}

LogicalResult ConcatOp::verify() {
  // SameOperandsAndResultElementType already requires one input.
  std::optional<ArrayRef<int64_t>> first;
  size_t firstIndex = 0;
  for (auto [i, v] : llvm::enumerate(getInputs()))
    if ((first = mlir::onnx::getShape(v))) {
      firstIndex = i;
      break;
    }
  if (!first)
    return success();
  int64_t rank = first->size();
  if (failed(verifyAxisInRange(*this, "axis", getAxis(), rank)))
    return failure();
  int64_t axis = normalizeAxis(getAxis(), rank);
  SmallVector<int64_t> expected(*first);
  expected[axis] = 0;
  bool allRanked = true;
  for (auto [i, v] : llvm::enumerate(getInputs())) {
    std::optional<ArrayRef<int64_t>> shape = mlir::onnx::getShape(v);
    if (!shape) {
      allRanked = false;
      continue;
    }
    if (static_cast<int64_t>(shape->size()) != rank)
      return emitOpError() << "input #" << i << " has rank " << shape->size()
                           << " but input #" << firstIndex << " has rank "
                           << rank;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t size = (*shape)[d];
      if (d == axis) {
        expected[d] =
            ShapedType::isDynamic(size) || ShapedType::isDynamic(expected[d])
                ? kDynamic
                : expected[d] + size;
        continue;
      }
      if (ShapedType::isDynamic(expected[d]))
        expected[d] = size;
      else if (!ShapedType::isDynamic(size) && size != expected[d])
        return emitOpError()
               << "input #" << i << " has size " << size << " in dimension "
               << d << " but " << expected[d]
               << " was expected (only 'axis' = " << axis << " may differ)";
    }
  }
  if (!allRanked)
    expected[axis] = kDynamic;
  return verifyShape(*this, getConcatResult(), "result", expected);
}

LogicalResult SplitOp::verify() {
  if (failed(verifyNonEmpty(*this, getOutputs(), "result")) ||
      (getSplit() &&
       failed(verifyRank(*this, getSplit(), "operand 'split'", 1))))
    return failure();
  if (getSplit())
    if (std::optional<int64_t> n = getStaticLength(getSplit());
        n && *n != static_cast<int64_t>(getOutputs().size()))
      return emitOpError() << "number of results (" << getOutputs().size()
                           << ") does not match the length of 'split' (" << *n
                           << ")";
  for (Value out : getOutputs())
    if (failed(
            verifySameElementType(*this, out, "outputs", getInput(), "input")))
      return failure();
  std::optional<ArrayRef<int64_t>> shape = getShape(getInput());
  if (!shape)
    return success();
  int64_t rank = shape->size();
  if (failed(verifyAxisInRange(*this, "axis", getAxis(), rank)))
    return failure();
  int64_t axis = normalizeAxis(getAxis(), rank);
  SmallVector<int64_t> expected(*shape);
  expected[axis] = kDynamic;
  int64_t sum = 0;
  for (Value out : getOutputs()) {
    if (failed(verifyShape(*this, out, "result", expected)))
      return failure();
    std::optional<ArrayRef<int64_t>> outShape = mlir::onnx::getShape(out);
    if (!outShape || ShapedType::isDynamic((*outShape)[axis]) ||
        ShapedType::isDynamic(sum))
      sum = kDynamic;
    else
      sum += (*outShape)[axis];
  }
  if (!ShapedType::isDynamic(sum) && !ShapedType::isDynamic((*shape)[axis]) &&
      sum != (*shape)[axis])
    return emitOpError() << "result sizes along axis " << axis << " sum to "
                         << sum << " but 'input' has " << (*shape)[axis];
  return success();
}

LogicalResult SliceOp::verify() {
  if (failed(verifyRank(*this, getStarts(), "operand 'starts'", 1)) ||
      failed(verifyRank(*this, getEnds(), "operand 'ends'", 1)) ||
      failed(verifySameLength(*this, getEnds(), "ends", getStarts(), "starts")))
    return failure();
  if (getAxes() && (failed(verifyRank(*this, getAxes(), "operand 'axes'", 1)) ||
                    failed(verifySameLength(*this, getAxes(), "axes",
                                            getStarts(), "starts"))))
    return failure();
  if (getSteps() &&
      (failed(verifyRank(*this, getSteps(), "operand 'steps'", 1)) ||
       failed(verifySameLength(*this, getSteps(), "steps", getStarts(),
                               "starts"))))
    return failure();
  if (std::optional<ArrayRef<int64_t>> shape = getShape(getData()))
    return verifyResultRank(*this, getOutput(), shape->size(),
                            "the rank of 'data'");
  return success();
}

LogicalResult SqueezeOp::verify() {
  if (getAxes() && failed(verifyRank(*this, getAxes(), "operand 'axes'", 1)))
    return failure();
  std::optional<ArrayRef<int64_t>> shape = getShape(getData());
  if (!shape)
    return success();
  if (getAxes()) {
    if (std::optional<int64_t> n = getStaticLength(getAxes()))
      return verifyResultRank(*this, getSqueezed(), shape->size() - *n,
                              "input rank minus the length of 'axes'");
    return success();
  }
  if (llvm::is_contained(*shape, kDynamic))
    return success();
  SmallVector<int64_t> expected;
  llvm::copy_if(*shape, std::back_inserter(expected),
                [](int64_t d) { return d != 1; });
  return verifyShape(*this, getSqueezed(), "result", expected);
}

LogicalResult UnsqueezeOp::verify() {
  if (failed(verifyRank(*this, getAxes(), "operand 'axes'", 1)))
    return failure();
  std::optional<ArrayRef<int64_t>> shape = getShape(getData());
  std::optional<int64_t> n = getStaticLength(getAxes());
  if (shape && n)
    return verifyResultRank(*this, getExpanded(), shape->size() + *n,
                            "input rank plus the length of 'axes'");
  return success();
}

LogicalResult ExpandOp::verify() {
  if (failed(verifyRank(*this, getShape(), "operand 'shape'", 1)))
    return failure();
  std::optional<ArrayRef<int64_t>> in = mlir::onnx::getShape(getInput());
  std::optional<int64_t> n = getStaticLength(getShape());
  if (in && n &&
      failed(verifyResultRank(*this, getOutput(),
                              std::max<int64_t>(in->size(), *n),
                              "the larger of the input rank and the length "
                              "of 'shape'")))
    return failure();
  if (std::optional<ArrayRef<int64_t>> out = mlir::onnx::getShape(getOutput()))
    return verifyBroadcastTo(*this, getInput(), "operand 'input'", *out);
  return success();
}

LogicalResult TriluOp::verify() {
  if (failed(verifyFlag(*this, "upper", getUpper())) ||
      failed(verifyMinRank(*this, getInput(), "operand 'input'", 2)) ||
      (getK() && failed(verifyRank(*this, getK(), "operand 'k'", 0))))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Cast, Range, Shape, constants
//===----------------------------------------------------------------------===//

LogicalResult CastOp::verify() {
  if (!getTo().isIntOrFloat())
    return emitOpError() << "'to' must be an integer or float type, got "
                         << getTo();
  Type resultType = getElementTypeOrSelf(getOutput().getType());
  if (resultType != getTo())
    return emitOpError() << "result element type " << resultType
                         << " does not match 'to' = " << getTo();
  return success();
}

LogicalResult RangeOp::verify() {
  if (failed(verifyRank(*this, getStart(), "operand 'start'", 0)) ||
      failed(verifyRank(*this, getLimit(), "operand 'limit'", 0)) ||
      failed(verifyRank(*this, getDelta(), "operand 'delta'", 0)) ||
      failed(verifyRank(*this, getOutput(), "result 'output'", 1)))
    return failure();
  return success();
}

LogicalResult ShapeOp::verify() {
  if (failed(verifyRank(*this, getShape(), "result 'shape'", 1)))
    return failure();
  std::optional<ArrayRef<int64_t>> in = mlir::onnx::getShape(getData());
  if (!in)
    return success();
  int64_t rank = in->size();
  auto clamp = [&](int64_t v) {
    return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank);
  };
  int64_t start = clamp(getStart());
  int64_t end = getEnd() ? clamp(*getEnd()) : rank;
  return verifyShape(*this, getShape(), "result",
                     {std::max<int64_t>(end - start, 0)});
}

LogicalResult ConstantOfShapeOp::verify() {
  if (failed(verifyRank(*this, getInput(), "operand 'input'", 1)))
    return failure();
  Type valueType = Float32Type::get(getContext());
  if (ElementsAttr value = getValueAttr()) {
    if (value.getNumElements() != 1)
      return emitOpError() << "'value' must hold exactly one element, got "
                           << value.getNumElements();
    valueType = value.getElementType();
  }
  Type resultType = getElementTypeOrSelf(getOutput().getType());
  if (resultType != valueType)
    return emitOpError() << "result element type " << resultType
                         << " does not match the element type of 'value' ("
                         << valueType << ")";
  if (std::optional<int64_t> n = getStaticLength(getInput()))
    return verifyResultRank(*this, getOutput(), *n,
                            "the length of the shape input");
  return success();
}

LogicalResult ConstantOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  ConstantOp::Adaptor adaptor(operands, attributes, properties, regions);
  auto type = llvm::dyn_cast_if_present<TensorType>(
      adaptor.getValueAttr() ? adaptor.getValueAttr().getType() : Type());
  if (!type)
    return emitOptionalError(location, "'onnx.Constant' op 'value' must be a "
                                       "tensor attribute");
  inferredReturnTypes.push_back(type);
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValueAttr(); }

//===----------------------------------------------------------------------===//
// Generic
//===----------------------------------------------------------------------===//

LogicalResult GenericOp::verify() {
  if (getOpType().empty())
    return emitOpError("op_type must not be empty");
  return success();
}

#define GET_OP_CLASSES
#include "dialects/ONNX/ONNXOps.cpp.inc"
