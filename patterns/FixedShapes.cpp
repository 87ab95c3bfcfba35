//===- FixedShapes.cpp - the qeff-fixed-shapes pass -----------------------===//
//
// Part of qeff. Checks and records the specialization symbols of @forward's
// I/O. A signature-level pass: there is nothing to rewrite, only facts to
// check and record (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "patterns/Passes.h"
#include "patterns/PatternUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::qeff {
#define GEN_PASS_DEF_QEFFFIXEDSHAPES
#include "patterns/Passes.h.inc"
} // namespace mlir::qeff

using namespace mlir;
using namespace mlir::qeff;

namespace {

constexpr StringLiteral kSymbols[] = {"batch_size", "seq_len", "ctx_len",
                                      "full_batch_size", "num_logits_to_keep"};

struct QEffFixedShapesPass
    : mlir::qeff::impl::QEffFixedShapesBase<QEffFixedShapesPass> {
  using Base::Base;

  /// Every dynamic dimension of `type` is named by a specialization symbol.
  LogicalResult checkDims(Location loc, StringRef what, StringRef name,
                          Type type, ArrayAttr dims) {
    auto ranked = llvm::dyn_cast<RankedTensorType>(type);
    if (!ranked)
      return emitError(loc) << what << " '" << name << "' must be a ranked tensor";
    for (int64_t i = 0; i < ranked.getRank(); ++i) {
      StringRef symbol;
      if (dims && i < int64_t(dims.size()))
        if (auto s = llvm::dyn_cast<StringAttr>(dims[i]))
          symbol = s.getValue();
      if (!symbol.empty() &&
          (!llvm::is_contained(kSymbols, symbol) ||
           (symbol == "full_batch_size" && fullBatchSize <= 0) ||
           (symbol == "num_logits_to_keep" && !speculative)))
        return emitError(loc)
               << what << " '" << name << "' dimension " << i
               << " is named '" << symbol
               << "', which no specialization binds (batch_size, seq_len, "
                  "ctx_len"
               << (fullBatchSize > 0 ? ", full_batch_size" : "")
               << (speculative ? ", num_logits_to_keep" : "") << ")";
      if (ranked.isDynamicDim(i) && symbol.empty())
        return emitError(loc) << what << " '" << name << "' dimension " << i
                              << " is dynamic but has no specialization symbol";
      if (symbol == "ctx_len" && !ranked.isDynamicDim(i) &&
          ranked.getDimSize(i) != ctxLen)
        return emitError(loc) << what << " '" << name << "' holds "
                              << ranked.getDimSize(i)
                              << " cache slots but ctx-len is " << ctxLen.getValue();
    }
    return success();
  }

  /// The K values: only with the num_logits_to_keep input (and it needs
  /// some), each in 1..prefill-seq-len - 1, no repeats.
  LogicalResult checkSpeculativeTokens(ModuleOp module) {
    if (!speculative && !numSpeculativeTokens.empty())
      return emitError(module.getLoc())
             << "num-speculative-tokens needs the num_logits_to_keep input "
                "(run qeff-speculative-logits first)";
    if (speculative && numSpeculativeTokens.empty())
      return emitError(module.getLoc())
             << "@forward has a num_logits_to_keep input (a speculative-"
                "decoding target) but num-speculative-tokens gives no K";
    llvm::SmallDenseSet<int64_t> seen;
    for (int64_t k : numSpeculativeTokens) {
      if (k < 1 || k + 1 > prefillSeqLen)
        return emitError(module.getLoc())
               << "num-speculative-tokens " << k << ": K must be at least 1 "
               << "and K + 1 at most prefill-seq-len ("
               << prefillSeqLen.getValue()
               << "), so that a verification step is never longer than a "
                  "prefill chunk";
      if (!seen.insert(k).second)
        return emitError(module.getLoc())
               << "num-speculative-tokens lists " << k << " twice";
    }
    return success();
  }

  bool speculative = false;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (ctxLen <= 0 || prefillSeqLen <= 0 || batchSize <= 0) {
      emitError(module.getLoc()) << "qeff-fixed-shapes needs positive "
                                    "ctx-len, prefill-seq-len and batch-size";
      return signalPassFailure();
    }
    if (ctxLen < prefillSeqLen) {
      emitError(module.getLoc())
          << "ctx-len (" << ctxLen.getValue()
          << ") must be at least prefill-seq-len ("
          << prefillSeqLen.getValue() << ")";
      return signalPassFailure();
    }
    // A speculative-decoding target (qeff-speculative-logits) has the
    // num_logits_to_keep input; the K values need it and it needs them.
    speculative = false;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && !func.isPrivate() &&
          functionArgumentNamed(&func.getBody().front().front(),
                                "num_logits_to_keep"))
        speculative = true;
    if (failed(checkSpeculativeTokens(module)))
      return signalPassFailure();
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || func.isPrivate())
        continue;
      for (unsigned i = 0; i < func.getNumArguments(); ++i) {
        auto name = func.getArgAttrOfType<StringAttr>(i, "qeff.name");
        if (failed(checkDims(func.getArgument(i).getLoc(), "input",
                             name ? name.getValue().str() : "#" + std::to_string(i),
                             func.getArgument(i).getType(),
                             func.getArgAttrOfType<ArrayAttr>(i, "qeff.dims"))))
          return signalPassFailure();
      }
      for (unsigned i = 0; i < func.getNumResults(); ++i) {
        auto name = func.getResultAttrOfType<StringAttr>(i, "qeff.name");
        if (failed(checkDims(func.getLoc(), "output",
                             name ? name.getValue().str() : "#" + std::to_string(i),
                             func.getResultTypes()[i],
                             func.getResultAttrOfType<ArrayAttr>(i, "qeff.dims"))))
          return signalPassFailure();
      }
    }

    Builder b(&getContext());
    // Continuous batching prefills one sequence at a time into its cache row
    // and decodes every row at once.
    bool continuous = fullBatchSize > 0;
    auto specialization = [&](StringRef name, int64_t batch, int64_t seqLen,
                              int64_t keep = 1) {
      SmallVector<NamedAttribute> symbols = {
          b.getNamedAttr("batch_size", b.getStringAttr(std::to_string(batch))),
          b.getNamedAttr("seq_len", b.getStringAttr(std::to_string(seqLen))),
          b.getNamedAttr("ctx_len", b.getStringAttr(std::to_string(ctxLen)))};
      if (continuous)
        symbols.push_back(b.getNamedAttr(
            "full_batch_size", b.getStringAttr(std::to_string(fullBatchSize))));
      if (speculative)
        symbols.push_back(b.getNamedAttr("num_logits_to_keep",
                                         b.getStringAttr(std::to_string(keep))));
      return b.getDictionaryAttr(
          {b.getNamedAttr("name", b.getStringAttr(name)),
           b.getNamedAttr("symbols", b.getDictionaryAttr(symbols))});
    };
    int64_t prefillBatch = continuous ? 1 : int64_t(batchSize);
    int64_t decodeBatch = continuous ? int64_t(fullBatchSize) : int64_t(batchSize);
    SmallVector<Attribute> specializations = {
        specialization("Prefill", prefillBatch, prefillSeqLen)};
    // A Decode identical to Prefill (one token, same batch) is not repeated.
    if (prefillSeqLen != 1 || decodeBatch != prefillBatch)
      specializations.push_back(specialization("Decode", decodeBatch, 1));
    // The target's verification steps: K proposed tokens after the last one.
    for (int64_t k : numSpeculativeTokens)
      specializations.push_back(specialization(
          "DecodeK" + std::to_string(k), decodeBatch, k + 1, k + 1));
    module->setAttr("qeff.specializations", b.getArrayAttr(specializations));
  }
};

} // namespace
