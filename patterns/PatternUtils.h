//===- PatternUtils.h - helpers shared by the DRR rewrites ------*- C++ -*-===//
//
// Part of qeff. Native constraints and builders the topic .td files call:
// they find @forward's I/O roles by the `qeff.name` of its arguments and
// results, and compute the result types of the ops the rewrites create.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_PATTERNS_PATTERNUTILS_H
#define QEFF_PATTERNS_PATTERNUTILS_H

#include "dialects/QEff/QEffOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <optional>

namespace llvm {
class GlobPattern;
} // namespace llvm

namespace mlir::qeff {

/// The `qeff.name` of a function argument ("" for other values).
StringRef ioNameOf(Value value);
/// The argument of the function enclosing `op` named `name`; null if none.
Value functionArgumentNamed(Operation *op, StringRef name);

/// A `qeff.dims` attribute: one symbol (or "" for a static dimension) per
/// dimension.
ArrayAttr dimNames(Builder &b, ArrayRef<StringRef> names);

/// A `past_key.{i}` / `past_value.{i}` function argument.
bool isCacheInput(Value value);
/// The `position_ids` argument of the function holding `value`.
Value positionIdsOf(Value value);
/// ctx_len (dim 2) of a [B, H, ctx_len, D] cache as an I64 attribute.
IntegerAttr ctxLenOf(OpBuilder &builder, Value cache);
/// [B, 1, S, ctx_len] i1: the mask of query [B, H, S, D] over `cache`.
Type maskTypeOf(Value query, Value cache);
/// [B, 1, N] for a [B, S, N] value.
Type lastTokenTypeOf(Value value);
/// qeff.last_token_select of `value` at the function's position_ids.
Value lastTokenOf(OpBuilder &builder, Location loc, Value value);
/// The linear op producing the `logits` result of @forward (directly or
/// through the elementwise logit transforms qeff.scale / qeff.softcap), not
/// yet reduced to the last token.
bool isLogitsHead(Value value);
/// Gives the LM head `head` and the logit transforms after it `type`.
void setLogitsHeadType(Value head, Type type);

/// A copy of the linear op defining `linear` applied to `input` instead.
Value linearOn(OpBuilder &builder, Value linear, Value input);
/// The attention defining `attention` over `key` and `value` with the
/// device `mask` instead of causal masking (its sinks and attributes kept).
Value attentionWithMask(OpBuilder &builder, Value attention, Value key,
                        Value value, Value mask);

/// qeff.ctx_scatter of `update` into `cache` at the function's position_ids,
/// and at its `batch_index` rows when it has that argument (continuous
/// batching).
Value ctxScatterOn(OpBuilder &builder, Location loc, Value cache, Value update);
/// What attention reads of a retained cache: the cache itself, or with
/// continuous batching (a `batch_index` argument) its rows in use
/// (qeff.ctx_rows).
Value rowsInUse(OpBuilder &builder, Location loc, Value cache);

//===----------------------------------------------------------------------===//
// KV layouts (KVLayout.td)
//===----------------------------------------------------------------------===//

/// The `qeff.transpose` permutation taking a 4-D cache in `layout` (bshd or
/// sbhd) to bhsd, and back.
DenseI64ArrayAttr toBHSDPermutation(OpBuilder &builder, KVLayoutAttr layout);
DenseI64ArrayAttr fromBHSDPermutation(OpBuilder &builder, KVLayoutAttr layout);
/// The type of a `layout` tensor of `value`'s type once in bhsd ([B, S, D] ->
/// [B, 1, S, D] for the multi-query bsd).
Type toBHSDType(Value value, KVLayoutAttr layout);
RankedTensorType toBHSDType(RankedTensorType type, KVLayout layout);
/// `dims` (one symbol per dimension, `qeff.dims`) reordered from `layout` to
/// bhsd; a null attribute stays null.
ArrayAttr toBHSDDims(ArrayAttr dims, KVLayout layout);
/// Whether the two permutations compose to the identity.
bool composeToIdentity(ArrayRef<int64_t> first, ArrayRef<int64_t> second);
/// `second` after `first`: transpose(transpose(x, first), second).
DenseI64ArrayAttr composePermutations(OpBuilder &builder,
                                      DenseI64ArrayAttr first,
                                      DenseI64ArrayAttr second);

//===----------------------------------------------------------------------===//
// fp16 safety and fp32 islands (FP16Clamp.td)
//===----------------------------------------------------------------------===//

/// The discardable attribute marking an op that stays in fp32 on the device,
/// and the module attribute recording the scopes it was asked for.
inline constexpr StringLiteral kPrecisionAttr = "qeff.precision";
inline constexpr StringLiteral kFP32ScopesAttr = "qeff.fp32_scopes";
/// The largest finite fp16.
inline constexpr double kFP16Max = 65504.0;

/// The scope of a location: the innermost NameLoc, looking through fused and
/// call-site locations (the exporter names ONNX nodes `/<scope>/<OpType>_<n>`
/// from the same rule). Importers set it to the HF module path.
std::optional<StringRef> scopeOf(Location loc);
/// Whether an fp32 scope pattern covers `scope`: the glob matches it or one
/// of the modules containing it (`model.layers.0.mlp` covers
/// `model.layers.0.mlp.down_proj`).
bool scopeMatches(const llvm::GlobPattern &pattern, StringRef scope);
/// Whether `op` is marked `qeff.precision = "fp32"`.
bool isMarkedFP32(Operation *op);
/// Whether `value` is an fp32 island's inside: its producer and every user
/// are marked fp32 (a clamp there would change what the island preserves).
bool staysFP32(Value value);
/// Whether some user of `value` is a `qeff.fp16_clamp`.
bool isClamped(Value value);
/// A linear op whose input is an MLP activation (plain or gated, possibly
/// clamped): the MLP's down projection.
bool isMLPOutput(Value value);
/// A clone of the op defining `value` (same operands, attributes and
/// location); its result.
Value cloneOf(OpBuilder &builder, Value value);
/// Gives the op defining `value` the precision mark of the op defining
/// `like`; returns `value`.
Value withPrecisionOf(Value value, Value like);
/// `factor` clipped to [-65504, 65504].
FloatAttr clipToFP16(OpBuilder &builder, FloatAttr factor);

/// Edits of a function's argument (or result) attributes applied in one
/// update. FuncOp::setArgAttr rebuilds the whole arg_attrs array, uniqued for
/// the context's life, on every call: a loop over the KV caches of N layers
/// would use memory quadratic in N.
class IOAttrEditor {
public:
  IOAttrEditor(func::FuncOp func, bool results);
  void set(unsigned index, StringRef name, Attribute value);
  /// Writes the edited attributes back (once, at the end).
  void apply();

private:
  func::FuncOp func_;
  bool results_;
  SmallVector<NamedAttrList> attrs_;
};

} // namespace mlir::qeff

#endif // QEFF_PATTERNS_PATTERNUTILS_H
