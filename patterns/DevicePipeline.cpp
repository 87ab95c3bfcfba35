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
  pm.addPass(createQEffNormalizeKVLayout());
  if (options.numDevices > 1)
    pm.addPass(createQEffReplicateKVHeads({options.numDevices}));
  pm.addPass(createQEffKVRetainedState({options.ctxLen, options.fullBatchSize}));
  if (!options.numSpeculativeTokens.empty())
    pm.addPass(createQEffSpeculativeLogits());
  if (options.onDeviceSampling)
    pm.addPass(createQEffOnDeviceSampling({options.maxTopKIds}));
  if (options.rollingKVWindow)
    pm.addPass(createQEffRollingKVWindow({options.prefillSeqLen}));
  QEffFixedShapesOptions shapes;
  shapes.batchSize = options.batchSize;
  shapes.prefillSeqLen = options.prefillSeqLen;
  shapes.ctxLen = options.ctxLen;
  shapes.fullBatchSize = options.fullBatchSize;
  // The pass copies the list when it is created.
  std::vector<int64_t> ks(options.numSpeculativeTokens.begin(),
                          options.numSpeculativeTokens.end());
  shapes.numSpeculativeTokens = ks;
  pm.addPass(createQEffFixedShapes(shapes));
  // The pass copies the list when it is created.
  std::vector<std::string> scopes(options.fp32Scopes.begin(),
                                  options.fp32Scopes.end());
  QEffFP16ClampOptions fp16;
  fp16.fp32Scopes = scopes;
  fp16.fp32ScopesFile = options.fp32ScopesFile;
  pm.addPass(createQEffFP16Clamp(fp16));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::qeff::registerDevicePipeline() {
  PassPipelineRegistration<DevicePipelineOptions>(
      "qeff-device-pipeline",
      "HF semantics -> device semantics: bhsd KV layout, KV heads for "
      "num-devices, retained KV cache, "
      "specialization symbols, fp16 clamps and fp32 islands, cleanup",
      buildDevicePipeline);
}
