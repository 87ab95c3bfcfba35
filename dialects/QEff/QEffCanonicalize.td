//===- QEffCanonicalize.td - canonicalizations of qeff ops -----*- tablegen -*-===//
//
// Part of qeff. Declarative canonicalization patterns of the qeff dialect,
// registered by the ops' getCanonicalizationPatterns (QEffOps.cpp) and run by
// `--canonicalize`, which qeff-device-pipeline runs after qeff-fp16-clamp. A
// pattern here must therefore keep the device IR fp16-safe: never widen a
// clamp, never create a constant beyond +-65504, never merge ops of different
// precision marks (`qeff.precision`, the fp32 islands). How to add one:
// docs/contributing.md.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_DIALECT_QEFF_CANONICALIZE_TD
#define QEFF_DIALECT_QEFF_CANONICALIZE_TD

include "mlir/IR/PatternBase.td"
include "dialects/QEff/QEffOps.td"

//===----------------------------------------------------------------------===//
// Constraints and helpers
//===----------------------------------------------------------------------===//

// An op without discardable attributes: no precision mark (an fp32 island
// keeps its ops as they are) and nothing else a merge would drop.
def QEff_Unmarked : Constraint<
    CPred<"$0.getDefiningOp()->getDiscardableAttrDictionary().empty()">,
    "an op without discardable attributes">;
// [lo1, hi1] and [lo2, hi2] intersect: max(lo1, lo2) <= min(hi1, hi2).
def QEff_RangesOverlap : Constraint<
    CPred<"std::max($0.getValueAsDouble(), $1.getValueAsDouble()) <= "
          "std::min($2.getValueAsDouble(), $3.getValueAsDouble())">,
    "overlapping clamp ranges">;
// [lo, hi] lies within [-limit, limit].
def QEff_WithinLimit : Constraint<
    CPred<"-$2.getValueAsDouble() <= $0.getValueAsDouble() && "
          "$1.getValueAsDouble() <= $2.getValueAsDouble()">,
    "a range within the limit">;

def QEff_MaxOf : NativeCodeCall<
    "$_builder.getF64FloatAttr(std::max($0.getValueAsDouble(), "
    "$1.getValueAsDouble()))">;
def QEff_MinOf : NativeCodeCall<
    "$_builder.getF64FloatAttr(std::min($0.getValueAsDouble(), "
    "$1.getValueAsDouble()))">;

//===----------------------------------------------------------------------===//
// Clamps
//===----------------------------------------------------------------------===//

// A clamp of a clamp is one clamp to the intersection of the ranges (exact:
// clamp(clamp(x, a, b), c, d) == clamp(x, max(a, c), min(b, d)) when the
// ranges overlap; disjoint ranges give a constant and are left alone).
//   %a = qeff.clamp %x {min = -8.0 : f64, max = 8.0 : f64}
//   %b = qeff.clamp %a {min = -2.0 : f64, max = 16.0 : f64}
// becomes
//   %b = qeff.clamp %x {min = -2.0 : f64, max = 8.0 : f64}
def QEff_MergeNestedClamps : Pat<
  (QEff_ClampOp:$outer (QEff_ClampOp:$inner $x, $lo1, $hi1), $lo2, $hi2),
  (QEff_ClampOp $x, (QEff_MaxOf $lo1, $lo2), (QEff_MinOf $hi1, $hi2)),
  [(QEff_RangesOverlap $lo1, $lo2, $hi1, $hi2), (QEff_Unmarked $inner),
   (QEff_Unmarked $outer)]>;

// An fp16 clamp of an fp16 clamp is the narrower one.
//   %a = qeff.fp16_clamp %x {limit = 65504.0 : f64}
//   %b = qeff.fp16_clamp %a {limit = 1000.0 : f64}
// becomes
//   %b = qeff.fp16_clamp %x {limit = 1000.0 : f64}
def QEff_MergeNestedFP16Clamps : Pat<
  (QEff_FP16ClampOp:$outer (QEff_FP16ClampOp:$inner $x, $limit1), $limit2),
  (QEff_FP16ClampOp $x, (QEff_MinOf $limit1, $limit2)),
  [(QEff_Unmarked $inner), (QEff_Unmarked $outer)]>;

// An fp16 clamp of a value a clamp already keeps within its limit (OLMo's
// clip_qkv, say) does nothing.
//   %a = qeff.clamp %x {min = -8.0 : f64, max = 8.0 : f64}
//   %b = qeff.fp16_clamp %a
// becomes %a.
def QEff_FoldFP16ClampOfClamp : Pat<
  (QEff_FP16ClampOp (QEff_ClampOp:$inner $x, $lo, $hi), $limit),
  (replaceWithValue $inner),
  [(QEff_WithinLimit $lo, $hi, $limit)]>;

#endif // QEFF_DIALECT_QEFF_CANONICALIZE_TD
