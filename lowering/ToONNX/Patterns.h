//===- Patterns.h - qeff -> onnx conversion patterns ------------*- C++ -*-===//
//
// Part of qeff. The lowering of every qeff op to onnx dialect ops, grouped by
// op category, one file each; LowerToONNX.cpp only assembles them.
//
// Decompositions that matter for the device (see docs/lowering.md):
// - linear: MatMul against an [in, out] initializer (`qeff.weight` with
//   `transpose`, transposed by the exporter while streaming), then Add;
// - rms_norm: Mul/ReduceMean/Add/Sqrt/Div/Mul in fp32;
// - rotary: Gather of precomputed cos/sin tables (constants, identical for
//   every layer and merged by CSE) indexed by position_ids;
// - attention: MatMul/Mul/Where/Softmax/MatMul, GQA by Unsqueeze/Expand/
//   Reshape of K and V, masked scores set to -65504 (finite in fp16);
// - device cache ops: ScatterND, GatherND, LessOrEqual masks, ArgMax +
//   GatherElements, Clip; index grids built without Shape ops.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_LOWERING_TOONNX_PATTERNS_H
#define QEFF_LOWERING_TOONNX_PATTERNS_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::qeff {

/// Value masked attention scores get: the most negative finite fp16.
inline constexpr float kMaskedScore = -65504.0f;

/// embedding, linear, split, transpose, split/merge heads, add/mul/scale.
void populateLinearAlgebraToONNXPatterns(RewritePatternSet &patterns);
/// rms_norm, layer_norm.
void populateNormToONNXPatterns(RewritePatternSet &patterns);
/// rotary.
void populateRotaryToONNXPatterns(RewritePatternSet &patterns);
/// attention, kv_concat.
void populateAttentionToONNXPatterns(RewritePatternSet &patterns);
/// activation, gated_activation, moe.
void populateMLPToONNXPatterns(RewritePatternSet &patterns);
/// ctx_scatter, ctx_gather, causal_mask, last_token_select, fp16_clamp.
void populateDeviceCacheToONNXPatterns(RewritePatternSet &patterns);

/// token_mask_update, sample (on-device sampling).
void populateSamplerToONNXPatterns(RewritePatternSet &patterns);

/// Replaces `op` by `values`, giving each value the op's result type: the
/// qeff verifiers guarantee the types agree up to static knowledge, and the
/// users of `op` (func.return above all) expect exactly its types.
void replaceWithONNX(RewriterBase &rewriter, Operation *op, ValueRange values);

/// `x @ W^T + b` for a `[out, in]` weight (or `x @ W + b` for `[in, out]`),
/// shared by linear and the MoE experts. Asks for a transposed `qeff.weight`
/// when the weight is one.
Value lowerLinear(OpBuilder &builder, Location loc, Value x, Value weight,
                  Value bias, bool weightIsOutIn);

} // namespace mlir::qeff

#endif // QEFF_LOWERING_TOONNX_PATTERNS_H
