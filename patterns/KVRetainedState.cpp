//===- KVRetainedState.cpp - the qeff-kv-retained-state pass --------------===//
//
// Part of qeff. The pass gives the cache inputs their fixed type, runs the
// DRR rewrites of KVRetainedState.td, then renames and retypes the results
// to the AI 100 retained-state contract (docs/device.md).
//
//===----------------------------------------------------------------------===//

#include "patterns/Passes.h"
#include "patterns/PatternUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::qeff {
#define GEN_PASS_DEF_QEFFKVRETAINEDSTATE
#include "patterns/Passes.h.inc"
} // namespace mlir::qeff

using namespace mlir;
using namespace mlir::qeff;

namespace {
#include "patterns/KVRetainedState.inc"
} // namespace

void mlir::qeff::populateKVRetainedStatePatterns(RewritePatternSet &patterns) {
  populateWithGenerated(patterns);
}

namespace {

struct QEffKVRetainedStatePass
    : mlir::qeff::impl::QEffKVRetainedStateBase<QEffKVRetainedStatePass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet set(context);
    populateKVRetainedStatePatterns(set);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  /// The symbol of the cache's first dimension.
  StringRef cacheRows() const {
    return fullBatchSize > 0 ? "full_batch_size" : "batch_size";
  }

  /// Continuous batching: the `batch_index` [batch, 1] input, after
  /// position_ids (the patterns find it by name).
  LogicalResult addBatchIndex(func::FuncOp func) {
    Block &entry = func.getBody().front();
    if (functionArgumentNamed(&entry.front(), "batch_index"))
      return func.emitError("@") << func.getName()
                                 << " already has a batch_index input";
    Value positions = functionArgumentNamed(&entry.front(), "position_ids");
    unsigned at = llvm::cast<BlockArgument>(positions).getArgNumber() + 1;
    Builder b(func.getContext());
    auto type = RankedTensorType::get({ShapedType::kDynamic, 1}, b.getI64Type());
    NamedAttribute attrs[] = {
        b.getNamedAttr("qeff.name", b.getStringAttr("batch_index")),
        b.getNamedAttr("qeff.dims", dimNames(b, {"batch_size", ""}))};
    func.insertArgument(at, type, b.getDictionaryAttr(attrs),
                        positions.getLoc());
    return success();
  }

  /// With continuous batching every use of a retained cache is attention
  /// through ctx_rows or the retained output: anything else would read all
  /// rows of the cache as if they were this step's batch.
  LogicalResult checkCacheUses(func::FuncOp func) {
    WalkResult r = func.walk([&](CtxScatterOp scatter) {
      for (Operation *user : scatter.getResult().getUsers())
        if (!llvm::isa<CtxRowsOp, func::ReturnOp>(user)) {
          user->emitError("reads the whole retained cache of ")
              << fullBatchSize.getValue()
              << " rows; with continuous batching only attention over the "
                 "rows in use (qeff.ctx_rows) is supported here";
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    return failure(r.wasInterrupted());
  }

  /// Gives every cache input the [B, H, ctx_len, D] type.
  LogicalResult fixCacheInputs(func::FuncOp func) {
    Builder b(func.getContext());
    SmallVector<Type> argTypes(func.getArgumentTypes());
    IOAttrEditor argAttrs(func, /*results=*/false);
    for (BlockArgument arg : func.getArguments()) {
      if (!isCacheInput(arg))
        continue;
      auto type = llvm::cast<RankedTensorType>(arg.getType());
      if (type.getRank() != 4)
        return emitError(arg.getLoc())
               << "cache input '" << ioNameOf(arg)
               << "' must be [batch, kv_heads, seq, head_dim] (bhsd), got "
               << type << "; run qeff-normalize-kv-layout first";
      auto fixed = RankedTensorType::get(
          {type.getDimSize(0), type.getDimSize(1), ctxLen, type.getDimSize(3)},
          type.getElementType());
      arg.setType(fixed);
      argTypes[arg.getArgNumber()] = fixed;
      // The rewrite to ctx_scatter keeps kv_concat's result type: give it
      // the cache type now.
      for (Operation *user : arg.getUsers())
        if (auto concat = llvm::dyn_cast<KVConcatOp>(user))
          if (concat.getPast() == arg)
            concat.getResult().setType(fixed);
      argAttrs.set(arg.getArgNumber(), "qeff.dims",
                   dimNames(b, {cacheRows(), "", "ctx_len", ""}));
    }
    argAttrs.apply();
    func.setType(b.getFunctionType(argTypes, func.getResultTypes()));
    // The LM head computes one token per row: [B, 1, vocab].
    func.walk([](LinearOp linear) {
      if (isLogitsHead(linear.getResult()))
        setLogitsHeadType(linear.getResult(),
                          lastTokenTypeOf(linear.getResult()));
    });
    return success();
  }

  /// Results take their new types; present_* become *_RetainedState.
  LogicalResult fixResults(func::FuncOp func) {
    Builder b(func.getContext());
    auto ret = llvm::cast<func::ReturnOp>(func.getBody().front().getTerminator());
    func.setType(b.getFunctionType(func.getArgumentTypes(),
                                   ret.getOperandTypes()));
    IOAttrEditor resultAttrs(func, /*results=*/true);
    for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
      auto name = func.getResultAttrOfType<StringAttr>(i, "qeff.name");
      if (!name)
        continue;
      StringRef n = name.getValue();
      if (n == "logits") {
        resultAttrs.set(i, "qeff.dims", dimNames(b, {"batch_size", "", ""}));
        continue;
      }
      for (StringRef kind : {"key", "value"}) {
        std::string prefix = ("present_" + kind + ".").str();
        if (!n.starts_with(prefix))
          continue;
        std::string layer = n.drop_front(prefix.size()).str();
        if (!value.getDefiningOp<CtxScatterOp>())
          return emitError(value.getLoc())
                 << "output '" << n
                 << "' is not a retained cache: its cache input was not "
                    "rewritten to a fixed ctx_len cache";
        resultAttrs.set(i, "qeff.name",
                        b.getStringAttr("past_" + kind.str() + "." + layer +
                                        "_RetainedState"));
        resultAttrs.set(i, "qeff.dims", dimNames(b, {cacheRows(), "", "ctx_len", ""}));
      }
    }
    resultAttrs.apply();
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (ctxLen <= 0) {
      emitError(module.getLoc())
          << "qeff-kv-retained-state needs a positive ctx-len option";
      return signalPassFailure();
    }
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      bool hasCache = llvm::any_of(func.getArguments(), [](BlockArgument a) {
        return isCacheInput(a);
      });
      if (!hasCache)
        continue;
      if (!functionArgumentNamed(&func.getBody().front().front(),
                                 "position_ids")) {
        func.emitError("@") << func.getName()
                            << " has cache inputs but no position_ids argument";
        return signalPassFailure();
      }
      if ((fullBatchSize > 0 && failed(addBatchIndex(func))) ||
          failed(fixCacheInputs(func)) ||
          failed(applyPatternsAndFoldGreedily(func, patterns)) ||
          failed(fixResults(func)) ||
          (fullBatchSize > 0 && failed(checkCacheUses(func))))
        return signalPassFailure();
    }
  }

  FrozenRewritePatternSet patterns;
};

} // namespace
