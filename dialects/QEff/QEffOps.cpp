//===- QEffOps.cpp - qeff op verifiers and helpers ------------------------===//
//
// Part of qeff. One verifier per op for the relations ODS traits cannot state;
// every message here is exercised by test/dialects/QEff/invalid.mlir.
//
//===----------------------------------------------------------------------===//

#include "dialects/QEff/QEffOps.h"
#include "dialects/QEff/QEffVerify.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::qeff;

//===----------------------------------------------------------------------===//
// Shape helpers: QEffVerify.h
//===----------------------------------------------------------------------===//

using namespace mlir::qeff::verify;

//===----------------------------------------------------------------------===//
// WeightOp
//===----------------------------------------------------------------------===//

LogicalResult WeightOp::verify() {
  if (getTensorName().empty())
    return emitOpError("tensor name must not be empty");
  if (!getStorageType().isIntOrFloat())
    return emitOpError("storage type must be an integer or float type, got ")
           << getStorageType();
  if (!getResult().getType().hasStaticShape())
    return emitOpError("weight shape must be static, got ")
           << getResult().getType();
  if (getTranspose() && getResult().getType().getRank() != 2)
    return emitOpError("only a 2-D weight can be transposed, got rank ")
           << getResult().getType().getRank();
  if (std::optional<ArrayRef<int64_t>> rows = getRows()) {
    auto type = getResult().getType();
    if (type.getRank() == 0)
      return emitOpError("a scalar weight has no rows to select");
    if (rows->empty() || rows->size() % 2 != 0)
      return emitOpError("rows must be (start, count) pairs, got ")
             << rows->size() << " values";
    int64_t total = 0;
    for (size_t i = 0; i < rows->size(); i += 2) {
      if ((*rows)[i] < 0 || (*rows)[i + 1] <= 0)
        return emitOpError("row range #")
               << i / 2 << " (start " << (*rows)[i] << ", count "
               << (*rows)[i + 1]
               << ") must have a start >= 0 and a count > 0";
      total += (*rows)[i + 1];
    }
    int64_t selected = type.getDimSize(getTranspose() ? 1 : 0);
    if (total != selected)
      return emitOpError("rows select ")
             << total << " rows, but the result has " << selected
             << (getTranspose() ? " (its dimension 1, transposed)" : "");
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Embedding, linear, norms
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::verify() {
  if (failed(checkRank(*this, getIds(), "ids", 2, "[batch, seq]")) ||
      failed(checkRank(*this, getTable(), "table", 2, "[vocab, hidden]")))
    return failure();
  ArrayRef<int64_t> ids = shapeOf(getIds()), table = shapeOf(getTable());
  if (elementTypeOf(getResult()) != elementTypeOf(getTable()))
    return emitOpError("result element type must match the table's");
  return checkDims(*this, getResult(), "result", {ids[0], ids[1], table[1]},
                   "[batch, seq, hidden]");
}

int64_t LinearOp::getInFeatures() {
  ArrayRef<int64_t> w = shapeOf(getWeight());
  return getWeightLayout() == WeightLayout::out_in ? w[1] : w[0];
}

int64_t LinearOp::getOutFeatures() {
  ArrayRef<int64_t> w = shapeOf(getWeight());
  return getWeightLayout() == WeightLayout::out_in ? w[0] : w[1];
}

LogicalResult LinearOp::verify() {
  StringRef layout = getWeightLayout() == WeightLayout::out_in
                         ? "weight_layout out_in: [out, in]"
                         : "weight_layout in_out: [in, out]";
  if (failed(checkRank(*this, getWeight(), "weight", 2, layout)))
    return failure();
  ArrayRef<int64_t> in = shapeOf(getInput());
  if (in.empty())
    return emitOpError("input must have at least one dimension");
  if (!compatible(in.back(), getInFeatures()))
    return emitOpError() << "input features (" << in.back()
                         << ") do not match the weight's in features ("
                         << getInFeatures() << ", " << layout << ")";
  SmallVector<int64_t> expected(in);
  expected.back() = getOutFeatures();
  if (failed(checkDims(*this, getResult(), "result", expected,
                       "[..., out_features]")))
    return failure();
  if (getBias() && failed(checkDims(*this, getBias(), "bias",
                                    {getOutFeatures()}, "[out_features]")))
    return failure();
  return success();
}

/// Shared by rms_norm and layer_norm: weight/bias are [hidden] of the input's
/// last dimension and the result has the input's type.
static LogicalResult verifyNorm(Operation *op, Value input, Value weight,
                                Value bias, Value result, double epsilon) {
  ArrayRef<int64_t> in = shapeOf(input);
  if (in.empty())
    return op->emitOpError("input must have at least one dimension");
  if (weight && failed(checkDims(op, weight, "weight", {in.back()}, "[hidden]")))
    return failure();
  if (bias && failed(checkDims(op, bias, "bias", {in.back()}, "[hidden]")))
    return failure();
  if (failed(checkSameType(op, result, input, "result", "input")))
    return failure();
  if (!(epsilon >= 0.0))
    return op->emitOpError("epsilon must not be negative");
  return success();
}

LogicalResult RMSNormOp::verify() {
  return verifyNorm(*this, getInput(), getWeight(), Value(), getResult(),
                    getEpsilon().convertToDouble());
}

bool LayerNormOp::isPerHead() {
  return llvm::cast<RankedTensorType>(getWeight().getType()).getRank() == 2;
}

LogicalResult LayerNormOp::verify() {
  if (!isPerHead())
    return verifyNorm(*this, getInput(), getWeight(), getBias(), getResult(),
                      getEpsilon().convertToDouble());
  // One norm per head: weight (and bias) [heads, head_dim] of a
  // [batch, heads, seq, head_dim] input.
  if (failed(checkRank(*this, getInput(), "input with a per-head weight", 4,
                       "[batch, heads, seq, head_dim]")))
    return failure();
  ArrayRef<int64_t> in = shapeOf(getInput());
  if (failed(checkDims(*this, getWeight(), "weight", {in[1], in[3]},
                       "[heads, head_dim]")))
    return failure();
  if (getBias() && failed(checkDims(*this, getBias(), "bias", {in[1], in[3]},
                                    "[heads, head_dim]")))
    return failure();
  if (ShapedType::isDynamic(in[1]) || ShapedType::isDynamic(in[3]))
    return emitOpError("a per-head norm needs static heads and head_dim");
  return verifyNorm(*this, getInput(), Value(), Value(), getResult(),
                    getEpsilon().convertToDouble());
}

LogicalResult StandardizeOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  if (in.empty() || ShapedType::isDynamic(in.back()))
    return emitOpError("the normalised (last) dimension must be static");
  if (!(getEpsilon().convertToDouble() >= 0.0))
    return emitOpError("epsilon must not be negative");
  return success();
}

//===----------------------------------------------------------------------===//
// Heads and positions
//===----------------------------------------------------------------------===//

LogicalResult SplitHeadsOp::verify() {
  if (failed(checkRank(*this, getInput(), "input", 3,
                       "[batch, seq, heads * head_dim]")))
    return failure();
  ArrayRef<int64_t> in = shapeOf(getInput());
  int64_t heads = getNumHeads();
  if (ShapedType::isDynamic(in[2]))
    return emitOpError("hidden dimension must be static");
  if (in[2] % heads != 0)
    return emitOpError() << "hidden dimension " << in[2]
                         << " is not divisible by num_heads " << heads;
  return checkDims(*this, getResult(), "result",
                   {in[0], heads, in[1], in[2] / heads},
                   "[batch, num_heads, seq, head_dim]");
}

LogicalResult MergeHeadsOp::verify() {
  if (failed(checkRank(*this, getInput(), "input", 4,
                       "[batch, heads, seq, head_dim]")))
    return failure();
  ArrayRef<int64_t> in = shapeOf(getInput());
  int64_t merged = ShapedType::isDynamic(in[1]) || ShapedType::isDynamic(in[3])
                       ? kDyn
                       : in[1] * in[3];
  return checkDims(*this, getResult(), "result", {in[0], in[2], merged},
                   "[batch, seq, heads * head_dim]");
}

LogicalResult RotaryOp::verify() {
  if (failed(checkRank(*this, getInput(), "input", 4,
                       "[batch, heads, seq, head_dim]")))
    return failure();
  ArrayRef<int64_t> in = shapeOf(getInput());
  if (failed(checkDims(*this, getPositions(), "positions", {in[0], in[2]},
                       "[batch, seq]")) ||
      failed(checkSameType(*this, getResult(), getInput(), "result", "input")))
    return failure();
  int64_t rotaryDim = getRotaryDim();
  if (rotaryDim % 2 != 0)
    return emitOpError() << "rotary_dim must be even, got " << rotaryDim;
  if (!ShapedType::isDynamic(in[3]) && rotaryDim > in[3])
    return emitOpError() << "rotary_dim (" << rotaryDim
                         << ") exceeds head_dim (" << in[3] << ")";
  if (!(getTheta().convertToDouble() > 1.0))
    return emitOpError("theta must be greater than 1");
  if (RopeScalingAttr scaling = getScalingAttr())
    if (scaling.getKind() == RopeScalingKind::longrope &&
        int64_t(scaling.getShortFactor().size()) != rotaryDim / 2)
      return emitOpError() << "longrope needs rotary_dim / 2 = "
                           << rotaryDim / 2 << " factors per list, got "
                           << scaling.getShortFactor().size();
  if (Value keep = getKeep()) {
    RopeScalingAttr scaling = getScalingAttr();
    if (!scaling || !scaling.isSeqLenDependent())
      return emitOpError("keep (num_logits_to_keep) only applies to "
                         "sequence-length dependent rope scaling (dynamic, "
                         "longrope)");
    if (failed(checkRank(*this, keep, "keep", 2, "[k, 1]")) ||
        failed(checkDims(*this, keep, "keep", {shapeOf(keep)[0], 1}, "[k, 1]")))
      return failure();
  }
  return success();
}

double RotaryOp::getAttentionFactorValue() {
  RopeScalingAttr scaling = getScalingAttr();
  return scaling ? scaling.getAttentionFactorValue() : 1.0;
}

SmallVector<double> RotaryOp::computeInvFreq(int64_t seqLen) {
  // In fp32, step by step as transformers computes them
  // (`1.0 / base ** (arange(0, dim, 2).float() / dim)`, then the scaling), so
  // that tables built from them match the reference to the last bit where
  // the math library allows.
  int64_t dim = getRotaryDim();
  float theta = static_cast<float>(getTheta().convertToDouble());
  SmallVector<float> invFreq;
  for (int64_t i = 0; i < dim; i += 2) {
    float exponent = static_cast<float>(i) / static_cast<float>(dim);
    invFreq.push_back(1.0f / std::pow(theta, exponent));
  }
  RopeScalingAttr scaling = getScalingAttr();
  if (!scaling)
    return SmallVector<double>(invFreq.begin(), invFreq.end());
  float factor = static_cast<float>(scaling.getFactorValue());
  int64_t original = scaling.getOriginalMaxPosition();
  switch (scaling.getKind()) {
  case RopeScalingKind::linear:
    for (float &f : invFreq)
      f /= factor;
    break;
  case RopeScalingKind::llama3: {
    // transformers' _compute_llama3_parameters.
    float low = static_cast<float>(scaling.getLowFreqFactorValue());
    float high = static_cast<float>(scaling.getHighFreqFactorValue());
    float oldContext = static_cast<float>(original);
    float lowFreqWavelen = oldContext / low;
    float highFreqWavelen = oldContext / high;
    for (float &f : invFreq) {
      float wavelen = 2.0f * static_cast<float>(M_PI) / f;
      if (wavelen > lowFreqWavelen) {
        f /= factor;
      } else if (wavelen >= highFreqWavelen) {
        float smooth = (oldContext / wavelen - low) / (high - low);
        f = (1.0f - smooth) * f / factor + smooth * f;
      }
    }
    break;
  }
  case RopeScalingKind::yarn: {
    // transformers' _compute_yarn_parameters: the correction range in
    // doubles (Python math), the ramp and the mix in fp32 tensors.
    double base = getTheta().convertToDouble();
    auto correctionDim = [&](double rotations) {
      return double(dim) * std::log(double(original) / (rotations * 2 * M_PI)) /
             (2 * std::log(base));
    };
    // find_correction_range: whole dimensions unless `truncate` is false.
    bool truncate = !scaling.getTruncate() || scaling.getTruncate().getValue();
    double low = correctionDim(scaling.getBetaFastValue());
    double high = correctionDim(scaling.getBetaSlowValue());
    if (truncate) {
      low = std::floor(low);
      high = std::ceil(high);
    }
    low = std::max(low, 0.0);
    high = std::min(high, double(dim - 1));
    if (low == high)
      high += 0.001; // transformers: "prevent singularity"
    float span = static_cast<float>(high - low);
    for (auto [i, f] : llvm::enumerate(invFreq)) {
      float posFreq = std::pow(theta, static_cast<float>(2 * i) /
                                          static_cast<float>(dim));
      float extrapolation = 1.0f / posFreq;
      float interpolation = 1.0f / (factor * posFreq);
      float ramp = std::clamp(
          (static_cast<float>(i) - static_cast<float>(low)) / span, 0.0f, 1.0f);
      float extrapolationFactor = 1.0f - ramp;
      f = interpolation * (1.0f - extrapolationFactor) +
          extrapolation * extrapolationFactor;
    }
    break;
  }
  case RopeScalingKind::dynamic: {
    // transformers' _compute_dynamic_ntk_parameters for a call of length
    // seqLen; unscaled up to the threshold.
    if (seqLen <= original)
      break;
    float ratio = factor * static_cast<float>(seqLen) /
                      static_cast<float>(original) -
                  (factor - 1.0f);
    float base = theta * std::pow(ratio, static_cast<float>(double(dim) /
                                                            double(dim - 2)));
    for (auto [i, f] : llvm::enumerate(invFreq))
      f = 1.0f / std::pow(base, static_cast<float>(2 * i) /
                                    static_cast<float>(dim));
    break;
  }
  case RopeScalingKind::longrope: {
    // 1 / (ext[i] * base ** (2i / dim)), ext the long list past the
    // threshold.
    ArrayRef<double> ext = seqLen > original
                               ? scaling.getLongFactor().asArrayRef()
                               : scaling.getShortFactor().asArrayRef();
    for (auto [i, f] : llvm::enumerate(invFreq))
      f = 1.0f / (static_cast<float>(ext[i]) *
                  std::pow(theta, static_cast<float>(2 * i) /
                                      static_cast<float>(dim)));
    break;
  }
  }
  return SmallVector<double>(invFreq.begin(), invFreq.end());
}

//===----------------------------------------------------------------------===//
// Attention and the KV cache
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::verify() {
  StringRef qLayout = "[batch, num_heads, seq, head_dim]";
  StringRef kvLayout = "[batch, num_kv_heads, kv_seq, head_dim]";
  int64_t heads = getNumHeads(), kvHeads = getNumKvHeads(),
          headDim = getHeadDim();
  if (heads % kvHeads != 0)
    return emitOpError() << "num_heads (" << heads
                         << ") is not a multiple of num_kv_heads (" << kvHeads
                         << ")";
  if (failed(checkRank(*this, getQuery(), "query", 4, qLayout)) ||
      failed(checkRank(*this, getKey(), "key", 4, kvLayout)))
    return failure();
  ArrayRef<int64_t> q = shapeOf(getQuery()), k = shapeOf(getKey());
  if (failed(checkDims(*this, getQuery(), "query", {q[0], heads, q[2], headDim},
                       qLayout)) ||
      failed(checkDims(*this, getKey(), "key",
                       {q[0], kvHeads, k[2], headDim}, kvLayout)) ||
      failed(checkDims(*this, getValue(), "value", k, kvLayout)) ||
      failed(checkSameType(*this, getResult(), getQuery(), "result", "query")))
    return failure();
  if (Value mask = getMask()) {
    if (getCausal())
      return emitOpError("an explicit mask and causal masking are exclusive");
    if (failed(checkRank(*this, mask, "mask", 4, "[batch, 1, seq, kv_seq]")))
      return failure();
    ArrayRef<int64_t> m = shapeOf(mask);
    int64_t maskHeads = m[1] == 1 ? 1 : heads;
    if (failed(checkDims(*this, mask, "mask", {q[0], maskHeads, q[2], k[2]},
                         "[batch, 1, seq, kv_seq]")))
      return failure();
  }
  if (Value sinks = getSinks())
    if (failed(checkRank(*this, sinks, "sinks", 1, "[num_heads]")) ||
        failed(checkDims(*this, sinks, "sinks", {heads}, "[num_heads]")))
      return failure();
  if (!(getScale().convertToDouble() > 0.0))
    return emitOpError("scale must be positive");
  if (getSlidingWindow() > 0 && !getCausal() && !getMask())
    return emitOpError("sliding_window needs causal masking or a mask");
  if (std::optional<ArrayRef<double>> slopes = getAlibiSlopes())
    if (int64_t(slopes->size()) != heads)
      return emitOpError() << "alibi_slopes has " << slopes->size()
                           << " entries but num_heads is " << heads;
  if (std::optional<APFloat> cap = getSoftcap())
    if (!(cap->convertToDouble() > 0.0))
      return emitOpError("softcap must be positive");
  return success();
}

/// The sequence axis and the rank of a KV layout.
static std::pair<int64_t, int64_t> seqAxisAndRank(KVLayout layout) {
  switch (layout) {
  case KVLayout::bhsd:
    return {2, 4};
  case KVLayout::bshd:
    return {1, 4};
  case KVLayout::sbhd:
    return {0, 4};
  case KVLayout::bsd:
    return {1, 3};
  }
  llvm_unreachable("unknown KV layout");
}

int64_t KVConcatOp::getSeqAxis() { return seqAxisAndRank(getLayout()).first; }

LogicalResult KVConcatOp::verify() {
  auto [axis, rank] = seqAxisAndRank(getLayout());
  std::string layout = ("kv_layout " + stringifyKVLayout(getLayout())).str();
  if (failed(checkRank(*this, getPast(), "past", rank, layout)) ||
      failed(checkRank(*this, getUpdate(), "update", rank, layout)) ||
      failed(checkRank(*this, getResult(), "result", rank, layout)))
    return failure();
  if (elementTypeOf(getPast()) != elementTypeOf(getUpdate()) ||
      elementTypeOf(getPast()) != elementTypeOf(getResult()))
    return emitOpError("past, update and result must share an element type");
  ArrayRef<int64_t> past = shapeOf(getPast()), update = shapeOf(getUpdate());
  SmallVector<int64_t> expected(past);
  expected[axis] = ShapedType::isDynamic(past[axis]) ||
                           ShapedType::isDynamic(update[axis])
                       ? kDyn
                       : past[axis] + update[axis];
  for (int64_t i = 0; i < rank; ++i)
    if (i != axis && !compatible(past[i], update[i]))
      return emitOpError() << "past and update differ in dimension " << i
                           << " (" << past[i] << " vs " << update[i]
                           << "); only the sequence axis " << axis
                           << " may differ";
  return checkDims(*this, getResult(), "result", expected,
                   "past + update along the sequence axis");
}

LogicalResult CtxScatterOp::verify() {
  StringRef layout = "[batch, kv_heads, ctx_len, head_dim]";
  if (failed(checkRank(*this, getCache(), "cache", 4, layout)) ||
      failed(checkRank(*this, getUpdate(), "update", 4,
                       "[batch, kv_heads, seq, head_dim]")) ||
      failed(checkSameType(*this, getResult(), getCache(), "result", "cache")))
    return failure();
  ArrayRef<int64_t> cache = shapeOf(getCache()), update = shapeOf(getUpdate());
  if (elementTypeOf(getUpdate()) != elementTypeOf(getCache()))
    return emitOpError("update element type must match the cache's");
  // With batch_index the cache has its own number of rows.
  if (Value index = getBatchIndex())
    if (failed(checkRank(*this, index, "batch_index", 2, "[batch, 1]")) ||
        failed(checkDims(*this, index, "batch_index", {update[0], 1},
                         "[batch, 1]")))
      return failure();
  int64_t rows = getBatchIndex() ? update[0] : cache[0];
  if (failed(checkDims(*this, getUpdate(), "update",
                       {rows, cache[1], update[2], cache[3]},
                       "[batch, kv_heads, seq, head_dim] of the cache")) ||
      failed(checkDims(*this, getPositions(), "positions",
                       {update[0], update[2]}, "[batch, seq]")))
    return failure();
  if (!ShapedType::isDynamic(update[2]) && !ShapedType::isDynamic(cache[2]) &&
      update[2] > cache[2])
    return emitOpError() << "update holds " << update[2]
                         << " tokens but the cache only " << cache[2]
                         << " slots";
  if (int64_t ring = getRing();
      ring > 0 && !ShapedType::isDynamic(cache[2]) && cache[2] != ring + 1)
    return emitOpError() << "a rolling buffer of ring " << ring
                         << " needs ring + 1 cache slots, got " << cache[2];
  return success();
}

LogicalResult CtxRowsOp::verify() {
  if (failed(checkRank(*this, getCache(), "cache", 4,
                       "[full_batch_size, kv_heads, ctx_len, head_dim]")) ||
      failed(checkRank(*this, getBatchIndex(), "batch_index", 2, "[batch, 1]")))
    return failure();
  ArrayRef<int64_t> cache = shapeOf(getCache()),
                    index = shapeOf(getBatchIndex());
  if (elementTypeOf(getResult()) != elementTypeOf(getCache()))
    return emitOpError("result element type must match the cache's");
  if (failed(checkDims(*this, getBatchIndex(), "batch_index", {index[0], 1},
                       "[batch, 1]")))
    return failure();
  return checkDims(*this, getResult(), "result",
                   {index[0], cache[1], cache[2], cache[3]},
                   "[batch, kv_heads, ctx_len, head_dim]");
}

LogicalResult CtxGatherOp::verify() {
  if (failed(checkRank(*this, getCache(), "cache", 4,
                       "[batch, kv_heads, ctx_len, head_dim]")) ||
      failed(checkRank(*this, getSlots(), "slots", 2, "[batch, n]")))
    return failure();
  ArrayRef<int64_t> cache = shapeOf(getCache()), slots = shapeOf(getSlots());
  if (elementTypeOf(getResult()) != elementTypeOf(getCache()))
    return emitOpError("result element type must match the cache's");
  if (failed(checkDims(*this, getSlots(), "slots", {cache[0], slots[1]},
                       "[batch, n]")))
    return failure();
  return checkDims(*this, getResult(), "result",
                   {cache[0], cache[1], slots[1], cache[3]},
                   "[batch, kv_heads, n, head_dim]");
}

LogicalResult CausalMaskOp::verify() {
  if (failed(checkRank(*this, getPositions(), "positions", 2, "[batch, seq]")))
    return failure();
  ArrayRef<int64_t> pos = shapeOf(getPositions());
  if (int64_t ring = getRing(); ring > 0) {
    int64_t window = getSlidingWindow();
    if (window == 0)
      return emitOpError("a rolling buffer (ring) needs a sliding_window");
    if (ring < window)
      return emitOpError() << "ring " << ring
                           << " is smaller than the sliding_window " << window;
    if (static_cast<int64_t>(getCtxLen()) != ring + 1)
      return emitOpError() << "a rolling buffer of ring " << ring
                           << " has ring + 1 slots, but ctx_len is "
                           << getCtxLen();
  }
  return checkDims(*this, getResult(), "result",
                   {pos[0], 1, pos[1], static_cast<int64_t>(getCtxLen())},
                   "[batch, 1, seq, ctx_len]");
}

LogicalResult LastTokenSelectOp::verify() {
  if (failed(checkRank(*this, getInput(), "input", 3, "[batch, seq, n]")))
    return failure();
  ArrayRef<int64_t> in = shapeOf(getInput());
  if (elementTypeOf(getResult()) != elementTypeOf(getInput()))
    return emitOpError("result element type must match the input's");
  if (failed(checkDims(*this, getPositions(), "positions", {in[0], in[1]},
                       "[batch, seq]")))
    return failure();
  if (!getKeep())
    return checkDims(*this, getResult(), "result", {in[0], 1, in[2]},
                     "[batch, 1, n]");
  if (failed(checkRank(*this, getKeep(), "keep", 2, "[k, 1]")) ||
      failed(checkDims(*this, getKeep(), "keep",
                       {shapeOf(getKeep())[0], 1}, "[k, 1]")))
    return failure();
  return checkDims(*this, getResult(), "result",
                   {in[0], shapeOf(getKeep())[0], in[2]}, "[batch, k, n]");
}

LogicalResult FP16ClampOp::verify() {
  double limit = getLimit().convertToDouble();
  if (!(limit > 0.0 && limit <= 65504.0))
    return emitOpError() << "limit must be in (0, 65504], got " << limit;
  return success();
}

//===----------------------------------------------------------------------===//
// MLP and elementwise
//===----------------------------------------------------------------------===//

LogicalResult GatedActivationOp::verify() {
  if (failed(checkSameType(*this, getUp(), getGate(), "up", "gate")) ||
      failed(checkSameType(*this, getResult(), getGate(), "result", "gate")))
    return failure();
  return success();
}

LogicalResult MoEOp::verify() {
  int64_t experts = getNumExperts();
  // GPT-OSS's form: per expert w13 (gate and up rows interleaved), b13, w2,
  // b2; else w1, w3, w2.
  bool clamped = getSwigluLimit().has_value();
  if (clamped != getSwigluAlpha().has_value())
    return emitOpError("swiglu_limit and swiglu_alpha go together");
  if (clamped && getKind() != Activation::silu)
    return emitOpError("the clamped SwiGLU form needs kind silu");
  if (clamped && !(getSwigluLimit()->convertToDouble() > 0.0))
    return emitOpError("swiglu_limit must be positive");
  int64_t perExpert = clamped ? 4 : 3;
  if (int64_t(getExperts().size()) != perExpert * experts)
    return emitOpError() << "expects " << perExpert << " weights ("
                         << (clamped ? "w13, b13, w2, b2" : "w1, w3, w2")
                         << ") per expert: " << perExpert * experts << " for "
                         << experts << " experts, got " << getExperts().size();
  if (int64_t(getTopK()) > experts)
    return emitOpError() << "top_k (" << getTopK()
                         << ") exceeds num_experts (" << experts << ")";
  if (failed(checkRank(*this, getInput(), "input", 3,
                       "[batch, seq, hidden]")) ||
      failed(checkSameType(*this, getResult(), getInput(), "result", "input")))
    return failure();
  int64_t hidden = shapeOf(getInput())[2];
  if (failed(checkDims(*this, getRouterWeight(), "router_weight",
                       {experts, hidden}, "[num_experts, hidden]")))
    return failure();
  if (Value bias = getRouterBias())
    if (failed(checkRank(*this, bias, "router_bias", 1, "[num_experts]")) ||
        failed(checkDims(*this, bias, "router_bias", {experts},
                         "[num_experts]")))
      return failure();
  for (int64_t e = 0; e < experts; ++e) {
    auto w = getExperts().slice(perExpert * e, perExpert);
    if (clamped) {
      if (failed(checkRank(*this, w[0], "expert w13", 2,
                           "[2 * intermediate, hidden]")))
        return failure();
      int64_t inter2 = shapeOf(w[0])[0];
      if (inter2 % 2 != 0)
        return emitOpError() << "expert w13 has " << inter2
                             << " rows; gate and up need an even count";
      if (failed(checkDims(*this, w[0], "expert w13", {inter2, hidden},
                           "[2 * intermediate, hidden]")) ||
          failed(checkDims(*this, w[1], "expert b13", {1, inter2},
                           "[1, 2 * intermediate]")) ||
          failed(checkDims(*this, w[2], "expert w2", {hidden, inter2 / 2},
                           "[hidden, intermediate]")) ||
          failed(checkDims(*this, w[3], "expert b2", {1, hidden},
                           "[1, hidden]")))
        return failure();
      continue;
    }
    if (failed(checkRank(*this, w[0], "expert w1", 2, "[intermediate, hidden]")))
      return failure();
    int64_t inter = shapeOf(w[0])[0];
    if (failed(checkDims(*this, w[0], "expert w1", {inter, hidden},
                         "[intermediate, hidden]")) ||
        failed(checkDims(*this, w[1], "expert w3", {inter, hidden},
                         "[intermediate, hidden]")) ||
        failed(checkDims(*this, w[2], "expert w2", {hidden, inter},
                         "[hidden, intermediate]")))
      return failure();
  }
  return success();
}

LogicalResult SplitOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  ArrayRef<int64_t> sizes = getSizes();
  if (in.empty())
    return emitOpError("input must have at least one dimension");
  if (sizes.size() != getResults().size())
    return emitOpError() << "has " << sizes.size() << " sizes but "
                         << getResults().size() << " results";
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s <= 0)
      return emitOpError("sizes must be positive");
    total += s;
  }
  if (!compatible(in.back(), total))
    return emitOpError() << "sizes add up to " << total
                         << " but the last dimension is " << in.back();
  for (auto [i, result] : llvm::enumerate(getResults())) {
    SmallVector<int64_t> expected(in);
    expected.back() = sizes[i];
    if (elementTypeOf(result) != elementTypeOf(getInput()))
      return emitOpError("results must have the input's element type");
    if (failed(checkDims(*this, result, "result", expected,
                         "the input with the last dimension split")))
      return failure();
  }
  return success();
}

LogicalResult TransposeOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  ArrayRef<int64_t> perm = getPermutation();
  if (perm.size() != in.size())
    return emitOpError() << "permutation has " << perm.size()
                         << " entries for a rank " << in.size() << " input";
  SmallVector<bool> seen(in.size(), false);
  SmallVector<int64_t> expected;
  for (int64_t p : perm) {
    if (p < 0 || p >= int64_t(in.size()) || seen[p])
      return emitOpError("permutation must be a permutation of the dimensions");
    seen[p] = true;
    expected.push_back(in[p]);
  }
  if (elementTypeOf(getResult()) != elementTypeOf(getInput()))
    return emitOpError("result element type must match the input's");
  return checkDims(*this, getResult(), "result", expected,
                   "the permuted input");
}

#define GET_OP_CLASSES
#include "dialects/QEff/QEffOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Clamp, softcap, sigmoid gate, stack
//===----------------------------------------------------------------------===//

LogicalResult ClampOp::verify() {
  double lo = getMin().convertToDouble(), hi = getMax().convertToDouble();
  if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi)
    return emitOpError() << "needs finite min <= max, got [" << lo << ", "
                         << hi << "]";
  return success();
}

LogicalResult SoftcapOp::verify() {
  double cap = getCap().convertToDouble();
  if (!(cap > 0.0) || !std::isfinite(cap))
    return emitOpError() << "cap must be positive and finite, got " << cap;
  return success();
}

LogicalResult SigmoidGateOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  if (in.empty())
    return emitOpError("input must have at least one dimension");
  SmallVector<int64_t> expected(in);
  expected.back() = 1;
  if (failed(checkDims(*this, getGate(), "gate", expected, "[..., 1]")))
    return failure();
  if (elementTypeOf(getGate()) != elementTypeOf(getInput()))
    return emitOpError("gate element type must match the input's");
  return checkSameType(*this, getResult(), getInput(), "result", "input");
}

LogicalResult StackOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  Value first = getInputs().front();
  for (Value v : getInputs().drop_front())
    if (failed(checkSameType(*this, v, first, "input", "first input")))
      return failure();
  SmallVector<int64_t> expected = {int64_t(getInputs().size())};
  llvm::append_range(expected, shapeOf(first));
  if (elementTypeOf(getResult()) != elementTypeOf(first))
    return emitOpError("result element type must match the inputs'");
  return checkDims(*this, getResult(), "result", expected, "[N, input...]");
}
