//===- LinearAlgebraPatterns.cpp - embedding, linear and glue to ONNX -----===//
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

void mlir::qeff::replaceWithONNX(RewriterBase &rewriter, Operation *op,
                                 ValueRange values) {
  for (auto [value, result] : llvm::zip(values, op->getResults()))
    if (value.getType() != result.getType())
      value.setType(result.getType());
  rewriter.replaceOp(op, values);
}

Value mlir::qeff::lowerLinear(OpBuilder &builder, Location loc, Value x,
                              Value weight, Value bias, bool weightIsOutIn) {
  ONNXBuilder b(builder, loc);
  Value w = weight;
  if (weightIsOutIn) {
    ArrayRef<int64_t> s = ONNXBuilder::shape(weight);
    if (auto ref = weight.getDefiningOp<WeightOp>()) {
      // The exporter streams the transposed tensor: no Transpose at run time.
      // A reference that is itself transposed (DBRX's w2 expert rows, stored
      // [in, out]) reads the checkpoint tensor as it is.
      auto type = ONNXBuilder::tensor({s[1], s[0]},
                                      ONNXBuilder::elementType(weight));
      w = builder.create<WeightOp>(
          ref.getLoc(), type, ref.getTensorNameAttr(), ref.getStorageTypeAttr(),
          ref.getTranspose() ? UnitAttr() : builder.getUnitAttr(),
          ref.getRowsAttr());
    } else {
      w = b.transpose(weight, {1, 0});
    }
  }
  Value y = b.matmul(x, w);
  return bias ? b.add(y, bias) : y;
}

namespace {

struct EmbeddingLowering : OpConversionPattern<EmbeddingOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(EmbeddingOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ONNXBuilder b(rewriter, op.getLoc());
    Value ids = adaptor.getIds();
    if (int64_t offset = op.getIndexOffset())
      ids = b.add(ids, b.i64Scalar(offset));
    replaceWithONNX(rewriter, op, b.op("Gather", {adaptor.getTable(), ids},
                                op.getType(), {b.attr("axis", 0)}));
    return success();
  }
};

struct LinearLowering : OpConversionPattern<LinearOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LinearOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value y = lowerLinear(rewriter, op.getLoc(), adaptor.getInput(),
                          adaptor.getWeight(), adaptor.getBias(),
                          op.getWeightLayout() == WeightLayout::out_in);
    replaceWithONNX(rewriter, op, y);
    return success();
  }
};

struct SplitHeadsLowering : OpConversionPattern<SplitHeadsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SplitHeadsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ONNXBuilder b(rewriter, op.getLoc());
    ArrayRef<int64_t> out = op.getType().getShape(); // [B, H, S, D]
    Value x = b.reshape(adaptor.getInput(), {0, 0, out[1], out[3]},
                        {out[0], out[2], out[1], out[3]});
    replaceWithONNX(rewriter, op, b.transpose(x, {0, 2, 1, 3}));
    return success();
  }
};

struct MergeHeadsLowering : OpConversionPattern<MergeHeadsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MergeHeadsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ONNXBuilder b(rewriter, op.getLoc());
    ArrayRef<int64_t> in = ONNXBuilder::shape(adaptor.getInput());
    if (ShapedType::isDynamic(in[1]) || ShapedType::isDynamic(in[3]))
      return rewriter.notifyMatchFailure(op, "heads and head_dim must be static");
    Value x = b.transpose(adaptor.getInput(), {0, 2, 1, 3});
    replaceWithONNX(rewriter, op, b.reshape(x, {0, 0, in[1] * in[3]},
                                     op.getType().getShape()));
    return success();
  }
};

struct SplitLowering : OpConversionPattern<SplitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SplitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ONNXBuilder b(rewriter, op.getLoc());
    replaceWithONNX(rewriter, op, b.split(adaptor.getInput(), op.getSizes(), -1));
    return success();
  }
};

struct TransposeLowering : OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ONNXBuilder b(rewriter, op.getLoc());
    replaceWithONNX(rewriter, op, b.transpose(adaptor.getInput(), op.getPermutation()));
    return success();
  }
};

template <typename QEffOp>
struct BinaryLowering : OpConversionPattern<QEffOp> {
  BinaryLowering(MLIRContext *context, StringRef opType)
      : OpConversionPattern<QEffOp>(context), opType(opType) {}
  LogicalResult
  matchAndRewrite(QEffOp op, typename QEffOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ONNXBuilder b(rewriter, op.getLoc());
    replaceWithONNX(rewriter, op, b.binary(opType, adaptor.getLhs(), adaptor.getRhs()));
    return success();
  }
  StringRef opType;
};

struct ScaleLowering : OpConversionPattern<ScaleOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ScaleOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ONNXBuilder b(rewriter, op.getLoc());
    float factor = static_cast<float>(op.getFactor().convertToDouble());
    replaceWithONNX(rewriter, op, b.mul(adaptor.getInput(), b.f32Scalar(factor)));
    return success();
  }
};

} // namespace

void mlir::qeff::populateLinearAlgebraToONNXPatterns(
    RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns.add<EmbeddingLowering, LinearLowering, SplitHeadsLowering,
               MergeHeadsLowering, SplitLowering, TransposeLowering,
               ScaleLowering>(context);
  patterns.add<BinaryLowering<AddOp>>(context, "Add");
  patterns.add<BinaryLowering<MulOp>>(context, "Mul");
}
