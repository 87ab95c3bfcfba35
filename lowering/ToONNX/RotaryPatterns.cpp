//===- RotaryPatterns.cpp - rotary position embedding to ONNX -------------===//
//
// Part of qeff. cos/sin tables of [max_positions, rotary_dim] are constants,
// computed here in fp32 exactly as transformers computes them (fp32 inverse
// frequencies, fp32 angles), gathered by position_ids. Every layer builds the
// same constants and gathers, which CSE merges into one per model.
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

/// cos or sin table, [positions, rotaryDim], in the layout of `style`:
/// half: [f0 .. f(d/2-1), f0 .. f(d/2-1)]; interleaved: [f0, f0, f1, f1, ...].
SmallVector<float> rotaryTable(RotaryOp op, bool sine) {
  SmallVector<float> invFreq;
  for (double f : op.computeInvFreq())
    invFreq.push_back(static_cast<float>(f));
  int64_t dim = op.getRotaryDim();
  int64_t positions = op.getMaxPositions();
  bool half = op.getStyle() == RotaryStyle::half;
  SmallVector<float> table(positions * dim);
  for (int64_t p = 0; p < positions; ++p) {
    for (int64_t i = 0; i < dim / 2; ++i) {
      float angle = static_cast<float>(p) * invFreq[i];
      float v = sine ? std::sin(angle) : std::cos(angle);
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
    Value cos = gatherTable(false), sin = gatherTable(true);

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
