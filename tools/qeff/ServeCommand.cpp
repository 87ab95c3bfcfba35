//===- ServeCommand.cpp - `qeff serve` ------------------------------------===//
//
// Part of qeff. Serves compiled models over HTTP (OpenAI and Triton/KServe
// v2 protocols) from the continuous-batching engine: the command resolves
// each model directory to artifacts (a checkpoint compiles through the
// content-addressed cache, like `qeff infer`), gathers what the server
// needs around them (tokenizer, EOS ids, vocabulary, chat template) and
// hands them to runtime/serve. docs/serving.md is the user's guide.
//
//===----------------------------------------------------------------------===//

#include "tools/qeff/Commands.h"
#include "tools/qeff/CompileFlags.h"
#include "tools/qeff/Generate.h"
#include "tools/qeff/ModelPath.h"

#include "frontend/HF/ModelConfig.h"
#include "frontend/Tokenizer/Tokenizer.h"
#include "lowering/Driver/CompileCache.h"
#include "lowering/Driver/CompileDriver.h"
#include "lowering/Driver/ModelCards.h"
#include "runtime/generation/SpeculationSetup.h"
#include "runtime/serve/Server.h"
#include "tools/QEffVersion.h"
#include "support/DiagnosticPrinter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>

using namespace llvm;
using namespace mlir::qeff;
namespace serve = qeff::serve;
using qeff::tool::checkpointConfig;
using qeff::tool::classifyModelPath;
using qeff::tool::ModelPathKind;

namespace {
cl::SubCommand serveCommand(
    "serve", "Serve compiled models over HTTP: OpenAI-compatible "
             "(/v1/completions, /v1/chat/completions, /v1/models) and "
             "Triton/KServe v2 (/v2/health/*, /v2/models/{name}/generate), "
             "with continuous batching and Prometheus /metrics");
cl::opt<std::string> modelDir(cl::Positional, cl::desc("<artifact_dir|hf_dir|model.gguf>"),
                              cl::Optional, cl::sub(serveCommand));
cl::opt<std::string> modelName(
    "model-name",
    cl::desc("The name clients use for the model (default: the directory's "
             "base name)"),
    cl::sub(serveCommand));
cl::opt<std::string> host("host", cl::desc("Address to listen on (default 127.0.0.1)"),
                          cl::init("127.0.0.1"), cl::sub(serveCommand));
cl::opt<int> port("port", cl::desc("Port (default 8000; 0 picks a free one)"),
                  cl::init(8000), cl::sub(serveCommand));
cl::opt<int64_t> fullBatchSize(
    "full-batch-size",
    cl::desc("Checkpoints: compile for continuous batching with this many "
             "KV-cache rows, i.e. requests decoding at once (default 4; 0 = "
             "one request at a time)"),
    cl::init(4), cl::sub(serveCommand));
cl::opt<int64_t> ctxLen(
    "ctx-len",
    cl::desc("Checkpoints: KV-cache slots per sequence, the limit of prompt "
             "+ generated tokens (default: max_position_embeddings, times "
             "the rope_scaling factor of linear, dynamic and yarn scaling, "
             "at most 2048)"),
    cl::init(0), cl::sub(serveCommand));
cl::opt<int64_t> prefillSeqLen("prefill-seq-len",
                               cl::desc("Checkpoints: tokens per prefill chunk "
                                        "(default 32)"),
                               cl::init(32), cl::sub(serveCommand));
cl::opt<std::string> device("device",
                            cl::desc("host (the CPU reference device, default) "
                                     "or qaic (an AI 100)"),
                            cl::init("host"), cl::sub(serveCommand));
cl::opt<std::string> apiKey(
    "api-key",
    cl::desc("Require 'Authorization: Bearer <key>' on /v1 and /v2/models "
             "routes (default: $QEFF_API_KEY; none when unset)"),
    cl::sub(serveCommand));
cl::opt<int64_t> maxQueue(
    "max-queue",
    cl::desc("Requests that may wait for a free KV-cache row, per model; "
             "more get 503 with Retry-After (default 64)"),
    cl::init(64), cl::sub(serveCommand));
cl::opt<uint64_t> maxBodyBytes("max-body-bytes",
                               cl::desc("Larger request bodies get 413 "
                                        "(default 4194304)"),
                               cl::init(4 << 20), cl::sub(serveCommand));
cl::opt<std::string> logFormat("log-format",
                               cl::desc("One line per request on stderr: text "
                                        "(default) or json"),
                               cl::init("text"), cl::sub(serveCommand));
cl::opt<std::string> modelsFile(
    "models", cl::desc("Serve every model of a model-card file, each by its name"),
    cl::value_desc("cards.json"), cl::sub(serveCommand));
cl::opt<int> threads("threads", cl::desc("Host device threads per model (0 = all cores)"),
                     cl::init(0), cl::sub(serveCommand));
cl::opt<int> httpThreads(
    "http-threads",
    cl::desc("HTTP worker threads at most, started on demand; each open "
             "connection holds one (default 512)"),
    cl::init(512), cl::sub(serveCommand));
cl::opt<double> requestTimeout(
    "request-timeout",
    cl::desc("Seconds within which a request's headers and body must arrive "
             "after its first byte; a slower one gets 408 (default 30)"),
    cl::init(30), cl::sub(serveCommand));
cl::opt<double> keepAliveTimeout(
    "keep-alive-timeout",
    cl::desc("Seconds an idle keep-alive connection stays open (default 30; "
             "it closes at once when other connections wait for a worker)"),
    cl::init(30), cl::sub(serveCommand));
cl::opt<int64_t> keepAliveRequests(
    "keep-alive-requests",
    cl::desc("Requests served on one connection before it closes (default 1000)"),
    cl::init(1000), cl::sub(serveCommand));
cl::opt<int> listenBacklog(
    "listen-backlog",
    cl::desc("Connections the kernel queues before they are accepted "
             "(default 2048; capped by net.core.somaxconn)"),
    cl::init(2048), cl::sub(serveCommand));
cl::opt<int> maxReceivingPerClient(
    "max-receiving-per-client",
    cl::desc("Requests one client address may be sending at once, from a "
             "request's first byte until its headers and body are in, once "
             "half the HTTP threads are busy; more get 429. It caps the "
             "workers slow senders hold (default 32; 0 = no limit)"),
    cl::init(32), cl::sub(serveCommand));
cl::opt<int64_t> maxPendingConnections(
    "max-pending-connections",
    cl::desc("Accepted connections that may wait for a worker thread; more "
             "get 503 with Retry-After (default 4096)"),
    cl::init(4096), cl::sub(serveCommand));
cl::opt<int64_t> numDevices("num-devices", qeff::tool::numDevicesDesc(),
                            cl::init(1), cl::sub(serveCommand));
cl::opt<OutlineLayers> outlineLayers(
    "outline-layers", cl::ValueOptional, qeff::tool::outlineLayersDesc(),
    cl::init(OutlineLayers::Auto), qeff::tool::outlineLayersValues(),
    cl::sub(serveCommand));
cl::opt<std::string> deviceGroup(
    "device-group",
    cl::desc("The devices an artifact compiled with --num-devices N runs on: "
             "exactly N distinct ids, e.g. 0,1,2,3 (default: 0..N-1)"),
    cl::value_desc("ids"), cl::sub(serveCommand));
cl::opt<std::string> numerics(
    "numerics",
    cl::desc("Host device numerics of every model, as `qeff run --numerics`: "
             "fp32 (default), fp16, mxfp6, mxint8-kv, mxint8-io joined by '+'"),
    cl::init("fp32"), cl::sub(serveCommand));
cl::opt<int64_t> qaicTimeoutMs(
    "qaic-timeout-ms",
    cl::desc("--device=qaic: how long one inference may take before the SDK "
             "gives up (the program's data-path timeout; default 60000)"),
    cl::value_desc("ms"), cl::init(60000), cl::sub(serveCommand));
cl::opt<std::string> speculate(
    "speculate",
    cl::desc("Speculative decoding on a target compiled with "
             "--num-speculative-tokens: prompt-lookup (n-grams of the prompt "
             "and output) or draft=DIR (a draft model with the same "
             "tokenizer: artifacts, or a checkpoint compiled like the target)"),
    cl::value_desc("prompt-lookup|draft=DIR"), cl::sub(serveCommand));
cl::opt<int64_t> numSpeculativeTokens(
    "num-speculative-tokens",
    cl::desc("With --speculate: tokens proposed per step at most. A "
             "checkpoint is compiled as a target verifying K per step; "
             "artifacts verify at most their largest K (the default)"),
    cl::value_desc("K"), cl::init(0), cl::sub(serveCommand));
cl::opt<std::string> speculativeConfig(
    "speculative-config",
    cl::desc("vLLM's spelling of --speculate: a JSON object with "
             "\"method\" (\"ngram\" or \"draft_model\"), "
             "\"num_speculative_tokens\", \"prompt_lookup_max\" (ngram) or "
             "\"model\" (the draft's directory)"),
    cl::value_desc("json"), cl::sub(serveCommand));
// vLLM's spelling (argparse BooleanOptionalAction): both forms, the last
// one given wins.
cl::opt<bool> enablePrefixCaching(
    "enable-prefix-caching",
    cl::desc("A request takes the free KV-cache row that already holds the "
             "longest prefix of its prompt and prefills only the rest "
             "(default on)"),
    cl::init(true), cl::sub(serveCommand));
cl::opt<bool> noEnablePrefixCaching(
    "no-enable-prefix-caching",
    cl::desc("Turn prefix caching off: every prompt is prefilled whole"),
    cl::init(false), cl::sub(serveCommand));
cl::opt<std::string> cacheDir(
    "cache-dir",
    cl::desc("Artifact cache for checkpoints (default $QEFF_CACHE_DIR, else "
             "$XDG_CACHE_HOME/qeff, else ~/.cache/qeff)"),
    cl::sub(serveCommand));

int fail(const std::string &message) {
  errs() << "qeff serve: " << message << "\n";
  return 1;
}

std::string join(const std::string &dir, StringRef name) {
  SmallString<256> p(dir);
  sys::path::append(p, name);
  return std::string(p.str());
}

/// The cache entry of a checkpoint compiled with `options` (compiled now on
/// a miss). Empty on error (reported).
std::string compileThroughServeCache(CompileOptions options) {
  std::string cache = cacheDir.empty() ? defaultCacheDir() : std::string(cacheDir);
  mlir::MLIRContext context;
  SourceMgr sourceMgr;
  qeff::support::DiagnosticPrinter handler(sourceMgr, &context);
  CacheResult cached;
  CompileReport report;
  errs() << "qeff serve: " << options.checkpointDir << ": ctx_len " << options.ctxLen
         << (options.fullBatchSize > 0
                 ? ", continuous batching over " +
                       std::to_string(options.fullBatchSize) + " cache rows"
                 : std::string(", one sequence at a time"))
         << "\n";
  if (failed(compileThroughCache(context, options, cache, cached, report)))
    return "";
  errs() << "qeff serve: " << (cached.hit ? "using cached artifacts " : "compiled ")
         << cached.artifactDir << "\n";
  return cached.artifactDir;
}

/// The speculation of the command line (--speculate or
/// --speculative-config); method "" when off. False on error (reported).
bool parseSpeculation(qeff::runtime::SpeculationSpec &spec, std::string &draftDir) {
  if (speculate.getNumOccurrences() && speculativeConfig.getNumOccurrences()) {
    fail("--speculate and --speculative-config say the same: give one");
    return false;
  }
  if (numSpeculativeTokens < 0) {
    fail("--num-speculative-tokens must not be negative");
    return false;
  }
  spec.numTokens = numSpeculativeTokens;
  if (speculate.getNumOccurrences()) {
    auto parsed = qeff::runtime::parseSpeculateFlag(speculate);
    if (!parsed) {
      fail("--speculate " + parsed.error());
      return false;
    }
    spec.method = parsed->method;
    draftDir = parsed->draftArtifactDir;
  } else if (speculativeConfig.getNumOccurrences()) {
    auto bad = [](const std::string &why) {
      fail("--speculative-config: " + why);
      return false;
    };
    Expected<json::Value> parsed = json::parse(speculativeConfig);
    if (!parsed)
      return bad("not JSON: " + toString(parsed.takeError()));
    const json::Object *object = parsed->getAsObject();
    if (!object)
      return bad("expected a JSON object");
    std::string method;
    for (const auto &[key, value] : *object) {
      StringRef k = key;
      if (k == "method" || k == "model") {
        std::optional<StringRef> text = value.getAsString();
        if (!text)
          return bad("\"" + k.str() + "\" must be a string");
        (k == "method" ? method : draftDir) = text->str();
        continue;
      }
      std::optional<int64_t> n = value.getAsInteger();
      if (k == "num_speculative_tokens" || k == "prompt_lookup_max" ||
          k == "prompt_lookup_min") {
        if (!n || *n < 1)
          return bad("\"" + k.str() + "\" must be a positive integer");
        if (k == "num_speculative_tokens") {
          if (numSpeculativeTokens.getNumOccurrences() &&
              numSpeculativeTokens != *n)
            return bad("\"num_speculative_tokens\" differs from "
                       "--num-speculative-tokens");
          spec.numTokens = *n;
        } else if (k == "prompt_lookup_max") {
          spec.promptLookupMax = *n;
        } else if (*n != 1) {
          // Lookup falls back to shorter n-grams down to one token.
          return bad("\"prompt_lookup_min\" must be 1 (qeff's prompt lookup "
                     "tries every n-gram size down to 1)");
        }
        continue;
      }
      return bad("unknown field \"" + k.str() +
                 "\" (qeff reads method, model, num_speculative_tokens, "
                 "prompt_lookup_max, prompt_lookup_min)");
    }
    if (method.empty())
      method = draftDir.empty() ? "" : "draft_model";
    if (method == "ngram") {
      if (!draftDir.empty())
        return bad("method \"ngram\" takes no \"model\"");
      spec.method = "prompt-lookup";
    } else if (method == "draft_model") {
      if (draftDir.empty())
        return bad("method \"draft_model\" needs \"model\": the draft's "
                   "directory");
      spec.method = "draft";
    } else {
      return bad("\"method\" must be \"ngram\" or \"draft_model\", got \"" +
                 method + "\"");
    }
  } else if (numSpeculativeTokens.getNumOccurrences()) {
    fail("--num-speculative-tokens applies with --speculate (or "
         "--speculative-config)");
    return false;
  }
  if (spec.method == "draft" && !sys::fs::is_directory(draftDir)) {
    fail("the draft model '" + draftDir + "' is not a directory");
    return false;
  }
  return true;
}

/// The artifacts of `dir`: itself when compiled, else its cache entry
/// (compiled now on a miss). Empty on error (reported).
std::string resolveArtifacts(const std::string &dir,
                             const qeff::runtime::SpeculationSpec &speculation,
                             CompileOptions *compiled = nullptr) {
  std::string pathError;
  ModelPathKind kind = classifyModelPath(dir, pathError);
  if (kind == ModelPathKind::Invalid) {
    fail(pathError);
    return "";
  }
  bool compileOptionGiven = ctxLen.getNumOccurrences() ||
                            fullBatchSize.getNumOccurrences() ||
                            prefillSeqLen.getNumOccurrences() ||
                            numDevices.getNumOccurrences() ||
                            outlineLayers.getNumOccurrences();
  if (kind == ModelPathKind::Artifacts) {
    if (compileOptionGiven) {
      fail("--ctx-len, --full-batch-size, --prefill-seq-len, --num-devices "
           "and --outline-layers compile a checkpoint, but " + dir + " holds compiled artifacts "
           "(qeff-manifest.json), which are served as compiled: drop them, "
           "or serve the checkpoint");
      return "";
    }
    return dir;
  }
  if (fullBatchSize < 0 || ctxLen < 0 || prefillSeqLen <= 0) {
    fail("--full-batch-size and --ctx-len must not be negative, "
         "--prefill-seq-len must be positive");
    return "";
  }
  CompileOptions options;
  options.checkpointDir = dir;
  options.ctxLen = ctxLen;
  if (options.ctxLen == 0) {
    int64_t maxPositions = 0;
    if (auto config = checkpointConfig(dir); config.ok())
      maxPositions = qeff::hf::servedContext(*config);
    options.ctxLen = maxPositions > 0 ? std::min<int64_t>(maxPositions, 2048) : 2048;
  }
  options.prefillSeqLen = std::min<int64_t>(prefillSeqLen, options.ctxLen);
  options.batchSize = 1;
  options.fullBatchSize = fullBatchSize;
  options.outlineLayers = outlineLayers;
  options.numDevices = numDevices;
  if (!speculation.method.empty()) {
    if (speculation.numTokens < 1) {
      fail("speculative decoding on a checkpoint compiles a target verifying "
           "K tokens per step: give --num-speculative-tokens K (e.g. 3)");
      return "";
    }
    options.numSpeculativeTokens = {speculation.numTokens};
  }
  if (numDevices.getNumOccurrences() == 0 && !deviceGroup.empty())
    if (auto group = qeff::tool::parseDeviceGroup(deviceGroup))
      options.numDevices = group->size();
  if (options.numDevices < 1) {
    fail("--num-devices must be positive, got " +
         std::to_string(options.numDevices));
    return "";
  }
  if (compiled)
    *compiled = options;
  return compileThroughServeCache(options);
}

/// The draft model's artifacts: `dir` when compiled, else the checkpoint
/// compiled like the target `target` (a checkpoint too) without speculation
/// of its own. Empty on error (reported).
std::string resolveDraft(const std::string &dir,
                         const std::optional<CompileOptions> &target) {
  std::string pathError;
  ModelPathKind kind = classifyModelPath(dir, pathError);
  if (kind == ModelPathKind::Invalid) {
    fail("the draft model: " + pathError);
    return "";
  }
  if (kind == ModelPathKind::Artifacts)
    return dir;
  if (!target) {
    fail("the draft model " + dir + " is a checkpoint but the target is "
         "compiled: compile the draft with the target's --ctx-len and "
         "--full-batch-size (qeff compile) and give its artifacts");
    return "";
  }
  CompileOptions options = *target;
  options.checkpointDir = dir;
  options.numSpeculativeTokens.clear();
  return compileThroughServeCache(options);
}

/// What the server needs around the artifacts of one model.
bool describeModel(const std::string &name, const std::string &artifacts,
                   serve::ServedModelSpec &spec) {
  spec.name = name;
  spec.artifactDir = artifacts;
  spec.device = device == "qaic" ? qeff::runtime::DeviceKind::Qaic
                                 : qeff::runtime::DeviceKind::Host;
  spec.sessionOptions.numThreads = threads;
  // A server lays the weights out at start-up: no request pays for it.
  spec.sessionOptions.prepackWeights = true;
  if (auto s = qeff::tool::applyNumerics(artifacts, device, numerics, "even", "k",
                                         spec.sessionOptions);
      !s) {
    fail(s.error());
    return false;
  }
  spec.sessionOptions.qaicTimeoutMs = qaicTimeoutMs;
  if (!deviceGroup.empty()) {
    auto group = qeff::tool::parseDeviceGroup(deviceGroup);
    if (!group) {
      fail(group.error());
      return false;
    }
    spec.sessionOptions.deviceGroup = *group;
  }
  if (sys::fs::exists(join(artifacts, "tokenizer.json"))) {
    auto tok = qeff::tokenizer::Tokenizer::fromDirectory(artifacts);
    if (!tok.ok()) {
      fail(artifacts + ": " + std::string(tok.status().message()));
      return false;
    }
    spec.tokenizer = std::move(*tok);
  }
  auto eosIds = qeff::tool::eosIdsOf(artifacts, spec.tokenizer ? &*spec.tokenizer : nullptr);
  if (!eosIds) {
    fail(artifacts + ": " + eosIds.error());
    return false;
  }
  spec.eosIds = std::move(*eosIds);
  if (auto config = qeff::hf::readConfigJson(join(artifacts, "config.json"));
      config.ok())
    if (auto v = config->getInt("vocab_size", 0); v.ok())
      spec.vocabSize = *v;
  // Chat completions render the model's own chat template; without a usable
  // one they are refused (501) with the reason, never given a wrong prompt.
  spec.chat = serve::loadChatRenderer(artifacts, spec.chatUnavailable);
  if (!spec.chat)
    errs() << "qeff serve: model '" << name
           << "': chat completions unavailable: " << spec.chatUnavailable << "\n";
  return true;
}

/// The one model directory of the command line.
bool resolveAndDescribe(std::vector<serve::ServedModelSpec> &specs,
                        qeff::runtime::SpeculationSpec speculation,
                        const std::string &draftDir) {
  CompileOptions compiled;
  std::string artifacts = resolveArtifacts(modelDir, speculation, &compiled);
  if (artifacts.empty())
    return false;
  if (speculation.method == "draft") {
    std::optional<CompileOptions> target;
    if (!compiled.checkpointDir.empty())
      target = compiled;
    speculation.draftArtifactDir = resolveDraft(draftDir, target);
    if (speculation.draftArtifactDir.empty())
      return false;
  }
  std::string name = modelName;
  if (name.empty())
    name = sys::path::filename(sys::path::remove_leading_dotslash(
                                   StringRef(modelDir).rtrim("/")))
               .str();
  serve::ServedModelSpec spec;
  if (!describeModel(name, artifacts, spec))
    return false;
  spec.speculation = std::move(speculation);
  specs.push_back(std::move(spec));
  return true;
}

} // namespace

bool qeff::tool::isServeCommand() { return static_cast<bool>(serveCommand); }

int qeff::tool::runServe() {
  qeff::runtime::SpeculationSpec speculation;
  std::string draftDir;
  if (!parseSpeculation(speculation, draftDir))
    return 1;
  if (device != "host" && device != "qaic")
    return fail("--device must be host or qaic, got '" + device + "'");
  std::string noQaic;
  if (device == "qaic" && !qeff::runtime::qaicDeviceAvailable(&noQaic))
    return fail("--device=qaic is unavailable: this qeff has no Cloud AI 100 "
                "device (" + noQaic + "); use --device=host");
  if (logFormat != "text" && logFormat != "json")
    return fail("--log-format must be text or json, got '" + logFormat + "'");
  if (port < 0 || port > 65535)
    return fail("--port must be 0..65535, got " + std::to_string(port));
  if (maxQueue < 0)
    return fail("--max-queue must not be negative");
  if (httpThreads < 1)
    return fail("--http-threads must be positive");
  if (!(requestTimeout > 0 && requestTimeout <= 86400))
    return fail("--request-timeout must be in (0, 86400] seconds");
  if (!(keepAliveTimeout >= 0 && keepAliveTimeout <= 86400))
    return fail("--keep-alive-timeout must be in [0, 86400] seconds");
  if (keepAliveRequests < 1)
    return fail("--keep-alive-requests must be positive");
  if (listenBacklog < 1)
    return fail("--listen-backlog must be positive");
  if (maxReceivingPerClient < 0)
    return fail("--max-receiving-per-client must not be negative");
  if (maxPendingConnections < 1)
    return fail("--max-pending-connections must be positive");
  if (maxBodyBytes == 0)
    return fail("--max-body-bytes must be positive");

  std::vector<serve::ServedModelSpec> specs;
  if (!modelsFile.empty()) {
    // Every card by its name, compiled with its own options through the
    // cache (the same entries `qeff compile --models` builds).
    if (!modelDir.empty() || !modelName.empty())
      return fail("--models serves the cards of the file by their names; drop "
                  "the model directory and --model-name");
    if (!speculation.method.empty())
      return fail("--speculate and --speculative-config serve one model "
                  "directory; model cards carry no speculation");
    if (ctxLen.getNumOccurrences() || fullBatchSize.getNumOccurrences() ||
        prefillSeqLen.getNumOccurrences() || numDevices.getNumOccurrences() ||
        outlineLayers.getNumOccurrences())
      return fail("with --models, --ctx-len, --full-batch-size, "
                  "--prefill-seq-len, --num-devices and --outline-layers come "
                  "from the card file (its \"defaults\" or a card)");
    llvm::Expected<ModelCardFile> file = readModelCards(modelsFile);
    if (!file) {
      errs() << toString(file.takeError()) << "\n";
      return fail("cannot serve " + modelsFile);
    }
    for (const ModelCard &card : file->cards) {
      std::string artifacts = compileThroughServeCache(card.options);
      if (artifacts.empty())
        return fail("card '" + card.name + "' (" + card.options.checkpointDir +
                    ") could not be compiled");
      serve::ServedModelSpec spec;
      if (!describeModel(card.name, artifacts, spec))
        return 1;
      specs.push_back(std::move(spec));
    }
  } else if (modelDir.empty()) {
    return fail("give a model directory (artifacts or a checkpoint), or "
                "--models cards.json");
  } else {
    if (!resolveAndDescribe(specs, speculation, draftDir))
      return 1;
  }
  serve::ServerOptions options;

  options.host = host;
  options.port = port;
  options.apiKey = apiKey;
  if (options.apiKey.empty())
    if (const char *env = std::getenv("QEFF_API_KEY"); env && *env)
      options.apiKey = env;
  options.maxQueue = maxQueue;
  options.maxBodyBytes = maxBodyBytes;
  options.jsonLog = logFormat == "json";
  options.httpThreads = httpThreads;
  options.requestTimeoutSeconds = requestTimeout;
  options.keepAliveTimeoutSeconds = keepAliveTimeout;
  options.keepAliveRequests = keepAliveRequests;
  options.listenBacklog = listenBacklog;
  options.maxReceivingPerClient = maxReceivingPerClient;
  options.maxPendingConnections = maxPendingConnections;
  options.version = QEFF_VERSION_STRING;
  options.prefixCaching = enablePrefixCaching;
  if (noEnablePrefixCaching &&
      (!enablePrefixCaching.getNumOccurrences() ||
       noEnablePrefixCaching.getPosition() > enablePrefixCaching.getPosition()))
    options.prefixCaching = false;

  // From here on SIGTERM/SIGINT shut the server down gracefully (one that
  // arrives while the models load is handled once serving starts).
  serve::installTerminationHandler();
  serve::tuneAllocatorForServing();
  auto server = serve::Server::create(options, std::move(specs));
  if (!server)
    return fail(server.error());
  auto bound = (*server)->bind();
  if (!bound)
    return fail(bound.error());
  std::string names;
  for (const std::string &n : (*server)->modelNames())
    names += (names.empty() ? "'" : ", '") + n + "'";
  std::cout << "qeff serve: listening on http://" << host << ":" << *bound
            << ((*server)->modelNames().size() == 1 ? " (model " : " (models ")
            << names << ")" << std::endl;
  bool clean = serve::runUntilSignal(**server, [](int signal) {
    std::cerr << "qeff serve: " << (signal == SIGINT ? "SIGINT" : "SIGTERM")
              << ": refusing new requests, finishing the ones in flight"
              << std::endl;
  });
  std::cerr << "qeff serve: stopped" << std::endl;
  if (!clean) {
    // Only idle keep-alive connections remain (every response was sent):
    // exit without waiting for them to time out.
    std::fflush(nullptr);
    std::_Exit(0);
  }
  return 0;
}
