//===- LowerToONNX.cpp - the qeff -> onnx lowering pass -------------------===//
//
// Part of qeff. Assembles the per-category patterns of Patterns.h.
//
//===----------------------------------------------------------------------===//

#include "dialects/ONNX/ONNXOps.h"
#include "dialects/QEff/QEffOps.h"
#include "lowering/ToONNX/Passes.h"
#include "lowering/ToONNX/Patterns.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::qeff {
#define GEN_PASS_DEF_QEFFLOWERTOONNX
#include "lowering/ToONNX/Passes.h.inc"
} // namespace mlir::qeff

using namespace mlir;
using namespace mlir::qeff;

namespace {

struct QEffLowerToONNXPass
    : mlir::qeff::impl::QEffLowerToONNXBase<QEffLowerToONNXPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet set(context);
    populateLinearAlgebraToONNXPatterns(set);
    populateNormToONNXPatterns(set);
    populateRotaryToONNXPatterns(set);
    populateAttentionToONNXPatterns(set);
    populateMLPToONNXPatterns(set);
    populateDeviceCacheToONNXPatterns(set);
    populateSamplerToONNXPatterns(set);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    ConversionTarget target(getContext());
    target.addLegalDialect<onnx::ONNXDialect, func::FuncDialect>();
    target.addIllegalDialect<QEffDialect>();
    target.addLegalOp<WeightOp>();
    if (failed(applyPartialConversion(module, target, patterns)))
      return signalPassFailure();

    // Weights replaced by their transposed copies are dead now.
    module.walk([](WeightOp weight) {
      if (weight->use_empty())
        weight->erase();
    });
    IRRewriter rewriter(&getContext());
    DominanceInfo dominance(module);
    eliminateCommonSubExpressions(rewriter, dominance, module);
  }

  FrozenRewritePatternSet patterns;
};

} // namespace
