//===- Compile.cpp - the public compile API of qeff -----------------------===//
//
// Part of qeff. qeff::compile::Options -> mlir::qeff::CompileOptions, one
// MLIRContext per call, diagnostics collected into the result's message.
//
//===----------------------------------------------------------------------===//

#include "qeff/compile/Compile.h"

#include "lowering/Driver/CompileDriver.h"
#include "lowering/Driver/Depfile.h"
#include "support/DiagnosticPrinter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#ifndef QEFF_VERSION_STRING
#define QEFF_VERSION_STRING "0.0.0"
#endif

namespace qeff::compile {

namespace {
mlir::qeff::CompileOptions toDriverOptions(const Options &o) {
  using namespace mlir::qeff;
  CompileOptions d;
  d.checkpointDir = o.checkpointDir;
  d.outputDir = o.outputDir;
  switch (o.emit) {
  case Emit::MLIRImport:
    d.emit = EmitKind::MLIRImport;
    break;
  case Emit::MLIRDevice:
    d.emit = EmitKind::MLIRDevice;
    break;
  case Emit::ONNX:
    d.emit = EmitKind::ONNX;
    break;
  case Emit::Device:
    d.emit = EmitKind::Device;
    break;
  }
  d.ctxLen = o.ctxLen;
  d.prefillSeqLen = o.prefillSeqLen;
  d.batchSize = o.batchSize;
  d.fullBatchSize = o.fullBatchSize;
  d.numCores = o.numCores;
  d.numDevices = o.numDevices;
  d.numSpeculativeTokens = o.numSpeculativeTokens;
  d.onDeviceSampling = o.onDeviceSampling;
  d.maxTopKIds = o.maxTopKIds;
  d.kvWindow = o.rollingKVWindow ? KVWindow::Rolling : KVWindow::Full;
  switch (o.outlineLayers) {
  case OutlineLayers::Auto:
    d.outlineLayers = mlir::qeff::OutlineLayers::Auto;
    break;
  case OutlineLayers::On:
    d.outlineLayers = mlir::qeff::OutlineLayers::On;
    break;
  case OutlineLayers::Off:
    d.outlineLayers = mlir::qeff::OutlineLayers::Off;
    break;
  }
  d.mxfp6 = o.mxfp6;
  d.mxint8KV = o.mxint8KV;
  d.weightsDType = o.weightsF16    ? ExportWeightsDType::F16
                   : o.weightsBF16 ? ExportWeightsDType::BF16
                                   : ExportWeightsDType::AsIR;
  d.fp32Scopes = o.fp32Scopes;
  d.fp32ScopesFile = o.fp32ScopesFile;
  d.calibrate = o.calibrate;
  d.qaicCompile = o.qaicCompile;
  d.runQAic = o.runQAic;
  d.aicHwVersion = o.aicHwVersion;
  d.qaicArgs = o.qaicArgs;
  if (o.onStage)
    d.stageStarted = [&o](llvm::StringRef stage) { o.onStage(stage.str()); };
  if (o.onProgress)
    d.progress = [&o](const mlir::qeff::ExportProgress &p) {
      Progress progress;
      progress.tensorsDone = p.tensorsDone;
      progress.tensorsTotal = p.tensorsTotal;
      progress.bytesDone = p.bytesDone;
      progress.bytesTotal = p.bytesTotal;
      progress.tensor = std::string(p.tensorName);
      o.onProgress(progress);
    };
  d.cancelled = o.cancelled;
  return d;
}
} // namespace

Result compileCheckpoint(const Options &options) {
  Result result;
  if (options.checkpointDir.empty() || options.outputDir.empty()) {
    result.message = "qeff::compile: checkpointDir and outputDir must be set\n";
    return result;
  }
  if (options.fullBatchSize > 0 && options.batchSize != 1) {
    result.message = "qeff::compile: batchSize and fullBatchSize exclude each "
                     "other (continuous batching prefills one sequence and "
                     "decodes fullBatchSize)\n";
    return result;
  }
  mlir::qeff::CompileOptions driverOptions = toDriverOptions(options);
  mlir::MLIRContext context;
  llvm::SourceMgr sourceMgr;
  llvm::raw_string_ostream os(result.message);
  qeff::support::DiagnosticPrinter handler(sourceMgr, &context, os);
  mlir::qeff::CompileReport report;
  if (mlir::failed(
          mlir::qeff::compileCheckpoint(context, driverOptions, report))) {
    // One clear word for the caller: a cancel ends as an export error.
    if (options.cancelled && options.cancelled())
      result.message = "compile cancelled\n" + result.message;
    return result;
  }
  if (!options.depfile.empty() &&
      mlir::failed(mlir::qeff::writeCompileDepfile(
          mlir::FileLineColLoc::get(&context, options.depfile, 0, 0),
          driverOptions, options.depfile)))
    return result;
  result.ok = true;
  result.files = report.files;
  result.qaicCommand = report.qaicCommand;
  result.qpcBuilt = report.qpcBuilt;
  result.seconds = report.seconds;
  return result;
}

const char *version() { return QEFF_VERSION_STRING; }

} // namespace qeff::compile
