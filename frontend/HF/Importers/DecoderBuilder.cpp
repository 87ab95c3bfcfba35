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
  }
  llvm_unreachable("unknown dtype");
}

/// The config values the ops were built from, for `#qeff.model`.
DictionaryAttr configDictionary(MLIRContext *context, const ModelConfig &c) {
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
  addFloat("rms_norm_eps", c.rmsNormEps);
  addFloat("rope_theta", c.ropeTheta);
  addFloat("partial_rotary_factor", c.partialRotaryFactor);
  addBool("tie_word_embeddings", c.tieWordEmbeddings);
  addBool("attention_bias", c.attentionBias);
  addBool("mlp_bias", c.mlpBias);
  if (c.slidingWindow)
    addInt("sliding_window", *c.slidingWindow);
  if (c.ropeScaling.type != RopeScalingType::None) {
    entries.push_back(b.getNamedAttr(
        "rope_scaling_type",
        b.getStringAttr(c.ropeScaling.type == RopeScalingType::Linear
                            ? "linear"
                            : "llama3")));
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

DecoderBuilder::DecoderBuilder(MLIRContext *context, const Family &family,
                               const ModelConfig &config,
                               const Checkpoint &checkpoint,
                               std::string checkpointDir,
                               std::string configText)
    : context_(context), family_(family), config_(config),
      checkpoint_(checkpoint), checkpointDir_(std::move(checkpointDir)),
      configText_(std::move(configText)), builder_(context) {
  llvm::SmallString<256> configPath(checkpointDir_);
  llvm::sys::path::append(configPath, "config.json");
  configPath_ = configPath.str().str();

  Location loc = FileLineColLoc::get(context, configPath_, 1, 1);
  module_ = ModuleOp::create(loc);
  SmallVector<Attribute> files;
  for (const auto &file : checkpoint_.files())
    files.push_back(
        builder_.getStringAttr(llvm::sys::path::filename(file->path())));
  (*module_)->setAttr(
      ModelAttr::getAttrName(),
      ModelAttr::get(context, builder_.getStringAttr(config_.architecture),
                     builder_.getStringAttr(family_.name),
                     configDictionary(context, config_),
                     builder_.getArrayAttr(files)));

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
  for (auto [i, name] : llvm::enumerate(argNames)) {
    forward_.setArgAttr(i, "qeff.name", builder_.getStringAttr(name));
    forward_.setArgAttr(i, "qeff.dims",
                        i < 2 ? dimNames({"batch_size", "seq_len"})
                              : dimNames({"batch_size", "", "past_seq_len", ""}));
  }
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
  return FileLineColLoc::get(context_, configPath_, line, col);
}

Location DecoderBuilder::moduleLoc(StringRef modulePath) {
  return NameLoc::get(builder_.getStringAttr(modulePath),
                      FileLineColLoc::get(context_, configPath_, 1, 1));
}

void DecoderBuilder::configError(StringRef field, const llvm::Twine &message) {
  emitError(configLoc(field)) << configPath_ << ": field '" << field << "' "
                              << message;
  fail();
}

bool DecoderBuilder::hasTensor(StringRef name) const {
  return checkpoint_.contains(name);
}

Value DecoderBuilder::weight(StringRef name, ArrayRef<int64_t> shape) {
  const TensorInfo *info = checkpoint_.find(name);
  const SafeTensorsFile *file = checkpoint_.fileOf(name);
  std::string where = file ? file->path() : checkpoint_.sourcePath();
  // The tensor's name in its file; line 0: safetensors is binary, there is no
  // source line to show.
  Location loc = NameLoc::get(builder_.getStringAttr(name),
                              FileLineColLoc::get(context_, where, 0, 0));
  Type storage = builder_.getF32Type();
  if (!info) {
    emitError(loc) << "checkpoint " << checkpoint_.sourcePath()
                   << " has no tensor '" << name << "' (a "
                   << config_.architecture << " needs it, with shape "
                   << shapeString(shape) << ")";
    fail();
  } else if (info->shape != std::vector<int64_t>(shape.begin(), shape.end())) {
    emitError(loc) << "tensor '" << name << "' has shape "
                   << shapeString(info->shape) << " but config.json implies "
                   << shapeString(shape);
    fail();
  } else if (!isFloatingPoint(info->dtype)) {
    emitError(loc) << "tensor '" << name << "' has dtype "
                   << dtypeName(info->dtype)
                   << "; weights must be floating point (quantized "
                      "checkpoints are not supported)";
    fail();
  } else {
    storage = storageTypeOf(context_, info->dtype);
  }
  return builder_.create<WeightOp>(loc, tensorType(shape),
                                   builder_.getStringAttr(name),
                                   TypeAttr::get(storage), UnitAttr());
}

Value DecoderBuilder::embedding(StringRef tableName) {
  Value table = weight(tableName, {config_.vocabSize, config_.hiddenSize});
  return builder_.create<EmbeddingOp>(
      moduleLoc(tableName), tensorType({kDyn, kDyn, config_.hiddenSize}),
      inputIds(), table);
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
  int64_t hidden = llvm::cast<RankedTensorType>(x.getType()).getShape().back();
  Value w = weight(weightName, {hidden});
  return builder_.create<RMSNormOp>(
      moduleLoc(weightName), x.getType(), x, w,
      builder_.getF64FloatAttr(eps), builder_.getF64FloatAttr(weightOffset),
      builder_.getBoolAttr(true));
}

Value DecoderBuilder::layerNorm(Value x, StringRef prefix, double eps,
                                bool bias) {
  int64_t hidden = llvm::cast<RankedTensorType>(x.getType()).getShape().back();
  Value w = weight((prefix + ".weight").str(), {hidden});
  Value b = bias ? weight((prefix + ".bias").str(), {hidden}) : Value();
  return builder_.create<LayerNormOp>(moduleLoc(prefix), x.getType(), x, w, b,
                                      builder_.getF64FloatAttr(eps),
                                      builder_.getBoolAttr(true));
}

Value DecoderBuilder::heads(Value x, int64_t numHeads, StringRef path) {
  int64_t width = llvm::cast<RankedTensorType>(x.getType()).getShape().back();
  return builder_.create<SplitHeadsOp>(
      moduleLoc(path), tensorType({kDyn, numHeads, kDyn, width / numHeads}), x,
      numHeads);
}

Value DecoderBuilder::rotary(Value x, const AttentionSpec &spec,
                             StringRef path) {
  const RopeScaling &s = config_.ropeScaling;
  RopeScalingAttr scaling;
  if (s.type != RopeScalingType::None)
    scaling = RopeScalingAttr::get(
        context_,
        s.type == RopeScalingType::Linear ? RopeScalingKind::linear
                                          : RopeScalingKind::llama3,
        builder_.getF64FloatAttr(s.factor),
        s.type == RopeScalingType::Llama3
            ? builder_.getF64FloatAttr(s.lowFreqFactor)
            : FloatAttr(),
        s.type == RopeScalingType::Llama3
            ? builder_.getF64FloatAttr(s.highFreqFactor)
            : FloatAttr(),
        s.type == RopeScalingType::Llama3 ? s.originalMaxPositionEmbeddings
                                          : 0);
  return builder_.create<RotaryOp>(
      moduleLoc(path), x.getType(), x, positionIds(),
      RotaryStyleAttr::get(context_, spec.rotaryStyle),
      builder_.getI64IntegerAttr(spec.rotaryDim),
      builder_.getF64FloatAttr(config_.ropeTheta),
      builder_.getI64IntegerAttr(config_.maxPositionEmbeddings), scaling);
}

Value DecoderBuilder::selfAttention(int64_t layer, Value x,
                                    const AttentionSpec &spec) {
  int64_t heads = config_.numAttentionHeads, kvHeads = config_.numKeyValueHeads,
          headDim = config_.headDim;
  std::string path = "model.layers." + std::to_string(layer) + ".self_attn";
  Value q = linear(x, spec.q, heads * headDim, spec.qkvBias);
  Value k = linear(x, spec.k, kvHeads * headDim, spec.qkvBias);
  Value v = linear(x, spec.v, kvHeads * headDim, spec.qkvBias);
  Value q4 = this->heads(q, heads, spec.q);
  Value k4 = this->heads(k, kvHeads, spec.k);
  Value v4 = this->heads(v, kvHeads, spec.v);
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
  Value attn = builder_.create<AttentionOp>(
      moduleLoc(path), q4.getType(), q4, keys, values, /*mask=*/Value(),
      builder_.getI64IntegerAttr(heads), builder_.getI64IntegerAttr(kvHeads),
      builder_.getI64IntegerAttr(headDim),
      builder_.getF64FloatAttr(1.0 / std::sqrt(double(headDim))),
      builder_.getBoolAttr(true),
      builder_.getI64IntegerAttr(spec.slidingWindow), DenseF64ArrayAttr(),
      FloatAttr());
  Value merged = builder_.create<MergeHeadsOp>(
      moduleLoc(path), tensorType({kDyn, kDyn, heads * headDim}), attn);
  return linear(merged, spec.o, config_.hiddenSize, spec.oBias);
}

Activation DecoderBuilder::activation() {
  StringRef act = config_.hiddenAct;
  if (act == "silu" || act == "swish")
    return Activation::silu;
  if (act == "gelu")
    return Activation::gelu;
  if (act == "gelu_new" || act == "gelu_pytorch_tanh" || act == "gelu_fast")
    return Activation::gelu_tanh;
  if (act == "relu")
    return Activation::relu;
  configError("hidden_act", "names an activation qeff does not know: '" + act +
                                "' (known: silu, gelu, gelu_new, "
                                "gelu_pytorch_tanh, gelu_fast, relu)");
  return Activation::silu;
}

Value DecoderBuilder::gatedMlp(Value x, StringRef gate, StringRef up,
                               StringRef down, bool bias) {
  int64_t inter = config_.intermediateSize;
  Value g = linear(x, gate, inter, bias);
  Value u = linear(x, up, inter, bias);
  Value act = builder_.create<GatedActivationOp>(
      moduleLoc(gate), g.getType(), g, u,
      ActivationAttr::get(context_, activation()));
  return linear(act, down, config_.hiddenSize, bias);
}

Value DecoderBuilder::add(Value a, Value b) {
  return builder_.create<AddOp>(a.getLoc(), a.getType(), a, b);
}

OwningOpRef<ModuleOp> DecoderBuilder::finish(Value hidden,
                                             StringRef lmHeadWeight) {
  Value w = weight(lmHeadWeight, {config_.vocabSize, config_.hiddenSize});
  Value logits = builder_.create<LinearOp>(
      moduleLoc("lm_head"), tensorType({kDyn, kDyn, config_.vocabSize}),
      hidden, w, Value(), WeightLayout::out_in);
  SmallVector<Value> results = {logits};
  results.append(presents_.begin(), presents_.end());
  builder_.create<func::ReturnOp>(moduleLoc("forward"), results);
  forward_.setType(builder_.getFunctionType(
      forward_.getArgumentTypes(), ValueRange(results).getTypes()));
  forward_.setResultAttr(0, "qeff.name", builder_.getStringAttr("logits"));
  forward_.setResultAttr(0, "qeff.dims",
                         dimNames({"batch_size", "seq_len", ""}));
  for (int64_t i = 0; i < config_.numHiddenLayers; ++i) {
    forward_.setResultAttr(
        1 + 2 * i, "qeff.name",
        builder_.getStringAttr("present_key." + std::to_string(i)));
    forward_.setResultAttr(
        2 + 2 * i, "qeff.name",
        builder_.getStringAttr("present_value." + std::to_string(i)));
    for (int64_t j = 1; j <= 2; ++j)
      forward_.setResultAttr(
          j + 2 * i, "qeff.dims",
          dimNames({"batch_size", "", "present_seq_len", ""}));
  }
  if (failed_)
    return nullptr;
  if (failed(mlir::verify(*module_)))
    return nullptr;
  return std::move(module_);
}
