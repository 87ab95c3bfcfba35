//===- CompileFlags.h - compile options shared by subcommands ---*- C++ -*-===//
//
// Part of qeff. The pieces of compile options that `qeff compile` and the
// commands compiling on the user's behalf (`infer`) declare alike, so their
// spelling and help text stay one.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_TOOLS_QEFF_COMPILEFLAGS_H
#define QEFF_TOOLS_QEFF_COMPILEFLAGS_H

#include "lowering/Driver/CompileDriver.h"

#include "llvm/Support/CommandLine.h"

namespace qeff::tool {

/// `--kv-window=full|rolling` (mlir::qeff::KVWindow).
inline llvm::cl::desc kvWindowDesc() {
  return llvm::cl::desc(
      "KV cache of sliding-window layers: full (ctx_len slots, the window a "
      "mask; default) or rolling (window + prefill-seq-len - 1 slots written "
      "at position mod size: memory no longer grows with ctx_len)");
}
inline llvm::cl::ValuesClass kvWindowValues() {
  using mlir::qeff::KVWindow;
  return llvm::cl::values(
      clEnumValN(KVWindow::Full, "full", "ctx_len slots (default)"),
      clEnumValN(KVWindow::Rolling, "rolling",
                 "a rolling buffer per window layer"));
}

/// `--outline-layers[=on|off|auto]` (mlir::qeff::OutlineLayers).
inline llvm::cl::desc outlineLayersDesc() {
  return llvm::cl::desc(
      "Identical decoder layers as one ONNX model-local function called per "
      "layer (qaic-compile -sub-functions): on (also the bare flag), off, or "
      "auto (default: on for models of more than 4 layers)");
}
inline llvm::cl::ValuesClass outlineLayersValues() {
  using mlir::qeff::OutlineLayers;
  return llvm::cl::values(
      clEnumValN(OutlineLayers::On, "", "on"),
      clEnumValN(OutlineLayers::On, "on", "one function per distinct layer"),
      clEnumValN(OutlineLayers::Off, "off", "every layer inline"),
      clEnumValN(OutlineLayers::Auto, "auto",
                 "on for more than 4 layers (default)"));
}

/// `--num-devices N`.
inline llvm::cl::desc numDevicesDesc() {
  return llvm::cl::desc(
      "Tensor parallelism over N AI 100 SoCs: writes mdp.json and passes "
      "-mdp-load-partition-config; KV heads are replicated when N does not "
      "divide them (default 1)");
}

/// `--num-speculative-tokens K[,K2,...]`.
inline llvm::cl::desc numSpeculativeTokensDesc() {
  return llvm::cl::desc(
      "Speculative-decoding target: a num_logits_to_keep input, logits of "
      "the last num_logits_to_keep tokens, and a Decode specialization of "
      "seq_len K + 1 per K next to the one of seq_len 1 (each K + 1 at most "
      "--prefill-seq-len)");
}

/// `--on-device-sampling`.
inline llvm::cl::desc onDeviceSamplingDesc() {
  return llvm::cl::desc(
      "Sample on the device (QEfficient's include_sampler): next_tokens "
      "instead of logits, with repetition/presence penalties, temperature, "
      "top-k, top-p, min-p and host-supplied random numbers as inputs");
}

/// `--max-top-k-ids N`.
inline llvm::cl::desc maxTopKIdsDesc() {
  return llvm::cl::desc("On-device sampling: the number of most likely "
                        "tokens top-k, top-p, min-p and sampling choose "
                        "from (0: QEfficient's 512, or the vocabulary when "
                        "smaller)");
}

} // namespace qeff::tool

#endif // QEFF_TOOLS_QEFF_COMPILEFLAGS_H
