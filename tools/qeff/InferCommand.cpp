//===- InferCommand.cpp - `qeff infer` ------------------------------------===//
//
// Part of qeff. Compile (cached by content) and generate in one step: the
// user's main job. A second infer with the same checkpoint, tokenizer, qeff
// version and options reuses the cached artifacts; a changed weight file
// does not.
//
//===----------------------------------------------------------------------===//

#include "tools/qeff/Commands.h"
#include "tools/qeff/CompileFlags.h"
#include "tools/qeff/Generate.h"
#include "tools/qeff/ModelPath.h"

#include "frontend/HF/ModelConfig.h"
#include "frontend/Tokenizer/Tokenizer.h"
#include "lowering/Driver/CompileCache.h"
#include "support/DiagnosticPrinter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdlib>

using namespace llvm;
using namespace mlir::qeff;

namespace {
cl::SubCommand inferCommand(
    "infer", "Compile a Hugging Face checkpoint (cached by content hash) and "
             "generate: on an AI 100 when present, else on the host device");
cl::opt<std::string> modelDir(cl::Positional, cl::desc("<hf_dir|model.gguf|artifact_dir>"),
                              cl::Required, cl::sub(inferCommand));
cl::opt<int64_t> ctxLen("ctx-len",
                        cl::desc("KV cache slots (default: enough for the "
                                 "prompts and --max-new-tokens)"),
                        cl::init(0), cl::sub(inferCommand));
cl::opt<int64_t> prefillSeqLen("prefill-seq-len",
                               cl::desc("Tokens per prefill chunk (default 32)"),
                               cl::init(32), cl::sub(inferCommand));
cl::opt<int64_t> batchSize("batch-size",
                           cl::desc("Compiled batch (default: the number of prompts, "
                                    "at most 8; more run in groups)"),
                           cl::init(0), cl::sub(inferCommand));
cl::opt<int64_t> fullBatchSize(
    "full-batch-size",
    cl::desc("Continuous batching with this many KV-cache rows: each prompt "
             "is prefilled alone into a free row, all rows decode together "
             "(instead of --batch-size)"),
    cl::init(0), cl::sub(inferCommand));
cl::opt<KVWindow> kvWindow("kv-window", qeff::tool::kvWindowDesc(),
                           cl::init(KVWindow::Full),
                           qeff::tool::kvWindowValues(), cl::sub(inferCommand));
cl::opt<int64_t> numDevices("num-devices", qeff::tool::numDevicesDesc(),
                            cl::init(1), cl::sub(inferCommand));
cl::list<int64_t> numSpeculativeTokens("num-speculative-tokens",
                                       qeff::tool::numSpeculativeTokensDesc(),
                                       cl::value_desc("K,..."),
                                       cl::CommaSeparated, cl::sub(inferCommand));
cl::opt<OutlineLayers> outlineLayers(
    "outline-layers", cl::ValueOptional, qeff::tool::outlineLayersDesc(),
    cl::init(OutlineLayers::Auto), qeff::tool::outlineLayersValues(),
    cl::sub(inferCommand));
cl::opt<bool> onDeviceSampling("on-device-sampling",
                               qeff::tool::onDeviceSamplingDesc(),
                               cl::sub(inferCommand));
cl::opt<int64_t> maxTopKIds("max-top-k-ids", qeff::tool::maxTopKIdsDesc(),
                            cl::init(0), cl::sub(inferCommand));
cl::opt<std::string> cacheDir(
    "cache-dir",
    cl::desc("Artifact cache (default $QEFF_CACHE_DIR, else "
             "$XDG_CACHE_HOME/qeff, else ~/.cache/qeff)"),
    cl::sub(inferCommand));

std::string join(const std::string &dir, StringRef name) {
  SmallString<256> p(dir);
  sys::path::append(p, name);
  return std::string(p.str());
}

int64_t nextPowerOfTwo(int64_t v) {
  int64_t p = 1;
  while (p < v)
    p <<= 1;
  return p;
}
} // namespace

void qeff::tool::registerInferOptions() { addGenerateOptions(inferCommand); }
bool qeff::tool::isInferCommand() { return static_cast<bool>(inferCommand); }

int qeff::tool::runInfer() {
  const GenerateFlags &flags = generateFlags();
  auto fail = [](const std::string &message) {
    errs() << "qeff infer: " << message << "\n";
    return 1;
  };
  std::string pathError;
  ModelPathKind kind = classifyModelPath(modelDir, pathError);
  if (kind == ModelPathKind::Invalid)
    return fail(pathError);
  if (std::string bad = checkGenerateFlags(flags); !bad.empty())
    return fail(bad);
  // A prebuilt artifact directory runs as is.
  if (kind == ModelPathKind::Artifacts) {
    if (numSpeculativeTokens.getNumOccurrences())
      return fail(modelDir + " is a compiled artifact: --num-speculative-tokens "
                             "applies when infer compiles a checkpoint");
    if (onDeviceSampling || maxTopKIds.getNumOccurrences())
      return fail(modelDir + " is a compiled artifact: --on-device-sampling "
                             "applies when infer compiles a checkpoint");
    return generateOnArtifact(modelDir, flags, "infer");
  }
  if (!flags.speculate.empty() && numSpeculativeTokens.empty())
    return fail("--speculate needs a speculative-decoding target: give "
                "--num-speculative-tokens K (e.g. 3) to compile one");

  // Size the context for the prompts unless told.
  std::string error;
  std::vector<std::string> texts = textPrompts(flags, error);
  if (!error.empty())
    return fail(error);
  int64_t longest = 0, count = flags.tokenIds.size() + texts.size();
  for (const std::string &ids : flags.tokenIds)
    longest = std::max<int64_t>(longest, StringRef(ids).count(',') + 1);
  if (!texts.empty()) {
    auto tok = checkpointTokenizer(modelDir);
    if (!tok.ok())
      return fail("--prompt needs the checkpoint's tokenizer: " +
                  std::string(tok.status().message()));
    for (const std::string &text : texts)
      longest = std::max<int64_t>(longest, tok->encode(text, true).size());
  }
  // The context the model serves (rope scaling may extend it).
  int64_t maxPositions = 0;
  if (auto config = checkpointConfig(modelDir); config.ok())
    maxPositions = qeff::hf::servedContext(*config);
  CompileOptions options;
  options.checkpointDir = modelDir;
  options.ctxLen = ctxLen;
  options.kvWindow = kvWindow;
  options.outlineLayers = outlineLayers;
  if (options.ctxLen == 0) {
    options.ctxLen = std::max<int64_t>(128, nextPowerOfTwo(longest + flags.maxNewTokens));
    if (maxPositions > 0)
      options.ctxLen = std::min(options.ctxLen, maxPositions);
  }
  options.prefillSeqLen = std::min<int64_t>(prefillSeqLen, options.ctxLen);
  // One compiled batch for up to 8 prompts; more run in groups of 8.
  options.batchSize = batchSize > 0 ? int64_t(batchSize)
                                    : std::clamp<int64_t>(count, 1, 8);
  if (fullBatchSize.getNumOccurrences() > 0) {
    if (fullBatchSize <= 0)
      return fail("--full-batch-size must be positive, got " +
                  std::to_string(fullBatchSize));
    if (batchSize > 0)
      return fail("--batch-size and --full-batch-size exclude each other");
    options.batchSize = 1;
    options.fullBatchSize = fullBatchSize;
  }

  options.numSpeculativeTokens.assign(numSpeculativeTokens.begin(),
                                      numSpeculativeTokens.end());
  options.onDeviceSampling = onDeviceSampling;
  options.maxTopKIds = maxTopKIds;
  options.numDevices = numDevices;
  if (numDevices.getNumOccurrences() == 0 && !flags.deviceGroup.empty()) {
    auto group = parseDeviceGroup(flags.deviceGroup);
    if (!group)
      return fail(group.error());
    options.numDevices = group->size();
  }
  if (options.numDevices < 1)
    return fail("--num-devices must be positive, got " +
                std::to_string(options.numDevices));

  std::string cache = cacheDir.empty() ? defaultCacheDir() : std::string(cacheDir);
  mlir::MLIRContext context;
  SourceMgr sourceMgr;
  qeff::support::DiagnosticPrinter handler(sourceMgr, &context);
  CacheResult cached;
  mlir::Location loc = mlir::FileLineColLoc::get(&context, modelDir, 0, 0);
  if (failed(lookupCompileCache(loc, options, cache, cached)))
    return 1;
  if (cached.hit) {
    if (!flags.json)
      errs() << "qeff infer: using cached artifacts " << cached.artifactDir
             << "\n";
  } else {
    if (!flags.json)
      errs() << "qeff infer: compiling " << modelDir << " (ctx_len "
             << options.ctxLen << ", prefill " << options.prefillSeqLen
             << (options.fullBatchSize > 0 ? ", continuous batching over "
                                           : ", batch ")
             << (options.fullBatchSize > 0 ? options.fullBatchSize
                                           : options.batchSize)
             << (options.fullBatchSize > 0 ? " cache rows" : "") << ") into "
             << cached.artifactDir << "\n";
    CompileReport report;
    if (failed(compileCheckpoint(context, options, report)))
      return 1;
  }
  const std::string artifacts = cached.artifactDir;
  // A draft checkpoint compiles like the target (same shapes, no
  // speculation of its own), through the same cache.
  GenerateFlags runFlags = flags;
  StringRef draft(flags.speculate);
  if (draft.consume_front("draft=") && sys::fs::is_directory(draft) &&
      !sys::fs::exists(join(draft.str(), "qeff-manifest.json"))) {
    CompileOptions draftOptions = options;
    draftOptions.checkpointDir = draft.str();
    draftOptions.numSpeculativeTokens.clear();
    CacheResult draftCached;
    if (failed(lookupCompileCache(loc, draftOptions, cache, draftCached)))
      return 1;
    if (!draftCached.hit) {
      if (!flags.json)
        errs() << "qeff infer: compiling the draft model " << draft << " into "
               << draftCached.artifactDir << "\n";
      CompileReport report;
      if (failed(compileCheckpoint(context, draftOptions, report)))
        return 1;
    }
    runFlags.speculate = "draft=" + draftCached.artifactDir;
  }
  return generateOnArtifact(artifacts, runFlags, "infer");
}
