//===- RotaryPatterns.cpp - rotary position embedding to ONNX -------------===//
//
// Part of qeff. For static frequencies, cos/sin tables of [max_positions,
// rotary_dim] are constants, computed here in fp32 exactly as transformers
// computes them (fp32 inverse frequencies, fp32 angles, times the attention
// factor), gathered by position_ids. For frequencies that depend on the
// call's sequence length (dynamic NTK, longrope), each row's inverse
// frequencies are chosen in the graph from its largest position (in a
// speculative target's decode steps, each token's from its own position)
// and cos/sin computed there. Every layer builds the same constants and ops,
// which CSE merges into one per model.
//
//===----------------------------------------------------------------------===//

#include "dialects/QEff/QEffOps.h"
#include "lowering/ToONNX/ONNXBuilder.h"
#include "lowering/ToONNX/Patterns.h"

#include "mlir/Transforms/DialectConversion.h"

#include <cmath>
#include <tuple>

using namespace mlir;
using namespace mlir::qeff;

namespace {

/// cos or sin table, [positions, rotaryDim], in the layout of `style`:
/// half: [f0 .. f(d/2-1), f0 .. f(d/2-1)]; interleaved: [f0, f0, f1, f1, ...].
SmallVector<float> rotaryTable(RotaryOp op, bool sine) {
  SmallVector<float> invFreq;
  for (double f : op.computeInvFreq())
    invFreq.push_back(static_cast<float>(f));
  int64_t dim = op.getRotaryDim();
  int64_t positions = op.getMaxPositions();
  bool half = op.getStyle() == RotaryStyle::half;
  float attentionFactor = static_cast<float>(op.getAttentionFactorValue());
  SmallVector<float> table(positions * dim);
  for (int64_t p = 0; p < positions; ++p) {
    for (int64_t i = 0; i < dim / 2; ++i) {
      float angle = static_cast<float>(p) * invFreq[i];
      float v = sine ? std::sin(angle) : std::cos(angle);
      if (attentionFactor != 1.0f)
        v *= attentionFactor;
      if (half) {
        table[p * dim + i] = v;
        table[p * dim + i + dim / 2] = v;
      } else {
        table[p * dim + 2 * i] = v;
        table[p * dim + 2 * i + 1] = v;
      }
    }
  }
  return table;
}

/// `[B, 1]` int64: each row's largest position plus one, the sequence
/// length transformers takes for the call.
Value rowSeqLen(ONNXBuilder &b, Value positions) {
  ArrayRef<int64_t> s = ONNXBuilder::shape(positions);
  Type i64 = b.builder().getI64Type();
  Value max = b.op("ReduceMax", {positions}, ONNXBuilder::tensor({s[0], 1}, i64),
                   {b.attrInts("axes", {1}), b.attr("keepdims", 1)});
  return b.add(max, b.i64Scalar(1));
}

/// `[B, S, 1]` int64 with `keep` (the speculative target's
/// num_logits_to_keep, `[k, 1]`): in a call of exactly `k` tokens (a decode
/// step) each token's own position plus one, what a one-token step takes
/// for it; in other calls (the prefill, k = 1) the row's. Lengths come from
/// the values of tensors of ones, not from Shape (qeff-verify-device).
Value tokenSeqLen(ONNXBuilder &b, Value positions, Value keep) {
  ArrayRef<int64_t> s = ONNXBuilder::shape(positions);
  Type i64 = b.builder().getI64Type();
  auto count = [&](Value x, int64_t axis, ArrayRef<int64_t> shape) {
    Value ones = b.add(b.mul(x, b.i64Scalar(0)), b.i64Scalar(1));
    return b.op("ReduceSum", {ones, b.i64s({axis})},
                ONNXBuilder::tensor(shape, i64), {b.attr("keepdims", 1)});
  };
  Value k = count(keep, 0, {1, 1});              // [1, 1]
  Value tokens = count(positions, 1, {s[0], 1}); // [B, 1]
  Value decode = b.compare("Equal", tokens, k);
  Value own = b.add(positions, b.i64Scalar(1)); // padding (-1): 0, unscaled
  return b.unsqueeze(b.where(decode, own, rowSeqLen(b, positions)), {2});
}

/// Inverse frequencies for sequence-length dependent scaling at `seqLen`
/// (int64, `[B, 1]`: `[B, dim / 2]`, one set per row; `[B, S, 1]`:
/// `[B, S, dim / 2]`, one per token).
Value invFreqAt(ONNXBuilder &b, RotaryOp op, Value seqLen) {
  RopeScalingAttr scaling = op.getScalingAttr();
  int64_t half = op.getRotaryDim() / 2;
  int64_t threshold = scaling.getOriginalMaxPosition();
  auto floats = [](ArrayRef<double> values) {
    return SmallVector<float>(values.begin(), values.end());
  };
  Value scaled = b.compare("Greater", seqLen, b.i64Scalar(threshold));
  Type f32 = b.builder().getF32Type();
  Value below = b.f32s(floats(op.computeInvFreq(0)), {half});
  Value above;
  if (scaling.getKind() == RopeScalingKind::longrope) {
    above = b.f32s(floats(op.computeInvFreq(threshold + 1)), {half});
  } else {
    // Dynamic NTK in fp32 as transformers computes it:
    // base' = theta * (factor * L / M - (factor - 1)) ^ (d / (d - 2)),
    // inv_i = 1 / base' ^ (2i / d).
    int64_t dim = op.getRotaryDim();
    float factor = static_cast<float>(scaling.getFactorValue());
    // L <= M takes the unscaled frequencies below; computing with
    // max(L, M) keeps the unused branch finite (a ratio below 0 would give
    // NaN, which fp16 emulation reports).
    Value length = b.cast(
        b.binary("Max", seqLen, b.i64Scalar(threshold)), f32);
    Value ratio = b.sub(b.div(b.mul(length, b.f32Scalar(factor)),
                              b.f32Scalar(static_cast<float>(threshold))),
                        b.f32Scalar(factor - 1.0f));
    Value grown = b.binary(
        "Pow", ratio,
        b.f32Scalar(static_cast<float>(double(dim) / double(dim - 2))));
    Value base = b.mul(
        grown, b.f32Scalar(static_cast<float>(op.getTheta().convertToDouble())));
    SmallVector<float> exponents;
    for (int64_t i = 0; i < half; ++i)
      exponents.push_back(static_cast<float>(2 * i) / static_cast<float>(dim));
    above = b.div(b.f32Scalar(1.0f),
                  b.binary("Pow", base, b.f32s(exponents, {half})));
  }
  return b.where(scaled, above, below);
}

/// `[B, 1, S, dim]` cos or sin of `position * inv_freq` computed in the
/// graph, in the layout of `style`, times the attention factor.
std::pair<Value, Value> computedCosSin(ONNXBuilder &b, RotaryOp op,
                                       Value positions, Value keep,
                                       Type element) {
  ArrayRef<int64_t> p = ONNXBuilder::shape(positions); // [B, S]
  int64_t dim = op.getRotaryDim();
  // [B, 1, d/2] per row, or [B, S, d/2] per token in a speculative target.
  Value inv = keep ? invFreqAt(b, op, tokenSeqLen(b, positions, keep))
                   : b.unsqueeze(invFreqAt(b, op, rowSeqLen(b, positions)), {1});
  Value pos = b.unsqueeze(b.cast(positions, element), {2});   // [B, S, 1]
  Value angle = b.mul(pos, inv);                              // [B, S, d/2]
  float attentionFactor = static_cast<float>(op.getAttentionFactorValue());
  auto expand = [&](StringRef fn) {
    Value v = b.unary(fn, angle);
    if (op.getStyle() == RotaryStyle::half) {
      v = b.concat({v, v}, 2);
    } else {
      Value pair = b.unsqueeze(v, {3}); // [B, S, d/2, 1]
      v = b.reshape(b.concat({pair, pair}, 3), {0, 0, dim},
                    {p[0], p[1], dim});
    }
    if (attentionFactor != 1.0f)
      v = b.mul(v, b.f32Scalar(attentionFactor));
    return b.unsqueeze(v, {1});
  };
  return {expand("Cos"), expand("Sin")};
}

struct RotaryLowering : OpConversionPattern<RotaryOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RotaryOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ONNXBuilder b(rewriter, op.getLoc());
    Value x = adaptor.getInput();
    ArrayRef<int64_t> s = ONNXBuilder::shape(x); // [B, H, S, D]
    Type element = ONNXBuilder::elementType(x);
    int64_t dim = op.getRotaryDim(), headDim = s[3];
    if (ShapedType::isDynamic(headDim))
      return rewriter.notifyMatchFailure(op, "head_dim must be static");

    // [B, 1, S, dim] cos and sin of each position.
    auto gatherTable = [&](bool sine) {
      Value table = b.f32s(rotaryTable(op, sine),
                           {static_cast<int64_t>(op.getMaxPositions()), dim});
      Value rows = b.op("Gather", {table, adaptor.getPositions()},
                        ONNXBuilder::tensor({s[0], s[2], dim}, element),
                        {b.attr("axis", 0)});
      return b.unsqueeze(rows, {1});
    };
    Value cos, sin;
    RopeScalingAttr scaling = op.getScalingAttr();
    if (scaling && scaling.isSeqLenDependent()) {
      std::tie(cos, sin) =
          computedCosSin(b, op, adaptor.getPositions(), adaptor.getKeep(),
                         element);
    } else {
      cos = gatherTable(false);
      sin = gatherTable(true);
    }

    Value rot = x, pass;
    if (dim < headDim) {
      SmallVector<Value> parts = b.split(x, {dim, headDim - dim}, 3);
      rot = parts[0];
      pass = parts[1];
    }
    Value rotated;
    if (op.getStyle() == RotaryStyle::half) {
      // rotate_half: [-x2, x1].
      SmallVector<Value> halves = b.split(rot, {dim / 2, dim / 2}, 3);
      rotated = b.concat({b.unary("Neg", halves[1]), halves[0]}, 3);
    } else {
      // rotate_every_two: pairs (x[2i], x[2i+1]) -> (-x[2i+1], x[2i]).
      SmallVector<int64_t> pairShape = {s[0], s[1], s[2], dim / 2, 2};
      Value pairs = b.reshape(rot, {0, 0, 0, dim / 2, 2}, pairShape);
      SmallVector<Value> evenOdd = b.split(pairs, {1, 1}, 4);
      Value swapped = b.concat({b.unary("Neg", evenOdd[1]), evenOdd[0]}, 4);
      rotated = b.reshape(swapped, {0, 0, 0, dim}, {s[0], s[1], s[2], dim});
    }
    Value out = b.add(b.mul(rot, cos), b.mul(rotated, sin));
    if (pass)
      out = b.concat({out, pass}, 3);
    replaceWithONNX(rewriter, op, out);
    return success();
  }
};

} // namespace

void mlir::qeff::populateRotaryToONNXPatterns(RewritePatternSet &patterns) {
  patterns.add<RotaryLowering>(patterns.getContext());
}
