//===- DecoderBuilder.h - building blocks of HF decoder importers -*- C++ -*-===//
//
// Part of qeff. The mechanism every family importer is written in: a builder
// that creates `func.func @forward` with the HF-semantics signature and offers
// one call per Hugging Face module (embedding, linear, norms, attention with
// its KV cache, MLPs, LM head). A family file states only what is particular
// to it: weight names, norm and activation variants, rotary style, biases.
//
// Weight shapes are derived from the config and checked against the
// checkpoint. A missing or mis-shaped tensor is reported at once (naming the
// tensor and both shapes) and the builder carries on with the expected shape,
// so one import lists every problem; finish() then fails.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_HF_IMPORTERS_DECODERBUILDER_H
#define QEFF_FRONTEND_HF_IMPORTERS_DECODERBUILDER_H

#include "dialects/QEff/QEffOps.h"
#include "frontend/HF/Checkpoint.h"
#include "frontend/HF/ModelConfig.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace qeff::hf {

struct Family;

/// The projections of one self-attention module.
struct AttentionSpec {
  /// Linear module prefixes ("model.layers.0.self_attn.q_proj"); ".weight"
  /// and ".bias" are appended.
  std::string q, k, v, o;
  bool qkvBias = false;
  bool oBias = false;
  mlir::qeff::RotaryStyle rotaryStyle = mlir::qeff::RotaryStyle::half;
  /// Features rotated per head; 0 disables rotary embeddings.
  int64_t rotaryDim = 0;
  /// 0: no sliding window.
  int64_t slidingWindow = 0;
};

class DecoderBuilder {
public:
  /// Creates the module (with `qeff.model`) and the `@forward` function.
  DecoderBuilder(mlir::MLIRContext *context, const Family &family,
                 const ModelConfig &config, const Checkpoint &checkpoint,
                 std::string checkpointDir, std::string configText);

  const ModelConfig &config() const { return config_; }
  mlir::OpBuilder &builder() { return builder_; }

  /// `[batch, seq]` int64 arguments of @forward.
  mlir::Value inputIds() const;
  mlir::Value positionIds() const;

  /// A `qeff.weight` of `shape`, checked against the checkpoint.
  mlir::Value weight(llvm::StringRef name, llvm::ArrayRef<int64_t> shape);
  /// Whether the checkpoint holds `name`.
  bool hasTensor(llvm::StringRef name) const;

  mlir::Value embedding(llvm::StringRef tableName);
  /// `prefix.weight` `[out, in]` (+ `prefix.bias` `[out]`).
  mlir::Value linear(mlir::Value x, llvm::StringRef prefix, int64_t out,
                     bool bias,
                     mlir::qeff::WeightLayout layout =
                         mlir::qeff::WeightLayout::out_in);
  mlir::Value rmsNorm(mlir::Value x, llvm::StringRef weightName, double eps,
                      double weightOffset = 0.0);
  mlir::Value layerNorm(mlir::Value x, llvm::StringRef prefix, double eps,
                        bool bias = true);
  /// Self-attention of decoder layer `layer` with its KV cache: projections,
  /// head split, rotary, `qeff.kv_concat` on past_key/value.<layer>,
  /// attention, head merge, output projection. Records the layer's present
  /// key/value as outputs of @forward.
  mlir::Value selfAttention(int64_t layer, mlir::Value x,
                            const AttentionSpec &spec);
  /// `down(act(gate(x)) * up(x))`.
  mlir::Value gatedMlp(mlir::Value x, llvm::StringRef gate, llvm::StringRef up,
                       llvm::StringRef down, bool bias);
  mlir::Value add(mlir::Value a, mlir::Value b);
  /// The activation named by config `hidden_act` (an error if unknown).
  mlir::qeff::Activation activation();

  /// Emits the LM head (`[batch, seq, vocab]` logits), returns them and the
  /// present caches from @forward, and hands over the module. Null when any
  /// error was reported.
  mlir::OwningOpRef<mlir::ModuleOp> finish(mlir::Value hidden,
                                           llvm::StringRef lmHeadWeight);

  /// Reports an error at the config field (config.json:line:col).
  void configError(llvm::StringRef field, const llvm::Twine &message);

private:
  /// `qeff.dims` of an @forward argument or result: the ONNX dim_param of
  /// each dynamic dimension ("" for static ones).
  mlir::ArrayAttr dimNames(llvm::ArrayRef<llvm::StringRef> names);
  mlir::Location configLoc(llvm::StringRef field);
  mlir::Location moduleLoc(llvm::StringRef modulePath);
  mlir::RankedTensorType tensorType(llvm::ArrayRef<int64_t> shape,
                                    mlir::Type element = {});
  mlir::Value heads(mlir::Value x, int64_t numHeads, llvm::StringRef path);
  mlir::Value rotary(mlir::Value x, const AttentionSpec &spec,
                     llvm::StringRef path);
  void fail() { failed_ = true; }

  mlir::MLIRContext *context_;
  const Family &family_;
  const ModelConfig &config_;
  const Checkpoint &checkpoint_;
  std::string checkpointDir_;
  std::string configPath_;
  std::string configText_;
  mlir::OpBuilder builder_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
  mutable mlir::func::FuncOp forward_;
  llvm::SmallVector<mlir::Value> presents_;
  bool failed_ = false;
};

} // namespace qeff::hf

#endif // QEFF_FRONTEND_HF_IMPORTERS_DECODERBUILDER_H
