//===- OnDeviceSampling.cpp - the qeff-on-device-sampling pass ------------===//
//
// Part of qeff. The sampler after the logits, with QEfficient's inputs and
// retained penalty buffers (see Passes.td); the device returns next_tokens
// instead of [batch, 1, vocab] logits.
//
//===----------------------------------------------------------------------===//

#include "patterns/Passes.h"
#include "patterns/PatternUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::qeff {
#define GEN_PASS_DEF_QEFFONDEVICESAMPLING
#include "patterns/Passes.h.inc"
} // namespace mlir::qeff

using namespace mlir;
using namespace mlir::qeff;

namespace {

struct QEffOnDeviceSamplingPass
    : mlir::qeff::impl::QEffOnDeviceSamplingBase<QEffOnDeviceSamplingPass> {
  using Base::Base;

  LogicalResult rewrite(func::FuncOp func) {
    Block &entry = func.getBody().front();
    auto fail = [&]() {
      return func.emitError("@") << func.getName() << ": ";
    };
    if (maxTopKIds < 0)
      return fail() << "max-top-k-ids must not be negative, got "
                    << int64_t(maxTopKIds);
    Operation *first = &entry.front();
    if (functionArgumentNamed(first, "num_logits_to_keep"))
      return fail() << "on-device sampling of a speculative-decoding target "
                       "(num_logits_to_keep) is not supported";
    for (StringRef taken : {"past_repetition_penalty_buffer", "temperatures"})
      if (functionArgumentNamed(first, taken))
        return fail() << "already has a " << taken << " input";
    Value ids = functionArgumentNamed(first, "input_ids");
    Value positions = functionArgumentNamed(first, "position_ids");
    if (!ids || !positions)
      return fail() << "on-device sampling needs the input_ids and "
                       "position_ids inputs";
    Value batchIndex = functionArgumentNamed(first, "batch_index");

    std::optional<unsigned> logitsIndex;
    for (unsigned i = 0; i < func.getNumResults(); ++i)
      if (auto name = func.getResultAttrOfType<StringAttr>(i, "qeff.name");
          name && name.getValue() == "logits")
        logitsIndex = i;
    if (!logitsIndex)
      return fail() << "has no logits result";
    Operation *ret = entry.getTerminator();
    Value logits = ret->getOperand(*logitsIndex);
    auto logitsType = llvm::cast<RankedTensorType>(logits.getType());
    if (logitsType.getRank() != 3 || logitsType.getDimSize(1) != 1 ||
        logitsType.isDynamicDim(2))
      return fail() << "the logits must be [batch, 1, vocab] with a static "
                       "vocabulary (the last token's, after "
                       "qeff-kv-retained-state), got "
                    << logitsType;
    int64_t vocab = logitsType.getDimSize(2);
    // QEfficient's Constants.MAX_TOP_K_IDS.
    int64_t topKIds = maxTopKIds > 0 ? int64_t(maxTopKIds) : std::min<int64_t>(512, vocab);
    if (topKIds > vocab)
      return fail() << "max-top-k-ids " << topKIds
                    << " exceeds the vocabulary (" << vocab << ")";

    Builder b(func.getContext());
    Type f32 = b.getF32Type(), i64 = b.getI64Type(), i1 = b.getI1Type();
    const int64_t dyn = ShapedType::kDynamic;
    // The buffers have one row per sequence the KV cache holds.
    StringRef rowsSymbol = batchIndex ? "full_batch_size" : "batch_size";
    auto add = [&](StringRef name, Type element, int64_t cols,
                   StringRef rowSym) -> Value {
      unsigned at = entry.getNumArguments();
      NamedAttribute attrs[] = {
          b.getNamedAttr("qeff.name", b.getStringAttr(name)),
          b.getNamedAttr("qeff.dims", dimNames(b, {rowSym, ""}))};
      func.insertArgument(at, RankedTensorType::get({dyn, cols}, element),
                          b.getDictionaryAttr(attrs), logits.getLoc());
      return entry.getArgument(at);
    };
    // QEfficient's names and order.
    Value repBuffer = add("past_repetition_penalty_buffer", i1, vocab, rowsSymbol);
    Value repPenalties = add("repetition_penalties", f32, 1, "batch_size");
    Value presBuffer = add("past_presence_penalty_buffer", i1, vocab, rowsSymbol);
    Value presPenalties = add("presence_penalties", f32, 1, "batch_size");
    Value temperatures = add("temperatures", f32, 1, "batch_size");
    Value topKs = add("top_ks", i64, 1, "batch_size");
    Value topPs = add("top_ps", f32, 1, "batch_size");
    Value minPs = add("min_ps", f32, 1, "batch_size");
    Value uniforms = add("random_numbers", f32, topKIds, "batch_size");

    OpBuilder builder(ret);
    Location loc = logits.getLoc();
    auto bufferType = llvm::cast<RankedTensorType>(repBuffer.getType());
    auto rowsType = RankedTensorType::get({logitsType.getDimSize(0), vocab}, i1);
    auto update = [&](Value buffer, bool generatedOnly) {
      auto op = builder.create<TokenMaskUpdateOp>(
          loc, TypeRange{bufferType, rowsType}, buffer, ids, positions,
          batchIndex, generatedOnly);
      return op;
    };
    TokenMaskUpdateOp rep = update(repBuffer, false);
    TokenMaskUpdateOp pres = update(presBuffer, true);
    auto tokens = builder.create<SampleOp>(
        loc, RankedTensorType::get({logitsType.getDimSize(0), 1}, i64), logits,
        rep.getRows(), pres.getRows(), repPenalties, presPenalties,
        temperatures, topKs, topPs, minPs, uniforms,
        builder.getI64IntegerAttr(topKIds));

    // next_tokens replaces the logits; the buffers are retained state.
    SmallVector<Value> results(ret->getOperands());
    results[*logitsIndex] = tokens.getResult();
    results.push_back(rep.getResult());
    results.push_back(pres.getResult());
    ret->setOperands(results);
    SmallVector<DictionaryAttr> resultAttrs;
    func.getAllResultAttrs(resultAttrs);
    auto named = [&](StringRef name, ArrayRef<StringRef> dims) {
      NamedAttribute attrs[] = {
          b.getNamedAttr("qeff.name", b.getStringAttr(name)),
          b.getNamedAttr("qeff.dims", dimNames(b, dims))};
      return b.getDictionaryAttr(attrs);
    };
    resultAttrs[*logitsIndex] = named("next_tokens", {"batch_size", ""});
    resultAttrs.push_back(
        named("past_repetition_penalty_buffer_RetainedState", {rowsSymbol, ""}));
    resultAttrs.push_back(
        named("past_presence_penalty_buffer_RetainedState", {rowsSymbol, ""}));
    func.setType(b.getFunctionType(entry.getArgumentTypes(),
                                   ret->getOperandTypes()));
    func.setAllResultAttrs(resultAttrs);
    return success();
  }

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && !func.isPrivate() && failed(rewrite(func)))
        return signalPassFailure();
  }
};

} // namespace
