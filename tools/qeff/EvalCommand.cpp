//===- EvalCommand.cpp - `qeff eval` --------------------------------------===//
//
// Part of qeff. Teacher-forced perplexity of a model under one or more host
// numerics modes, and for each mode other than fp32 its top-1 agreement and
// KL divergence against fp32 (docs/numerics.md). A checkpoint directory is
// compiled first, through the compile cache, as `qeff infer` does.
//
//===----------------------------------------------------------------------===//

#include "tools/qeff/Commands.h"
#include "tools/qeff/CompileFlags.h"
#include "tools/qeff/EvalMetrics.h"
#include "tools/qeff/Generate.h"
#include "tools/qeff/ModelPath.h"

#include "frontend/HF/ModelConfig.h"
#include "frontend/Tokenizer/Tokenizer.h"
#include "lowering/Driver/CompileCache.h"
#include "runtime/generation/Perplexity.h"
#include "support/DiagnosticPrinter.h"
#include "support/SafeFile.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace llvm;
using namespace mlir::qeff;
using namespace qeff::runtime;

namespace {
cl::SubCommand evalCommand(
    "eval", "Perplexity (teacher-forced) under host numerics modes, with the "
            "top-1 agreement and KL divergence of each against fp32");
cl::opt<std::string> modelDir(cl::Positional, cl::desc("<hf_dir|model.gguf|artifact_dir>"),
                              cl::Required, cl::sub(evalCommand));
cl::opt<std::string> numericsList(
    "numerics",
    cl::desc("Comma-separated modes to evaluate, each as `qeff run --numerics` "
             "spells it (fp32 is always run: the reference), e.g. "
             "fp32,fp16,fp16+mxfp6+mxint8-kv"),
    cl::init("fp32,fp16,fp16+mxfp6+mxint8-kv"), cl::sub(evalCommand));
cl::opt<std::string> textFile("text", cl::desc("Text to score (encoded with the model's tokenizer)"),
                              cl::value_desc("file"), cl::sub(evalCommand));
cl::list<std::string> tokenIds(
    "token-ids", cl::desc("A sequence of token ids to score, e.g. 1,403,407 (repeatable)"),
    cl::value_desc("ids"), cl::sub(evalCommand));
cl::opt<std::string> tokenIdsFile(
    "token-ids-file",
    cl::desc("Sequences of token ids, one per line (ids separated by commas or spaces)"),
    cl::value_desc("file"), cl::sub(evalCommand));
cl::opt<int64_t> window("window",
                        cl::desc("Tokens per window (default: the longest sequence, at "
                                 "most the context - 1)"),
                        cl::init(0), cl::sub(evalCommand));
cl::opt<int64_t> stride("stride",
                        cl::desc("Tokens between window starts (default: the window - 1, "
                                 "every token scored once; smaller strides give "
                                 "each window more context)"),
                        cl::init(0), cl::sub(evalCommand));
cl::opt<bool> json("json", cl::desc("Print one JSON object: {\"results\": [...]}"),
                   cl::sub(evalCommand));
cl::opt<int> threads("threads", cl::desc("Host device threads (0 = all cores)"), cl::init(0),
                     cl::sub(evalCommand));
cl::opt<int64_t> ctxLen("ctx-len",
                        cl::desc("Compile: KV cache slots (default: enough for the window)"),
                        cl::init(0), cl::sub(evalCommand));
cl::opt<int64_t> batchSize("batch-size",
                           cl::desc("Compile: windows scored side by side (default: the "
                                    "windows, at most 4)"),
                           cl::init(0), cl::sub(evalCommand));
cl::opt<int64_t> numDevices("num-devices", qeff::tool::numDevicesDesc(), cl::init(1),
                            cl::sub(evalCommand));
cl::opt<KVWindow> kvWindow("kv-window", qeff::tool::kvWindowDesc(), cl::init(KVWindow::Full),
                           qeff::tool::kvWindowValues(), cl::sub(evalCommand));
cl::opt<OutlineLayers> outlineLayers("outline-layers", cl::ValueOptional,
                                     qeff::tool::outlineLayersDesc(),
                                     cl::init(OutlineLayers::Auto),
                                     qeff::tool::outlineLayersValues(), cl::sub(evalCommand));
cl::opt<std::string> cacheDir("cache-dir",
                              cl::desc("Artifact cache (default $QEFF_CACHE_DIR, else "
                                       "$XDG_CACHE_HOME/qeff, else ~/.cache/qeff)"),
                              cl::sub(evalCommand));
std::string mxRounding = "even", mxWeightAxis = "k";

std::string joinPath(const std::string &dir, StringRef name) {
  SmallString<256> p(dir);
  sys::path::append(p, name);
  return std::string(p.str());
}

int fail(const std::string &message) {
  errs() << "qeff eval: " << message << "\n";
  return 1;
}

/// "1,2 3" -> ids; an error names the bad entry. An empty entry between
/// commas ("1,,2") is an error, not skipped: it is a typo, not a token.
Result<std::vector<int64_t>> parseIds(StringRef text, const std::string &where) {
  std::vector<int64_t> ids;
  SmallVector<StringRef> pieces;
  text.split(pieces, ',', -1, /*KeepEmpty=*/true);
  for (StringRef piece : pieces) {
    SmallVector<StringRef> parts;
    SplitString(piece, parts, " \t\r");
    if (parts.empty() && pieces.size() > 1)
      return qeff::runtime::Error{where + ": an empty entry between commas"};
    for (StringRef part : parts) {
      int64_t id;
      if (part.getAsInteger(10, id) || id < 0)
        return qeff::runtime::Error{where + ": '" + part.take_front(32).str() +
                                    "' is not a token id"};
      ids.push_back(id);
    }
  }
  return ids;
}

/// The sequences to score, from --text, --token-ids and --token-ids-file.
Result<std::vector<std::vector<int64_t>>> readSequences(const std::string &dir) {
  std::vector<std::vector<int64_t>> sequences;
  for (const std::string &ids : tokenIds) {
    auto parsed = parseIds(ids, "--token-ids '" + StringRef(ids).take_front(32).str() + "'");
    if (!parsed)
      return qeff::runtime::Error{parsed.error()};
    sequences.push_back(std::move(*parsed));
  }
  // A regular file within the tokenizer files' limit (a FIFO would block).
  auto readInput = [](const std::string &path, const char *flag, std::string &text) {
    std::string error;
    if (!qeff::support::readRegularFile(path, qeff::support::kTokenizerFileLimit, text, error))
      return "cannot read " + std::string(flag) + ": " + error;
    return std::string();
  };
  if (!tokenIdsFile.empty()) {
    std::string text;
    if (std::string error = readInput(tokenIdsFile, "--token-ids-file", text); !error.empty())
      return qeff::runtime::Error{error};
    SmallVector<StringRef> lines;
    StringRef(text).split(lines, '\n', -1, /*KeepEmpty=*/false);
    for (auto [n, line] : enumerate(lines)) {
      auto parsed = parseIds(line, tokenIdsFile + ":" + std::to_string(n + 1));
      if (!parsed)
        return qeff::runtime::Error{parsed.error()};
      if (!parsed->empty())
        sequences.push_back(std::move(*parsed));
    }
  }
  if (!textFile.empty()) {
    std::string text;
    if (std::string error = readInput(textFile, "--text", text); !error.empty())
      return qeff::runtime::Error{error};
    auto tok = qeff::tool::checkpointTokenizer(dir);
    if (!tok.ok())
      return qeff::runtime::Error{"--text needs the model's tokenizer: " +
                                  std::string(tok.status().message())};
    sequences.push_back(tok->encode(text, /*addSpecialTokens=*/true));
  }
  if (sequences.empty())
    return qeff::runtime::Error{"nothing to score: give --text, --token-ids or --token-ids-file"};
  for (const auto &s : sequences)
    if (s.size() < 2)
      return qeff::runtime::Error{"a sequence of " + std::to_string(s.size()) +
                   " token(s) has nothing to score (at least 2 tokens)"};
  return sequences;
}

int64_t nextPowerOfTwo(int64_t v) {
  int64_t p = 1;
  while (p < v)
    p <<= 1;
  return p;
}

/// Compiles a checkpoint directory (through the cache) for `window`.
std::string compileForEval(const std::string &dir, int64_t win, int64_t windows, bool quiet) {
  CompileOptions options;
  options.checkpointDir = dir;
  options.ctxLen = ctxLen > 0 ? int64_t(ctxLen) : std::max<int64_t>(128, nextPowerOfTwo(win + 1));
  // Learned position tables end at max_position_embeddings (as qeff infer).
  if (ctxLen == 0)
    if (auto config = qeff::tool::checkpointConfig(dir); config.ok())
      if (int64_t served = qeff::hf::servedContext(*config); served > win)
        options.ctxLen = std::min(options.ctxLen, served);
  options.prefillSeqLen = std::min<int64_t>(32, options.ctxLen);
  options.batchSize = batchSize > 0 ? int64_t(batchSize) : std::clamp<int64_t>(windows, 1, 4);
  options.kvWindow = kvWindow;
  options.outlineLayers = outlineLayers;
  options.numDevices = numDevices;
  if (options.numDevices < 1) {
    fail("--num-devices must be positive, got " + std::to_string(options.numDevices));
    return "";
  }
  std::string cache = cacheDir.empty() ? defaultCacheDir() : std::string(cacheDir);
  mlir::MLIRContext context;
  SourceMgr sourceMgr;
  qeff::support::DiagnosticPrinter handler(sourceMgr, &context);
  CacheResult cached;
  mlir::Location loc = mlir::FileLineColLoc::get(&context, dir, 0, 0);
  if (failed(lookupCompileCache(loc, options, cache, cached)))
    return "";
  if (!cached.hit) {
    if (!quiet)
      errs() << "qeff eval: compiling " << dir << " (ctx_len " << options.ctxLen << ", batch "
             << options.batchSize << ") into " << cached.artifactDir << "\n";
    CompileReport report;
    if (failed(compileCheckpoint(context, options, report)))
      return "";
  }
  return cached.artifactDir;
}

} // namespace

void qeff::tool::registerEvalOptions() { addMxOptions(evalCommand, mxRounding, mxWeightAxis); }
bool qeff::tool::isEvalCommand() { return static_cast<bool>(evalCommand); }

int qeff::tool::runEval() {
  std::string pathError;
  const ModelPathKind pathKind = classifyModelPath(modelDir, pathError);
  if (pathKind == ModelPathKind::Invalid)
    return fail(pathError);
  // The modes: fp32 first (the reference), then the others once each.
  std::vector<std::string> modes = {"fp32"};
  SmallVector<StringRef> parts;
  StringRef(numericsList).split(parts, ',', -1, /*KeepEmpty=*/true);
  for (StringRef part : parts) {
    if (part.trim().empty())
      return fail("--numerics '" + numericsList + "': an empty mode in the list (modes "
                  "separated by ',', each fp32, fp16, mxfp6, mxint8-kv, mxint8-io joined by '+')");
    SessionOptions probe;
    if (Status s = parseNumerics(part.trim().str(), probe); !s)
      return fail(s.error());
    std::string name = numericsName(probe);
    if (std::find(modes.begin(), modes.end(), name) == modes.end())
      modes.push_back(name);
  }
  if (threads < 0)
    return fail("--threads must be >= 0, got " + std::to_string(threads));
  if (window < 0 || stride < 0)
    return fail("--window and --stride must be positive");
  if (window == 1)
    return fail("--window 1 scores nothing: a window scores the tokens after its first "
                "(at least 2)");

  bool isArtifact = pathKind == ModelPathKind::Artifacts;
  auto sequences = readSequences(modelDir);
  if (!sequences)
    return fail(sequences.error());
  int64_t longest = 0;
  for (const auto &s : *sequences)
    longest = std::max<int64_t>(longest, s.size());
  int64_t win = window > 0 ? int64_t(window) : longest;
  if (!isArtifact && window == 0)
    if (auto config = qeff::tool::checkpointConfig(modelDir); config.ok())
      if (int64_t served = qeff::hf::servedContext(*config); served > 1)
        win = std::min<int64_t>(win, served - 1);
  win = std::max<int64_t>(win, 2);
  // Default: windows overlapping by one token, so that every token after a
  // sequence's first is scored once (one window when it all fits).
  int64_t step = stride > 0 ? int64_t(stride) : std::max<int64_t>(1, win - 1);
  std::vector<int64_t> lengths;
  for (const auto &s : *sequences)
    lengths.push_back(s.size());
  int64_t windows = int64_t(scoringWindows(lengths, win, step).size());

  std::string artifacts = isArtifact ? std::string(modelDir)
                                     : compileForEval(modelDir, win, windows, json);
  if (artifacts.empty())
    return 1;

  std::vector<EvalResult> results;
  ReferenceLogProbs reference;
  bool progressBar = sys::Process::StandardErrIsDisplayed();
  for (const std::string &mode : modes) {
    SessionOptions options;
    options.numThreads = threads;
    if (Status s = applyNumerics(artifacts, "host", mode, mxRounding, mxWeightAxis, options); !s)
      return fail(s.error());
    auto session = Session::open(artifacts, DeviceKind::Host, options);
    if (!session)
      return fail(mode + ": " + session.error());
    EvalAccumulator acc(mode, mode == "fp32" ? nullptr : &reference);
    if (mode == "fp32" && modes.size() > 1)
      acc.record(&reference);
    ScoringOptions scoring;
    scoring.window = win;
    scoring.stride = step;
    auto started = std::chrono::steady_clock::now();
    if (progressBar)
      scoring.progress = [&](int64_t done, int64_t total) {
        double secs =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        int width = 30, filled = total ? int(width * done / total) : width;
        errs() << "\r  " << format("%-22s", mode.c_str()) << " ["
               << std::string(filled, '#') << std::string(width - filled, '.') << "] " << done
               << "/" << total << format(" tokens, %.1f tok/s ", done / std::max(secs, 1e-9));
        if (done == total)
          errs() << "\n";
      };
    Status st = scoreSequences(*session, *sequences, scoring,
                               [&](const ScoredToken &t, const float *logits, int64_t vocab) {
                                 acc.add(t.target, logits, vocab);
                               });
    if (!st)
      return fail(mode + ": " + st.error());
    if (!acc.ok())
      return fail(mode + ": " + acc.error());
    results.push_back(acc.result());
  }
  printEvalResults(results, json, outs());
  return 0;
}
