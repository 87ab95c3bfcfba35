//===- Passes.h - qeff device rewrites --------------------------*- C++ -*-===//
//
// Part of qeff. The generated pass declarations, the pattern populators and
// the device pipeline.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_PATTERNS_PASSES_H
#define QEFF_PATTERNS_PASSES_H

#include "dialects/QEff/QEffDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::qeff {

#define GEN_PASS_DECL
#include "patterns/Passes.h.inc"

/// The DRR rewrites of KVRetainedState.td.
void populateKVRetainedStatePatterns(RewritePatternSet &patterns);

/// The DRR rewrites of KVLayout.td.
void populateKVLayoutPatterns(RewritePatternSet &patterns);
/// The DRR rewrites of FP16Clamp.td (they read the fp32 marks).
void populateFP16ClampPatterns(RewritePatternSet &patterns);

/// Options of qeff-device-pipeline.
struct DevicePipelineOptions
    : public PassPipelineOptions<DevicePipelineOptions> {
  Option<int64_t> ctxLen{*this, "ctx-len",
                         llvm::cl::desc("Cache slots per sequence"),
                         llvm::cl::init(128)};
  Option<int64_t> prefillSeqLen{*this, "prefill-seq-len",
                                llvm::cl::desc("Tokens per prefill chunk"),
                                llvm::cl::init(32)};
  Option<int64_t> batchSize{*this, "batch-size",
                            llvm::cl::desc("Sequences per run"),
                            llvm::cl::init(1)};
  Option<int64_t> fullBatchSize{
      *this, "full-batch-size",
      llvm::cl::desc("Continuous batching: KV-cache rows addressed by a "
                     "batch_index input (0: off)"),
      llvm::cl::init(0)};
  Option<bool> rollingKVWindow{
      *this, "rolling-kv-window",
      llvm::cl::desc("Sliding-window layers keep a rolling buffer of window + "
                     "prefill-seq-len - 1 slots (qeff-rolling-kv-window)"),
      llvm::cl::init(false)};
  Option<int64_t> numDevices{
      *this, "num-devices",
      llvm::cl::desc("Tensor parallelism: KV heads replicated to a multiple "
                     "of this (qeff-replicate-kv-heads)"),
      llvm::cl::init(1)};
  ListOption<int64_t> numSpeculativeTokens{
      *this, "num-speculative-tokens",
      llvm::cl::desc("Speculative-decoding target: a num_logits_to_keep "
                     "input and a Decode specialization of seq_len K + 1 per "
                     "K (qeff-speculative-logits)")};
  Option<bool> onDeviceSampling{
      *this, "on-device-sampling",
      llvm::cl::desc("Sample on the device: next_tokens instead of logits "
                     "(qeff-on-device-sampling)"),
      llvm::cl::init(false)};
  Option<int64_t> maxTopKIds{
      *this, "max-top-k-ids",
      llvm::cl::desc("On-device sampling: the candidates of top-k, top-p, "
                     "min-p and sampling (0: 512, or the vocabulary when "
                     "smaller)"),
      llvm::cl::init(0)};
  ListOption<std::string> fp32Scopes{
      *this, "fp32-scopes",
      llvm::cl::desc("Module paths or globs whose ops stay in fp32")};
  Option<std::string> fp32ScopesFile{
      *this, "fp32-scopes-file",
      llvm::cl::desc("File of fp32 scope patterns, one per line")};
};

/// qeff-normalize-kv-layout, [qeff-replicate-kv-heads (num-devices > 1)],
/// qeff-kv-retained-state, [qeff-speculative-logits (num-speculative-tokens)],
/// [qeff-on-device-sampling (on-device-sampling)],
/// [qeff-rolling-kv-window], qeff-fixed-shapes,
/// qeff-fp16-clamp, canonicalize, cse.
void buildDevicePipeline(OpPassManager &pm,
                         const DevicePipelineOptions &options);
/// Registers `qeff-device-pipeline` with the pass registry.
void registerDevicePipeline();

#define GEN_PASS_REGISTRATION
#include "patterns/Passes.h.inc"

} // namespace mlir::qeff

#endif // QEFF_PATTERNS_PASSES_H
