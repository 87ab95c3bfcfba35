//===- RollingKVWindow.cpp - the qeff-rolling-kv-window pass --------------===//
//
// Part of qeff. Rewrites the retained cache of each sliding-window layer
// into a rolling buffer (see Passes.td). The rewrite changes the types of
// function arguments and results, which DRR cannot express; the per-layer
// decision is a handful of checks on the ops qeff-kv-retained-state made.
//
//===----------------------------------------------------------------------===//

#include "patterns/Passes.h"
#include "patterns/PatternUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::qeff {
#define GEN_PASS_DEF_QEFFROLLINGKVWINDOW
#include "patterns/Passes.h.inc"
} // namespace mlir::qeff

using namespace mlir;
using namespace mlir::qeff;

namespace {

/// The ctx_scatter behind an attention's key or value operand (directly, or
/// through the ctx_rows of continuous batching).
CtxScatterOp scatterBehind(Value operand) {
  if (auto rows = operand.getDefiningOp<CtxRowsOp>())
    operand = rows.getCache();
  return operand.getDefiningOp<CtxScatterOp>();
}

/// `type` with dimension `dim` (the slots: 2 of a [B, H, slots, D] cache,
/// 3 of a [B, 1, S, slots] mask) set to `slots`.
RankedTensorType withSlots(Type type, int64_t slots, unsigned dim = 2) {
  auto ranked = llvm::cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(ranked.getShape());
  shape[dim] = slots;
  return RankedTensorType::get(shape, ranked.getElementType());
}

/// `dims` with the slot dimension (2) unnamed: it is a constant now.
ArrayAttr withConstantSlots(Builder &b, ArrayAttr dims) {
  SmallVector<Attribute> names(dims.begin(), dims.end());
  if (names.size() > 2)
    names[2] = b.getStringAttr("");
  return b.getArrayAttr(names);
}

struct QEffRollingKVWindowPass
    : mlir::qeff::impl::QEffRollingKVWindowBase<QEffRollingKVWindowPass> {
  using Base::Base;

  /// Every user of a rolling cache must read it through attention with the
  /// same window (or return it): another reader would see slots out of
  /// position order.
  LogicalResult checkReaders(CtxScatterOp scatter, int64_t window) {
    for (Operation *user : scatter.getResult().getUsers()) {
      if (llvm::isa<func::ReturnOp>(user))
        continue;
      SmallVector<Operation *> readers;
      if (auto rows = llvm::dyn_cast<CtxRowsOp>(user))
        readers.append(rows->user_begin(), rows->user_end());
      else
        readers.push_back(user);
      for (Operation *reader : readers) {
        auto attn = llvm::dyn_cast<AttentionOp>(reader);
        auto mask = attn && attn.getMask()
                        ? attn.getMask().getDefiningOp<CausalMaskOp>()
                        : CausalMaskOp();
        if (!mask || mask.getSlidingWindow() != static_cast<uint64_t>(window))
          return reader->emitError()
                 << "reads the cache of a sliding-window layer (window "
                 << window
                 << ") other than through attention with that window; a "
                    "rolling KV buffer cannot serve it (use --kv-window=full)";
      }
    }
    return success();
  }

  /// Retypes a cache input of the rolling layer and the scatter that writes
  /// it (and its ctx_rows); false if `scatter` was done already.
  LogicalResult makeRolling(func::FuncOp func, CtxScatterOp scatter,
                            int64_t ring, int64_t window) {
    if (scatter.getRing() == static_cast<uint64_t>(ring))
      return success();
    auto arg = llvm::dyn_cast<BlockArgument>(scatter.getCache());
    if (!arg || arg.getOwner() != &func.getBody().front() ||
        !isCacheInput(arg) || !arg.hasOneUse())
      return scatter.emitError()
             << "the cache of a sliding-window layer must be a past_key/"
                "past_value input written only here to become a rolling "
                "buffer";
    if (failed(checkReaders(scatter, window)))
      return failure();
    Builder b(func.getContext());
    RankedTensorType type = withSlots(arg.getType(), ring + 1);
    arg.setType(type);
    if (auto dims = func.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(),
                                                     "qeff.dims"))
      func.setArgAttr(arg.getArgNumber(), "qeff.dims",
                      withConstantSlots(b, dims));
    scatter.getResult().setType(type);
    scatter.setRing(ring);
    for (Operation *user : scatter.getResult().getUsers())
      if (auto rows = llvm::dyn_cast<CtxRowsOp>(user))
        rows.getResult().setType(withSlots(rows.getType(), ring + 1));
    return success();
  }

  LogicalResult runOnFunction(func::FuncOp func) {
    SmallVector<AttentionOp> attentions;
    func.walk([&](AttentionOp attn) { attentions.push_back(attn); });
    bool changed = false;
    for (AttentionOp attn : attentions) {
      auto mask = attn.getMask() ? attn.getMask().getDefiningOp<CausalMaskOp>()
                                 : CausalMaskOp();
      if (!mask || mask.getSlidingWindow() == 0 || mask.getRing() != 0)
        continue;
      int64_t window = mask.getSlidingWindow();
      int64_t ring = window + prefillSeqLen - 1;
      if (ring + 1 >= static_cast<int64_t>(mask.getCtxLen()))
        continue; // a rolling buffer would not be smaller
      CtxScatterOp keys = scatterBehind(attn.getKey());
      CtxScatterOp values = scatterBehind(attn.getValue());
      if (!keys || !values)
        return attn.emitError()
               << "sliding-window attention over a cache that "
                  "qeff-kv-retained-state did not make; run it first";
      if (failed(makeRolling(func, keys, ring, window)) ||
          failed(makeRolling(func, values, ring, window)))
        return failure();
      OpBuilder builder(attn);
      auto maskType = llvm::cast<RankedTensorType>(mask.getType());
      auto rolling = builder.create<CausalMaskOp>(
          mask.getLoc(), withSlots(maskType, ring + 1, 3), mask.getPositions(),
          builder.getI64IntegerAttr(ring + 1),
          builder.getI64IntegerAttr(window), builder.getI64IntegerAttr(ring));
      attn.getMaskMutable().assign(rolling);
      if (mask->use_empty())
        mask->erase();
      changed = true;
    }
    if (!changed)
      return success();
    // The retained outputs follow their caches.
    Builder b(func.getContext());
    auto ret = llvm::cast<func::ReturnOp>(func.getBody().front().getTerminator());
    for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
      auto scatter = value.getDefiningOp<CtxScatterOp>();
      if (!scatter || scatter.getRing() == 0)
        continue;
      if (auto dims = func.getResultAttrOfType<ArrayAttr>(i, "qeff.dims"))
        func.setResultAttr(i, "qeff.dims", withConstantSlots(b, dims));
    }
    func.setType(b.getFunctionType(func.getBody().front().getArgumentTypes(),
                                   ret.getOperandTypes()));
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (prefillSeqLen <= 0) {
      emitError(module.getLoc())
          << "qeff-rolling-kv-window needs a positive prefill-seq-len option";
      return signalPassFailure();
    }
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && failed(runOnFunction(func)))
        return signalPassFailure();
  }
};

} // namespace
