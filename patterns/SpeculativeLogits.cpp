//===- SpeculativeLogits.cpp - the qeff-speculative-logits pass -----------===//
//
// Part of qeff. The speculative-decoding target form: a num_logits_to_keep
// input selects how many of each row's last tokens the LM head runs on, as
// QEfficient's TLM export does, and rotaries whose frequencies follow the
// sequence length rotate a decode step's tokens one by one (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "patterns/Passes.h"
#include "patterns/PatternUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::qeff {
#define GEN_PASS_DEF_QEFFSPECULATIVELOGITS
#include "patterns/Passes.h.inc"
} // namespace mlir::qeff

using namespace mlir;
using namespace mlir::qeff;

namespace {

constexpr StringLiteral kKeep = "num_logits_to_keep";

struct QEffSpeculativeLogitsPass
    : mlir::qeff::impl::QEffSpeculativeLogitsBase<QEffSpeculativeLogitsPass> {
  using Base::Base;

  /// The last_token_select feeding the `logits` result, through the LM head
  /// and its elementwise logit transforms; null when there is none.
  static LastTokenSelectOp selectOfLogits(func::FuncOp func, unsigned &index) {
    for (unsigned i = 0; i < func.getNumResults(); ++i) {
      auto name = func.getResultAttrOfType<StringAttr>(i, "qeff.name");
      if (!name || name.getValue() != "logits")
        continue;
      index = i;
      Value v = func.getBody().front().getTerminator()->getOperand(i);
      while (Operation *op = v.getDefiningOp()) {
        if (auto select = llvm::dyn_cast<LastTokenSelectOp>(op))
          return select;
        if (!llvm::isa<LinearOp, ScaleOp, SoftcapOp>(op))
          return {};
        v = op->getOperand(0);
      }
      return {};
    }
    return {};
  }

  LogicalResult rewrite(func::FuncOp func) {
    Block &entry = func.getBody().front();
    if (functionArgumentNamed(&entry.front(), kKeep))
      return func.emitError("@") << func.getName() << " already has a "
                                 << kKeep << " input";
    unsigned logitsIndex = 0;
    LastTokenSelectOp select = selectOfLogits(func, logitsIndex);
    if (!select || select.getKeep())
      return func.emitError("@")
             << func.getName()
             << ": the logits do not come from the last token's LM head "
                "(qeff.last_token_select); run qeff-kv-retained-state first";
    Value positions = select.getPositions();
    Value batchIndex = functionArgumentNamed(&entry.front(), "batch_index");
    unsigned at =
        llvm::cast<BlockArgument>(batchIndex ? batchIndex : positions)
            .getArgNumber() +
        1;
    Builder b(func.getContext());
    auto keepType =
        RankedTensorType::get({ShapedType::kDynamic, 1}, b.getI64Type());
    NamedAttribute attrs[] = {
        b.getNamedAttr("qeff.name", b.getStringAttr(kKeep)),
        b.getNamedAttr("qeff.dims",
                       b.getArrayAttr({b.getStringAttr(kKeep),
                                       b.getStringAttr("")}))};
    func.insertArgument(at, keepType, b.getDictionaryAttr(attrs),
                        positions.getLoc());
    Value keep = entry.getArgument(at);

    // Rope frequencies that follow the call's sequence length: a
    // verification step of K + 1 tokens must rotate each token as the
    // one-token step at its position does (qeff.rotary's `keep`).
    func.walk([&](RotaryOp rotary) {
      if (RopeScalingAttr scaling = rotary.getScalingAttr();
          scaling && scaling.isSeqLenDependent())
        rotary.getKeepMutable().assign(keep);
    });

    // [B, k, N]: the selection, then every op up to the result.
    auto inType = llvm::cast<RankedTensorType>(select.getInput().getType());
    OpBuilder builder(select);
    auto selected = builder.create<LastTokenSelectOp>(
        select.getLoc(),
        RankedTensorType::get({inType.getDimSize(0), ShapedType::kDynamic,
                               inType.getDimSize(2)},
                              inType.getElementType()),
        select.getInput(), positions, keep);
    select.getResult().replaceAllUsesWith(selected.getResult());
    select.erase();
    Value v = selected.getResult();
    while (v.hasOneUse() &&
           llvm::isa<LinearOp, ScaleOp, SoftcapOp>(*v.getUsers().begin())) {
      Operation *op = *v.getUsers().begin();
      auto t = llvm::cast<RankedTensorType>(op->getResult(0).getType());
      op->getResult(0).setType(RankedTensorType::get(
          {t.getDimSize(0), ShapedType::kDynamic, t.getDimSize(2)},
          t.getElementType()));
      v = op->getResult(0);
    }
    auto ret = entry.getTerminator();
    if (ret->getOperand(logitsIndex) != v)
      return func.emitError("@") << func.getName()
                                 << ": the logits are used by more than the "
                                    "function result";
    func.setType(b.getFunctionType(entry.getArgumentTypes(),
                                   ret->getOperandTypes()));
    func.setResultAttr(logitsIndex, "qeff.dims",
                       b.getArrayAttr({b.getStringAttr("batch_size"),
                                       b.getStringAttr(kKeep),
                                       b.getStringAttr("")}));
    return success();
  }

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && !func.isPrivate() && failed(rewrite(func)))
        return signalPassFailure();
  }
};

} // namespace
