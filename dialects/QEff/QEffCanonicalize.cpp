//===- QEffCanonicalize.cpp - canonicalization hooks of qeff ops ----------===//
//
// Part of qeff. The ops' getCanonicalizationPatterns (`hasCanonicalizer` in
// QEffOps.td) register the declarative patterns of QEffCanonicalize.td.
//
//===----------------------------------------------------------------------===//

#include "dialects/QEff/QEffOps.h"

#include "mlir/IR/PatternMatch.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::qeff;

namespace {
#include "dialects/QEff/QEffCanonicalize.inc"
} // namespace

void ClampOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                          MLIRContext *context) {
  results.add<QEff_MergeNestedClamps>(context);
}

void FP16ClampOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<QEff_MergeNestedFP16Clamps, QEff_FoldFP16ClampOfClamp>(context);
}
