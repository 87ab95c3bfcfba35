//===- FP16Clamp.td - fp16-safe device IR ----------------------*- tablegen -*-===//
//
// Part of qeff. Declarative rewrites of qeff-fp16-clamp: constants clipped to
// the fp16 range and `qeff.fp16_clamp` where fp16 execution overflows. Where
// to clamp comes from what overflows in practice: the MLP output and the
// residual stream are where an inf would meet a -inf and become NaN. The
// gated MLP product is not clamped (see below). Each clamp is built on a clone of
// its producer so that the producer keeps its discardable attributes (the
// fp32 mark), and takes the producer's location and mark itself.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_PATTERNS_FP16CLAMP_TD
#define QEFF_PATTERNS_FP16CLAMP_TD

include "mlir/IR/PatternBase.td"
include "dialects/QEff/QEffOps.td"

//===----------------------------------------------------------------------===//
// Constraints and helpers
//===----------------------------------------------------------------------===//

// A value not yet clamped, and not inside an fp32 island (producer and every
// user marked fp32: clamping there would undo what the island keeps).
def NeedsClamp : Constraint<
    CPred<"!::mlir::qeff::isClamped($0) && !::mlir::qeff::staysFP32($0) && "
          "!$0.use_empty()">,
    "a value to clamp">;
// The down projection of an MLP: a linear fed by its activation.
def IsMLPOutput : Constraint<CPred<"::mlir::qeff::isMLPOutput($0)">,
                             "an MLP output">;
// A constant beyond the largest finite fp16.
def BeyondFP16 : Constraint<
    CPred<"std::abs($0.getValueAsDouble()) > ::mlir::qeff::kFP16Max">,
    "beyond +-65504">;

def CloneOf : NativeCodeCall<"::mlir::qeff::cloneOf($_builder, $0)">;
// $0 with the precision mark of $1's producer.
def MarkedLike : NativeCodeCall<"::mlir::qeff::withPrecisionOf($0, $1)">;
def FP16Max : NativeCodeCall<"$_builder.getF64FloatAttr(::mlir::qeff::kFP16Max)">;
def ClipToFP16 : NativeCodeCall<"::mlir::qeff::clipToFP16($_builder, $0)">;

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

// A scale factor the device could not hold: the lowering's Mul constant.
//   %s = qeff.scale %x {factor = 1.0e+05 : f64}
// becomes
//   %s = qeff.scale %x {factor = 6.550400e+04 : f64}
def ClipScaleFactor : Pat<
  (QEff_ScaleOp:$scaled $x, $factor),
  (MarkedLike (QEff_ScaleOp $x, (ClipToFP16 $factor),
                            (returnType $scaled)), $scaled),
  [(BeyondFP16 $factor)]>;

//===----------------------------------------------------------------------===//
// Clamps
//===----------------------------------------------------------------------===//

// Not clamped: the gated MLP product itself (the input of down_proj). Where it
// exceeds fp16 (the fp16_overflow golden: 177408), a clamp gives wrong
// tokens (the golden records that clamping alone is not enough); the fix is
// an fp32 island on the product and down_proj, found by calibration
// (`qeff compile --calibrate`) or given with fp32-scopes. A clamp there would
// also hide the overflow from the host device's fp16 emulation, which
// reports the first overflowing node so the island can be chosen.

// The MLP output (down_proj), before it meets the residual stream.
//   %d = qeff.linear %c, %w   // %c: the (clamped) activation
//   %h = qeff.add %x, %d
// becomes
//   %d = qeff.linear %c, %w
//   %dc = qeff.fp16_clamp %d
//   %h = qeff.add %x, %dc
def ClampMLPOutput : Pat<
  (QEff_LinearOp:$down $x, $w, $bias, $layout),
  (MarkedLike (QEff_FP16ClampOp (CloneOf $down), (FP16Max),
                                (returnType $down)), $down),
  [(IsMLPOutput $down), (NeedsClamp $down)]>;

// A mixture of experts is an MLP output too.
//   %y = qeff.moe %x, %router, ...
// becomes
//   %y = qeff.moe %x, %router, ...
//   %yc = qeff.fp16_clamp %y
def ClampMoEOutput : Pat<
  (QEff_MoEOp:$moe $x, $router, $routerBias, $experts, $n, $k, $norm, $kind,
                   $limit, $alpha),
  (MarkedLike (QEff_FP16ClampOp (CloneOf $moe), (FP16Max),
                                (returnType $moe)), $moe),
  [(NeedsClamp $moe)]>;

// The residual stream.
//   %h = qeff.add %x, %y
// becomes
//   %h = qeff.add %x, %y
//   %hc = qeff.fp16_clamp %h
def ClampResidualAdd : Pat<
  (QEff_AddOp:$sum $x, $y),
  (MarkedLike (QEff_FP16ClampOp (CloneOf $sum), (FP16Max),
                                (returnType $sum)), $sum),
  [(NeedsClamp $sum)]>;

#endif // QEFF_PATTERNS_FP16CLAMP_TD
