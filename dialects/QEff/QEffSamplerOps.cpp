//===- QEffSamplerOps.cpp - verifiers of the on-device sampling ops -------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "dialects/QEff/QEffOps.h"
#include "dialects/QEff/QEffVerify.h"

using namespace mlir;
using namespace mlir::qeff;
using namespace mlir::qeff::verify;

LogicalResult TokenMaskUpdateOp::verify() {
  if (failed(checkRank(*this, getMask(), "mask", 2, "[rows, vocab]")) ||
      failed(checkSameType(*this, getResult(), getMask(), "result", "mask")) ||
      failed(checkRank(*this, getIds(), "ids", 2, "[batch, seq]")) ||
      failed(checkDims(*this, getPositions(), "positions", shapeOf(getIds()),
                       "[batch, seq] as ids")))
    return failure();
  if (ShapedType::isDynamic(shapeOf(getMask())[1]))
    return emitOpError("mask vocabulary dimension must be static");
  if (failed(checkDims(*this, getRows(), "rows",
                       {shapeOf(getIds())[0], shapeOf(getMask())[1]},
                       "[batch, vocab]")))
    return failure();
  if (Value rows = getBatchIndex())
    return checkDims(*this, rows, "batch_index", {shapeOf(getIds())[0], 1},
                     "[batch, 1]");
  return checkDims(*this, getMask(), "mask", {shapeOf(getIds())[0], kDyn},
                   "[batch, vocab] without batch_index");
}

LogicalResult SampleOp::verify() {
  if (failed(checkRank(*this, getLogits(), "logits", 3, "[batch, 1, vocab]")))
    return failure();
  ArrayRef<int64_t> l = shapeOf(getLogits());
  if (failed(checkDims(*this, getLogits(), "logits", {l[0], 1, l[2]},
                       "[batch, 1, vocab]")))
    return failure();
  int64_t vocab = l[2], k = getMaxTopKIds();
  if (ShapedType::isDynamic(vocab))
    return emitOpError("logits vocabulary dimension must be static");
  if (k < 1 || k > vocab)
    return emitOpError() << "max_top_k_ids must be in [1, vocab = " << vocab
                         << "], got " << k;
  for (auto [v, name] : {std::pair(getRepetitionMask(), "repetition_mask"),
                         std::pair(getPresenceMask(), "presence_mask")})
    if (failed(checkDims(*this, v, name, {l[0], vocab}, "[batch, vocab]")))
      return failure();
  for (auto [v, name] :
       {std::pair(getRepetitionPenalties(), "repetition_penalties"),
        std::pair(getPresencePenalties(), "presence_penalties"),
        std::pair(getTemperatures(), "temperatures"),
        std::pair(getTopKs(), "top_ks"), std::pair(getTopPs(), "top_ps"),
        std::pair(getMinPs(), "min_ps")})
    if (failed(checkDims(*this, v, name, {l[0], 1}, "[batch, 1]")))
      return failure();
  if (failed(checkDims(*this, getRandomNumbers(), "random_numbers", {l[0], k},
                       "[batch, max_top_k_ids]")))
    return failure();
  return checkDims(*this, getResult(), "result", {l[0], 1}, "[batch, 1]");
}
