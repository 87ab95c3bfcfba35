//===- DecoderBuilder.cpp - building blocks of HF decoder importers -------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/DecoderBuilder.h"
#include "frontend/HF/Importers/FamilyRegistry.h"

#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cmath>

using namespace mlir;
using namespace mlir::qeff;
using namespace ::qeff::hf;

namespace {
constexpr int64_t kDyn = ShapedType::kDynamic;

std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(shape, os);
  os << "]";
  return s;
}

Type storageTypeOf(MLIRContext *context, DType dtype) {
  Builder b(context);
  switch (dtype) {
  case DType::F64:
    return b.getF64Type();
  case DType::F32:
    return b.getF32Type();
  case DType::F16:
    return b.getF16Type();
  case DType::BF16:
    return b.getBF16Type();
  case DType::I64:
  case DType::U64:
    return b.getIntegerType(64);
  case DType::I32:
  case DType::U32:
    return b.getIntegerType(32);
  case DType::I16:
  case DType::U16:
    return b.getIntegerType(16);
  case DType::I8:
  case DType::U8:
    return b.getIntegerType(8);
  case DType::Bool:
    return b.getI1Type();
  case DType::F8_E4M3:
    return b.getFloat8E4M3FNType();
  case DType::F8_E5M2:
    return b.getFloat8E5M2Type();
  case DType::F8_E8M0:
    return b.getIntegerType(8); // MLIR 19 has no E8M0; never a weight
  }
  llvm_unreachable("unknown dtype");
}

/// What the built model uses, so that `#qeff.model` lists only the config
/// values the ops were built from.
struct ConfigUse {
  bool rotary = false, rmsNorm = false, qkvBias = false, oBias = false,
       mlpBias = false;
};

/// The config values the ops were built from, for `#qeff.model`: under
/// transformers' canonical names (`hidden_size`, valid on every config
/// through its attribute_map), the norm epsilon as `rms_norm_eps` or
/// `layer_norm_eps` by the norm the model uses, rotary settings only when the
/// model rotates, and the biases the projections actually have
/// (`attention_bias` as in Llama: all four projections; `qkv_bias` when only
/// Q, K and V have one, as in Qwen2).
DictionaryAttr configDictionary(MLIRContext *context, const ModelConfig &c,
                                const ConfigUse &use) {
  Builder b(context);
  SmallVector<NamedAttribute> entries;
  auto addInt = [&](StringRef name, int64_t value) {
    entries.push_back(b.getNamedAttr(name, b.getI64IntegerAttr(value)));
  };
  auto addFloat = [&](StringRef name, double value) {
    entries.push_back(b.getNamedAttr(name, b.getF64FloatAttr(value)));
  };
  auto addBool = [&](StringRef name, bool value) {
    entries.push_back(b.getNamedAttr(name, b.getBoolAttr(value)));
  };
  addInt("vocab_size", c.vocabSize);
  addInt("hidden_size", c.hiddenSize);
  addInt("intermediate_size", c.intermediateSize);
  addInt("num_hidden_layers", c.numHiddenLayers);
  addInt("num_attention_heads", c.numAttentionHeads);
  addInt("num_key_value_heads", c.numKeyValueHeads);
  addInt("head_dim", c.headDim);
  entries.push_back(
      b.getNamedAttr("hidden_act", b.getStringAttr(c.hiddenAct)));
  addInt("max_position_embeddings", c.maxPositionEmbeddings);
  addFloat(use.rmsNorm ? "rms_norm_eps" : "layer_norm_eps", c.rmsNormEps);
  if (use.rotary) {
    addFloat("rope_theta", c.ropeTheta);
    addFloat("partial_rotary_factor", c.partialRotaryFactor);
  }
  addBool("tie_word_embeddings", c.tieWordEmbeddings);
  addBool("attention_bias", use.qkvBias && use.oBias);
  if (use.qkvBias && !use.oBias)
    addBool("qkv_bias", true);
  addBool("mlp_bias", use.mlpBias);
  if (c.slidingWindow)
    addInt("sliding_window", *c.slidingWindow);
  if (use.rotary && c.ropeScaling.type != RopeScalingType::None) {
    entries.push_back(b.getNamedAttr("rope_scaling_type",
                                     b.getStringAttr(c.ropeScaling.name())));
    addFloat("rope_scaling_factor", c.ropeScaling.factor);
  }
  if (c.bosTokenId)
    addInt("bos_token_id", *c.bosTokenId);
  if (!c.eosTokenIds.empty())
    entries.push_back(
        b.getNamedAttr("eos_token_id", b.getI64ArrayAttr(c.eosTokenIds)));
  if (c.padTokenId)
    addInt("pad_token_id", *c.padTokenId);
  if (!c.torchDtype.empty())
    entries.push_back(
        b.getNamedAttr("torch_dtype", b.getStringAttr(c.torchDtype)));
  return b.getDictionaryAttr(entries);
}
} // namespace

namespace qeff::hf {

std::vector<double> bloomAlibiSlopes(int64_t heads) {
  int64_t closest = 1;
  while (closest * 2 <= heads)
    closest *= 2;
  auto base = [](int64_t n) { return std::pow(2.0, -8.0 / double(n)); };
  std::vector<double> slopes;
  for (int64_t k = 1; k <= closest; ++k)
    slopes.push_back(std::pow(base(closest), double(k)));
  for (int64_t k = 1; int64_t(slopes.size()) < heads; k += 2)
    slopes.push_back(std::pow(base(2 * closest), double(k)));
  return slopes;
}

std::vector<double> mptAlibiSlopes(int64_t heads) {
  int64_t n = 1;
  while (n < heads)
    n *= 2;
  std::vector<double> all;
  for (int64_t k = 1; k <= n; ++k)
    all.push_back(1.0 / std::pow(2.0, 8.0 * double(k) / double(n)));
  if (n == heads)
    return all;
  std::vector<double> slopes;
  for (size_t i = 1; i < all.size(); i += 2)
    slopes.push_back(all[i]);
  for (size_t i = 0; i < all.size(); i += 2)
    slopes.push_back(all[i]);
  slopes.resize(heads);
  return slopes;
}

} // namespace qeff::hf

DecoderBuilder::DecoderBuilder(MLIRContext *context, const Family &family,
                               const ModelConfig &config,
                               const Checkpoint &checkpoint,
                               std::string checkpointDir,
                               std::string configText)
    : context_(context), family_(family), config_(config),
      checkpoint_(checkpoint), checkpointDir_(std::move(checkpointDir)),
      configText_(std::move(configText)), builder_(context) {
  llvm::SmallString<256> configPath(checkpointDir_);
  // A GGUF file is its own config (its metadata).
  configIsText_ = llvm::sys::fs::is_directory(checkpointDir_);
  if (configIsText_)
    llvm::sys::path::append(configPath, "config.json");
  configPath_ = configPath.str().str();

  Location loc = FileLineColLoc::get(context, configPath_, configIsText_, configIsText_);
  module_ = ModuleOp::create(loc);
  SmallVector<Attribute> files;
  for (const std::string &file : checkpoint_.filePaths())
    files.push_back(builder_.getStringAttr(llvm::sys::path::filename(file)));
  checkpointFiles_ = builder_.getArrayAttr(files);

  // Where the exporter finds the weights: the checkpoint, made absolute.
  llvm::SmallString<256> absoluteDir(checkpointDir_);
  llvm::sys::fs::make_absolute(absoluteDir);
  llvm::sys::path::remove_dots(absoluteDir, /*remove_dot_dot=*/true);
  (*module_)->setAttr("qeff.checkpoint_dir",
                      builder_.getStringAttr(absoluteDir.str()));

  // @forward(input_ids, position_ids, past_key.0, past_value.0, ...).
  SmallVector<Type> argTypes = {tensorType({kDyn, kDyn}, builder_.getI64Type()),
                                tensorType({kDyn, kDyn}, builder_.getI64Type())};
  SmallVector<std::string> argNames = {"input_ids", "position_ids"};
  RankedTensorType kvType =
      tensorType({kDyn, config_.numKeyValueHeads, kDyn, config_.headDim});
  for (int64_t i = 0; i < config_.numHiddenLayers; ++i) {
    argTypes.append({kvType, kvType});
    argNames.push_back("past_key." + std::to_string(i));
    argNames.push_back("past_value." + std::to_string(i));
  }
  builder_.setInsertionPointToEnd(module_->getBody());
  forward_ = builder_.create<func::FuncOp>(
      loc, "forward", builder_.getFunctionType(argTypes, {}));
  SmallVector<Location> argLocs;
  for (const std::string &name : argNames)
    argLocs.push_back(NameLoc::get(builder_.getStringAttr(name), loc));
  Block *entry = builder_.createBlock(&forward_.getBody(), {}, argTypes,
                                      argLocs);
  // All argument attributes at once: setArgAttr per argument would rebuild
  // (and unique, for the life of the context) the whole arg_attrs array each
  // time, memory quadratic in the number of layers.
  SmallVector<DictionaryAttr> argAttrs;
  ArrayAttr tokenDims = dimNames({"batch_size", "seq_len"});
  ArrayAttr kvDims = dimNames({"batch_size", "", "past_seq_len", ""});
  for (auto [i, name] : llvm::enumerate(argNames))
    argAttrs.push_back(builder_.getDictionaryAttr(
        {builder_.getNamedAttr("qeff.name", builder_.getStringAttr(name)),
         builder_.getNamedAttr("qeff.dims", i < 2 ? tokenDims : kvDims)}));
  forward_.setAllArgAttrs(argAttrs);
  builder_.setInsertionPointToStart(entry);
}

ArrayAttr DecoderBuilder::dimNames(ArrayRef<StringRef> names) {
  SmallVector<Attribute> attrs;
  for (StringRef name : names)
    attrs.push_back(builder_.getStringAttr(name));
  return builder_.getArrayAttr(attrs);
}

Value DecoderBuilder::inputIds() const { return forward_.getArgument(0); }
Value DecoderBuilder::positionIds() const { return forward_.getArgument(1); }

RankedTensorType DecoderBuilder::tensorType(ArrayRef<int64_t> shape,
                                            Type element) {
  return RankedTensorType::get(shape, element ? element : builder_.getF32Type());
}

Location DecoderBuilder::configLoc(StringRef field) {
  // Point at the field's line in config.json when it is there.
  unsigned line = 1, col = 1;
  std::string quoted = ("\"" + field + "\"").str();
  size_t at = configText_.find(quoted);
  if (at != std::string::npos) {
    StringRef before = StringRef(configText_).take_front(at);
    line = 1 + before.count('\n');
    col = 1 + (at - (before.rfind('\n') == StringRef::npos
                         ? 0
                         : before.rfind('\n') + 1));
  }
  // A GGUF file has no text lines to point at: line 0 (the printer then
  // shows no source line).
  if (!configIsText_)
    line = col = 0;
  return FileLineColLoc::get(context_, configPath_, line, col);
}

Location DecoderBuilder::moduleLoc(StringRef modulePath) {
  return NameLoc::get(builder_.getStringAttr(modulePath),
                      FileLineColLoc::get(context_, configPath_, configIsText_, configIsText_));
}

Location DecoderBuilder::tensorModuleLoc(StringRef tensorName) {
  StringRef module = tensorName;
  if (module.ends_with(".weight") || module.ends_with(".bias"))
    module = module.rsplit('.').first;
  return moduleLoc(module);
}

Location DecoderBuilder::scopeLoc() {
  if (!scopes_.empty())
    return moduleLoc(scopes_.back());
  if (!rootScope_.empty())
    return moduleLoc(rootScope_);
  return FileLineColLoc::get(context_, configPath_, configIsText_, configIsText_);
}

void DecoderBuilder::configError(StringRef field, const llvm::Twine &message) {
  emitError(configLoc(field)) << configPath_ << ": field '" << field << "' "
                              << message;
  fail();
}

bool DecoderBuilder::hasTensor(StringRef name) const {
  return checkpoint_.contains(name);
}

Location DecoderBuilder::weightLoc(StringRef name) {
  std::string where = checkpoint_.filePathOf(name);
  if (where.empty())
    where = checkpoint_.sourcePath();
  // The tensor's name in its file; line 0: safetensors is binary, there is no
  // source line to show.
  return NameLoc::get(builder_.getStringAttr(name),
                      FileLineColLoc::get(context_, where, 0, 0));
}

Type DecoderBuilder::checkedStorage(StringRef name, ArrayRef<int64_t> shape,
                                    Location loc) {
  const TensorInfo *info = checkpoint_.find(name);
  if (info && info->shape == std::vector<int64_t>(shape.begin(), shape.end()) &&
      isFloatingPoint(info->dtype))
    return storageTypeOf(context_, info->dtype);
  fail();
  // One message per tensor, however many ops read it (fused expert slices).
  if (!reportedTensors_.insert(name).second)
    return builder_.getF32Type();
  if (!info)
    emitError(loc) << "checkpoint " << checkpoint_.sourcePath()
                   << " has no tensor '" << name << "' (a "
                   << config_.architecture << " needs it, with shape "
                   << shapeString(shape) << ")";
  else if (info->shape != std::vector<int64_t>(shape.begin(), shape.end()))
    emitError(loc) << "tensor '" << name << "' has shape "
                   << shapeString(info->shape) << " but config.json implies "
                   << shapeString(shape);
  else
    emitError(loc) << "tensor '" << name << "' has dtype "
                   << dtypeName(info->dtype)
                   << "; weights must be floating point (a quantized "
                      "checkpoint's packed tensors are decoded only as its "
                      "config.json quantization_config declares)";
  return builder_.getF32Type();
}

Value DecoderBuilder::weight(StringRef name, ArrayRef<int64_t> shape) {
  Location loc = weightLoc(name);
  Type storage = checkedStorage(name, shape, loc);
  return builder_.create<WeightOp>(loc, tensorType(shape),
                                   builder_.getStringAttr(name),
                                   TypeAttr::get(storage), UnitAttr());
}

Value DecoderBuilder::weightRows(StringRef name, ArrayRef<int64_t> shape,
                                 int64_t start, int64_t count, bool transpose) {
  Location loc = weightLoc(name);
  Type storage = checkedStorage(name, shape, loc);
  // A 3-D tensor of stacked matrices [n, rows, cols] (fused experts) is read
  // as [n * rows, cols]: its rows are those of the leading two dimensions.
  SmallVector<int64_t> sliceShape(shape.size() == 3 ? shape.drop_front()
                                                    : shape);
  sliceShape[0] = count;
  if (transpose)
    std::reverse(sliceShape.begin(), sliceShape.end());
  return builder_.create<WeightOp>(
      loc, tensorType(sliceShape), builder_.getStringAttr(name),
      TypeAttr::get(storage),
      transpose ? builder_.getUnitAttr() : UnitAttr(),
      builder_.getDenseI64ArrayAttr({start, count}));
}

Value DecoderBuilder::embedding(StringRef tableName) {
  return embedding(tableName, config_.hiddenSize);
}

Value DecoderBuilder::positionEmbedding(StringRef tableName,
                                        int64_t positions) {
  return positionEmbedding(tableName, positions, /*offset=*/0);
}

Value DecoderBuilder::scale(Value x, double factor) {
  return builder_.create<ScaleOp>(scopeLoc(), x.getType(), x,
                                  builder_.getF64FloatAttr(factor));
}

Value DecoderBuilder::norm(Value x, StringRef prefix, const NormSpec &spec) {
  if (spec.kind == NormSpec::RMS)
    return rmsNorm(x, (prefix + ".weight").str(), spec.eps, spec.weightOffset);
  if (spec.kind == NormSpec::NonParametric)
    return standardize(x, prefix, spec.eps);
  return layerNorm(x, prefix, spec.eps, spec.bias, spec.weightOffset);
}

Value DecoderBuilder::linear(Value x, StringRef prefix, int64_t out,
                             bool bias, WeightLayout layout) {
  auto xType = llvm::cast<RankedTensorType>(x.getType());
  int64_t in = xType.getShape().back();
  SmallVector<int64_t> wShape =
      layout == WeightLayout::out_in ? SmallVector<int64_t>{out, in}
                                     : SmallVector<int64_t>{in, out};
  Value w = weight((prefix + ".weight").str(), wShape);
  Value b = bias ? weight((prefix + ".bias").str(), {out}) : Value();
  SmallVector<int64_t> resultShape(xType.getShape());
  resultShape.back() = out;
  return builder_.create<LinearOp>(moduleLoc(prefix), tensorType(resultShape),
                                   x, w, b, layout);
}

Value DecoderBuilder::rmsNorm(Value x, StringRef weightName, double eps,
                              double weightOffset) {
  usedRmsNorm_ = true;
  int64_t hidden = llvm::cast<RankedTensorType>(x.getType()).getShape().back();
  Value w = weight(weightName, {hidden});
  return builder_.create<RMSNormOp>(
      tensorModuleLoc(weightName), x.getType(), x, w,
      builder_.getF64FloatAttr(eps), builder_.getF64FloatAttr(weightOffset),
      builder_.getBoolAttr(true));
}

Value DecoderBuilder::layerNorm(Value x, StringRef prefix, double eps,
                                bool bias, double weightOffset) {
  int64_t hidden = llvm::cast<RankedTensorType>(x.getType()).getShape().back();
  Value w = weight((prefix + ".weight").str(), {hidden});
  Value b = bias ? weight((prefix + ".bias").str(), {hidden}) : Value();
  return builder_.create<LayerNormOp>(
      moduleLoc(prefix), x.getType(), x, w, b, builder_.getF64FloatAttr(eps),
      builder_.getBoolAttr(true), builder_.getF64FloatAttr(weightOffset));
}

Value DecoderBuilder::heads(Value x, int64_t numHeads, StringRef path) {
  int64_t width = llvm::cast<RankedTensorType>(x.getType()).getShape().back();
  return builder_.create<SplitHeadsOp>(
      moduleLoc(path), tensorType({kDyn, numHeads, kDyn, width / numHeads}), x,
      numHeads);
}

Value DecoderBuilder::rotary(Value x, const AttentionSpec &spec,
                             StringRef path) {
  usedRotary_ = true;
  RopeScalingAttr scaling =
      spec.unscaledRotary ? RopeScalingAttr() : ropeScalingAttr();
  return builder_.create<RotaryOp>(
      moduleLoc(path), x.getType(), x, positionIds(), /*keep=*/Value(),
      RotaryStyleAttr::get(context_, spec.rotaryStyle),
      builder_.getI64IntegerAttr(spec.rotaryDim),
      builder_.getF64FloatAttr(spec.ropeTheta > 0 ? spec.ropeTheta
                                                  : config_.ropeTheta),
      builder_.getI64IntegerAttr(rotaryPositions()), scaling);
}

std::array<Value, 3> DecoderBuilder::splitFusedQKV(Value x,
                                                   const AttentionSpec &spec) {
  const FusedQKV &f = *spec.fused;
  int64_t heads = config_.numAttentionHeads, kvHeads = config_.numKeyValueHeads,
          headDim = config_.headDim, groups = f.groups;
  Location loc = moduleLoc(f.prefix);
  Value fused = clipQkv(linear(x, f.prefix, (heads + 2 * kvHeads) * headDim,
                               spec.qkvBias, spec.layout),
                        spec, f.prefix);
  if (heads % groups != 0 || kvHeads % groups != 0 || f.order.size() != 3) {
    emitError(loc) << "fused QKV of " << heads << " query and " << kvHeads
                   << " key/value heads cannot be cut in " << groups
                   << " groups of '" << f.order << "'";
    fail();
    groups = 1;
  }
  auto headsOf = [&](char role) { return role == 'q' ? heads : kvHeads; };
  // One chunk per group: [B, groups, S, chunk] (or [B, S, chunk] for one).
  Value chunks = groups == 1 ? fused : this->heads(fused, groups, f.prefix);
  auto chunkType = llvm::cast<RankedTensorType>(chunks.getType());
  SmallVector<int64_t> sizes;
  SmallVector<Type> types;
  for (char role : f.order) {
    sizes.push_back(headsOf(role) / groups * headDim);
    SmallVector<int64_t> shape(chunkType.getShape());
    shape.back() = sizes.back();
    types.push_back(tensorType(shape));
  }
  auto split = builder_.create<SplitOp>(loc, types, chunks,
                                        builder_.getDenseI64ArrayAttr(sizes));
  std::array<Value, 3> qkv;
  for (auto [i, role] : llvm::enumerate(f.order)) {
    Value part = split.getResult(i);
    int64_t n = headsOf(role);
    // Heads numbered group-major: merge the groups back into the feature
    // axis, then split per head (a no-op pair when each group is one head).
    if (groups != 1 && n != groups)
      part = builder_.create<MergeHeadsOp>(
          loc, tensorType({kDyn, kDyn, n * headDim}), part);
    if (groups == 1 || n != groups)
      part = this->heads(part, n, f.prefix);
    qkv[role == 'q' ? 0 : role == 'k' ? 1 : 2] = part;
  }
  return qkv;
}

Value DecoderBuilder::selfAttention(int64_t layer, Value x,
                                    const AttentionSpec &spec) {
  int64_t heads = config_.numAttentionHeads, kvHeads = config_.numKeyValueHeads,
          headDim = config_.headDim;
  // The attention module: the one holding the output projection
  // (`model.layers.0.self_attn.o_proj`, `transformer.h.0.attn.c_proj`).
  std::string path = StringRef(spec.o).rsplit('.').first.str();
  usedQkvBias_ |= spec.qkvBias;
  usedOBias_ |= spec.oBias;
  Value q4, k4, v4;
  if (spec.fused) {
    auto qkv = splitFusedQKV(x, spec);
    q4 = qkv[0];
    k4 = qkv[1];
    v4 = qkv[2];
  } else {
    Value q = clipQkv(
        linear(x, spec.q, heads * headDim, spec.qkvBias, spec.layout), spec,
        spec.q);
    Value k = clipQkv(
        linear(x, spec.k, kvHeads * headDim, spec.qkvBias, spec.layout), spec,
        spec.k);
    Value v = clipQkv(
        linear(x, spec.v, kvHeads * headDim, spec.qkvBias, spec.layout), spec,
        spec.v);
    if (spec.qkNorm.kind == QKNorm::WholeRMS) {
      q = rmsNorm(q, spec.qkNorm.q + ".weight", spec.qkNorm.eps,
                  spec.qkNorm.weightOffset);
      k = rmsNorm(k, spec.qkNorm.k + ".weight", spec.qkNorm.eps,
                  spec.qkNorm.weightOffset);
    }
    q4 = this->heads(q, heads, spec.q);
    k4 = this->heads(k, kvHeads, spec.k);
    v4 = this->heads(v, kvHeads, spec.v);
  }
  if (spec.qkNorm.kind == QKNorm::WholeRMS && spec.fused) {
    emitError(moduleLoc(path)) << "a q/k norm over the whole projection "
                                  "needs separate q/k/v projections";
    fail();
  } else if (spec.qkNorm.kind != QKNorm::None &&
             spec.qkNorm.kind != QKNorm::WholeRMS) {
    q4 = qkNorm(q4, spec, /*isKey=*/false);
    k4 = qkNorm(k4, spec, /*isKey=*/true);
  }
  if (spec.rotaryDim > 0) {
    q4 = rotary(q4, spec, path + ".rotary_emb");
    k4 = rotary(k4, spec, path + ".rotary_emb");
  }
  Value pastK = forward_.getArgument(2 + 2 * layer);
  Value pastV = forward_.getArgument(3 + 2 * layer);
  auto layout = KVLayoutAttr::get(context_, KVLayout::bhsd);
  Value keys = builder_.create<KVConcatOp>(moduleLoc(path), pastK.getType(),
                                           pastK, k4, layout);
  Value values = builder_.create<KVConcatOp>(moduleLoc(path), pastV.getType(),
                                             pastV, v4, layout);
  presents_.append({keys, values});
  Value sinks;
  if (!spec.sinks.empty())
    sinks = weight(spec.sinks, {heads});
  Value attn = builder_.create<AttentionOp>(
      moduleLoc(path), q4.getType(), q4, keys, values, /*mask=*/Value(), sinks,
      builder_.getI64IntegerAttr(heads), builder_.getI64IntegerAttr(kvHeads),
      builder_.getI64IntegerAttr(headDim),
      builder_.getF64FloatAttr(spec.scale > 0 ? spec.scale
                                              : 1.0 / std::sqrt(double(headDim))),
      builder_.getBoolAttr(true),
      builder_.getI64IntegerAttr(spec.slidingWindow),
      spec.alibiSlopes.empty()
          ? DenseF64ArrayAttr()
          : builder_.getDenseF64ArrayAttr(spec.alibiSlopes),
      spec.softcap > 0 ? builder_.getF64FloatAttr(spec.softcap) : FloatAttr());
  Value merged = builder_.create<MergeHeadsOp>(
      moduleLoc(path), tensorType({kDyn, kDyn, heads * headDim}), attn);
  return linear(merged, spec.o, config_.hiddenSize, spec.oBias, spec.layout);
}

Activation DecoderBuilder::activation() {
  return activationNamed(config_.hiddenAct, "hidden_act");
}

Activation DecoderBuilder::activation(StringRef field, StringRef fallback) {
  std::string name = fallback.str();
  if (config_.raw) {
    auto value = config_.raw->getString(field.str(), fallback.str());
    if (!value.ok()) {
      configError(field, "must be a string naming an activation");
      return Activation::silu;
    }
    name = *value;
  }
  return activationNamed(name, field);
}

Activation DecoderBuilder::activationNamed(StringRef act, StringRef field) {
  if (act == "silu" || act == "swish")
    return Activation::silu;
  if (act == "gelu")
    return Activation::gelu;
  if (act == "gelu_new" || act == "gelu_pytorch_tanh" || act == "gelu_fast")
    return Activation::gelu_tanh;
  if (act == "relu")
    return Activation::relu;
  if (act == "relu2")
    return Activation::relu2;
  configError(field, "names an activation qeff does not know: '" + act +
                                "' (known: silu, gelu, gelu_new, "
                                "gelu_pytorch_tanh, gelu_fast, relu, relu2)");
  return Activation::silu;
}

Value DecoderBuilder::gatedMlp(Value x, StringRef gate, StringRef up,
                               StringRef down, bool bias, int64_t inter) {
  usedMlpBias_ |= bias;
  if (inter == 0)
    inter = config_.intermediateSize;
  Value g = linear(x, gate, inter, bias);
  Value u = linear(x, up, inter, bias);
  Value act = builder_.create<GatedActivationOp>(
      moduleLoc(gate), g.getType(), g, u,
      ActivationAttr::get(context_, activation()));
  return linear(act, down, config_.hiddenSize, bias);
}

Value DecoderBuilder::fusedGatedMlp(Value x, StringRef gateUp, StringRef down,
                                    bool bias) {
  usedMlpBias_ |= bias;
  int64_t inter = config_.intermediateSize;
  Value fused = linear(x, gateUp, 2 * inter, bias);
  SmallVector<int64_t> shape(
      llvm::cast<RankedTensorType>(fused.getType()).getShape());
  shape.back() = inter;
  Type half = tensorType(shape);
  auto split = builder_.create<SplitOp>(
      moduleLoc(gateUp), TypeRange{half, half}, fused,
      builder_.getDenseI64ArrayAttr({inter, inter}));
  Value act = builder_.create<GatedActivationOp>(
      moduleLoc(gateUp), half, split.getResult(0), split.getResult(1),
      ActivationAttr::get(context_, activation()));
  return linear(act, down, config_.hiddenSize, bias);
}

Value DecoderBuilder::mlp(Value x, StringRef fcIn, StringRef fcOut, bool bias,
                          Activation act, WeightLayout layout) {
  usedMlpBias_ |= bias;
  Value h = linear(x, fcIn, config_.intermediateSize, bias, layout);
  h = builder_.create<ActivationOp>(moduleLoc(fcIn), h.getType(), h,
                                    ActivationAttr::get(context_, act));
  return linear(h, fcOut, config_.hiddenSize, bias, layout);
}

Value DecoderBuilder::moe(Value x, StringRef prefix, int64_t numExperts,
                          int64_t topK) {
  MoESpec spec;
  spec.prefix = prefix.str();
  spec.numExperts = numExperts;
  spec.topK = topK;
  return moe(x, spec);
}

Value DecoderBuilder::preNormBlock(Value h, const NormSpec &normSpec,
                                   StringRef attnNorm, StringRef mlpNorm,
                                   bool parallel,
                                   function_ref<Value(Value)> attn,
                                   function_ref<Value(Value)> mlp,
                                   StringRef layerPath) {
  // The residual adds belong to the decoder layer, by default the module
  // that holds the attention norm (`model.layers.3.input_layernorm` ->
  // `model.layers.3`): qeff-outline-layers groups ops by that scope.
  Scope scope(*this, layerPath.empty() ? attnNorm.rsplit('.').first.str()
                                       : layerPath.str());
  Location layer = scopeLoc();
  Value x = norm(h, attnNorm, normSpec);
  if (parallel) {
    Value a = attn(x);
    Value m = mlp(mlpNorm.empty() ? x : norm(h, mlpNorm, normSpec));
    return add(add(a, m, layer), h, layer);
  }
  h = add(h, attn(x), layer);
  return add(h, mlp(norm(h, mlpNorm, normSpec)), layer);
}

Value DecoderBuilder::add(Value a, Value b) { return add(a, b, scopeLoc()); }

Value DecoderBuilder::add(Value a, Value b, Location loc) {
  return builder_.create<AddOp>(loc, a.getType(), a, b);
}

OwningOpRef<ModuleOp> DecoderBuilder::finish(Value hidden,
                                             StringRef lmHeadWeight,
                                             StringRef lmHeadBias) {
  ConfigUse use{usedRotary_, usedRmsNorm_, usedQkvBias_, usedOBias_,
                usedMlpBias_};
  (*module_)->setAttr(
      ModelAttr::getAttrName(),
      ModelAttr::get(context_, builder_.getStringAttr(config_.architecture),
                     builder_.getStringAttr(family_.name),
                     configDictionary(context_, config_, use),
                     checkpointFiles_));
  int64_t width = llvm::cast<RankedTensorType>(hidden.getType()).getShape().back();
  Value w = weight(lmHeadWeight, {config_.vocabSize, width});
  Value bias =
      lmHeadBias.empty() ? Value() : weight(lmHeadBias, {config_.vocabSize});
  Value logits = transformLogits(builder_.create<LinearOp>(
      moduleLoc("lm_head"), tensorType({kDyn, kDyn, config_.vocabSize}),
      hidden, w, bias, WeightLayout::out_in));
  SmallVector<Value> results = {logits};
  results.append(presents_.begin(), presents_.end());
  builder_.create<func::ReturnOp>(moduleLoc("forward"), results);
  forward_.setType(builder_.getFunctionType(
      forward_.getArgumentTypes(), ValueRange(results).getTypes()));
  // All result attributes at once (linear memory, as for the arguments).
  auto resultAttr = [&](const std::string &name, ArrayAttr dims) {
    return builder_.getDictionaryAttr(
        {builder_.getNamedAttr("qeff.name", builder_.getStringAttr(name)),
         builder_.getNamedAttr("qeff.dims", dims)});
  };
  SmallVector<DictionaryAttr> resultAttrs = {
      resultAttr("logits", dimNames({"batch_size", "seq_len", ""}))};
  ArrayAttr presentDims = dimNames({"batch_size", "", "present_seq_len", ""});
  for (int64_t i = 0; i < config_.numHiddenLayers; ++i) {
    resultAttrs.push_back(resultAttr("present_key." + std::to_string(i), presentDims));
    resultAttrs.push_back(resultAttr("present_value." + std::to_string(i), presentDims));
  }
  forward_.setAllResultAttrs(resultAttrs);
  if (failed_)
    return nullptr;
  if (failed(mlir::verify(*module_)))
    return nullptr;
  return std::move(module_);
}
