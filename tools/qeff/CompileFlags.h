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

} // namespace qeff::tool

#endif // QEFF_TOOLS_QEFF_COMPILEFLAGS_H
