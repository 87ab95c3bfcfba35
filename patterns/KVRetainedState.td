//===- KVRetainedState.td - HF cache -> retained cache rewrites -*- tablegen -*-===//
//
// Part of qeff. Declarative rewrites of qeff-kv-retained-state. They assume
// the pass has already given the cache inputs their fixed [B, H, ctx_len, D]
// type; the helpers (KVRetainedState.cpp) find position_ids and the function
// I/O roles by their `qeff.name`.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_PATTERNS_KVRETAINEDSTATE_TD
#define QEFF_PATTERNS_KVRETAINEDSTATE_TD

include "mlir/IR/PatternBase.td"
include "dialects/QEff/QEffOps.td"

//===----------------------------------------------------------------------===//
// Constraints and helpers
//===----------------------------------------------------------------------===//

// A `past_key.{i}` / `past_value.{i}` argument of @forward.
def IsCacheInput : Constraint<CPred<"::mlir::qeff::isCacheInput($0)">,
                              "a cache input of @forward">;
// The layout the device cache uses.
def IsBHSD : Constraint<
    CPred<"$0.getValue() == ::mlir::qeff::KVLayout::bhsd">, "bhsd layout">;
// A value written by ctx_scatter: the fixed cache.
def IsRetainedCache : Constraint<
    CPred<"$0.getDefiningOp<::mlir::qeff::CtxScatterOp>() != nullptr">,
    "a retained cache">;
// The linear op whose result is the `logits` output of @forward.
def IsLogitsHead : Constraint<CPred<"::mlir::qeff::isLogitsHead($0)">,
                              "the LM head">;
def IsTrue : Constraint<CPred<"$0.getValue()">, "true">;

// The `position_ids` argument of the function holding $0.
def PositionIdsOf : NativeCodeCall<"::mlir::qeff::positionIdsOf($0)">;
// ctx_len of a [B, H, ctx_len, D] cache, as an I64 attribute.
def CtxLenOf : NativeCodeCall<"::mlir::qeff::ctxLenOf($_builder, $0)">;
// [B, 1, S, ctx_len] i1 for query $0 against cache $1.
def MaskTypeOf : NativeCodeCall<"::mlir::qeff::maskTypeOf($0, $1)">;
// [B, 1, N] for [B, S, N].
def LastTokenTypeOf : NativeCodeCall<"::mlir::qeff::lastTokenTypeOf($0)">;
// No rolling buffer (qeff-rolling-kv-window may make one later).
def NoRing : NativeCodeCall<"$_builder.getI64IntegerAttr(0)">;
// ctx_scatter at position_ids (and batch_index rows with continuous batching).
def CtxScatterOn : NativeCodeCall<
    "::mlir::qeff::ctxScatterOn($_builder, $_loc, $0, $1)">;
// The cache rows attention reads (ctx_rows with continuous batching).
def RowsInUse : NativeCodeCall<"::mlir::qeff::rowsInUse($_builder, $_loc, $0)">;

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

// present = concat(past, new)  ==>  scatter new into the fixed cache.
//   %k = qeff.kv_concat %past, %new {layout = bhsd}
// becomes
//   %k = qeff.ctx_scatter %past, %position_ids, %new [, %batch_index]
def KVConcatToCtxScatter : Pat<
  (QEff_KVConcatOp $past, $update, $layout),
  (CtxScatterOn $past, $update),
  [(IsCacheInput $past), (IsBHSD $layout)]>;

// Causal attention over the retained cache: the mask comes from positions.
//   %a = qeff.attention %q, %k, %v {causal = true, sliding_window = w}
// becomes
//   %m = qeff.causal_mask %position_ids {ctx_len, sliding_window = w}
//   %a = qeff.attention %q, %k, %v, %m {causal = false, sliding_window = w}
// (with continuous batching %k and %v are first narrowed to the rows in use
// by qeff.ctx_rows %k, %batch_index).
// (The new attention is built by AttentionWithMask: MLIR 19's DRR cannot
// forward the attention's Optional sinks operand into a result op.)
def AttentionWithMask : NativeCodeCall<
    "::mlir::qeff::attentionWithMask($_builder, $0, $1, $2, $3)">;
def CausalAttentionToPositionMask : Pat<
  (QEff_AttentionOp:$attn $q, $k, $v, $mask, $sinks, $heads, $kvHeads,
                   $headDim, $scale, $causal, $window, $alibi, $softcap),
  (AttentionWithMask $attn, (RowsInUse $k), (RowsInUse $v),
      (QEff_CausalMaskOp (PositionIdsOf $q), (CtxLenOf $k), $window, (NoRing),
                         (returnType (MaskTypeOf $q, $k)))),
  [(IsTrue $causal), (IsRetainedCache $k)]>;

// The LM head only for the last valid token of each row.
//   %logits = qeff.linear %h, %w  (returned as `logits`)
// becomes
//   %last = qeff.last_token_select %h, %position_ids
//   %logits = qeff.linear %last, %w
// (The new linear is built by LinearOn: MLIR 19's DRR cannot forward the
// linear's Optional bias operand into a result op.)
def LinearOn : NativeCodeCall<"::mlir::qeff::linearOn($_builder, $0, $1)">;
def LogitsOfLastToken : Pat<
  (QEff_LinearOp:$logits $x, $w, $bias, $layout),
  (LinearOn $logits,
      (QEff_LastTokenSelectOp $x, (PositionIdsOf $x),
                              (returnType (LastTokenTypeOf $x)))),
  [(IsLogitsHead $logits)]>;

#endif // QEFF_PATTERNS_KVRETAINEDSTATE_TD
