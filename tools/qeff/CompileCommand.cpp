//===- CompileCommand.cpp - `qeff compile` --------------------------------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "tools/qeff/Cards.h"
#include "tools/qeff/Commands.h"
#include "tools/qeff/CompileFlags.h"

#include "lowering/Driver/CompileDriver.h"
#include "lowering/Driver/Depfile.h"
#include "support/DiagnosticPrinter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace llvm;
using namespace mlir::qeff;

namespace {

cl::SubCommand compileCommand(
    "compile",
    "Compile a Hugging Face checkpoint (or GGUF file) to AI 100 artifacts: model.onnx (+ "
    "external weights), specializations.json, custom_io.yaml, "
    "qeff-manifest.json and the qaic-compile command; runs qaic-compile "
    "when it is installed");

cl::opt<std::string> checkpoint(cl::Positional, cl::desc("<hf_dir|model.gguf>"),
                                cl::Optional, cl::sub(compileCommand));
cl::opt<std::string> output("o", cl::desc("Output directory (outside the checkpoint)"),
                            cl::value_desc("out_dir"), cl::Required,
                            cl::sub(compileCommand));
// Many models at once (docs/model-cards.md; tools/qeff/Cards.h).
cl::opt<std::string> modelsFile(
    "models",
    cl::desc("Compile every card of a model-card file into <out_dir>/<name> "
             "(instead of <hf_dir>), through the compile cache; writes "
             "<out_dir>/summary.json"),
    cl::value_desc("cards.json"), cl::sub(compileCommand));
cl::opt<int> jobs("j",
                  cl::desc("--models: cards compiled at once (default: what "
                           "the cores and the memory allow)"),
                  cl::value_desc("N"), cl::init(0), cl::sub(compileCommand));
cl::opt<int64_t> cardIndex(
    "card-index",
    cl::desc("--models: compile card N only (0-based), in this process: one "
             "pod of a Kubernetes Indexed Job ($JOB_COMPLETION_INDEX); "
             "`qeff models summarize <out_dir>` merges the summaries"),
    cl::value_desc("N"), cl::init(-1), cl::sub(compileCommand));
cl::opt<std::string> cacheDir(
    "cache-dir",
    cl::desc("--models: the compile cache (default $QEFF_CACHE_DIR, else "
             "$XDG_CACHE_HOME/qeff, else ~/.cache/qeff)"),
    cl::sub(compileCommand));
cl::opt<bool> cardEvents("card-events", cl::Hidden,
                         cl::desc("--card-index: progress as JSON lines"),
                         cl::sub(compileCommand));
cl::list<std::string> knownHashes(
    "known-hash", cl::Hidden,
    cl::desc("--card-index: <file>=<hash> computed by the batch already"),
    cl::sub(compileCommand));
cl::opt<unsigned> exportThreads(
    "export-threads", cl::Hidden,
    cl::desc("Threads converting weights (default: the cores, at most 8)"),
    cl::init(0), cl::sub(compileCommand));
cl::opt<EmitKind> emit(
    "emit", cl::desc("Where to stop (default: device artifacts)"),
    cl::init(EmitKind::Device),
    cl::values(
        clEnumValN(EmitKind::MLIRImport, "mlir-import",
                   "model.import.mlir: the imported qeff IR (HF semantics)"),
        clEnumValN(EmitKind::MLIRDevice, "mlir-device",
                   "model.device.mlir: after the device pipeline"),
        clEnumValN(EmitKind::ONNX, "onnx",
                   "model.onnx of the imported IR (HF semantics, dynamic "
                   "shapes, present = concat(past, new))"),
        clEnumValN(EmitKind::Device, "device",
                   "device ONNX and every compile artifact (default)")),
    cl::sub(compileCommand));
cl::opt<int64_t> ctxLen("ctx-len", cl::desc("KV cache slots per sequence"),
                        cl::init(128), cl::sub(compileCommand));
cl::opt<int64_t> prefillSeqLen("prefill-seq-len",
                               cl::desc("Tokens per prefill chunk"),
                               cl::init(32), cl::sub(compileCommand));
cl::opt<int64_t> batchSize("batch-size", cl::desc("Sequences per run"),
                           cl::init(1), cl::sub(compileCommand));
cl::opt<int64_t> numCores("num-cores", cl::desc("AI 100 cores to compile for"),
                          cl::init(16), cl::sub(compileCommand));
cl::opt<int64_t> numDevices("num-devices", qeff::tool::numDevicesDesc(),
                            cl::init(1), cl::sub(compileCommand));
cl::opt<bool> onDeviceSampling("on-device-sampling",
                               qeff::tool::onDeviceSamplingDesc(),
                               cl::sub(compileCommand));
cl::opt<int64_t> maxTopKIds("max-top-k-ids", qeff::tool::maxTopKIdsDesc(),
                            cl::init(0), cl::sub(compileCommand));
cl::list<int64_t> numSpeculativeTokens("num-speculative-tokens",
                                       qeff::tool::numSpeculativeTokensDesc(),
                                       cl::value_desc("K,..."),
                                       cl::CommaSeparated,
                                       cl::sub(compileCommand));
cl::opt<OutlineLayers> outlineLayers(
    "outline-layers", cl::ValueOptional, qeff::tool::outlineLayersDesc(),
    cl::init(OutlineLayers::Auto), qeff::tool::outlineLayersValues(),
    cl::sub(compileCommand));
cl::opt<int64_t> fullBatchSize(
    "full-batch-size",
    cl::desc("Continuous batching: a KV cache of this many sequences, "
             "addressed by a batch_index input; Prefill runs one sequence, "
             "Decode all of them (instead of --batch-size)"),
    cl::init(0), cl::sub(compileCommand));
cl::opt<KVWindow> kvWindow("kv-window", qeff::tool::kvWindowDesc(),
                           cl::init(KVWindow::Full),
                           qeff::tool::kvWindowValues(), cl::sub(compileCommand));
cl::opt<bool> mxfp6("mxfp6", cl::desc("Compile matmul weights to MXFP6"),
                    cl::sub(compileCommand));
cl::opt<bool> mxint8KV("mxint8-kv", cl::desc("Keep the KV cache in MXINT8"),
                       cl::sub(compileCommand));
cl::opt<bool> legacySpecializations(
    "legacy-specializations",
    cl::desc("Write specializations.json in the flat legacy form (without it, "
             "the named form; a qaic-compile that rejects that is given the "
             "flat form on its own)"),
    cl::sub(compileCommand));
cl::opt<std::string> aicHwVersion(
    "aic-hw-version",
    cl::desc("qaic-compile -aic-hw-version (default ai100)"),
    cl::init("ai100"), cl::sub(compileCommand));
cl::list<std::string> qaicArgs(
    "qaic-arg",
    cl::desc("Pass this option to qaic-compile too, after qeff's own "
             "(repeatable; e.g. --qaic-arg=-mos=1 --qaic-arg=-aic-enable-depth-first); "
             "recorded in qaic-compile.sh and the manifest"),
    cl::value_desc("-option"), cl::sub(compileCommand));
cl::opt<std::string> weightsDType(
    "weights-dtype",
    cl::desc("Weight storage in model.onnx.data: f32 (default), f16 "
             "(clipped to the fp16 range; the clip count is reported) or bf16"),
    cl::init("f32"), cl::sub(compileCommand));
cl::list<std::string> fp32Scopes(
    "fp32-scopes",
    cl::desc("Keep these modules in fp32 on the device (fp32 islands): HF "
             "module paths or globs, e.g. model.layers.1.mlp or "
             "'model.layers.*.mlp.down_proj'; their ONNX nodes go to "
             "node_precision.yaml (-node-precision-info)"),
    cl::value_desc("scope,..."), cl::CommaSeparated, cl::sub(compileCommand));
cl::opt<std::string> fp32ScopesFile(
    "fp32-scopes-file",
    cl::desc("File of fp32 scopes as for --fp32-scopes, one per line ('#' "
             "starts a comment)"),
    cl::value_desc("path"), cl::sub(compileCommand));
cl::opt<std::string> calibrate(
    "calibrate", cl::ValueOptional,
    cl::desc("Measure value ranges on the host device in fp32 over N sample "
             "prompts (default 8) and keep in fp32 what comes near the fp16 "
             "limit (node_precision.yaml)"),
    cl::value_desc("N"), cl::sub(compileCommand));
cl::opt<bool> reportMX(
    "report-mx",
    cl::desc("Print which weights -mxfp6-matmul will compress and the bytes "
             "on the device (also in qeff-manifest.json's \"mx\"), warning "
             "of large weights it leaves in fp16; with --calibrate, each "
             "weight's MXFP6 error, the largest first"),
    cl::sub(compileCommand));
cl::opt<std::string> qaicCompile(
    "qaic-compile",
    cl::desc("qaic-compile to run (default: $QEFF_QAIC_COMPILE, else "
             "/opt/qti-aic/exec/qaic-compile if present)"),
    cl::value_desc("path"), cl::sub(compileCommand));

cl::opt<std::string> depfile(
    "depfile",
    cl::desc("After a successful compile, write a Make-style depfile here: "
             "the primary output (qeff-manifest.json, or the --emit file) "
             "depends on every file the compile read (config, weights and "
             "index, tokenizer files, generation config, chat template, "
             "fp32-scopes file)"),
    cl::value_desc("path"), cl::sub(compileCommand));

/// --models: the per-model options belong in the card file.
int runCards() {
  std::string given;
  for (auto &entry : compileCommand.OptionsMap)
    if (cl::Option *o = entry.getValue();
        o->getNumOccurrences() && o->ArgStr != "models" && o->ArgStr != "o" &&
        o->ArgStr != "j" && o->ArgStr != "card-index" &&
        o->ArgStr != "cache-dir" && o->ArgStr != "card-events" &&
        o->ArgStr != "export-threads" && o->ArgStr != "known-hash")
      given += (given.empty() ? "--" : ", --") + o->ArgStr.str();
  if (!checkpoint.empty() || !given.empty()) {
    errs() << "qeff compile: --models takes the checkpoints and their options "
              "from the card file; "
           << (checkpoint.empty() ? "drop " + given
                                  : "drop the checkpoint '" + checkpoint + "'")
           << " (set options in the card file's \"defaults\" or a card)\n";
    return 1;
  }
  if (jobs < 0) {
    errs() << "qeff compile: -j must be positive, got " << jobs << "\n";
    return 1;
  }
  qeff::tool::CardsRun run;
  run.cardsFile = modelsFile;
  run.outDir = output;
  run.cacheDir = cacheDir;
  run.jobs = jobs;
  run.cardIndex = cardIndex;
  run.events = cardEvents;
  run.exportThreads = exportThreads;
  for (StringRef entry : knownHashes) {
    auto [file, hash] = entry.rsplit('=');
    if (file.empty() || hash.size() != 32 || cardIndex < 0) {
      errs() << "qeff compile: --known-hash takes <file>=<32 hex digits> with "
                "--card-index, got '" << entry << "'\n";
      return 1;
    }
    run.knownHashes[file.str()] = hash.str();
  }
  return qeff::tool::runCompileCards(run);
}

} // namespace

bool qeff::tool::isCompileCommand() { return static_cast<bool>(compileCommand); }

int qeff::tool::runCompile() {
  if (!modelsFile.empty())
    return runCards();
  if (checkpoint.empty()) {
    errs() << "qeff compile: give a checkpoint directory <hf_dir> or GGUF file (or "
              "--models cards.json)\n";
    return 1;
  }
  for (cl::Option *o : {static_cast<cl::Option *>(&jobs),
                        static_cast<cl::Option *>(&cardIndex),
                        static_cast<cl::Option *>(&cacheDir)})
    if (o->getNumOccurrences()) {
      errs() << "qeff compile: -" << (o->ArgStr.size() > 1 ? "-" : "")
             << o->ArgStr << " goes with --models\n";
      return 1;
    }
  CompileOptions options;
  options.exportThreads = exportThreads;
  options.checkpointDir = checkpoint;
  options.outputDir = output;
  options.emit = emit;
  options.ctxLen = ctxLen;
  options.prefillSeqLen = prefillSeqLen;
  options.batchSize = batchSize;
  options.fullBatchSize = fullBatchSize;
  options.numCores = numCores;
  options.kvWindow = kvWindow;
  options.outlineLayers = outlineLayers;
  options.numDevices = numDevices;
  options.numSpeculativeTokens.assign(numSpeculativeTokens.begin(),
                                      numSpeculativeTokens.end());
  options.onDeviceSampling = onDeviceSampling;
  options.maxTopKIds = maxTopKIds;
  options.mxfp6 = mxfp6;
  options.mxint8KV = mxint8KV;
  options.legacySpecializations = legacySpecializations;
  options.qaicCompile = qaicCompile;
  options.aicHwVersion = aicHwVersion;
  options.qaicArgs.assign(qaicArgs.begin(), qaicArgs.end());
  options.fp32Scopes.assign(fp32Scopes.begin(), fp32Scopes.end());
  options.fp32ScopesFile = fp32ScopesFile;
  if (calibrate.getNumOccurrences()) {
    int prompts = 8;
    if (!calibrate.empty() &&
        (StringRef(calibrate).getAsInteger(10, prompts) || prompts <= 0)) {
      errs() << "qeff compile: --calibrate takes a positive number of prompts, "
                "got '" << calibrate << "'\n";
      return 1;
    }
    options.calibrate = prompts;
  }
  if (weightsDType == "f16") {
    options.weightsDType = ExportWeightsDType::F16;
  } else if (weightsDType == "bf16") {
    options.weightsDType = ExportWeightsDType::BF16;
  } else if (weightsDType != "f32") {
    errs() << "qeff compile: --weights-dtype must be f32, f16 or bf16, got '"
           << weightsDType << "'\n";
    return 1;
  }
  for (auto [name, value] : {std::pair{"--ctx-len", int64_t(ctxLen)},
                             {"--prefill-seq-len", int64_t(prefillSeqLen)},
                             {"--batch-size", int64_t(batchSize)},
                             {"--num-cores", int64_t(numCores)},
                             {"--num-devices", int64_t(numDevices)}})
    if (value <= 0) {
      errs() << "qeff compile: " << name << " must be positive, got " << value
             << "\n";
      return 1;
    }
  if (fullBatchSize.getNumOccurrences() > 0 && fullBatchSize <= 0) {
    errs() << "qeff compile: --full-batch-size must be positive, got "
           << fullBatchSize << "\n";
    return 1;
  }
  if (fullBatchSize > 0 && batchSize.getNumOccurrences() > 0) {
    errs() << "qeff compile: --batch-size and --full-batch-size exclude each "
              "other (continuous batching prefills one sequence and decodes "
              "full_batch_size)\n";
    return 1;
  }

  // A progress line on a terminal while the weights stream.
  auto started = std::chrono::steady_clock::now();
  if (sys::Process::StandardErrIsDisplayed())
    options.progress = [started](const ExportProgress &p) {
      double secs = std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - started)
                        .count();
      errs() << format("\r  weights %zu/%zu, ", p.tensorsDone, p.tensorsTotal)
             << humanBytes(p.bytesDone) << " / " << humanBytes(p.bytesTotal)
             << ", " << humanBytes(uint64_t(p.bytesDone / std::max(secs, 1e-3)))
             << "/s   ";
      if (p.tensorsDone == p.tensorsTotal)
        errs() << "\n";
    };

  mlir::MLIRContext context;
  SourceMgr sourceMgr;
  qeff::support::DiagnosticPrinter handler(sourceMgr, &context);
  CompileReport report;
  if (failed(compileCheckpoint(context, options, report)))
    return 1;
  if (!depfile.empty() &&
      failed(writeCompileDepfile(
          mlir::FileLineColLoc::get(&context, depfile, 0, 0), options,
          depfile)))
    return 1;

  if (options.calibrate > 0) {
    outs() << "calibration: " << options.calibrate << " prompts; largest |value| "
           << format("%g", report.calibrationMaxElsewhere)
           << " outside the fp32 nodes";
    if (report.calibratedNodes.empty())
      outs() << "; nothing near the fp16 limit\n";
    else
      outs() << "; kept in fp32 (near the fp16 limit):\n";
    for (const auto &[node, value] : report.calibratedNodes)
      outs() << "  " << node << "  max |value| " << format("%g", value) << "\n";
    for (const std::string &scope : report.calibratedScopes)
      outs() << "  scope " << scope << "\n";
  }
  if (reportMX && options.emit == EmitKind::Device)
    printMxReport(report.mx, options.mxfp6, outs());
  else
    for (const std::string &warning : report.mx.warnings)
      errs() << "qeff compile: warning: " << warning << "\n";
  outs() << "qeff compile: " << checkpoint << " -> " << output << " in "
         << format("%.2f s", report.seconds) << "\n";
  for (const auto &[path, size] : report.files)
    outs() << "  " << path << "  " << humanBytes(size) << "\n";
  if (options.emit == EmitKind::Device) {
    outs() << "model.onnx: " << report.graphNodes << " graph nodes";
    if (report.layerFunctions > 0)
      outs() << ", " << report.layerFunctions
             << " layer function(s) of " << report.functionNodes
             << " nodes in all (--outline-layers)";
    outs() << "\n";
    if (report.qaicCompiler.empty())
      outs() << "No QPC was built: qaic-compile is not installed here (set "
                "--qaic-compile or QEFF_QAIC_COMPILE, or install the AI 100 "
                "Apps SDK). On an AI 100 host, run " << output
             << "/qaic-compile.sh, or:\n  " << report.qaicCommand << "\n";
    else
      outs() << "QPC built by " << report.qaicCompiler << " in "
             << output << "/qpc"
             << (report.flatSpecializationsRetry
                     ? " (from the flat specializations form: this Apps SDK "
                       "rejects the named one)"
                     : "")
             << "\n";
  }
  return 0;
}
