//===- Fp32ScopesFuzzer.cpp - qeff-fp16-clamp's fp32 scope patterns -------===//
//
// The input is an --fp32-scopes-file (one glob per line, '#' comments); the
// pass runs on a one-layer MLP module whose ops carry HF module-path
// locations. Errors (invalid globs, scopes matching no op) are diagnostics,
// never crashes; valid ones must leave a module that verifies.
//
//===----------------------------------------------------------------------===//

#include "FuzzUtil.h"

#include "dialects/QEff/QEffDialect.h"
#include "patterns/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <cstdlib>

namespace {

constexpr const char *kModule = R"mlir(
func.func @forward(%x: tensor<?x?x64xf32> {qeff.name = "hidden", qeff.dims = ["batch_size", "seq_len", ""]})
    -> (tensor<?x?x64xf32> {qeff.name = "out", qeff.dims = ["batch_size", "seq_len", ""]}) {
  %wg = qeff.weight "model.layers.0.mlp.gate_proj.weight" : f32 -> tensor<128x64xf32> loc("model.layers.0.mlp.gate_proj.weight")
  %wu = qeff.weight "model.layers.0.mlp.up_proj.weight" : f32 -> tensor<128x64xf32> loc("model.layers.0.mlp.up_proj.weight")
  %wd = qeff.weight "model.layers.0.mlp.down_proj.weight" : f32 -> tensor<64x128xf32> loc("model.layers.0.mlp.down_proj.weight")
  %g = qeff.linear %x, %wg : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32> loc("model.layers.0.mlp.gate_proj")
  %u = qeff.linear %x, %wu : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32> loc("model.layers.0.mlp.up_proj")
  %p = qeff.gated_activation %g, %u {kind = #qeff<activation silu>} : (tensor<?x?x128xf32>, tensor<?x?x128xf32>) -> tensor<?x?x128xf32> loc("model.layers.0.mlp.gate_proj")
  %d = qeff.linear %p, %wd : (tensor<?x?x128xf32>, tensor<64x128xf32>) -> tensor<?x?x64xf32> loc("model.layers.0.mlp.down_proj")
  %h = qeff.add %x, %d : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32> loc("model.layers.0")
  return %h : tensor<?x?x64xf32>
}
)mlir";

mlir::MLIRContext &context() {
  static mlir::MLIRContext *ctx = [] {
    mlir::DialectRegistry registry;
    registry.insert<mlir::func::FuncDialect, mlir::qeff::QEffDialect>();
    auto *c = new mlir::MLIRContext(registry);
    c->disableMultithreading();
    c->loadAllAvailableDialects();
    return c;
  }();
  return *ctx;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext &ctx = context();
  // Diagnostics are the expected outcome of most inputs: swallow them.
  mlir::ScopedDiagnosticHandler quiet(&ctx, [](mlir::Diagnostic &) {
    return mlir::success();
  });
  // Parsed once (the embedded module is valid); each input runs on a clone.
  static mlir::ModuleOp parsed =
      mlir::parseSourceString<mlir::ModuleOp>(kModule, &ctx).release();
  if (!parsed)
    std::abort();
  mlir::OwningOpRef<mlir::ModuleOp> module = parsed.clone();
  std::string path = qeff::fuzz::writeScratch(
      "scopes.txt",
      std::string_view(reinterpret_cast<const char *>(data), size));
  mlir::qeff::QEffFP16ClampOptions options;
  options.fp32ScopesFile = path;
  mlir::PassManager pm(&ctx);
  pm.addPass(mlir::qeff::createQEffFP16Clamp(options));
  if (mlir::succeeded(pm.run(*module)) && mlir::failed(mlir::verify(*module)))
    std::abort(); // a pass that succeeds must leave valid IR
  return 0;
}
