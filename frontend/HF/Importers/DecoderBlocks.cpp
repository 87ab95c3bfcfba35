//===- DecoderBlocks.cpp - the less common decoder building blocks --------===//
//
// Part of qeff. DecoderBuilder's pieces for the families beyond the
// Llama/GPT-2 shapes: non-parametric and per-head norms, clip_qkv, post-norm
// and sandwich blocks, MoE with named experts and a gated shared expert,
// projected or offset embeddings, logit scaling and soft-capping.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/DecoderBuilder.h"

#include <cmath>

using namespace mlir;
using namespace mlir::qeff;
using namespace ::qeff::hf;

namespace {
constexpr int64_t kDyn = ShapedType::kDynamic;
} // namespace

Value DecoderBuilder::standardize(Value x, StringRef path, double eps) {
  return builder_.create<StandardizeOp>(moduleLoc(path), x.getType(), x,
                                        builder_.getF64FloatAttr(eps));
}

Value DecoderBuilder::clipQkv(Value x, const AttentionSpec &spec,
                              StringRef path) {
  if (spec.clipQkv <= 0)
    return x;
  return builder_.create<ClampOp>(moduleLoc(path), x.getType(), x,
                                  builder_.getF64FloatAttr(-spec.clipQkv),
                                  builder_.getF64FloatAttr(spec.clipQkv));
}

Value DecoderBuilder::qkNorm(Value x, const AttentionSpec &spec, bool isKey) {
  const QKNorm &n = spec.qkNorm;
  std::string prefix = isKey ? n.k : n.q;
  ArrayRef<int64_t> shape = llvm::cast<RankedTensorType>(x.getType()).getShape();
  int64_t heads = shape[1], headDim = shape[3];
  if (n.kind == QKNorm::Shared)
    return layerNorm(x, prefix, n.eps, n.bias);
  if (n.kind == QKNorm::SharedRMS)
    return rmsNorm(x, prefix + ".weight", n.eps, n.weightOffset);
  Value w, b;
  if (n.kind == QKNorm::PerHead) {
    w = weight(prefix + ".weight", {heads, headDim});
    if (n.bias)
      b = weight(prefix + ".bias", {heads, headDim});
  } else {
    SmallVector<Value> ws, bs;
    for (int64_t h = 0; h < heads; ++h) {
      std::string p = prefix + ".norms." + std::to_string(h);
      ws.push_back(weight(p + ".weight", {headDim}));
      if (n.bias)
        bs.push_back(weight(p + ".bias", {headDim}));
    }
    Type stacked = tensorType({heads, headDim});
    w = builder_.create<StackOp>(moduleLoc(prefix), stacked, ws);
    if (n.bias)
      b = builder_.create<StackOp>(moduleLoc(prefix), stacked, bs);
  }
  return builder_.create<LayerNormOp>(
      moduleLoc(prefix), x.getType(), x, w, b, builder_.getF64FloatAttr(n.eps),
      builder_.getBoolAttr(true), builder_.getF64FloatAttr(0.0));
}

void DecoderBuilder::setLogitTransform(double scale, double softcap) {
  logitScale_ = scale;
  logitSoftcap_ = softcap;
}

Value DecoderBuilder::transformLogits(Value logits) {
  if (logitScale_ != 0.0 && logitScale_ != 1.0)
    logits = builder_.create<ScaleOp>(moduleLoc("logit_scale"),
                                      logits.getType(), logits,
                                      builder_.getF64FloatAttr(logitScale_));
  if (logitSoftcap_ > 0.0)
    logits = builder_.create<SoftcapOp>(moduleLoc("final_logit_softcapping"),
                                        logits.getType(), logits,
                                        builder_.getF64FloatAttr(logitSoftcap_));
  return logits;
}

Value DecoderBuilder::moe(Value x, const MoESpec &spec) {
  int64_t hidden = config_.hiddenSize;
  int64_t inter = spec.intermediateSize ? spec.intermediateSize
                                        : config_.intermediateSize;
  Value router = weight(spec.prefix + "." + spec.router + ".weight",
                        {spec.numExperts, hidden});
  SmallVector<Value> experts;
  for (int64_t e = 0; e < spec.numExperts; ++e) {
    if (!spec.fusedExperts.empty()) {
      std::string p = spec.prefix + "." + spec.fusedExperts + ".";
      SmallVector<int64_t> fused = {spec.numExperts * inter, hidden};
      experts.push_back(weightRows(p + spec.gate, fused, e * inter, inter));
      experts.push_back(weightRows(p + spec.up, fused, e * inter, inter));
      experts.push_back(weightRows(p + spec.down, fused, e * inter, inter,
                                   /*transpose=*/true));
      continue;
    }
    std::string p = spec.prefix + ".experts." + std::to_string(e) + ".";
    experts.push_back(weight(p + spec.gate + ".weight", {inter, hidden}));
    experts.push_back(weight(p + spec.up + ".weight", {inter, hidden}));
    experts.push_back(weight(p + spec.down + ".weight", {hidden, inter}));
  }
  return builder_.create<MoEOp>(
      moduleLoc(spec.prefix), x.getType(), x, router, /*router_bias=*/Value(),
      experts, builder_.getI64IntegerAttr(spec.numExperts),
      builder_.getI64IntegerAttr(spec.topK),
      builder_.getBoolAttr(spec.normalizeTopK),
      ActivationAttr::get(context_,
                          spec.activation ? *spec.activation : activation()),
      FloatAttr(), FloatAttr());
}

Value DecoderBuilder::sigmoidGate(Value gate, Value x) {
  return builder_.create<SigmoidGateOp>(scopeLoc(), x.getType(), gate, x);
}

Value DecoderBuilder::postNormBlock(Value h, const NormSpec &normSpec,
                                    StringRef attnNorm, StringRef mlpNorm,
                                    function_ref<Value(Value)> attn,
                                    function_ref<Value(Value)> mlp) {
  // Residual adds carry the layer's scope (qeff-outline-layers groups by it).
  Scope scope(*this, attnNorm.rsplit('.').first.str());
  Location layer = scopeLoc();
  h = norm(add(h, attn(h), layer), attnNorm, normSpec);
  return norm(add(h, mlp(h), layer), mlpNorm, normSpec);
}

Value DecoderBuilder::sandwichBlock(Value h, const NormSpec &normSpec,
                                    StringRef preAttn, StringRef postAttn,
                                    StringRef preMlp, StringRef postMlp,
                                    function_ref<Value(Value)> attn,
                                    function_ref<Value(Value)> mlp) {
  Scope scope(*this, postAttn.rsplit('.').first.str());
  Location layer = scopeLoc();
  auto pre = [&](Value x, StringRef name) {
    return name.empty() ? x : norm(x, name, normSpec);
  };
  h = add(h, norm(attn(pre(h, preAttn)), postAttn, normSpec), layer);
  return add(h, norm(mlp(pre(h, preMlp)), postMlp, normSpec), layer);
}

Value DecoderBuilder::embedding(StringRef tableName, int64_t width) {
  Value table = weight(tableName, {config_.vocabSize, width});
  // The model's base module holds the token embedding: the root scope.
  StringRef module = tableName;
  if (module.ends_with(".weight"))
    module = module.rsplit('.').first;
  if (rootScope_.empty() && module.contains('.'))
    rootScope_ = module.rsplit('.').first.str();
  return builder_.create<EmbeddingOp>(tensorModuleLoc(tableName),
                                      tensorType({kDyn, kDyn, width}),
                                      inputIds(), table);
}

Value DecoderBuilder::positionEmbedding(StringRef tableName, int64_t positions,
                                        int64_t offset) {
  Value table = weight(tableName, {positions, config_.hiddenSize});
  return builder_.create<EmbeddingOp>(
      tensorModuleLoc(tableName), tensorType({kDyn, kDyn, config_.hiddenSize}),
      positionIds(), table,
      offset ? builder_.getI64IntegerAttr(offset) : IntegerAttr());
}

void DecoderBuilder::setHFCacheLayout(StringRef key, StringRef value) {
  (*module_)->setAttr(
      "qeff.hf_cache_layout",
      builder_.getDictionaryAttr(
          {builder_.getNamedAttr("key", builder_.getStringAttr(key)),
           builder_.getNamedAttr("value", builder_.getStringAttr(value))}));
}

int64_t DecoderBuilder::rotaryPositions() const {
  // The positions a static cos/sin table covers: the context the scaling
  // extends max_position_embeddings to (linear, yarn, dynamic multiply it by
  // the factor; llama3 and longrope configs already state the extended one).
  const RopeScaling &s = config_.ropeScaling;
  double positions = double(config_.maxPositionEmbeddings);
  // Yarn read as transformers 4.55 reads it (an original context below
  // max_position_embeddings) states the extended context already.
  bool yarnStatesExtended = s.type == RopeScalingType::Yarn &&
                            s.originalMaxPositionEmbeddings <
                                config_.maxPositionEmbeddings;
  if ((s.type == RopeScalingType::Linear || s.type == RopeScalingType::Yarn ||
       s.type == RopeScalingType::Dynamic) &&
      !yarnStatesExtended)
    positions *= std::max(s.factor, 1.0);
  return static_cast<int64_t>(std::ceil(positions));
}

RopeScalingAttr DecoderBuilder::ropeScalingAttr() {
  const RopeScaling &s = config_.ropeScaling;
  if (s.type == RopeScalingType::None)
    return RopeScalingAttr();
  auto f64 = [&](double v) { return builder_.getF64FloatAttr(v); };
  RopeScalingKind kind = RopeScalingKind::linear;
  FloatAttr low, high, betaFast, betaSlow, attention;
  BoolAttr truncate;
  DenseF64ArrayAttr shortFactor, longFactor;
  int64_t original = s.originalMaxPositionEmbeddings;
  switch (s.type) {
  case RopeScalingType::None:
  case RopeScalingType::Linear:
    original = 0;
    break;
  case RopeScalingType::Llama3:
    kind = RopeScalingKind::llama3;
    low = f64(s.lowFreqFactor);
    high = f64(s.highFreqFactor);
    break;
  case RopeScalingType::Yarn:
    kind = RopeScalingKind::yarn;
    betaFast = f64(s.betaFast);
    betaSlow = f64(s.betaSlow);
    attention = f64(s.attentionFactor);
    if (!s.truncate)
      truncate = builder_.getBoolAttr(false);
    break;
  case RopeScalingType::Dynamic:
    kind = RopeScalingKind::dynamic;
    break;
  case RopeScalingType::LongRope:
    kind = RopeScalingKind::longrope;
    attention = f64(s.attentionFactor);
    shortFactor = builder_.getDenseF64ArrayAttr(s.shortFactor);
    longFactor = builder_.getDenseF64ArrayAttr(s.longFactor);
    break;
  }
  return RopeScalingAttr::get(context_, kind, f64(s.factor), low, high,
                              original, betaFast, betaSlow, attention,
                              shortFactor, longFactor, truncate);
}
