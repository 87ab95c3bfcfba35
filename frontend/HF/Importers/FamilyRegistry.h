//===- FamilyRegistry.h - HF architecture class -> family importer -*- C++ -*-===//
//
// Part of qeff. Class-keyed porting: config.json names an architecture class
// (`architectures[0]`, else `model_type`); the registry maps it to the family
// importer that serves every checkpoint of that class. Adding a family is one
// file defining a `Family` and one line in Families.def.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_HF_IMPORTERS_FAMILYREGISTRY_H
#define QEFF_FRONTEND_HF_IMPORTERS_FAMILYREGISTRY_H

#include "frontend/HF/Checkpoint.h"
#include "frontend/HF/ModelConfig.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>
#include <vector>

namespace qeff::hf {

class DecoderBuilder;

/// One family importer.
struct Family {
  /// Short name recorded in `#qeff.model` ("llama").
  std::string name;
  /// HF classes it serves ("LlamaForCausalLM").
  std::vector<std::string> architectures;
  /// `model_type` values it serves when `architectures` is absent.
  std::vector<std::string> modelTypes;
  /// The family's config defaults (its PretrainedConfig subclass).
  FamilyDefaults (*defaults)();
  /// Builds the decoder: embedding, layers, final norm; ends with
  /// `builder.finish(...)`.
  mlir::OwningOpRef<mlir::ModuleOp> (*build)(DecoderBuilder &builder);
  /// Optional: derives what the generic fields cannot express from the
  /// family's own config fields (Falcon's and GPT-BigCode's multi_query KV
  /// heads, GPT-2's n_inner = null, ...) and rejects unsupported variants.
  absl::Status (*configure)(ModelConfig &config) = nullptr;
};

/// Shared `configure` hooks. n_inner = null means 4 * n_embd (GPT-2, GPT-J,
/// CodeGen, GPT-BigCode).
absl::Status defaultInnerToFourTimesHidden(ModelConfig &config);
/// GPT-J and CodeGen: `rotary_dim` (null: the whole head) becomes the
/// partial_rotary_factor; then defaultInnerToFourTimesHidden.
absl::Status gptjStyleRotary(ModelConfig &config);

/// Qwen2 and Qwen2-MoE: sliding_window only with use_sliding_window, and
/// only when every layer is windowed (max_window_layers).
absl::Status qwen2SlidingWindow(ModelConfig &config);

/// Gemma 2 and Gemma 3: hidden_activation (gelu_pytorch_tanh when absent),
/// a positive query_pre_attn_scalar, soft-caps null or positive.
absl::Status gemma2Configure(ModelConfig &config);

/// Granite and GraniteMoe: the four multipliers (embedding_multiplier,
/// attention_multiplier, residual_multiplier, logits_scaling) are positive.
absl::Status checkGraniteMultipliers(ModelConfig &config);

/// Qwen2-MoE and Qwen3-MoE: `mlp_only_layers` (null or absent: none), the
/// layers that keep a dense MLP.
absl::StatusOr<std::vector<int64_t>> mlpOnlyLayers(const JsonConfig &raw);

/// Every registered family, in Families.def order.
const std::vector<Family> &registeredFamilies();

/// The family serving an architecture class or model_type; nullptr if none.
const Family *findFamily(llvm::StringRef architectureOrModelType);

/// "LlamaForCausalLM, MistralForCausalLM, ...".
std::string supportedArchitecturesList();

/// Imports the checkpoint directory `dir` into a module holding
/// `func.func @forward` in HF semantics. Errors are reported through the
/// context's diagnostic handler (naming the file, field or tensor); returns
/// null on failure. With `opened`, the checkpoint as the importer opened it
/// (headers parsed, files mapped) is handed out, for the exporter to read the
/// weights without parsing the headers again.
mlir::OwningOpRef<mlir::ModuleOp>
importHFCheckpoint(llvm::StringRef dir, mlir::MLIRContext *context,
                   std::shared_ptr<const Checkpoint> *opened = nullptr);

/// Prints a short summary of the checkpoint (class, family, layers, heads, kv
/// heads, parameters, dtype, bytes). Errors as for importHFCheckpoint.
mlir::LogicalResult summarizeHFCheckpoint(llvm::StringRef dir,
                                          mlir::MLIRContext *context,
                                          llvm::raw_ostream &os);

} // namespace qeff::hf

#endif // QEFF_FRONTEND_HF_IMPORTERS_FAMILYREGISTRY_H
