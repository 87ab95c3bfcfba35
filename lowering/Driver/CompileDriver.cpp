//===- CompileDriver.cpp - checkpoint -> AI 100 compile artifacts ---------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "lowering/Driver/CompileDriver.h"
#include "lowering/Driver/Artifacts.h"
#include "lowering/Driver/CompileCache.h"
#include "lowering/Driver/Calibration.h"
#include "lowering/Driver/Commit.h"

#include "frontend/GGUF/GGUFModel.h"
#include "frontend/HF/GenerationConfig.h"
#include "frontend/HF/Importers/FamilyRegistry.h"
#include "lowering/ToONNX/Passes.h"
#include "patterns/Passes.h"
#include "patterns/PatternUtils.h"
#include "support/SafeFile.h"

#include "dialects/QEff/QEffOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include "onnx/onnx_pb.h" // defines ONNX_API, then includes onnx-ml.pb.h

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <set>
#include <thread>
#include <tuple>

using namespace mlir;
using namespace mlir::qeff;

namespace {

/// Removes the staging directory unless the compile published it.
struct StagingDir {
  std::string path;
  ~StagingDir() { removeStagingDir(path); }
};

std::string join(const std::string &dir, StringRef name) {
  llvm::SmallString<256> p(dir);
  llvm::sys::path::append(p, name);
  return p.str().str();
}

/// The module's text; with `debugInfo`, with its locations (the HF module
/// paths that fp32-scopes and the ONNX node names read), so that an emitted
/// `model.*.mlir` run through qeff-opt keeps them.
std::string printModule(ModuleOp module, bool debugInfo = false) {
  std::string text;
  llvm::raw_string_ostream os(text);
  OpPrintingFlags flags;
  if (debugInfo)
    flags.enableDebugInfo();
  module.print(os, flags);
  return text;
}

std::string dtypeName(Type type) {
  if (type.isF32())
    return "float32";
  if (type.isF16())
    return "float16";
  if (type.isBF16())
    return "bfloat16";
  if (type.isInteger(64))
    return "int64";
  if (type.isInteger(32))
    return "int32";
  if (type.isInteger(1))
    return "bool";
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

nlohmann::ordered_json ioList(func::FuncOp func, bool inputs) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  unsigned n = inputs ? func.getNumArguments() : func.getNumResults();
  for (unsigned i = 0; i < n; ++i) {
    auto name = inputs ? func.getArgAttrOfType<StringAttr>(i, "qeff.name")
                       : func.getResultAttrOfType<StringAttr>(i, "qeff.name");
    auto dims = inputs ? func.getArgAttrOfType<ArrayAttr>(i, "qeff.dims")
                       : func.getResultAttrOfType<ArrayAttr>(i, "qeff.dims");
    auto type = llvm::cast<RankedTensorType>(
        inputs ? func.getArgument(i).getType() : func.getResultTypes()[i]);
    nlohmann::ordered_json shape = nlohmann::ordered_json::array();
    for (int64_t d = 0; d < type.getRank(); ++d) {
      StringRef symbol =
          dims && d < int64_t(dims.size())
              ? llvm::cast<StringAttr>(dims[d]).getValue()
              : "";
      if (!symbol.empty())
        shape.push_back(symbol.str());
      else
        shape.push_back(type.getDimSize(d));
    }
    nlohmann::ordered_json entry;
    entry["name"] = name ? name.getValue().str() : "";
    entry["dtype"] = dtypeName(type.getElementType());
    entry["shape"] = shape;
    list.push_back(entry);
  }
  return list;
}

func::FuncOp publicFunction(ModuleOp module) {
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal() && !func.isPrivate())
      return func;
  return nullptr;
}

LogicalResult runPasses(ModuleOp module,
                        llvm::function_ref<void(OpPassManager &)> build) {
  PassManager pm(module->getName());
  build(pm);
  return pm.run(module);
}

/// The scopes of the ops qeff-fp16-clamp marked fp32: the exporter names
/// their ONNX nodes `/<scope>/<OpType>_<n>`.
std::vector<std::string> fp32ScopesOf(ModuleOp module) {
  std::set<std::string> scopes;
  module.walk([&](Operation *op) {
    if (isMarkedFP32(op))
      if (std::optional<StringRef> scope = scopeOf(op->getLoc()))
        scopes.insert(scope->str());
  });
  return {scopes.begin(), scopes.end()};
}

/// A YAML flow scalar: plain when that is unambiguous, else single-quoted.
std::string yamlScalar(StringRef text) {
  bool plain =
      !text.empty() && text.front() != '-' && llvm::all_of(text, [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) ||
               StringRef("_./-").contains(c);
      });
  if (plain)
    return text.str();
  std::string quoted = "'";
  for (char c : text)
    quoted += c == '\'' ? std::string("''") : std::string(1, c);
  return quoted + "'";
}

} // namespace

LogicalResult
mlir::qeff::precisionListYaml(Location loc, const std::string &model,
                              const std::vector<std::string> &fp32Scopes,
                              ArrayRef<std::string> comment, std::string &yaml,
                              size_t &numNodes) {
  auto buffer = llvm::MemoryBuffer::getFile(model, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return emitError(loc) << "cannot read " << model << ": "
                          << buffer.getError().message();
  ::onnx::ModelProto proto;
  if (!proto.ParseFromArray((*buffer)->getBufferStart(),
                            static_cast<int>((*buffer)->getBufferSize())))
    return emitError(loc) << model << " is not an ONNX model";
  std::set<std::string> scopes(fp32Scopes.begin(), fp32Scopes.end());
  std::vector<std::string> names;
  auto visit = [&](const ::onnx::NodeProto &node) {
    StringRef name = node.name();
    size_t slash = name.rfind('/');
    if (!name.starts_with("/") || slash == 0 || node.output_size() == 0)
      return;
    if (scopes.count(name.substr(1, slash - 1).str()))
      names.push_back(node.output(0));
  };
  for (const ::onnx::NodeProto &node : proto.graph().node())
    visit(node);
  for (const ::onnx::FunctionProto &function : proto.functions())
    for (const ::onnx::NodeProto &node : function.node())
      visit(node);

  yaml.clear();
  for (const std::string &line : comment)
    yaml += "# " + line + "\n";
  if (names.empty())
    yaml += "FP32NodeInstanceNames: []\n";
  else
    yaml += "FP32NodeInstanceNames:\n";
  for (const std::string &name : names)
    yaml += "  - " + yamlScalar(name) + "\n";
  numNodes = names.size();
  return success();
}

std::string mlir::qeff::findQAicCompile(const std::string &explicitPath) {
  if (!explicitPath.empty())
    return explicitPath;
  if (const char *env = std::getenv("QEFF_QAIC_COMPILE"); env && *env)
    return env;
  // Where every Qualcomm script runs it from; Apps SDKs older than
  // qaic-compile have only qaic-exec there.
  std::string sdk = "/opt/qti-aic";
  if (const char *env = std::getenv("QEFF_QAIC_SDK_DIR"); env && *env)
    sdk = env;
  for (const char *name : {"qaic-compile", "qaic-exec"})
    if (std::string path = join(join(sdk, "exec"), name); llvm::sys::fs::can_execute(path))
      return path;
  return "";
}

std::vector<std::string>
mlir::qeff::qaicCompileArguments(const CompileOptions &o,
                                 bool hasPrecisionList,
                                 const std::string &dir) {
  auto file = [&](StringRef name) {
    return dir.empty() ? name.str() : join(dir, name);
  };
  std::vector<std::string> args = {
      "-aic-hw",
      "-aic-hw-version=" + o.aicHwVersion,
      "-m=" + file("model.onnx"),
      "-retained-state",
      "-convert-to-fp16",
      "-aic-num-cores=" + std::to_string(o.numCores)};
  if (o.mxfp6)
    args.push_back("-mxfp6-matmul");
  args.push_back("-network-specialization-config=" +
                 file("specializations.json"));
  args.push_back("-custom-IO-list-file=" + file("custom_io.yaml"));
  if (hasPrecisionList)
    args.push_back("-node-precision-info=" +
                   file("node_precision.yaml"));
  if (o.numDevices > 1)
    args.push_back("-mdp-load-partition-config=" +
                   file("mdp.json"));
  if (o.outlineLayers == OutlineLayers::On)
    args.push_back("-sub-functions");
  args.insert(args.end(), o.qaicArgs.begin(), o.qaicArgs.end());
  args.push_back("-aic-binary-dir=" + file("qpc"));
  return args;
}

std::string mlir::qeff::mdpPartitionJson(int64_t numDevices,
                                         int64_t numCores) {
  nlohmann::ordered_json ids = nlohmann::ordered_json::array();
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  for (int64_t d = 0; d < numDevices; ++d) {
    ids.push_back(d);
    devices.push_back({{"deviceId", d}, {"numCores", numCores}});
  }
  nlohmann::ordered_json mdp;
  mdp["connections"] = {{{"devices", ids}, {"type", "p2p"}}};
  mdp["partitions"] = {{{"name", "Partition0"}, {"devices", devices}}};
  return mdp.dump(2) + "\n";
}

namespace {
/// hashFile of checkpoint files on a thread of its own; wait() (or the
/// destructor, on an early return) joins it.
class CheckpointHashes {
public:
  ~CheckpointHashes() { wait(); }
  void start(const std::string &dir, const std::vector<std::string> &files,
             const std::map<std::string, std::string> &known) {
    std::vector<std::string> todo;
    for (const std::string &file : files) {
      auto it = known.find(file);
      if (it != known.end())
        hashes_[file] = it->second;
      else
        todo.push_back(file);
    }
    thread_ = std::thread([this, dir, todo] {
      for (const std::string &file : todo)
        computed_[file] = hashFile(join(dir, file));
    });
  }
  const std::map<std::string, std::string> &wait() {
    if (thread_.joinable()) {
      thread_.join();
      hashes_.insert(computed_.begin(), computed_.end());
    }
    return hashes_;
  }

private:
  std::thread thread_;
  std::map<std::string, std::string> hashes_, computed_;
};
} // namespace

/// --calibrate: compile once into a temporary directory, measure the value
/// ranges there on the host device, then compile for real with the scopes of
/// the nodes near the fp16 limit kept in fp32.
static LogicalResult compileCalibrated(MLIRContext &context,
                                       const CompileOptions &o,
                                       CompileReport &report) {
  Location loc = FileLineColLoc::get(&context, o.outputDir, 0, 0);
  llvm::SmallString<256> scratch;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("qeff-calibration", scratch))
    return emitError(loc) << "cannot create a calibration directory: "
                          << ec.message();
  StagingDir cleanup{scratch.str().str()};
  CompileOptions first = o;
  first.calibrate = 0;
  first.runQAic = false;
  // Calibration names nodes by scope: keep every layer's own nodes.
  first.outlineLayers = OutlineLayers::Off;
  first.emit = EmitKind::Device;
  first.outputDir = cleanup.path;
  first.progress = nullptr;
  CompileReport firstReport;
  if (failed(compileCheckpoint(context, first, firstReport)))
    return failure();
  CalibrationReport calibration;
  if (failed(calibrateFP32Nodes(loc, cleanup.path, o.calibrate, calibration)))
    return failure();

  // Node `/<scope>/<OpType>_<n>` -> scope.
  CompileOptions calibrated = o;
  calibrated.calibrate = 0;
  // The calibrated compile also ranks weights by their MXFP6 error (from
  // `qeff compile` and model cards alike).
  calibrated.measureMxErrors = true;
  std::set<std::string> scopes(o.fp32Scopes.begin(), o.fp32Scopes.end());
  for (const auto &[node, value] : calibration.fp32Nodes) {
    StringRef name(node);
    size_t slash = name.rfind('/');
    if (!name.starts_with("/") || slash == 0 || slash == StringRef::npos)
      continue;
    std::string scope = name.substr(1, slash - 1).str();
    if (scopes.insert(scope).second)
      report.calibratedScopes.push_back(scope);
  }
  calibrated.fp32Scopes.assign(scopes.begin(), scopes.end());
  report.calibratedNodes = calibration.fp32Nodes;
  report.calibrationMaxElsewhere = calibration.maxElsewhere;
  return compileCheckpoint(context, calibrated, report);
}

LogicalResult mlir::qeff::compileCheckpoint(MLIRContext &context,
                                            const CompileOptions &given,
                                            CompileReport &report) {
  // An absolute output directory: the staging directory is created inside
  // it, and the qaic-compile command must work from anywhere.
  CompileOptions o = given;
  {
    llvm::SmallString<256> out(o.outputDir);
    llvm::sys::fs::make_absolute(out);
    llvm::sys::path::remove_dots(out, /*remove_dot_dot=*/true);
    o.outputDir = out.str().str();
  }
  Location loc = FileLineColLoc::get(&context, o.outputDir, 0, 0);
  // The checkpoint is only ever read: never write into it (the staging
  // directory beside the output included).
  if (failed(checkOutputOutsideCheckpoint(loc, o.outputDir, o.checkpointDir)))
    return failure();
  if (o.calibrate > 0 && o.emit == EmitKind::Device)
    return compileCalibrated(context, o, report);
  auto start = std::chrono::steady_clock::now();
  context.loadDialect<QEffDialect, func::FuncDialect, onnx::ONNXDialect>();

  // Absurd shapes are refused before any work: every size computed from them
  // downstream (KV cache, specializations) then stays far from overflowing.
  for (auto [name, value, low, high] :
       {std::tuple<const char *, int64_t, int64_t, int64_t>{"--ctx-len", o.ctxLen, 1,
                                                            kMaxCtxLen},
        {"--prefill-seq-len", o.prefillSeqLen, 1, kMaxCtxLen},
        {"--batch-size", o.batchSize, 1, kMaxBatchSize},
        {"--full-batch-size", o.fullBatchSize, 0, kMaxBatchSize},
        {"--num-cores", o.numCores, 1, kMaxNumCores}})
    if (value < low || value > high)
      return emitError(loc) << name << " " << value << " is out of range (" << low
                            << ".." << high << ")";
  // The speculative-decoding target's K values (QEfficient's rule: a
  // verification step of K + 1 tokens is no longer than a prefill chunk).
  if (o.numSpeculativeTokens.size() > kMaxSpeculativeSpecializations)
    return emitError(loc) << "--num-speculative-tokens gives "
                          << o.numSpeculativeTokens.size()
                          << " values; at most "
                          << kMaxSpeculativeSpecializations << " are allowed";
  for (size_t i = 0; i < o.numSpeculativeTokens.size(); ++i) {
    int64_t k = o.numSpeculativeTokens[i];
    if (k < 1 || k + 1 > o.prefillSeqLen)
      return emitError(loc)
             << "--num-speculative-tokens " << k << ": K must be at least 1 "
             << "and K + 1 at most --prefill-seq-len (" << o.prefillSeqLen
             << "): a verification step of K + 1 tokens is never longer "
                "than a prefill chunk";
    for (size_t j = 0; j < i; ++j)
      if (o.numSpeculativeTokens[j] == k)
        return emitError(loc) << "--num-speculative-tokens lists " << k
                              << " twice";
  }

  // Resolve the compiler first: a bad --qaic-compile is a user error before
  // any work.
  std::string compiler;
  if (o.emit == EmitKind::Device) {
    compiler = findQAicCompile(o.qaicCompile);
    if (!compiler.empty() && !llvm::sys::fs::can_execute(compiler))
      return emitError(loc) << "qaic-compile '" << compiler
                            << "' is not an executable file";
    if (std::string error = checkQAicArguments(o); !error.empty())
      return emitError(loc) << error;
  }

  // ONNX functions are shared by every layer of a kind, so a layer's nodes
  // cannot be listed in node_precision.yaml on their own.
  bool hasFP32Scopes = !o.fp32Scopes.empty() || !o.fp32ScopesFile.empty() ||
                       o.calibrate > 0;
  if (o.outlineLayers == OutlineLayers::On && hasFP32Scopes)
    return emitError(loc)
           << "--outline-layers cannot be combined with fp32 scopes or "
              "--calibrate: the nodes of an outlined layer are shared by "
              "every layer of its kind, so node_precision.yaml cannot keep "
              "one layer's nodes in fp32";
  if (o.numDevices < 1)
    return emitError(loc) << "the number of devices must be at least 1, got "
                          << o.numDevices;
  if (!o.numSpeculativeTokens.empty() &&
      (o.emit == EmitKind::MLIRImport || o.emit == EmitKind::ONNX))
    return emitError(loc) << "--num-speculative-tokens builds the device "
                             "form (a speculative-decoding target); --emit="
                          << (o.emit == EmitKind::ONNX ? "onnx" : "mlir-import")
                          << " writes the imported form, which has no "
                             "specializations";
  if (o.onDeviceSampling) {
    // The sampler replaces the last token's logits: a target's K + 1 rows of
    // logits and the device split are not handled by it.
    if (!o.numSpeculativeTokens.empty())
      return emitError(loc) << "--on-device-sampling cannot be combined with "
                               "--num-speculative-tokens: the sampler takes "
                               "the last token's logits only";
    if (o.numDevices > 1)
      return emitError(loc) << "--on-device-sampling cannot be combined with "
                               "--num-devices > 1 (tensor parallelism) yet";
    if (o.prefillSeqLen < 2)
      return emitError(loc)
             << "--on-device-sampling needs --prefill-seq-len of at least 2: "
                "the graph tells a prefill run from a decode run by its "
                "number of tokens (the presence penalty counts generated "
                "tokens only)";
    if (o.emit == EmitKind::MLIRImport || o.emit == EmitKind::ONNX)
      return emitError(loc) << "--on-device-sampling builds the device form; "
                               "--emit="
                            << (o.emit == EmitKind::ONNX ? "onnx" : "mlir-import")
                            << " writes the imported form";
  }
  if (!o.onDeviceSampling && o.maxTopKIds != 0)
    return emitError(loc) << "--max-top-k-ids applies only with "
                             "--on-device-sampling";
  if (o.maxTopKIds < 0 || o.maxTopKIds > 65536)
    return emitError(loc) << "--max-top-k-ids " << o.maxTopKIds
                          << " is out of range (1..65536)";
  if (!o.fp32ScopesFile.empty() &&
      !llvm::sys::fs::is_regular_file(o.fp32ScopesFile))
    return emitError(loc) << "fp32 scopes file '" << o.fp32ScopesFile
                          << "' does not exist or is not a file";

  // Everything is written into a staging directory beside the output and
  // published by one rename (Commit.h): a failed or killed compile leaves
  // nothing under the output name.
  StagingDir staging;
  if (failed(createStagingDir(loc, o.outputDir, staging.path)))
    return failure();

  if (o.cancelled && o.cancelled())
    return emitError(loc) << "compile cancelled before import";
  if (o.stageStarted)
    o.stageStarted("import");
  std::shared_ptr<const ::qeff::hf::Checkpoint> checkpoint;
  OwningOpRef<ModuleOp> module =
      ::qeff::hf::importHFCheckpoint(o.checkpointDir, &context, &checkpoint);
  if (!module)
    return failure();
  // A GGUF file stands for a checkpoint directory: the HF files its metadata
  // makes (config, generation config, tokenizer, chat template) go into the
  // artifacts as a checkpoint's own would.
  bool gguf = isGGUFCheckpoint(o.checkpointDir);
  std::map<std::string, std::string> ggufFiles;
  if (gguf) {
    auto opened = ::qeff::gguf::openGGUFModel(o.checkpointDir, /*withWeights=*/false);
    if (!opened.ok())
      return emitError(loc) << std::string(opened.status().message());
    ggufFiles = std::move(opened->hfFiles);
    if (!opened->tokenizerProblem.empty())
      emitWarning(FileLineColLoc::get(&context, o.checkpointDir, 0, 0))
          << "the GGUF file's tokenizer is left out of the artifacts (they run "
                          "on token ids only): "
                       << opened->tokenizerProblem;
  }
  // generation_config.json travels with the artifacts: what `qeff run` would
  // refuse in it (an eos_token_id that is no token id, ...) is refused now.
  if (auto generation = ::qeff::hf::readGenerationConfigIfPresent(o.checkpointDir);
      !gguf && !generation.ok())
    return emitError(FileLineColLoc::get(
               &context, join(o.checkpointDir, "generation_config.json"), 0, 0))
           << std::string(generation.status().message());

  // The manifest's content hashes, computed on a second thread while the
  // pipeline and the export run (the export mostly waits for the disk).
  CheckpointHashes hashes;
  if (o.emit == EmitKind::Device) {
    auto model = (*module)->getAttrOfType<ModelAttr>(ModelAttr::getAttrName());
    std::vector<std::string> files;
    if (!gguf)
      files.push_back("config.json");
    for (Attribute file : model.getCheckpoint())
      files.push_back(llvm::cast<StringAttr>(file).getValue().str());
    hashes.start(checkpointContentDir(o.checkpointDir), files, o.knownHashes);
  }

  auto finish = [&]() -> LogicalResult {
    if (failed(publishStagingDir(loc, staging.path, o.outputDir, report.files)))
      return failure();
    staging.path.clear();
    report.seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start)
                         .count();
    return success();
  };
  ExportOptions exportOptions;
  exportOptions.outputDir = staging.path;
  exportOptions.checkpointDir = o.checkpointDir;
  exportOptions.checkpoint = checkpoint;
  exportOptions.weightsDType = o.weightsDType;
  exportOptions.progress = o.progress;
  exportOptions.cancelled = o.cancelled;
  // Between stages: a cancelled compile stops before the next one starts.
  auto enter = [&](llvm::StringRef stage) -> LogicalResult {
    if (o.cancelled && o.cancelled())
      return emitError(loc) << "compile cancelled before " << stage;
    if (o.stageStarted)
      o.stageStarted(stage);
    return success();
  };
  exportOptions.threads = o.exportThreads;

  switch (o.emit) {
  case EmitKind::MLIRImport:
    if (failed(writeFileAtomically(loc, join(staging.path, "model.import.mlir"),
                                   printModule(*module, /*debugInfo=*/true))))
      return failure();
    return finish();
  case EmitKind::ONNX:
    if (failed(enter("lowering")) ||
        failed(runPasses(*module, [](OpPassManager &pm) {
          pm.addPass(createQEffLowerToONNX());
        })) ||
        failed(enter("export")) ||
        failed(exportONNX(*module, exportOptions)))
      return failure();
    return finish();
  case EmitKind::MLIRDevice:
  case EmitKind::Device:
    break;
  }

  DevicePipelineOptions pipeline;
  pipeline.ctxLen = o.ctxLen;
  pipeline.prefillSeqLen = o.prefillSeqLen;
  pipeline.batchSize = o.batchSize;
  pipeline.fullBatchSize = o.fullBatchSize;
  pipeline.rollingKVWindow = o.kvWindow == KVWindow::Rolling;
  pipeline.numDevices = o.numDevices;
  pipeline.numSpeculativeTokens = o.numSpeculativeTokens;
  pipeline.onDeviceSampling = o.onDeviceSampling;
  pipeline.maxTopKIds = o.maxTopKIds;
  pipeline.fp32Scopes = o.fp32Scopes;
  pipeline.fp32ScopesFile = o.fp32ScopesFile;
  if (failed(enter("device pipeline")))
    return failure();
  if (failed(runPasses(*module, [&](OpPassManager &pm) {
        buildDevicePipeline(pm, pipeline);
      })))
    return failure();
  std::string deviceIR = printModule(*module);
  std::string seqLenRope = seqLenDependentRopeJson(*module);
  int64_t kvReplication = 1;
  if (auto r = (*module)->getAttrOfType<IntegerAttr>("qeff.kv_head_replication"))
    kvReplication = r.getInt();
  std::vector<std::string> fp32Scopes = fp32ScopesOf(*module);
  std::vector<std::string> fp32Patterns;
  if (auto attr = (*module)->getAttrOfType<ArrayAttr>(kFP32ScopesAttr))
    for (Attribute a : attr)
      fp32Patterns.push_back(llvm::cast<StringAttr>(a).str());
  if (o.emit == EmitKind::MLIRDevice) {
    if (failed(writeFileAtomically(loc, join(staging.path, "model.device.mlir"),
                                   printModule(*module, /*debugInfo=*/true))))
      return failure();
    return finish();
  }

  // --outline-layers: explicit, or (auto) for more than kOutlineLayersAuto
  // layers, counted by their cache inputs.
  bool outline = o.outlineLayers == OutlineLayers::On;
  if (o.outlineLayers == OutlineLayers::Auto && !hasFP32Scopes) {
    int64_t layers = 0;
    for (unsigned i = 0; i < publicFunction(*module).getNumArguments(); ++i)
      if (auto name = publicFunction(*module).getArgAttrOfType<StringAttr>(
              i, "qeff.name"))
        layers += name.getValue().starts_with("past_key.");
    outline = layers > kOutlineLayersAuto;
  }
  if (failed(enter("lowering")))
    return failure();
  if (failed(runPasses(*module, [&](OpPassManager &pm) {
        pm.addPass(createQEffLowerToONNX());
        pm.addPass(createQEffVerifyDevice());
        if (outline)
          pm.addPass(createQEffOutlineLayers(
              {/*strict=*/o.outlineLayers == OutlineLayers::On}));
      })))
    return failure();
  // What the artifacts say: outlined or not (auto may have found nothing).
  o.outlineLayers =
      (*module)->hasAttr("qeff.outlined_layers") ? OutlineLayers::On
                                                 : OutlineLayers::Off;
  ExportReport exported;
  if (failed(enter("export")))
    return failure();
  if (failed(exportONNX(*module, exportOptions, &exported)))
    return failure();
  report.graphNodes = exported.numNodes;
  report.layerFunctions = exported.numFunctions;
  report.functionNodes = exported.numFunctionNodes;

  // The fp32 islands: the exported nodes of the marked scopes.
  bool hasPrecisionList = !fp32Scopes.empty();
  std::string precisionYaml;
  size_t numFP32Nodes = 0;
  if (hasPrecisionList) {
    std::vector<std::string> comment = {
        "qeff compile: ONNX nodes qaic-compile keeps in fp32",
        "(-node-precision-info), each named by its first output.",
        "fp32 scopes:"};
    for (const std::string &pattern : fp32Patterns)
      comment.push_back("  " + pattern);
    if (failed(precisionListYaml(loc, join(staging.path, "model.onnx"),
                                 fp32Scopes, comment, precisionYaml,
                                 numFP32Nodes)))
      return failure();
  }

  // What -mxfp6-matmul will compress, and the MX emulation's assumptions.
  if (failed(mxCompressionReport(loc, join(staging.path, "model.onnx"),
                                 o.measureMxErrors, report.mx)))
    return failure();

  // The command qeff runs names the artifacts by absolute path; the
  // manifest and qaic-compile.sh name them relative to the artifact
  // directory, so that nothing in it names its own location (a copy of the
  // directory on an AI 100 host works as it is).
  std::vector<std::string> args =
      qaicCompileArguments(o, hasPrecisionList, o.outputDir);
  std::vector<std::string> relativeArgs =
      qaicCompileArguments(o, hasPrecisionList, "");
  std::string command = "qaic-compile";
  for (const std::string &arg : args)
    command += " " + shellQuote(arg);
  report.qaicCommand = command;

  // The manifest: what was built, from what, how.
  func::FuncOp func = publicFunction(*module);
  auto model = (*module)->getAttrOfType<ModelAttr>(ModelAttr::getAttrName());
  nlohmann::ordered_json manifest;
  manifest["qeff_version"] = QEFF_VERSION_STRING;
  manifest["architecture"] = model.getArchitecture().getValue().str();
  manifest["family"] = model.getFamily().getValue().str();
  manifest["inputs"] = ioList(func, true);
  manifest["outputs"] = ioList(func, false);
  // The device group the runtime opens: exactly this many devices
  // (mdp.json partitions the network over them).
  manifest["num_devices"] = o.numDevices;
  // qeff-replicate-kv-heads: each KV head of the checkpoint appears this
  // many times in the cache (1: as in the checkpoint).
  manifest["kv_head_replication"] = kvReplication;
  manifest["kv_layout"] = "bhsd";
  // Where transformers keeps the cache in another layout (BLOOM), the
  // importer records it; qeff's past/present tensors are bhsd regardless.
  if (auto hfLayout = (*module)->getAttrOfType<DictionaryAttr>(
          "qeff.hf_cache_layout")) {
    nlohmann::ordered_json layout;
    for (NamedAttribute entry : hfLayout)
      if (auto text = llvm::dyn_cast<StringAttr>(entry.getValue()))
        layout[entry.getName().str()] = text.getValue().str();
    manifest["hf_cache_layout"] = layout;
  }
  manifest["kv_precision"] = o.mxint8KV ? "mxint8" : "float16";
  // Rope frequencies that follow the call's sequence length (dynamic NTK,
  // longrope): cached keys depend on the steps that wrote them.
  if (!seqLenRope.empty())
    manifest["seq_len_dependent_rope"] = nlohmann::ordered_json::parse(seqLenRope);
  manifest["specializations"] =
      nlohmann::ordered_json::parse(specializationsJson(*module, false),
                                    nullptr, false)["specializations"];
  nlohmann::ordered_json options;
  options["ctx_len"] = o.ctxLen;
  options["prefill_seq_len"] = o.prefillSeqLen;
  options["batch_size"] = o.batchSize;
  options["full_batch_size"] = o.fullBatchSize;
  options["num_cores"] = o.numCores;
  options["kv_window"] = o.kvWindow == KVWindow::Rolling ? "rolling" : "full";
  options["outline_layers"] = o.outlineLayers == OutlineLayers::On;
  if (!o.numSpeculativeTokens.empty())
    options["num_speculative_tokens"] = o.numSpeculativeTokens;
  if (o.onDeviceSampling) {
    options["on_device_sampling"] = true;
    if (o.maxTopKIds > 0)
      options["max_top_k_ids"] = o.maxTopKIds;
  }
  options["mxfp6"] = o.mxfp6;
  options["mxint8_kv"] = o.mxint8KV;
  options["weights_dtype"] = o.weightsDType == ExportWeightsDType::F16    ? "float16"
                             : o.weightsDType == ExportWeightsDType::BF16 ? "bfloat16"
                                                                          : "as-ir";
  manifest["options"] = options;
  {
    // The block layout qeff's MX emulation (qeff run/eval --numerics)
    // assumes for what qaic-compile stores; only an AI 100 can settle it.
    nlohmann::ordered_json mx, weights, kv;
    weights["element"] = "fp6_e2m3";
    weights["block_size"] = 32;
    weights["block_axis"] = "k (the reduction axis of the MatMul weight)";
    weights["scale"] = "e8m0";
    kv["element"] = "int8";
    kv["block_size"] = 32;
    kv["block_axis"] = "head_dim";
    kv["applied"] = "at each retained-state write";
    mx["assumptions"] = {{"weights", weights},
                         {"kv_cache", kv},
                         {"rounding", "even"},
                         {"note", "assumed by qeff's host emulation; only an AI 100 can "
                                  "confirm them (docs/numerics.md)"}};
    mx["report"] = mxReportJson(report.mx);
    manifest["mx"] = mx;
  }
  const std::map<std::string, std::string> &fileHashes = hashes.wait();
  auto hashOf = [&](const std::string &name) -> std::string {
    auto it = fileHashes.find(name);
    return it == fileHashes.end() ? "" : it->second;
  };
  nlohmann::ordered_json hashList;
  hashList["algorithm"] = "blake3-128";
  hashList["config"] = gguf ? hashText(ggufFiles["config.json"]) : hashOf("config.json");
  nlohmann::ordered_json weights = nlohmann::ordered_json::object();
  for (Attribute file : model.getCheckpoint()) {
    std::string name = llvm::cast<StringAttr>(file).getValue().str();
    weights[name] = hashOf(name);
  }
  hashList["weights"] = weights;
  hashList["device_ir"] = hashText(deviceIR);
  manifest["hashes"] = hashList;
  manifest["qaic_compile"] = relativeArgs;
  if (hasPrecisionList) {
    nlohmann::ordered_json precision;
    precision["file"] = "node_precision.yaml";
    precision["fp32_scopes"] = fp32Patterns;
    precision["fp32_nodes"] = numFP32Nodes;
    manifest["precision_list"] = precision;
  } else {
    manifest["precision_list"] = nullptr;
  }

  // What running the artifacts needs from the checkpoint: tokenizer, chat
  // template and generation settings, so that an artifact directory is
  // self-contained. Regular files only, bounded as their readers bound them:
  // a FIFO would block the copy and /dev/zero fill the disk.
  for (const auto &[name, text] : ggufFiles)
    if (failed(writeFileAtomically(loc, join(staging.path, name), text)))
      return failure();
  for (StringRef name : {"config.json", "generation_config.json",
                         "tokenizer.json", "tokenizer_config.json",
                         "special_tokens_map.json", "tokenizer.model",
                         "chat_template.jinja", "chat_template.json"}) {
    if (gguf)
      break;
    std::string from = join(o.checkpointDir, name);
    if (!llvm::sys::fs::exists(from) && !llvm::sys::fs::is_symlink_file(from))
      continue;
    uint64_t limit = name == "config.json" || name == "generation_config.json"
                         ? ::qeff::support::kConfigFileLimit
                         : ::qeff::support::kTokenizerFileLimit;
    std::string error;
    if (!::qeff::support::copyRegularFile(from, join(staging.path, name), limit, error))
      return emitError(loc) << "cannot copy " << name << " into the artifacts: " << error;
  }

  std::string script = qaicCompileScript(
      relativeArgs, o.legacySpecializations ? "" : specializationsJson(*module, true));
  if (failed(writeFileAtomically(loc, join(staging.path, "specializations.json"),
                                 specializationsJson(*module,
                                                     o.legacySpecializations))) ||
      failed(writeFileAtomically(loc, join(staging.path, "custom_io.yaml"),
                                 customIOYaml(*module, o.mxint8KV))) ||
      (o.numDevices > 1 &&
       failed(writeFileAtomically(loc, join(staging.path, "mdp.json"),
                                  mdpPartitionJson(o.numDevices,
                                                   o.numCores)))) ||
      (hasPrecisionList &&
       failed(writeFileAtomically(
           loc, join(staging.path, "node_precision.yaml"), precisionYaml))) ||
      failed(writeFileAtomically(loc, join(staging.path, "qeff-manifest.json"),
                                 manifest.dump(2, ' ', false,
                                               nlohmann::ordered_json::error_handler_t::replace) +
                                     "\n")) ||
      failed(writeFileAtomically(loc, join(staging.path, "qaic-compile.sh"),
                                 script)))
    return failure();
  llvm::sys::fs::setPermissions(join(staging.path, "qaic-compile.sh"),
                                llvm::sys::fs::all_read |
                                    llvm::sys::fs::owner_write |
                                    llvm::sys::fs::all_exe);
  if (failed(finish()))
    return failure();

  if (!compiler.empty() && o.runQAic) {
    // Not cancellable: the artifacts are published, and qaic-compile is
    // a child process of its own.
    if (o.stageStarted)
      o.stageStarted("qaic-compile");
    return runQAicCompile(loc, compiler, args, o,
                          o.legacySpecializations ? ""
                                                  : specializationsJson(*module, true),
                          report);
  }
  return success();
}
