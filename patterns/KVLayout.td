//===- KVLayout.td - KV cache layouts to the device's bhsd -----*- tablegen -*-===//
//
// Part of qeff. Declarative rewrites of qeff-normalize-kv-layout. An importer
// declares its family's native cache layout on `qeff.kv_concat`; the device
// contract (docs/device.md) wants every cache [batch, kv_heads, seq, head_dim].
// The concat of a cache input is moved into bhsd between a layout change and
// its inverse, so the IR stays valid after every rewrite; the pass then
// retypes the cache inputs and present outputs (KVLayout.cpp) and the
// transpose pairs that meet fold away.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_PATTERNS_KVLAYOUT_TD
#define QEFF_PATTERNS_KVLAYOUT_TD

include "mlir/IR/PatternBase.td"
include "dialects/QEff/QEffOps.td"

//===----------------------------------------------------------------------===//
// Constraints and helpers
//===----------------------------------------------------------------------===//

// A `past_key.{i}` / `past_value.{i}` argument of @forward.
def IsCacheInput : Constraint<CPred<"::mlir::qeff::isCacheInput($0)">,
                              "a cache input of @forward">;
// The 4-D layouts a transpose takes to bhsd.
def IsTransposedLayout : Constraint<
    CPred<"$0.getValue() == ::mlir::qeff::KVLayout::bshd || "
          "$0.getValue() == ::mlir::qeff::KVLayout::sbhd">,
    "bshd or sbhd layout">;
// The multi-query layout [B, S, D]: one KV head, no heads dimension.
def IsMultiQueryLayout : Constraint<
    CPred<"$0.getValue() == ::mlir::qeff::KVLayout::bsd">, "bsd layout">;
def ComposeToIdentity : Constraint<
    CPred<"::mlir::qeff::composeToIdentity($0, $1)">,
    "permutations composing to the identity">;
def NotComposeToIdentity : Constraint<
    Neg<CPred<"::mlir::qeff::composeToIdentity($0, $1)">>,
    "permutations not composing to the identity">;
def SameType : Constraint<CPred<"$0.getType() == $1.getType()">, "same type">;
def IsOne : Constraint<CPred<"$0.getInt() == 1">, "1">;

def ToBHSDPerm : NativeCodeCall<"::mlir::qeff::toBHSDPermutation($_builder, $0)">;
def FromBHSDPerm : NativeCodeCall<"::mlir::qeff::fromBHSDPermutation($_builder, $0)">;
// The bhsd type of a value of $0's type in layout $1.
def BHSDTypeOf : NativeCodeCall<"::mlir::qeff::toBHSDType($0, $1)">;
def ComposePerms : NativeCodeCall<"::mlir::qeff::composePermutations($_builder, $0, $1)">;
def BHSD : NativeCodeCall<
    "::mlir::qeff::KVLayoutAttr::get($_builder.getContext(), ::mlir::qeff::KVLayout::bhsd)">;
def OneHead : NativeCodeCall<"$_builder.getI64IntegerAttr(1)">;

//===----------------------------------------------------------------------===//
// Layout changes of the cache
//===----------------------------------------------------------------------===//

// [B, S, H, D] or [S, B, H, D] cache: concatenate in bhsd.
//   %c = qeff.kv_concat %past, %new {layout = bshd}
//       : (tensor<?x?x2x8xf32>, tensor<?x?x2x8xf32>) -> tensor<?x?x2x8xf32>
// becomes
//   %p = qeff.transpose %past {permutation = [0, 2, 1, 3]}  // -> ?x2x?x8
//   %n = qeff.transpose %new {permutation = [0, 2, 1, 3]}
//   %b = qeff.kv_concat %p, %n {layout = bhsd} -> tensor<?x2x?x8xf32>
//   %c = qeff.transpose %b {permutation = [0, 2, 1, 3]}     // -> ?x?x2x8
// (sbhd: [1, 2, 0, 3] into bhsd, [2, 0, 1, 3] back.) The pass then makes
// %past itself bhsd, and %p folds away.
def KVConcatToBHSD : Pat<
  (QEff_KVConcatOp:$concat $past, $update, $layout),
  (QEff_TransposeOp
      (QEff_KVConcatOp
          (QEff_TransposeOp $past, (ToBHSDPerm $layout),
                            (returnType (BHSDTypeOf $past, $layout))),
          (QEff_TransposeOp $update, (ToBHSDPerm $layout),
                            (returnType (BHSDTypeOf $update, $layout))),
          (BHSD), (returnType (BHSDTypeOf $concat, $layout))),
      (FromBHSDPerm $layout)),
  [(IsCacheInput $past), (IsTransposedLayout $layout)]>;

// Multi-query [B, S, D] cache: the one KV head becomes a heads dimension.
//   %c = qeff.kv_concat %past, %new {layout = bsd}
//       : (tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
// becomes
//   %p = qeff.split_heads %past {num_heads = 1}  // -> ?x1x?x8
//   %n = qeff.split_heads %new {num_heads = 1}
//   %b = qeff.kv_concat %p, %n {layout = bhsd} -> tensor<?x1x?x8xf32>
//   %c = qeff.merge_heads %b                     // -> ?x?x8
def MultiQueryKVConcatToBHSD : Pat<
  (QEff_KVConcatOp:$concat $past, $update, $layout),
  (QEff_MergeHeadsOp
      (QEff_KVConcatOp
          (QEff_SplitHeadsOp $past, (OneHead),
                             (returnType (BHSDTypeOf $past, $layout))),
          (QEff_SplitHeadsOp $update, (OneHead),
                             (returnType (BHSDTypeOf $update, $layout))),
          (BHSD), (returnType (BHSDTypeOf $concat, $layout)))),
  [(IsCacheInput $past), (IsMultiQueryLayout $layout)]>;

//===----------------------------------------------------------------------===//
// Folding the layout changes that meet
//===----------------------------------------------------------------------===//

// A transpose undone by the next one.
//   %t = qeff.transpose %x {permutation = [0, 2, 1, 3]}
//   %u = qeff.transpose %t {permutation = [0, 2, 1, 3]}
// becomes %x.
def FoldInverseTransposes : Pat<
  (QEff_TransposeOp (QEff_TransposeOp $x, $first), $second),
  (replaceWithValue $x),
  [(ComposeToIdentity $first, $second)]>;

// Two transposes in a row are one.
//   %t = qeff.transpose %x {permutation = [1, 2, 0, 3]}
//   %u = qeff.transpose %t {permutation = [0, 2, 1, 3]}
// becomes
//   %u = qeff.transpose %x {permutation = [1, 0, 2, 3]}
def ComposeTransposes : Pat<
  (QEff_TransposeOp (QEff_TransposeOp $x, $first), $second),
  (QEff_TransposeOp $x, (ComposePerms $first, $second)),
  [(NotComposeToIdentity $first, $second)]>;

// Splitting one head off what was merged gives back the [B, 1, S, D] value.
//   %m = qeff.merge_heads %x : tensor<?x1x?x8xf32> -> tensor<?x?x8xf32>
//   %s = qeff.split_heads %m {num_heads = 1} -> tensor<?x1x?x8xf32>
// becomes %x.
def FoldSplitOfMergedHeads : Pat<
  (QEff_SplitHeadsOp:$split (QEff_MergeHeadsOp $x), $heads),
  (replaceWithValue $x),
  [(IsOne $heads), (SameType $split, $x)]>;

// Merging what was just split gives back the [B, S, H * D] value.
//   %s = qeff.split_heads %y {num_heads = 1} -> tensor<?x1x?x8xf32>
//   %m = qeff.merge_heads %s -> tensor<?x?x8xf32>
// becomes %y.
def FoldMergeOfSplitHeads : Pat<
  (QEff_MergeHeadsOp:$merge (QEff_SplitHeadsOp $y, $heads)),
  (replaceWithValue $y),
  [(SameType $merge, $y)]>;

#endif // QEFF_PATTERNS_KVLAYOUT_TD
