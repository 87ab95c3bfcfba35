//===- MLPPatterns.cpp - activations and mixture of experts to ONNX -------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "dialects/QEff/QEffOps.h"
#include "lowering/ToONNX/ONNXBuilder.h"
#include "lowering/ToONNX/Patterns.h"

#include "mlir/Transforms/DialectConversion.h"

#include <cmath>

using namespace mlir;
using namespace mlir::qeff;

namespace {

Value activate(ONNXBuilder &b, Activation kind, Value x) {
  switch (kind) {
  case Activation::silu:
    return b.mul(x, b.unary("Sigmoid", x));
  case Activation::relu:
    return b.unary("Relu", x);
  case Activation::relu2: {
    Value r = b.unary("Relu", x);
    return b.mul(r, r);
  }
  case Activation::gelu: {
    // 0.5 * x * (1 + erf(x / sqrt(2)))
    Value erf = b.unary("Erf", b.div(x, b.f32Scalar(std::sqrt(2.0f))));
    return b.mul(b.mul(x, b.f32Scalar(0.5f)), b.add(erf, b.f32Scalar(1.0f)));
  }
  case Activation::gelu_tanh: {
    // 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
    Value cube = b.mul(b.mul(x, x), x);
    Value inner = b.add(x, b.mul(cube, b.f32Scalar(0.044715f)));
    Value t = b.unary(
        "Tanh", b.mul(inner, b.f32Scalar(static_cast<float>(
                                 std::sqrt(2.0 / M_PI)))));
    return b.mul(b.mul(x, b.f32Scalar(0.5f)), b.add(t, b.f32Scalar(1.0f)));
  }
  }
  llvm_unreachable("unknown activation");
}

struct ActivationLowering : OpConversionPattern<ActivationOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ActivationOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ONNXBuilder b(rewriter, op.getLoc());
    replaceWithONNX(rewriter, op, activate(b, op.getKind(), adaptor.getInput()));
    return success();
  }
};

struct GatedActivationLowering : OpConversionPattern<GatedActivationOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GatedActivationOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ONNXBuilder b(rewriter, op.getLoc());
    Value gated = activate(b, op.getKind(), adaptor.getGate());
    replaceWithONNX(rewriter, op, b.mul(gated, adaptor.getUp()));
    return success();
  }
};

/// One GPT-OSS expert: `w13` [2I, H] holds gate and up as alternating rows,
/// so `x @ w13^T + b13` is [B, S, 2I] with gate at even and up at odd
/// features, read apart as [B, S, I, 2]; then
/// `w2((clamp(up) + 1) * g * sigmoid(alpha * g)) + b2`, g = min(gate, limit).
Value clampedSwiGLUExpert(ONNXBuilder &b, MoEOp op, ValueRange w, Value x,
                          NamedAttribute segments) {
  OpBuilder &rewriter = b.builder();
  Location loc = op.getLoc();
  ArrayRef<int64_t> s = ONNXBuilder::shape(x);
  Type element = ONNXBuilder::elementType(x);
  int64_t inter = ONNXBuilder::shape(w[0])[0] / 2;
  float limit = static_cast<float>(op.getSwigluLimit()->convertToDouble());
  float alpha = static_cast<float>(op.getSwigluAlpha()->convertToDouble());
  Value h = lowerLinear(rewriter, loc, x, w[0], w[1], true);
  h = b.reshape(h, {0, 0, inter, 2}, {s[0], s[1], inter, 2});
  auto half = [&](int64_t i) {
    Value part = b.op("Slice", {h, b.i64s({i}), b.i64s({i + 1}), b.i64s({-1})},
                      ONNXBuilder::tensor({s[0], s[1], inter, 1}, element),
                      {segments});
    return b.reshape(part, {0, 0, inter}, {s[0], s[1], inter});
  };
  // One value per statement: the node order is fixed (argument evaluation
  // order is not).
  Value gate = half(0), up = half(1);
  Value high = b.f32Scalar(limit);
  gate = b.binary("Min", gate, high);
  Value low = b.f32Scalar(-limit);
  up = b.op("Clip", {up, low, high},
            ONNXBuilder::tensor({s[0], s[1], inter}, element),
            {rewriter.getNamedAttr("operandSegmentSizes",
                                   rewriter.getDenseI32ArrayAttr({1, 1, 1}))});
  Value scaled = b.mul(gate, b.f32Scalar(alpha));
  Value glu = b.mul(gate, b.unary("Sigmoid", scaled));
  Value shifted = b.add(up, b.f32Scalar(1.0f));
  Value hidden = b.mul(shifted, glu);
  return lowerLinear(rewriter, loc, hidden, w[2], w[3], true);
}

/// Dense mixture of experts: every expert runs on every token and the outputs
/// are summed with the routing weights, zero for experts outside the top k.
/// All shapes stay fixed (no data-dependent token gathering), which is what
/// the device needs; the price is num_experts / top_k times the MLP work.
struct MoELowering : OpConversionPattern<MoEOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MoEOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ONNXBuilder b(rewriter, op.getLoc());
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    ArrayRef<int64_t> s = ONNXBuilder::shape(x); // [B, S, H]
    Type f32 = ONNXBuilder::elementType(x);
    int64_t experts = op.getNumExperts(), topK = op.getTopK();

    Value logits = lowerLinear(rewriter, loc, x, adaptor.getRouterWeight(),
                               adaptor.getRouterBias(), /*weightIsOutIn=*/true);
    Value probs = b.op("Softmax", {logits}, logits.getType(),
                       {b.attr("axis", -1)});
    auto topType = ONNXBuilder::tensor({s[0], s[1], topK}, f32);
    auto idxType = ONNXBuilder::tensor({s[0], s[1], topK},
                                       rewriter.getI64Type());
    SmallVector<Value> top = b.opN("TopK", {probs, b.i64s({topK})},
                                   {topType, idxType}, {b.attr("axis", -1)});
    Value weights = top[0];
    if (op.getNormalizeTopK()) {
      Value sum = b.op("ReduceSum", {weights, b.i64s({-1})},
                       ONNXBuilder::tensor({s[0], s[1], 1}, f32),
                       {b.attr("keepdims", 1)});
      weights = b.div(weights, sum);
    }
    // [B, S, E] routing weights, zero outside the top k.
    Value zeros = b.mul(probs, b.f32Scalar(0.0f));
    Value dense = b.op("ScatterElements", {zeros, top[1], weights},
                       probs.getType(), {b.attr("axis", -1)});

    Value sum;
    auto segments = rewriter.getNamedAttr(
        "operandSegmentSizes", rewriter.getDenseI32ArrayAttr({1, 1, 1, 1, 0}));
    for (int64_t e = 0; e < experts; ++e) {
      Value out;
      if (op.getSwigluLimit())
        out = clampedSwiGLUExpert(b, op, adaptor.getExperts().slice(4 * e, 4),
                                  x, segments);
      else {
        Value w1 = adaptor.getExperts()[3 * e],
              w3 = adaptor.getExperts()[3 * e + 1],
              w2 = adaptor.getExperts()[3 * e + 2];
        Value gate = lowerLinear(rewriter, loc, x, w1, Value(), true);
        Value up = lowerLinear(rewriter, loc, x, w3, Value(), true);
        Value hidden = b.mul(activate(b, op.getKind(), gate), up);
        out = lowerLinear(rewriter, loc, hidden, w2, Value(), true);
      }
      Value weight = b.op("Slice",
                          {dense, b.i64s({e}), b.i64s({e + 1}), b.i64s({-1})},
                          ONNXBuilder::tensor({s[0], s[1], 1}, f32),
                          {segments});
      Value weighted = b.mul(out, weight);
      sum = sum ? b.add(sum, weighted) : weighted;
    }
    replaceWithONNX(rewriter, op, sum);
    return success();
  }
};

struct ClampLowering : OpConversionPattern<ClampOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ClampOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ONNXBuilder b(rewriter, op.getLoc());
    float lo = static_cast<float>(op.getMin().convertToDouble());
    float hi = static_cast<float>(op.getMax().convertToDouble());
    replaceWithONNX(rewriter, op,
                    b.op("Clip", {adaptor.getInput(), b.f32Scalar(lo),
                                  b.f32Scalar(hi)},
                         op.getType(),
                         {rewriter.getNamedAttr(
                             "operandSegmentSizes",
                             rewriter.getDenseI32ArrayAttr({1, 1, 1}))}));
    return success();
  }
};

struct SoftcapLowering : OpConversionPattern<SoftcapOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SoftcapOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ONNXBuilder b(rewriter, op.getLoc());
    Value cap = b.f32Scalar(static_cast<float>(op.getCap().convertToDouble()));
    replaceWithONNX(rewriter, op,
                    b.mul(b.unary("Tanh", b.div(adaptor.getInput(), cap)), cap));
    return success();
  }
};

struct SigmoidGateLowering : OpConversionPattern<SigmoidGateOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SigmoidGateOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ONNXBuilder b(rewriter, op.getLoc());
    replaceWithONNX(rewriter, op,
                    b.mul(b.unary("Sigmoid", adaptor.getGate()),
                          adaptor.getInput()));
    return success();
  }
};

struct StackLowering : OpConversionPattern<StackOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(StackOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ONNXBuilder b(rewriter, op.getLoc());
    SmallVector<Value> rows;
    for (Value v : adaptor.getInputs())
      rows.push_back(b.unsqueeze(v, {0}));
    replaceWithONNX(rewriter, op,
                    rows.size() == 1 ? rows.front() : b.concat(rows, 0));
    return success();
  }
};

} // namespace

void mlir::qeff::populateMLPToONNXPatterns(RewritePatternSet &patterns) {
  patterns.add<ActivationLowering, GatedActivationLowering, MoELowering,
               ClampLowering, SoftcapLowering, SigmoidGateLowering,
               StackLowering>(
      patterns.getContext());
}
