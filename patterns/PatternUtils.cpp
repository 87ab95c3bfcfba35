//===- PatternUtils.cpp - helpers shared by the DRR rewrites --------------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "patterns/PatternUtils.h"

#include "llvm/Support/GlobPattern.h"

#include <algorithm>

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

Value mlir::qeff::lastTokenOf(OpBuilder &builder, Location loc, Value value) {
  return builder.create<LastTokenSelectOp>(loc, lastTokenTypeOf(value), value,
                                           positionIdsOf(value), Value());
}

/// The op after `value` when it is its only use and an elementwise logit
/// transform (Cohere's logit_scale, Gemma 2's final soft-cap).
static Operation *logitTransformAfter(Value value) {
  if (!value.hasOneUse())
    return nullptr;
  Operation *user = *value.getUsers().begin();
  return llvm::isa<ScaleOp, SoftcapOp>(user) ? user : nullptr;
}

void mlir::qeff::setLogitsHeadType(Value head, Type type) {
  head.setType(type);
  for (Operation *op = logitTransformAfter(head); op;
       op = logitTransformAfter(op->getResult(0)))
    op->getResult(0).setType(type);
}

bool mlir::qeff::isLogitsHead(Value value) {
  auto linear = value.getDefiningOp<LinearOp>();
  if (!linear || linear.getInput().getDefiningOp<LastTokenSelectOp>())
    return false;
  while (Operation *op = logitTransformAfter(value))
    value = op->getResult(0);
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

Value mlir::qeff::attentionWithMask(OpBuilder &builder, Value attention,
                                    Value key, Value value, Value mask) {
  auto op = attention.getDefiningOp<AttentionOp>();
  return builder.create<AttentionOp>(
      op.getLoc(), op.getType(), op.getQuery(), key, value, mask,
      op.getSinks(), op.getNumHeadsAttr(), op.getNumKvHeadsAttr(),
      op.getHeadDimAttr(), op.getScaleAttr(), builder.getBoolAttr(false),
      op.getSlidingWindowAttr(), op.getAlibiSlopesAttr(), op.getSoftcapAttr());
}

namespace {
/// The `batch_index` argument of the function holding `value`, if any.
Value batchIndexOf(Value value) {
  Value positions = positionIdsOf(value);
  if (!positions)
    return {};
  Block *entry = llvm::cast<BlockArgument>(positions).getOwner();
  return functionArgumentNamed(&entry->front(), "batch_index");
}
} // namespace

Value mlir::qeff::ctxScatterOn(OpBuilder &builder, Location loc, Value cache,
                               Value update) {
  return builder.create<CtxScatterOp>(loc, cache.getType(), cache,
                                      positionIdsOf(cache), update,
                                      batchIndexOf(cache));
}

Value mlir::qeff::rowsInUse(OpBuilder &builder, Location loc, Value cache) {
  Value index = batchIndexOf(cache);
  if (!index)
    return cache;
  auto type = llvm::cast<RankedTensorType>(cache.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[0] = llvm::cast<RankedTensorType>(index.getType()).getDimSize(0);
  return builder.create<CtxRowsOp>(
      loc, RankedTensorType::get(shape, type.getElementType()), cache, index);
}

//===----------------------------------------------------------------------===//
// KV layouts
//===----------------------------------------------------------------------===//

namespace {
/// result[i] = input[perm[i]] for the 4-D layouts; bsd has none (it gains a
/// heads dimension instead).
ArrayRef<int64_t> toBHSDPerm(KVLayout layout) {
  static const int64_t identity[] = {0, 1, 2, 3};
  static const int64_t bshd[] = {0, 2, 1, 3}; // [B,S,H,D] -> [B,H,S,D]
  static const int64_t sbhd[] = {1, 2, 0, 3}; // [S,B,H,D] -> [B,H,S,D]
  switch (layout) {
  case KVLayout::bshd:
    return bshd;
  case KVLayout::sbhd:
    return sbhd;
  case KVLayout::bhsd:
  case KVLayout::bsd:
    return identity;
  }
  llvm_unreachable("unknown KV layout");
}

SmallVector<int64_t> inversePerm(ArrayRef<int64_t> perm) {
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  return inverse;
}
} // namespace

DenseI64ArrayAttr mlir::qeff::toBHSDPermutation(OpBuilder &builder,
                                                KVLayoutAttr layout) {
  return builder.getDenseI64ArrayAttr(toBHSDPerm(layout.getValue()));
}

DenseI64ArrayAttr mlir::qeff::fromBHSDPermutation(OpBuilder &builder,
                                                  KVLayoutAttr layout) {
  return builder.getDenseI64ArrayAttr(
      inversePerm(toBHSDPerm(layout.getValue())));
}

RankedTensorType mlir::qeff::toBHSDType(RankedTensorType type,
                                        KVLayout layout) {
  ArrayRef<int64_t> s = type.getShape();
  if (layout == KVLayout::bsd)
    return RankedTensorType::get({s[0], 1, s[1], s[2]}, type.getElementType());
  SmallVector<int64_t> shape;
  for (int64_t p : toBHSDPerm(layout))
    shape.push_back(s[p]);
  return RankedTensorType::get(shape, type.getElementType());
}

Type mlir::qeff::toBHSDType(Value value, KVLayoutAttr layout) {
  return toBHSDType(llvm::cast<RankedTensorType>(value.getType()),
                    layout.getValue());
}

ArrayAttr mlir::qeff::toBHSDDims(ArrayAttr dims, KVLayout layout) {
  if (!dims)
    return dims;
  SmallVector<Attribute> out;
  if (layout == KVLayout::bsd) {
    if (dims.size() != 3)
      return dims;
    out = {dims[0], StringAttr::get(dims.getContext(), ""), dims[1], dims[2]};
  } else {
    if (dims.size() != 4)
      return dims;
    for (int64_t p : toBHSDPerm(layout))
      out.push_back(dims[p]);
  }
  return ArrayAttr::get(dims.getContext(), out);
}

bool mlir::qeff::composeToIdentity(ArrayRef<int64_t> first,
                                   ArrayRef<int64_t> second) {
  if (first.size() != second.size())
    return false;
  for (auto [j, p] : llvm::enumerate(second))
    if (first[p] != int64_t(j))
      return false;
  return true;
}

DenseI64ArrayAttr mlir::qeff::composePermutations(OpBuilder &builder,
                                                  DenseI64ArrayAttr first,
                                                  DenseI64ArrayAttr second) {
  // t1[i] = x[first[i]], t2[j] = t1[second[j]] = x[first[second[j]]].
  SmallVector<int64_t> composed;
  for (int64_t p : second.asArrayRef())
    composed.push_back(first[p]);
  return builder.getDenseI64ArrayAttr(composed);
}

//===----------------------------------------------------------------------===//
// fp16 safety and fp32 islands
//===----------------------------------------------------------------------===//

std::optional<StringRef> mlir::qeff::scopeOf(Location loc) {
  if (auto name = llvm::dyn_cast<NameLoc>(loc)) {
    if (std::optional<StringRef> inner = scopeOf(name.getChildLoc()))
      return inner;
    return name.getName().strref();
  }
  if (auto fused = llvm::dyn_cast<FusedLoc>(loc)) {
    for (Location part : fused.getLocations())
      if (std::optional<StringRef> inner = scopeOf(part))
        return inner;
    return std::nullopt;
  }
  if (auto callSite = llvm::dyn_cast<CallSiteLoc>(loc))
    return scopeOf(callSite.getCallee());
  return std::nullopt;
}

bool mlir::qeff::isMarkedFP32(Operation *op) {
  auto mark = op ? op->getAttrOfType<StringAttr>(kPrecisionAttr) : StringAttr();
  return mark && mark.getValue() == "fp32";
}

bool mlir::qeff::staysFP32(Value value) {
  if (!isMarkedFP32(value.getDefiningOp()))
    return false;
  return llvm::all_of(value.getUsers(),
                      [](Operation *user) { return isMarkedFP32(user); });
}

bool mlir::qeff::isClamped(Value value) {
  return llvm::any_of(value.getUsers(), [](Operation *user) {
    return llvm::isa<FP16ClampOp>(user);
  });
}

bool mlir::qeff::isMLPOutput(Value value) {
  auto linear = value.getDefiningOp<LinearOp>();
  if (!linear)
    return false;
  Value input = linear.getInput();
  if (auto clamp = input.getDefiningOp<FP16ClampOp>())
    input = clamp.getInput();
  Operation *def = input.getDefiningOp();
  return def && llvm::isa<GatedActivationOp, ActivationOp>(def);
}

Value mlir::qeff::cloneOf(OpBuilder &builder, Value value) {
  auto result = llvm::cast<OpResult>(value);
  Operation *clone = builder.clone(*result.getOwner());
  return clone->getResult(result.getResultNumber());
}

Value mlir::qeff::withPrecisionOf(Value value, Value like) {
  Operation *from = like.getDefiningOp();
  Operation *to = value.getDefiningOp();
  if (from && to)
    if (Attribute mark = from->getAttr(kPrecisionAttr))
      to->setAttr(kPrecisionAttr, mark);
  return value;
}

FloatAttr mlir::qeff::clipToFP16(OpBuilder &builder, FloatAttr factor) {
  double v = factor.getValueAsDouble();
  return builder.getFloatAttr(factor.getType(),
                              std::clamp(v, -kFP16Max, kFP16Max));
}

bool mlir::qeff::scopeMatches(const llvm::GlobPattern &pattern,
                              StringRef scope) {
  // The module itself or any module containing it: `model.layers.0.mlp`
  // covers `model.layers.0.mlp.down_proj`.
  for (StringRef s = scope; !s.empty(); s = s.rsplit('.').first) {
    if (pattern.match(s))
      return true;
    if (!s.contains('.'))
      break;
  }
  return false;
}

IOAttrEditor::IOAttrEditor(func::FuncOp func, bool results)
    : func_(func), results_(results) {
  unsigned n = results ? func.getNumResults() : func.getNumArguments();
  for (unsigned i = 0; i < n; ++i)
    attrs_.emplace_back(results ? func.getResultAttrDict(i) : func.getArgAttrDict(i));
}

void IOAttrEditor::set(unsigned index, StringRef name, Attribute value) {
  attrs_[index].set(name, value);
}

void IOAttrEditor::apply() {
  SmallVector<DictionaryAttr> dicts;
  for (NamedAttrList &list : attrs_)
    dicts.push_back(list.getDictionary(func_.getContext()));
  if (results_)
    func_.setAllResultAttrs(dicts);
  else
    func_.setAllArgAttrs(dicts);
}

ArrayAttr mlir::qeff::dimNames(Builder &b, ArrayRef<StringRef> names) {
  SmallVector<Attribute> attrs;
  for (StringRef name : names)
    attrs.push_back(b.getStringAttr(name));
  return b.getArrayAttr(attrs);
}
