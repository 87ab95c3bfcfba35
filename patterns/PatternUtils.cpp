//===- PatternUtils.cpp - helpers shared by the DRR rewrites --------------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "patterns/PatternUtils.h"

using namespace mlir;
using namespace mlir::qeff;

StringRef mlir::qeff::ioNameOf(Value value) {
  auto arg = llvm::dyn_cast<BlockArgument>(value);
  if (!arg)
    return "";
  auto func = llvm::dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  if (!func || arg.getOwner() != &func.getBody().front())
    return "";
  auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "qeff.name");
  return name ? name.getValue() : "";
}

Value mlir::qeff::functionArgumentNamed(Operation *op, StringRef name) {
  auto func = op->getParentOfType<func::FuncOp>();
  if (!func)
    return nullptr;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (auto n = func.getArgAttrOfType<StringAttr>(i, "qeff.name"))
      if (n.getValue() == name)
        return func.getArgument(i);
  return nullptr;
}

bool mlir::qeff::isCacheInput(Value value) {
  StringRef name = ioNameOf(value);
  return name.starts_with("past_key.") || name.starts_with("past_value.");
}

Value mlir::qeff::positionIdsOf(Value value) {
  Operation *anchor = value.getDefiningOp();
  if (!anchor)
    anchor = llvm::cast<BlockArgument>(value).getOwner()->getParentOp();
  else
    anchor = anchor->getParentOp();
  if (auto func = llvm::dyn_cast<func::FuncOp>(anchor))
    anchor = &func.getBody().front().front();
  return functionArgumentNamed(anchor, "position_ids");
}

IntegerAttr mlir::qeff::ctxLenOf(OpBuilder &builder, Value cache) {
  return builder.getI64IntegerAttr(
      llvm::cast<RankedTensorType>(cache.getType()).getShape()[2]);
}

Type mlir::qeff::maskTypeOf(Value query, Value cache) {
  ArrayRef<int64_t> q = llvm::cast<RankedTensorType>(query.getType()).getShape();
  ArrayRef<int64_t> c = llvm::cast<RankedTensorType>(cache.getType()).getShape();
  return RankedTensorType::get({q[0], 1, q[2], c[2]},
                               IntegerType::get(query.getContext(), 1));
}

Type mlir::qeff::lastTokenTypeOf(Value value) {
  auto type = llvm::cast<RankedTensorType>(value.getType());
  ArrayRef<int64_t> s = type.getShape();
  return RankedTensorType::get({s[0], 1, s[2]}, type.getElementType());
}

bool mlir::qeff::isLogitsHead(Value value) {
  auto linear = value.getDefiningOp<LinearOp>();
  if (!linear || linear.getInput().getDefiningOp<LastTokenSelectOp>())
    return false;
  for (OpOperand &use : value.getUses()) {
    auto ret = llvm::dyn_cast<func::ReturnOp>(use.getOwner());
    if (!ret)
      continue;
    auto func = ret->getParentOfType<func::FuncOp>();
    auto name = func.getResultAttrOfType<StringAttr>(use.getOperandNumber(),
                                                     "qeff.name");
    if (name && name.getValue() == "logits")
      return true;
  }
  return false;
}

Value mlir::qeff::linearOn(OpBuilder &builder, Value linear, Value input) {
  auto op = linear.getDefiningOp<LinearOp>();
  return builder.create<LinearOp>(op.getLoc(), op.getType(), input,
                                  op.getWeight(), op.getBias(),
                                  op.getWeightLayoutAttr());
}
