//===- AttentionPatterns.cpp - attention and the HF cache to ONNX ---------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "dialects/QEff/QEffOps.h"
#include "lowering/ToONNX/ONNXBuilder.h"
#include "lowering/ToONNX/Patterns.h"

#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::qeff;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

/// [B, KVH, T, D] -> [B, KVH * rep, T, D]: each KV head serves `rep` query
/// heads (repeat_kv in transformers).
Value repeatKV(ONNXBuilder &b, Value kv, int64_t rep) {
  if (rep == 1)
    return kv;
  ArrayRef<int64_t> s = ONNXBuilder::shape(kv);
  Type element = ONNXBuilder::elementType(kv);
  Value x = b.unsqueeze(kv, {2}); // [B, KVH, 1, T, D]
  x = b.op("Expand", {x, b.i64s({1, 1, rep, 1, 1})},
           ONNXBuilder::tensor({s[0], s[1], rep, s[2], s[3]}, element));
  return b.reshape(x, {0, s[1] * rep, -1, s[3]}, {s[0], s[1] * rep, s[2], s[3]});
}

/// A 1-D int64 index vector [0, n) of a tensor dimension: a constant when the
/// dimension is static, else Range over its Shape.
Value dimIndices(ONNXBuilder &b, Value tensor, int64_t axis, Value *length) {
  int64_t n = ONNXBuilder::shape(tensor)[axis];
  Type i64 = b.builder().getI64Type();
  if (!ShapedType::isDynamic(n)) {
    SmallVector<int64_t> values(n);
    for (int64_t i = 0; i < n; ++i)
      values[i] = i;
    if (length)
      *length = b.i64Scalar(n);
    return b.i64s(values);
  }
  Value dim = b.op("Shape", {tensor}, ONNXBuilder::tensor({1}, i64),
                   {b.attr("start", axis), b.attr("end", axis + 1)});
  Value scalar = b.op("Squeeze", {dim, b.i64s({0})}, ONNXBuilder::tensor({}, i64));
  if (length)
    *length = scalar;
  return b.op("Range", {b.i64Scalar(0), scalar, b.i64Scalar(1)},
              ONNXBuilder::tensor({kDyn}, i64));
}

/// HF-semantics causal visibility [S, T]: query i (absolute T - S + i) sees
/// key j iff j <= T - S + i, and j > T - S + i - window.
Value causalMask(ONNXBuilder &b, Value query, Value key, int64_t window) {
  Value sLen, tLen;
  Value keyIdx = dimIndices(b, key, 2, &tLen);
  Value queryIdx = dimIndices(b, query, 2, &sLen);
  // Absolute query positions: (T - S) + i.
  Value offset = b.sub(tLen, sLen);
  Value queryPos = b.add(queryIdx, offset);
  int64_t s = ONNXBuilder::shape(query)[2], t = ONNXBuilder::shape(key)[2];
  Value keyRow = b.reshape(keyIdx, {1, -1}, {1, t});
  Value queryCol = b.reshape(queryPos, {-1, 1}, {s, 1});
  Value visible = b.compare("LessOrEqual", keyRow, queryCol);
  if (window > 0) {
    Value lower = b.sub(queryCol, b.i64Scalar(window));
    visible = b.compare("And", visible, b.compare("Greater", keyRow, lower));
  }
  return visible;
}

struct AttentionLowering : OpConversionPattern<AttentionOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AttentionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ONNXBuilder b(rewriter, op.getLoc());
    int64_t rep = op.getNumHeads() / op.getNumKvHeads();
    Value q = adaptor.getQuery();
    Value k = repeatKV(b, adaptor.getKey(), rep);
    Value v = repeatKV(b, adaptor.getValue(), rep);

    Value scores = b.matmul(q, b.transpose(k, {0, 1, 3, 2})); // [B, H, S, T]
    float scale = static_cast<float>(op.getScale().convertToDouble());
    scores = b.mul(scores, b.f32Scalar(scale));
    if (std::optional<APFloat> cap = op.getSoftcap()) {
      Value c = b.f32Scalar(static_cast<float>(cap->convertToDouble()));
      scores = b.mul(b.unary("Tanh", b.div(scores, c)), c);
    }
    if (std::optional<ArrayRef<double>> slopes = op.getAlibiSlopes()) {
      // + slope[h] * j for key j.
      SmallVector<float> values(slopes->begin(), slopes->end());
      Value slope = b.f32s(values, {1, int64_t(values.size()), 1, 1});
      Value keyIdx = dimIndices(b, k, 2, nullptr);
      Value keyPos = b.cast(keyIdx, rewriter.getF32Type());
      int64_t t = ONNXBuilder::shape(k)[2];
      keyPos = b.reshape(keyPos, {1, 1, 1, -1}, {1, 1, 1, t});
      scores = b.add(scores, b.mul(slope, keyPos));
    }
    Value visible;
    if (adaptor.getMask())
      visible = adaptor.getMask();
    else if (op.getCausal())
      visible = causalMask(b, q, k, op.getSlidingWindow());
    if (visible)
      scores = b.where(visible, scores, b.f32Scalar(kMaskedScore));
    Value probs;
    if (Value sinks = adaptor.getSinks()) {
      // The sink is one more logit per head with no value (GPT-OSS): a
      // column [B, H, S, 1] appended to the scores, softmaxed with them and
      // dropped. Masked scores are finite, so `0 * score + sink` builds it.
      ArrayRef<int64_t> s = ONNXBuilder::shape(scores);
      Type element = ONNXBuilder::elementType(scores);
      auto segments = rewriter.getNamedAttr(
          "operandSegmentSizes", rewriter.getDenseI32ArrayAttr({1, 1, 1, 1, 0}));
      Value first = b.op("Slice", {scores, b.i64s({0}), b.i64s({1}), b.i64s({-1})},
                         ONNXBuilder::tensor({s[0], s[1], s[2], 1}, element),
                         {segments});
      Value sink = b.reshape(sinks, {1, -1, 1, 1}, {1, s[1], 1, 1});
      Value column = b.add(b.mul(first, b.f32Scalar(0.0f)), sink);
      Value joined = b.concat({scores, column}, -1);
      Value all = b.op("Softmax", {joined}, joined.getType(),
                       {b.attr("axis", -1)});
      probs = b.op("Slice", {all, b.i64s({0}), b.i64s({-1}), b.i64s({-1})},
                   scores.getType(), {segments});
    } else {
      probs = b.op("Softmax", {scores}, scores.getType(), {b.attr("axis", -1)});
    }
    replaceWithONNX(rewriter, op, b.matmul(probs, v));
    return success();
  }
};

struct KVConcatLowering : OpConversionPattern<KVConcatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(KVConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ONNXBuilder b(rewriter, op.getLoc());
    Value result = b.concat({adaptor.getPast(), adaptor.getUpdate()},
                            op.getSeqAxis());
    replaceWithONNX(rewriter, op, result);
    return success();
  }
};

} // namespace

void mlir::qeff::populateAttentionToONNXPatterns(RewritePatternSet &patterns) {
  patterns.add<AttentionLowering, KVConcatLowering>(patterns.getContext());
}
