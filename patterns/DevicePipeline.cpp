//===- DevicePipeline.cpp - the qeff-device-pipeline ----------------------===//
//
// Part of qeff. HF semantics -> device semantics, as `qeff compile` runs it.
//
//===----------------------------------------------------------------------===//

#include "patterns/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::qeff;

void mlir::qeff::buildDevicePipeline(OpPassManager &pm,
                                     const DevicePipelineOptions &options) {
  pm.addPass(createQEffKVRetainedState({options.ctxLen}));
  pm.addPass(createQEffFixedShapes(
      {options.batchSize, options.prefillSeqLen, options.ctxLen}));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::qeff::registerDevicePipeline() {
  PassPipelineRegistration<DevicePipelineOptions>(
      "qeff-device-pipeline",
      "HF semantics -> device semantics: retained KV cache, specialization "
      "symbols, cleanup",
      buildDevicePipeline);
}
