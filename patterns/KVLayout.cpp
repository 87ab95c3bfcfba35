//===- KVLayout.cpp - the qeff-normalize-kv-layout pass -------------------===//
//
// Part of qeff. The DRR rewrites of KVLayout.td move each cache concat into
// bhsd; this file does what patterns cannot: the cache inputs and present
// outputs of @forward take their bhsd types (and `qeff.dims`).
//
//===----------------------------------------------------------------------===//

#include "patterns/Passes.h"
#include "patterns/PatternUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::qeff {
#define GEN_PASS_DEF_QEFFNORMALIZEKVLAYOUT
#include "patterns/Passes.h.inc"
} // namespace mlir::qeff

using namespace mlir;
using namespace mlir::qeff;

namespace {
#include "patterns/KVLayout.inc"
} // namespace

void mlir::qeff::populateKVLayoutPatterns(RewritePatternSet &patterns) {
  populateWithGenerated(patterns);
}

namespace {

struct QEffNormalizeKVLayoutPass
    : mlir::qeff::impl::QEffNormalizeKVLayoutBase<QEffNormalizeKVLayoutPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet set(context);
    populateKVLayoutPatterns(set);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  /// The native layout of each cache input some kv_concat extends in a
  /// layout other than bhsd.
  LogicalResult
  findNativeLayouts(func::FuncOp func,
                    llvm::MapVector<BlockArgument, KVLayout> &layouts) {
    // In program order, so that a conflict names the layouts as written.
    llvm::MapVector<BlockArgument, KVLayout> all;
    WalkResult walk = func.walk([&](KVConcatOp concat) {
      if (!isCacheInput(concat.getPast()))
        return WalkResult::advance();
      auto arg = llvm::cast<BlockArgument>(concat.getPast());
      auto [it, inserted] = all.insert({arg, concat.getLayout()});
      if (!inserted && it->second != concat.getLayout()) {
        emitError(arg.getLoc())
            << "cache input '" << ioNameOf(arg)
            << "' is extended in two layouts (" << stringifyKVLayout(it->second)
            << " and " << stringifyKVLayout(concat.getLayout()) << ")";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    for (auto [arg, layout] : all)
      if (layout != KVLayout::bhsd)
        layouts.insert({arg, layout});
    return success();
  }

  /// Cache inputs become bhsd; their other users see the native layout
  /// through the inverse change, which folds with the rewrite's.
  void retypeInputs(func::FuncOp func,
                    const llvm::MapVector<BlockArgument, KVLayout> &layouts) {
    OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
    IOAttrEditor argAttrs(func, /*results=*/false);
    for (auto [arg, layout] : layouts) {
      auto native = llvm::cast<RankedTensorType>(arg.getType());
      arg.setType(toBHSDType(native, layout));
      Operation *back;
      if (layout == KVLayout::bsd)
        back = b.create<MergeHeadsOp>(arg.getLoc(), native, arg);
      else
        back = b.create<TransposeOp>(
            arg.getLoc(), native, arg,
            fromBHSDPermutation(b, KVLayoutAttr::get(&getContext(), layout)));
      arg.replaceAllUsesExcept(back->getResult(0), back);
      unsigned i = arg.getArgNumber();
      if (auto dims = func.getArgAttrOfType<ArrayAttr>(i, "qeff.dims"))
        argAttrs.set(i, "qeff.dims", toBHSDDims(dims, layout));
    }
    argAttrs.apply();
    func.setType(FunctionType::get(&getContext(),
                                   func.getBody().front().getArgumentTypes(),
                                   func.getResultTypes()));
  }

  /// A present output that is the inverse layout change of a bhsd concat of
  /// a normalised cache returns the concat itself.
  void retypeResults(func::FuncOp func,
                     const llvm::MapVector<BlockArgument, KVLayout> &layouts) {
    auto ret =
        llvm::cast<func::ReturnOp>(func.getBody().front().getTerminator());
    IOAttrEditor resultAttrs(func, /*results=*/true);
    for (OpOperand &operand : ret->getOpOperands()) {
      Operation *back = operand.get().getDefiningOp();
      if (!back || !llvm::isa<TransposeOp, MergeHeadsOp>(back))
        continue;
      auto concat = back->getOperand(0).getDefiningOp<KVConcatOp>();
      if (!concat || concat.getLayout() != KVLayout::bhsd)
        continue;
      auto arg = llvm::dyn_cast<BlockArgument>(concat.getPast());
      auto it = arg ? layouts.find(arg) : layouts.end();
      if (it == layouts.end())
        continue;
      operand.set(concat.getResult());
      unsigned i = operand.getOperandNumber();
      if (auto dims = func.getResultAttrOfType<ArrayAttr>(i, "qeff.dims"))
        resultAttrs.set(i, "qeff.dims", toBHSDDims(dims, it->second));
      if (back->use_empty())
        back->erase();
    }
    resultAttrs.apply();
    func.setType(FunctionType::get(&getContext(), func.getArgumentTypes(),
                                   ret.getOperandTypes()));
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<KVLayout> native;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      llvm::MapVector<BlockArgument, KVLayout> layouts;
      if (failed(findNativeLayouts(func, layouts)))
        return signalPassFailure();
      if (layouts.empty())
        continue;
      // Concats into bhsd, then the signature, then the pairs that meet.
      if (failed(applyPatternsAndFoldGreedily(func, patterns)))
        return signalPassFailure();
      retypeInputs(func, layouts);
      if (failed(applyPatternsAndFoldGreedily(func, patterns)))
        return signalPassFailure();
      retypeResults(func, layouts);
      native = layouts.front().second;
    }
    if (native)
      module->setAttr("qeff.native_kv_layout",
                      KVLayoutAttr::get(&getContext(), *native));
  }

  FrozenRewritePatternSet patterns;
};

} // namespace
