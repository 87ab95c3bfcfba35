//===- NormPatterns.cpp - rms_norm and layer_norm to ONNX -----------------===//
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

/// x / sqrt(mean(x^2) + eps) * (offset + w), over the last axis, in fp32.
struct RMSNormLowering : OpConversionPattern<RMSNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RMSNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ONNXBuilder b(rewriter, op.getLoc());
    Value x = adaptor.getInput();
    Type element = ONNXBuilder::elementType(x);
    Type f32 = rewriter.getF32Type();
    bool upcast = op.getAccumulateF32() && element != f32;
    if (upcast)
      x = b.cast(x, f32);
    SmallVector<int64_t> reduced(ONNXBuilder::shape(x));
    reduced.back() = 1;
    Value meanSquare =
        b.op("ReduceMean", {b.mul(x, x)}, ONNXBuilder::tensor(reduced, f32),
             {b.attrInts("axes", {-1}), b.attr("keepdims", 1)});
    float eps = static_cast<float>(op.getEpsilon().convertToDouble());
    Value rms = b.unary("Sqrt", b.add(meanSquare, b.f32Scalar(eps)));
    Value normed = b.div(x, rms);
    if (upcast)
      normed = b.cast(normed, element);
    Value w = adaptor.getWeight();
    double offset = op.getWeightOffset().convertToDouble();
    if (offset != 0.0)
      w = b.add(w, b.f32Scalar(static_cast<float>(offset)));
    replaceWithONNX(rewriter, op, b.mul(normed, w));
    return success();
  }
};

/// ONNX LayerNormalization over the last axis with a scale of ones.
Value standardize(ONNXBuilder &b, Value x, double epsilon) {
  int64_t d = ONNXBuilder::shape(x).back();
  Value ones = b.f32s(SmallVector<float>(d, 1.0f), {d});
  return b.op("LayerNormalization", {x, ones}, x.getType(),
              {b.attr("axis", -1),
               b.attrF("epsilon", static_cast<float>(epsilon))});
}

struct LayerNormLowering : OpConversionPattern<LayerNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LayerNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ONNXBuilder b(rewriter, op.getLoc());
    double eps = op.getEpsilon().convertToDouble();
    Value w = adaptor.getWeight(), bias = adaptor.getBias();
    double offset = op.getWeightOffset().convertToDouble();
    if (offset != 0.0)
      w = b.add(w, b.f32Scalar(static_cast<float>(offset)));
    if (op.isPerHead()) {
      // [B, H, S, D] normalised, then scaled per head by [H, 1, D].
      ArrayRef<int64_t> ws = ONNXBuilder::shape(w);
      Value y = b.mul(standardize(b, adaptor.getInput(), eps),
                      b.reshape(w, {ws[0], 1, ws[1]}, {ws[0], 1, ws[1]}));
      if (bias)
        y = b.add(y, b.reshape(bias, {ws[0], 1, ws[1]}, {ws[0], 1, ws[1]}));
      replaceWithONNX(rewriter, op, y);
      return success();
    }
    SmallVector<Value> operands = {adaptor.getInput(), w};
    if (bias)
      operands.push_back(bias);
    replaceWithONNX(rewriter, op,
                    b.op("LayerNormalization", operands, op.getType(),
                         {b.attr("axis", -1),
                          b.attrF("epsilon", static_cast<float>(eps))}));
    return success();
  }
};

struct StandardizeLowering : OpConversionPattern<StandardizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(StandardizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ONNXBuilder b(rewriter, op.getLoc());
    replaceWithONNX(rewriter, op,
                    standardize(b, adaptor.getInput(),
                                op.getEpsilon().convertToDouble()));
    return success();
  }
};

} // namespace

void mlir::qeff::populateNormToONNXPatterns(RewritePatternSet &patterns) {
  patterns.add<RMSNormLowering, LayerNormLowering, StandardizeLowering>(patterns.getContext());
}
