//===- SamplerPatterns.cpp - on-device sampling ops to ONNX ---------------===//
//
// Part of qeff. qeff.token_mask_update and qeff.sample in standard ONNX ops
// (TopK, Softmax, CumSum, ScatterElements, ScatterND, Log, ArgMax, ...), as
// QEfficient's on-device sampler computes them
// (QEfficient/transformers/sampler/sampler.py; read, not copied): no
// shape is read at run time, index grids come from constants and from the
// inputs themselves (see DeviceCachePatterns.cpp).
//
//===----------------------------------------------------------------------===//

#include "dialects/QEff/QEffOps.h"
#include "lowering/ToONNX/ONNXBuilder.h"
#include "lowering/ToONNX/Patterns.h"

#include "mlir/Transforms/DialectConversion.h"

#include <limits>

using namespace mlir;
using namespace mlir::qeff;

namespace {

constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

NamedAttribute sliceSegments(OpBuilder &b) {
  return b.getNamedAttr("operandSegmentSizes",
                        b.getDenseI32ArrayAttr({1, 1, 1, 1, 0}));
}

/// Each row's mask with the run's tokens recorded: gather the rows, clear
/// those that start a sequence, scatter true at the valid tokens' ids into
/// a copy with one spare column that takes every invalid token (so that
/// duplicate indices all write the same value, which ONNX leaves defined),
/// then write the rows back (ScatterND by batch_index, idle lanes
/// redirected to a live lane's write as the KV scatter does).
struct TokenMaskUpdateLowering : OpConversionPattern<TokenMaskUpdateOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TokenMaskUpdateOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ONNXBuilder b(rewriter, op.getLoc());
    Type i1 = rewriter.getI1Type(), i64 = rewriter.getI64Type();
    Value mask = adaptor.getMask(), ids = adaptor.getIds(),
          pos = adaptor.getPositions();
    ArrayRef<int64_t> is = ONNXBuilder::shape(ids); // [B, S]
    int64_t vocab = ONNXBuilder::shape(mask)[1];
    int64_t batch = is[0];

    Value valid = b.compare("GreaterOrEqual", pos, b.i64Scalar(0));
    valid = b.compare("And", valid,
                      b.compare("GreaterOrEqual", ids, b.i64Scalar(0)));
    valid = b.compare("And", valid, b.compare("Less", ids, b.i64Scalar(vocab)));
    Value ones = b.add(b.mul(pos, b.i64Scalar(0)), b.i64Scalar(1)); // [B, S]
    if (op.getGeneratedOnly()) {
      // A decode run feeds one token per row; the sequence length is read
      // from the values of a tensor of ones, not from a shape.
      Value len = b.op("ReduceSum", {ones, b.i64s({1})},
                       ONNXBuilder::tensor({batch, 1}, i64),
                       {b.attr("keepdims", 1)});
      valid = b.compare("And", valid, b.compare("Equal", len, b.i64Scalar(1)));
    }
    Value starts = b.op(
        "ReduceMax", {b.cast(b.compare("Equal", pos, b.i64Scalar(0)), i64)},
        ONNXBuilder::tensor({batch, 1}, i64),
        {b.attrInts("axes", {1}), b.attr("keepdims", 1)});
    Value start = b.compare("Greater", starts, b.i64Scalar(0)); // [B, 1]

    Value rows;
    Value selected = mask;
    if (Value batchIndex = adaptor.getBatchIndex()) {
      rows = b.reshape(batchIndex, {-1}, {batch});
      selected = b.op("Gather", {mask, rows},
                      ONNXBuilder::tensor({batch, vocab}, i1),
                      {b.attr("axis", 0)});
    }
    selected = b.compare("And", selected, b.unary("Not", start));
    Value spare = b.compare("And", start, b.unary("Not", start)); // [B, 1] false
    Value wide = b.concat({selected, spare}, 1);                 // [B, V + 1]
    Value column = b.where(valid, ids, b.i64Scalar(vocab));
    Value trues = b.compare("Equal", ones, b.i64Scalar(1));
    wide = b.op("ScatterElements", {wide, column, trues}, wide.getType(),
                {b.attr("axis", 1)});
    Value updated =
        b.op("Slice", {wide, b.i64s({0}), b.i64s({vocab}), b.i64s({1})},
             ONNXBuilder::tensor({batch, vocab}, i1),
             {sliceSegments(rewriter)});
    if (!rows) {
      replaceWithONNX(rewriter, op, {updated, updated});
      return success();
    }
    Value runRows = updated;
    Value live = b.compare("GreaterOrEqual", rows, b.i64Scalar(0)); // [B]
    Value first = b.op("ArgMax", {rows}, ONNXBuilder::tensor({1}, i64),
                       {b.attr("axis", 0), b.attr("keepdims", 1)});
    Value sourceRow = b.op("Gather", {rows, first},
                           ONNXBuilder::tensor({1}, i64), {b.attr("axis", 0)});
    Value sourceUpdate =
        b.op("Gather", {updated, first}, ONNXBuilder::tensor({1, vocab}, i1),
             {b.attr("axis", 0)});
    rows = b.where(live, rows, sourceRow);
    updated = b.where(b.unsqueeze(live, {1}), updated, sourceUpdate);
    Value written = b.op("ScatterND", {mask, b.unsqueeze(rows, {1}), updated},
                         mask.getType());
    replaceWithONNX(rewriter, op, {written, runRows});
    return success();
  }
};

/// Penalties, greedy ArgMax, temperature, TopK(max_top_k_ids), the top-k,
/// top-p and min-p masks over the top set, Gumbel-max with the given
/// uniforms (QEffSamplerOps.td).
struct SampleLowering : OpConversionPattern<SampleOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SampleOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ONNXBuilder b(rewriter, op.getLoc());
    Type f32 = rewriter.getF32Type(), i64 = rewriter.getI64Type();
    ArrayRef<int64_t> ls = ONNXBuilder::shape(adaptor.getLogits());
    int64_t batch = ls[0], vocab = ls[2], k = op.getMaxTopKIds();
    auto f = [&](Value v) {
      return ONNXBuilder::elementType(v) == f32 ? v : b.cast(v, f32);
    };
    Value l = b.reshape(f(adaptor.getLogits()), {-1, vocab}, {batch, vocab});

    Value rp = f(adaptor.getRepetitionPenalties());
    Value penalized = b.where(b.compare("Greater", l, b.f32Scalar(0.0f)),
                              b.div(l, rp), b.mul(l, rp));
    l = b.where(adaptor.getRepetitionMask(), penalized, l);
    l = b.where(adaptor.getPresenceMask(),
                b.sub(l, f(adaptor.getPresencePenalties())), l);
    Value greedy = b.op("ArgMax", {l}, ONNXBuilder::tensor({batch, 1}, i64),
                        {b.attr("axis", 1), b.attr("keepdims", 1)});

    Value temps = f(adaptor.getTemperatures());
    Value isGreedy = b.compare("Equal", temps, b.f32Scalar(0.0f));
    Value scaled = b.div(l, b.where(isGreedy, b.f32Scalar(1.0f), temps));
    SmallVector<Value> top =
        b.opN("TopK", {scaled, b.i64s({k})},
              {ONNXBuilder::tensor({batch, k}, f32),
               ONNXBuilder::tensor({batch, k}, i64)},
              {b.attr("axis", 1), b.attr("largest", 1), b.attr("sorted", 1)});
    Value values = top[0], indices = top[1];

    SmallVector<int64_t> ranks(k);
    for (int64_t j = 0; j < k; ++j)
      ranks[j] = j;
    Value topKs = adaptor.getTopKs();
    Value inRange = b.compare("And", b.compare("Greater", topKs, b.i64Scalar(0)),
                              b.compare("LessOrEqual", topKs, b.i64Scalar(k)));
    topKs = b.where(inRange, topKs, b.i64Scalar(k));
    Value keep = b.compare("Less", b.i64s(ranks, {1, k}), topKs); // [B, K]
    Value kept = b.where(keep, values, b.f32Scalar(kMinusInf));
    Value probs = b.op("Softmax", {kept}, kept.getType(), {b.attr("axis", 1)});
    Value before = b.op("CumSum", {probs, b.i64Scalar(1)}, probs.getType(),
                        {b.attr("exclusive", 1)});
    keep = b.compare("And", keep,
                     b.compare("Less", before, f(adaptor.getTopPs())));
    Value largest =
        b.op("Slice", {probs, b.i64s({0}), b.i64s({1}), b.i64s({1})},
             ONNXBuilder::tensor({batch, 1}, f32), {sliceSegments(rewriter)});
    keep = b.compare("And", keep,
                     b.compare("GreaterOrEqual", probs,
                               b.mul(f(adaptor.getMinPs()), largest)));
    Value finalValues = b.where(keep, values, b.f32Scalar(kMinusInf));
    // Gumbel-max: argmax(value - log(-log(u))) draws from softmax(values).
    Value u = f(adaptor.getRandomNumbers());
    Value gumbel = b.unary("Neg", b.unary("Log", b.unary("Neg", b.unary("Log", u))));
    Value rank = b.op("ArgMax", {b.add(finalValues, gumbel)},
                      ONNXBuilder::tensor({batch, 1}, i64),
                      {b.attr("axis", 1), b.attr("keepdims", 1)});
    Value sampled = b.op("GatherElements", {indices, rank},
                         ONNXBuilder::tensor({batch, 1}, i64),
                         {b.attr("axis", 1)});
    replaceWithONNX(rewriter, op, b.where(isGreedy, greedy, sampled));
    return success();
  }
};

} // namespace

void mlir::qeff::populateSamplerToONNXPatterns(RewritePatternSet &patterns) {
  patterns.add<TokenMaskUpdateLowering, SampleLowering>(patterns.getContext());
}
