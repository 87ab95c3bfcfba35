//===- DeviceCachePatterns.cpp - device cache ops to ONNX -----------------===//
//
// Part of qeff. The device graph may not compute shapes (no Shape ops), so
// index grids are built from constants and from the position tensor itself:
// a batch index of every token is CumSum(1) - 1 down the batch axis, and
// broadcasting Add with zeros spreads a grid over the other axes.
//
//===----------------------------------------------------------------------===//

#include "dialects/QEff/QEffOps.h"
#include "lowering/ToONNX/ONNXBuilder.h"
#include "lowering/ToONNX/Patterns.h"

#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::qeff;

namespace {

SmallVector<int64_t> iota(int64_t n) {
  SmallVector<int64_t> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = i;
  return v;
}

/// Idle lanes of a continuous-batching step (batch_index < 0, as vLLM's
/// qaic plugin feeds them with input_ids and position_ids -1) must write no
/// live KV slot. A negative row would wrap onto row F-1 (ScatterND counts
/// from the end), and with a live lane at that row's same slot two updates
/// would hit one index, which ONNX leaves undefined. So every idle token
/// writes exactly what one live token writes (the first token of the
/// largest row): the same index and the same value, a duplicate that
/// changes nothing whichever write lands last. A step of idle lanes only
/// writes the padding slot (position -1) of row F-1, which by the padding
/// rule no query sees before it rewrites it. `rows` and `pos` are [B, S],
/// `update` [B, H, S, D]; all three are replaced.
void redirectIdleLanes(ONNXBuilder &b, Value &rows, Value &pos, Value &update) {
  Type i64 = b.builder().getI64Type();
  ArrayRef<int64_t> u = ONNXBuilder::shape(update); // [B, H, S, D]
  int64_t tokens = ShapedType::isDynamic(u[0]) || ShapedType::isDynamic(u[2])
                       ? ShapedType::kDynamic
                       : u[0] * u[2];
  Value live = b.compare("GreaterOrEqual", rows, b.i64Scalar(0));  // [B, S]
  Value livePos = b.where(live, pos, b.i64Scalar(-1));
  Value flatRows = b.reshape(rows, {-1}, {tokens});
  Value first = b.op("ArgMax", {flatRows}, ONNXBuilder::tensor({1}, i64),
                     {b.attr("axis", 0), b.attr("keepdims", 1)}); // [1]
  auto pick = [&](Value flat) {
    return b.op("Gather", {flat, first}, ONNXBuilder::tensor({1}, i64),
                {b.attr("axis", 0)});
  };
  Value sourceRow = pick(flatRows);
  Value sourcePos = pick(b.reshape(livePos, {-1}, {tokens}));
  rows = b.where(live, rows, sourceRow);
  pos = b.where(live, livePos, sourcePos);
  // The source token's update, broadcast over the idle tokens.
  Type element = ONNXBuilder::elementType(update);
  Value byToken = b.reshape(b.transpose(update, {0, 2, 1, 3}), {-1, u[1], u[3]},
                            {tokens, u[1], u[3]}); // [B*S, H, D]
  Value source = b.op("Gather", {byToken, first},
                      ONNXBuilder::tensor({1, u[1], u[3]}, element),
                      {b.attr("axis", 0)});        // [1, H, D]
  update = b.where(b.unsqueeze(live, {1, 3}), update,
                   b.unsqueeze(source, {2}));    // [B, H, S, D]
}

/// cache[b, h, positions[b, s], :] = update[b, h, s, :] as ScatterND with
/// indices [B, H, S, 3] = (b, h, positions[b, s]); with batch_index the row
/// is batch_index[b, 0] instead of b, idle lanes redirected
/// (redirectIdleLanes). A rolling buffer (ring n) writes
/// position p >= 0 at slot p mod n; padding (-1) stays -1, the last slot.
struct CtxScatterLowering : OpConversionPattern<CtxScatterOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CtxScatterOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ONNXBuilder b(rewriter, op.getLoc());
    Value pos = adaptor.getPositions();               // [B, S]
    if (int64_t ring = op.getRing())
      pos = b.where(b.compare("Less", pos, b.i64Scalar(0)), pos,
                    b.binary("Mod", pos, b.i64Scalar(ring)));
    int64_t heads = ONNXBuilder::shape(adaptor.getCache())[1];
    if (ShapedType::isDynamic(heads))
      return rewriter.notifyMatchFailure(op, "kv heads must be static");
    ArrayRef<int64_t> u = ONNXBuilder::shape(adaptor.getUpdate());
    if (adaptor.getBatchIndex() &&
        (ShapedType::isDynamic(u[1]) || ShapedType::isDynamic(u[3])))
      return rewriter.notifyMatchFailure(op, "update heads and head_dim must be static");

    Value zeroPos = b.mul(pos, b.i64Scalar(0));       // [B, S] zeros
    Value update = adaptor.getUpdate();
    Value batchIdx;
    if (Value rows = adaptor.getBatchIndex()) {
      batchIdx = b.add(zeroPos, rows);                // [B, S]: batch_index[b]
      redirectIdleLanes(b, batchIdx, pos, update);
    } else {
      batchIdx = b.sub(b.op("CumSum", {b.add(zeroPos, b.i64Scalar(1)),
                                       b.i64Scalar(0)},
                            pos.getType()),
                       b.i64Scalar(1));               // [B, S]: b
    }
    Value pos4 = b.unsqueeze(pos, {1, 3});            // [B, 1, S, 1]
    Value batch4 = b.unsqueeze(batchIdx, {1, 3});     // [B, 1, S, 1]
    Value zero4 = b.mul(pos4, b.i64Scalar(0));        // [B, 1, S, 1]
    Value headGrid = b.i64s(iota(heads), {1, heads, 1, 1});
    Value headZeros = b.i64s(SmallVector<int64_t>(heads, 0), {1, heads, 1, 1});
    Value bFull = b.add(batch4, headZeros);           // [B, H, S, 1]
    Value hFull = b.add(zero4, headGrid);
    Value pFull = b.add(pos4, headZeros);
    Value indices = b.concat({bFull, hFull, pFull}, 3); // [B, H, S, 3]
    Value scattered =
        b.op("ScatterND", {adaptor.getCache(), indices, update}, op.getType());
    replaceWithONNX(rewriter, op, scattered);
    return success();
  }
};

/// result[b] = cache[batch_index[b, 0]] via Gather on axis 0 of the indices
/// reshaped to [B].
struct CtxRowsLowering : OpConversionPattern<CtxRowsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CtxRowsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ONNXBuilder b(rewriter, op.getLoc());
    int64_t batch = op.getType().getShape()[0];
    Value rows = b.reshape(adaptor.getBatchIndex(), {-1}, {batch});
    replaceWithONNX(rewriter, op,
                    b.op("Gather", {adaptor.getCache(), rows}, op.getType(),
                         {b.attr("axis", 0)}));
    return success();
  }
};

/// result[b, h, n] = cache[b, h, slots[b, n]] via GatherND(batch_dims = 1)
/// on the [B, C, H, D] view.
struct CtxGatherLowering : OpConversionPattern<CtxGatherOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CtxGatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ONNXBuilder b(rewriter, op.getLoc());
    ArrayRef<int64_t> r = op.getType().getShape(); // [B, H, N, D]
    Value slotsFirst = b.transpose(adaptor.getCache(), {0, 2, 1, 3});
    Value idx = b.unsqueeze(adaptor.getSlots(), {2}); // [B, N, 1]
    Value gathered =
        b.op("GatherND", {slotsFirst, idx},
             ONNXBuilder::tensor({r[0], r[2], r[1], r[3]},
                                 ONNXBuilder::elementType(adaptor.getCache())),
             {b.attr("batch_dims", 1)});
    replaceWithONNX(rewriter, op, b.transpose(gathered, {0, 2, 1, 3}));
    return success();
  }
};

/// visible[b, 0, s, j] = j <= p (&& j > p - w), p = positions[b, s]. For a
/// rolling buffer (ring n) slot j < n holds position
/// q = P - ((P - j) mod n), P the row's largest position, and
/// visible = 0 <= q <= p && q > p - w; the padding slot n never is.
struct CausalMaskLowering : OpConversionPattern<CausalMaskOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CausalMaskOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ONNXBuilder b(rewriter, op.getLoc());
    int64_t ctx = op.getCtxLen();
    Value slots = b.i64s(iota(ctx), {1, 1, 1, ctx});
    Value pos4 = b.unsqueeze(adaptor.getPositions(), {1, 3}); // [B, 1, S, 1]
    int64_t w = op.getSlidingWindow();
    if (int64_t ring = op.getRing()) {
      ArrayRef<int64_t> p = ONNXBuilder::shape(adaptor.getPositions());
      Value last = b.op("ReduceMax", {adaptor.getPositions()},
                        ONNXBuilder::tensor({p[0], 1}, rewriter.getI64Type()),
                        {b.attrInts("axes", {1}), b.attr("keepdims", 1)});
      Value last4 = b.unsqueeze(last, {1, 3});                // [B, 1, 1, 1]
      Value held = b.sub(
          last4, b.binary("Mod", b.sub(last4, slots), b.i64Scalar(ring)));
      SmallVector<bool> inRing(ctx, true);
      inRing.back() = false; // the padding slot
      Value visible = b.compare(
          "And", b.compare("GreaterOrEqual", held, b.i64Scalar(0)),
          b.bools(inRing, {1, 1, 1, ctx}));
      visible = b.compare("And", visible,
                          b.compare("LessOrEqual", held, pos4));
      visible = b.compare(
          "And", visible,
          b.compare("Greater", held, b.sub(pos4, b.i64Scalar(w))));
      replaceWithONNX(rewriter, op, visible);
      return success();
    }
    Value visible = b.compare("LessOrEqual", slots, pos4);
    if (w) {
      Value lower = b.sub(pos4, b.i64Scalar(w));
      visible = b.compare("And", visible, b.compare("Greater", slots, lower));
    }
    replaceWithONNX(rewriter, op, visible);
    return success();
  }
};

/// input[b, argmax_s positions[b, s], :] via ArgMax + GatherElements.
struct LastTokenSelectLowering : OpConversionPattern<LastTokenSelectOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LastTokenSelectOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ONNXBuilder b(rewriter, op.getLoc());
    ArrayRef<int64_t> in = ONNXBuilder::shape(adaptor.getInput()); // [B, S, N]
    if (ShapedType::isDynamic(in[2]))
      return rewriter.notifyMatchFailure(op, "last dimension must be static");
    Type i64 = rewriter.getI64Type();
    Value last = b.op("ArgMax", {adaptor.getPositions()},
                      ONNXBuilder::tensor({in[0], 1}, i64),
                      {b.attr("axis", 1), b.attr("keepdims", 1)}); // [B, 1]
    int64_t k = 1;
    if (Value keep = adaptor.getKeep()) {
      // The k tokens ending at `last`, counted without reading a shape: k
      // comes from the values of a [k, 1] tensor of ones (keep * 0 + 1).
      k = ONNXBuilder::shape(keep)[0];
      Value ones = b.add(b.mul(keep, b.i64Scalar(0)), b.i64Scalar(1));
      Value count = b.op("CumSum", {ones, b.i64Scalar(0)},
                         ONNXBuilder::tensor({k, 1}, i64)); // [k, 1]: 1..k
      Value total = b.op("ReduceSum", {ones, b.i64s({0})},
                         ONNXBuilder::tensor({1, 1}, i64),
                         {b.attr("keepdims", 1)}); // [1, 1]: k
      Value offsets = b.transpose(b.sub(count, b.i64Scalar(1)), {1, 0}); // [1, k]
      Value lower = b.sub(b.add(last, b.i64Scalar(1)), total);          // [B, 1]
      lower = b.op("Max", {lower, b.i64Scalar(0)},
                   ONNXBuilder::tensor({in[0], 1}, i64));
      last = b.add(lower, offsets); // [B, k]
    }
    Value idx = b.unsqueeze(last, {2}); // [B, k, 1]
    idx = b.op("Expand", {idx, b.i64s({1, 1, in[2]})},
               ONNXBuilder::tensor({in[0], k, in[2]}, i64));
    replaceWithONNX(rewriter, op,
                    b.op("GatherElements", {adaptor.getInput(), idx},
                         op.getType(), {b.attr("axis", 1)}));
    return success();
  }
};

struct FP16ClampLowering : OpConversionPattern<FP16ClampOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(FP16ClampOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ONNXBuilder b(rewriter, op.getLoc());
    float limit = static_cast<float>(op.getLimit().convertToDouble());
    Value clipped =
        b.op("Clip", {adaptor.getInput(), b.f32Scalar(-limit), b.f32Scalar(limit)},
             op.getType(),
             {rewriter.getNamedAttr("operandSegmentSizes",
                                    rewriter.getDenseI32ArrayAttr({1, 1, 1}))});
    replaceWithONNX(rewriter, op, clipped);
    return success();
  }
};

} // namespace

void mlir::qeff::populateDeviceCacheToONNXPatterns(RewritePatternSet &patterns) {
  patterns.add<CtxScatterLowering, CtxRowsLowering, CtxGatherLowering,
               CausalMaskLowering,
               LastTokenSelectLowering, FP16ClampLowering>(
      patterns.getContext());
}
