//===- Generate.cpp - text generation shared by run and infer -------------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "tools/qeff/Generate.h"

#include "frontend/HF/GenerationConfig.h"
#include "frontend/HF/ModelConfig.h"
#include "frontend/HF/SafeTensors.h"
#include "frontend/Tokenizer/Tokenizer.h"
#include "lowering/Driver/PrecisionList.h"
#include "qeff/runtime/Session.h"
#include "runtime/generation/Generator.h"
#include "runtime/generation/SpeculationSetup.h"
#include "support/SafeFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <optional>
#include <set>

using namespace llvm;
using namespace qeff::runtime;

namespace qeff::tool {

GenerateFlags &generateFlags() {
  static GenerateFlags flags;
  return flags;
}

void addGenerateOptions(cl::SubCommand &sub) {
  GenerateFlags &f = generateFlags();
  // The options live as long as the program; llvm::cl keeps pointers to them.
  static std::vector<std::unique_ptr<cl::Option>> options;
  auto add = [&](cl::Option *o) { options.emplace_back(o); };
  add(new cl::list<std::string>(
      "token-ids", cl::desc("A prompt as token ids, e.g. 1,403,407 (repeat for a batch)"),
      cl::value_desc("ids"), cl::callback([&f](const std::string &v) { f.tokenIds.push_back(v); }),
      cl::sub(sub)));
  add(new cl::list<std::string>(
      "prompt", cl::desc("A text prompt (repeat for a batch; needs a tokenizer)"),
      cl::value_desc("text"), cl::callback([&f](const std::string &v) { f.prompts.push_back(v); }),
      cl::sub(sub)));
  add(new cl::opt<std::string>(
      "prompts-file", cl::desc("Text prompts, one per line"), cl::value_desc("path"),
      cl::callback([&f](const std::string &v) { f.promptsFile = v; }), cl::sub(sub)));
  add(new cl::opt<int64_t>(
      "max-new-tokens", cl::desc("Tokens to generate at most per prompt (default 128)"),
      cl::callback([&f](const int64_t &v) { f.maxNewTokens = v; }), cl::sub(sub)));
  add(new cl::opt<std::string>(
      "device", cl::desc("host (the CPU reference device, default) or qaic (an AI 100)"),
      cl::callback([&f](const std::string &v) { f.device = v; }), cl::sub(sub)));
  add(new cl::opt<std::string>(
      "numerics",
      cl::desc("Host device numerics: fp32 (default), fp16 (the device's fp16; "
               "node_precision.yaml nodes stay fp32), and the MX formats "
               "qaic-compile stores: mxfp6 (MatMul weights, -mxfp6-matmul), "
               "mxint8-kv (KV cache), mxint8-io (tensor-parallel links), joined "
               "by '+', e.g. fp16+mxfp6+mxint8-kv (docs/numerics.md)"),
      cl::callback([&f](const std::string &v) { f.numerics = v; }), cl::sub(sub)));
  addMxOptions(sub, f.mxRounding, f.mxWeightAxis);
  add(new cl::opt<double>(
      "temperature", cl::desc("Sampling temperature; 0 = greedy (default)"),
      cl::callback([&f](const double &v) { f.temperature = v; }), cl::sub(sub)));
  add(new cl::opt<int64_t>(
      "top-k", cl::desc("Sample among the k most likely tokens (0 = all)"),
      cl::callback([&f](const int64_t &v) { f.topK = v; }), cl::sub(sub)));
  add(new cl::opt<double>(
      "top-p", cl::desc("Nucleus sampling mass (1 = off)"),
      cl::callback([&f](const double &v) { f.topP = v; }), cl::sub(sub)));
  add(new cl::opt<double>(
      "repetition-penalty", cl::desc("HF repetition penalty (1 = off)"),
      cl::callback([&f](const double &v) { f.repetitionPenalty = v; }), cl::sub(sub)));
  add(new cl::opt<uint64_t>(
      "seed", cl::desc("Random seed of sampling (reproducible)"),
      cl::callback([&f](const uint64_t &v) { f.seed = v; }), cl::sub(sub)));
  add(new cl::list<std::string>(
      "stop", cl::desc("Stop a row when its text contains this string (repeatable)"),
      cl::callback([&f](const std::string &v) { f.stops.push_back(v); }), cl::sub(sub)));
  add(new cl::opt<bool>(
      "json", cl::desc("Print one JSON object: rows (prompt_ids, generated_ids, "
                       "text, finish_reason, metrics) and total metrics"),
      cl::callback([&f](const bool &v) { f.json = v; }), cl::sub(sub)));
  add(new cl::opt<std::string>(
      "save-logits",
      cl::desc("Write the logits every token was chosen from to this "
               "safetensors file (tensor 'step_logits' [rows, steps, vocab]; "
               "for tests and debugging)"),
      cl::value_desc("path"),
      cl::callback([&f](const std::string &v) { f.saveLogits = v; }), cl::sub(sub)));
  add(new cl::opt<std::string>(
      "device-group",
      cl::desc("The devices an artifact compiled with --num-devices N runs "
               "on: exactly N distinct ids, e.g. 0,1,2,3 (default: 0..N-1; the "
               "host device runs the whole network after the same check)"),
      cl::value_desc("ids"),
      cl::callback([&f](const std::string &v) { f.deviceGroup = v; }), cl::sub(sub)));
  add(new cl::opt<int64_t>(
      "qaic-timeout-ms",
      cl::desc("--device=qaic: how long one inference may take before the SDK "
               "gives up (the program's data-path timeout; default 60000)"),
      cl::value_desc("ms"),
      cl::callback([&f](const int64_t &v) { f.qaicTimeoutMs = v; }), cl::sub(sub)));
  add(new cl::opt<std::string>(
      "speculate",
      cl::desc("Speculative decoding on a target compiled with "
               "--num-speculative-tokens: prompt-lookup (n-grams of the "
               "prompt and output, max_ngram_size 3); greedy output is "
               "unchanged, sampling keeps its distribution (rejection "
               "sampling)"),
      cl::value_desc("prompt-lookup"),
      cl::callback([&f](const std::string &v) { f.speculate = v; }), cl::sub(sub)));
  add(new cl::opt<int>(
      "threads", cl::desc("Host device threads (0 = all cores)"),
      cl::callback([&f](const int &v) { f.threads = v; }), cl::sub(sub)));
  add(new cl::opt<bool>(
      "prepack-weights",
      cl::desc("Host device: lay the weights out for the matrix kernels when "
               "the model loads (as `qeff serve` does) instead of at their "
               "second use; the first token then comes later"),
      cl::callback([&f](const bool &v) { f.prepackWeights = v; }), cl::sub(sub)));
}

void addMxOptions(cl::SubCommand &sub, std::string &rounding, std::string &axis) {
  static std::vector<std::unique_ptr<cl::Option>> options;
  options.emplace_back(new cl::opt<std::string>(
      "mx-rounding",
      cl::desc("MX emulation: rounding of values to an element, even (ties to "
               "even, default) or nearest (ties away from zero, as "
               "microsoft/microxcaling)"),
      cl::callback([&rounding](const std::string &v) { rounding = v; }), cl::sub(sub)));
  options.emplace_back(new cl::opt<std::string>(
      "mx-weight-axis",
      cl::desc("MX emulation: the MatMul weight axis MXFP6 blocks of 32 run "
               "along, k (the reduction axis, default) or n (the output axis)"),
      cl::callback([&axis](const std::string &v) { axis = v; }), cl::sub(sub)));
}

std::vector<std::string> textPrompts(const GenerateFlags &flags,
                                     std::string &error) {
  std::vector<std::string> prompts = flags.prompts;
  if (!flags.promptsFile.empty()) {
    std::string text, why;
    if (!support::readRegularFile(flags.promptsFile, support::kTokenizerFileLimit, text,
                                  why)) {
      error = "cannot read --prompts-file: " + why;
      return {};
    }
    SmallVector<StringRef> lines;
    StringRef(text).split(lines, '\n', -1, /*KeepEmpty=*/false);
    for (StringRef line : lines)
      prompts.push_back(line.rtrim("\r").str());
  }
  return prompts;
}

Result<std::vector<int>> parseDeviceGroup(const std::string &text) {
  std::vector<int> ids;
  SmallVector<StringRef> parts;
  StringRef(text).split(parts, ',', -1, /*KeepEmpty=*/true);
  for (StringRef part : parts) {
    int id;
    if (part.trim().getAsInteger(10, id) || id < 0)
      return runtime::Error{"--device-group '" + text + "': '" + part.str() +
                            "' is not a device id"};
    ids.push_back(id);
  }
  return ids;
}

std::string checkGenerateFlags(const GenerateFlags &flags) {
  if (flags.maxNewTokens <= 0 || flags.maxNewTokens > kMaxNewTokens)
    return "--max-new-tokens must be in 1.." + std::to_string(kMaxNewTokens) + ", got " +
           std::to_string(flags.maxNewTokens);
  if (!std::isfinite(flags.temperature) || flags.temperature < 0)
    return "--temperature must be a finite number >= 0 (0 = greedy), got " +
           std::to_string(flags.temperature);
  if (flags.topK < 0)
    return "--top-k must be >= 0 (0 = all tokens), got " + std::to_string(flags.topK);
  if (!(flags.topP > 0 && flags.topP <= 1))
    return "--top-p must be in (0, 1], got " + std::to_string(flags.topP);
  if (!std::isfinite(flags.repetitionPenalty) || flags.repetitionPenalty <= 0)
    return "--repetition-penalty must be a finite number > 0, got " +
           std::to_string(flags.repetitionPenalty);
  if (flags.qaicTimeoutMs < 1 || flags.qaicTimeoutMs > kMaxQaicTimeoutMs)
    return "--qaic-timeout-ms must be in 1.." + std::to_string(kMaxQaicTimeoutMs) +
           ", got " + std::to_string(flags.qaicTimeoutMs);
  if (flags.threads < 0 || flags.threads > kMaxThreads)
    return "--threads must be in 0.." + std::to_string(kMaxThreads) +
           " (0 = all cores), got " + std::to_string(flags.threads);
  return "";
}

namespace {

Result<std::vector<int64_t>> parseIds(const std::string &text) {
  std::vector<int64_t> ids;
  SmallVector<StringRef> parts;
  StringRef(text).split(parts, ',', -1, /*KeepEmpty=*/false);
  for (StringRef part : parts) {
    int64_t id;
    if (part.trim().getAsInteger(10, id) || id < 0)
      return runtime::Error{"--token-ids '" + text + "': '" + part.str() +
                   "' is not a token id"};
    ids.push_back(id);
  }
  if (ids.empty())
    return runtime::Error{"--token-ids '" + text + "' holds no token id"};
  return ids;
}

std::string joinPath(const std::string &dir, StringRef name) {
  SmallString<256> p(dir);
  sys::path::append(p, name);
  return std::string(p.str());
}

nlohmann::ordered_json metricsJson(const RowMetrics &m) {
  nlohmann::ordered_json j;
  j["prompt_tokens"] = m.promptTokens;
  j["generated_tokens"] = m.generatedTokens;
  j["time_to_first_token_s"] = m.timeToFirstToken;
  j["prefill_tokens_per_s"] = m.prefillTokensPerSecond;
  j["decode_tokens_per_s"] = m.decodeTokensPerSecond;
  j["total_s"] = m.totalSeconds;
  j["spec_proposed_tokens"] = m.specProposedTokens;
  j["spec_accepted_tokens"] = m.specAcceptedTokens;
  return j;
}

} // namespace

Result<std::vector<int64_t>> eosIdsOf(const std::string &dir,
                                      const tokenizer::Tokenizer *tok) {
  auto ids = hf::eosTokenIdsOf(dir, tok ? tok->eosIds() : std::vector<int64_t>{});
  if (!ids.ok())
    return runtime::Error{std::string(ids.status().message())};
  return std::move(*ids);
}

int generateOnArtifact(const std::string &artifactDir,
                       const GenerateFlags &flags, const char *command) {
  auto fail = [&](const std::string &message) {
    errs() << "qeff " << command << ": " << message << "\n";
    return 1;
  };
  std::string noQaic;
  if (flags.device == "qaic" && !qaicDeviceAvailable(&noQaic))
    return fail("--device=qaic is unavailable: this qeff has no Cloud AI 100 "
                "device (it needs the Platform SDK; " + noQaic + "); use "
                "--device=host, or rebuild qeff on an AI 100 host with the SDK");
  if (flags.device != "host" && flags.device != "qaic")
    return fail("--device must be host or qaic, got '" + flags.device + "'");
  SessionOptions options;
  if (Status s = applyNumerics(artifactDir, flags.device, flags.numerics, flags.mxRounding,
                               flags.mxWeightAxis, options);
      !s)
    return fail(s.error());
  if (std::string bad = checkGenerateFlags(flags); !bad.empty())
    return fail(bad);

  // The tokenizer, when the artifact has one.
  std::optional<tokenizer::Tokenizer> tok;
  if (sys::fs::exists(joinPath(artifactDir, "tokenizer.json"))) {
    auto loaded = tokenizer::Tokenizer::fromDirectory(artifactDir);
    if (!loaded.ok())
      return fail(std::string(loaded.status().message()));
    tok = std::move(*loaded);
  }

  std::vector<std::vector<int64_t>> prompts;
  for (const std::string &ids : flags.tokenIds) {
    auto parsed = parseIds(ids);
    if (!parsed)
      return fail(parsed.error());
    prompts.push_back(*parsed);
  }
  std::string error;
  std::vector<std::string> texts = textPrompts(flags, error);
  if (!error.empty())
    return fail(error);
  if (!texts.empty() && !tok)
    return fail("--prompt needs a tokenizer, and " + artifactDir +
                " has no tokenizer.json; give --token-ids instead");
  for (const std::string &text : texts)
    prompts.push_back(tok->encode(text, /*addSpecialTokens=*/true));
  if (prompts.empty())
    return fail("no prompt: give --prompt, --prompts-file or --token-ids");

  options.numThreads = flags.threads;
  options.prepackWeights = flags.prepackWeights;
  options.qaicTimeoutMs = flags.qaicTimeoutMs;
  if (!flags.deviceGroup.empty()) {
    auto group = parseDeviceGroup(flags.deviceGroup);
    if (!group)
      return fail(group.error());
    options.deviceGroup = *group;
  }
  auto session = Session::open(
      artifactDir, flags.device == "qaic" ? DeviceKind::Qaic : DeviceKind::Host, options);
  if (!session)
    return fail(session.error());
  auto generator = Generator::create(*session, tok ? &*tok : nullptr);
  if (!generator)
    return fail(generator.error());

  GenerationOptions gen;
  gen.maxNewTokens = flags.maxNewTokens;
  gen.temperature = flags.temperature;
  gen.topK = flags.topK;
  gen.topP = flags.topP;
  gen.repetitionPenalty = flags.repetitionPenalty;
  gen.seed = flags.seed;
  gen.stopStrings = flags.stops;
  auto eosIds = eosIdsOf(artifactDir, tok ? &*tok : nullptr);
  if (!eosIds)
    return fail(eosIds.error());
  gen.eosIds = std::move(*eosIds);

  // Speculative decoding: prompt lookup, or a draft model opened with the
  // target's device and options (the proposer owns its session).
  if (!flags.speculate.empty()) {
    auto spec = parseSpeculateFlag(flags.speculate);
    if (!spec)
      return fail("--speculate " + spec.error());
    ProposerTarget target;
    target.session = &*session;
    target.rows = generator->batchSize();
    target.ctxLen = generator->ctxLen();
    target.tokenizer = tok ? &*tok : nullptr;
    auto proposer = makeProposer(
        *spec, flags.device == "qaic" ? DeviceKind::Qaic : DeviceKind::Host,
        options, target, gen);
    if (!proposer)
      return fail("--speculate: " + proposer.error());
    SpeculationConfig speculation;
    speculation.proposer = std::move(*proposer);
    if (Status s = generator->setSpeculation(std::move(speculation)); !s)
      return fail("--speculate " + flags.speculate + ": " + s.error());
  }

  // Logits of every step, [rows, max_new_tokens, vocab], when asked.
  std::vector<float> savedLogits;
  int64_t savedVocab = 0;
  if (!flags.saveLogits.empty())
    gen.logitsObserver = [&](size_t row, int64_t step, const float *logits,
                             int64_t vocab) {
      if (savedLogits.empty()) {
        savedVocab = vocab;
        // Bounded by the flag checks: rows, max-new-tokens and the vocab
        // (a model output) multiply without overflow in 64 bits.
        savedLogits.assign(prompts.size() * flags.maxNewTokens * vocab, 0.0f);
      }
      std::copy(logits, logits + vocab,
                savedLogits.begin() + (row * flags.maxNewTokens + step) * vocab);
    };

  // Streaming: the text of a single prompt as it is generated.
  bool stream = !flags.json && tok && prompts.size() == 1;
  TextCallback onText;
  if (stream)
    onText = [](size_t, const std::string &text) {
      outs() << text;
      outs().flush();
    };
  auto result = generator->generate(prompts, gen, onText);
  if (!result)
    return fail(result.error());

  if (!flags.saveLogits.empty() && !savedLogits.empty()) {
    hf::TensorToWrite t{"step_logits", hf::DType::F32,
                        {int64_t(prompts.size()), flags.maxNewTokens, savedVocab},
                        savedLogits.data(), savedLogits.size() * sizeof(float)};
    if (auto s = hf::writeSafeTensors(flags.saveLogits, {t}); !s.ok())
      return fail(std::string(s.message()));
  }
  if (flags.json) {
    nlohmann::ordered_json root;
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const RowResult &row : result->rows) {
      nlohmann::ordered_json r;
      r["prompt_ids"] = row.promptIds;
      r["generated_ids"] = row.generatedIds;
      if (tok)
        r["text"] = row.text;
      r["finish_reason"] = row.finishReason;
      r["metrics"] = metricsJson(row.metrics);
      rows.push_back(r);
    }
    root["rows"] = rows;
    nlohmann::ordered_json total;
    total["prefill_tokens_per_s"] = result->prefillTokensPerSecond;
    total["decode_tokens_per_s"] = result->decodeTokensPerSecond;
    total["total_s"] = result->totalSeconds;
    total["decode_steps"] = result->decodeSteps;
    total["spec_proposed_tokens"] = result->specProposedTokens;
    total["spec_accepted_tokens"] = result->specAcceptedTokens;
    root["metrics"] = total;
    // Generated text may hold invalid UTF-8 (a token cut mid-character):
    // replaced, never a throw (this code is built without exceptions).
    outs() << root.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
           << "\n";
    return 0;
  }
  if (stream) {
    // End the line on a terminal; piped output is exactly the text.
    if (llvm::sys::Process::StandardOutIsDisplayed())
      outs() << "\n";
  } else {
    for (size_t i = 0; i < result->rows.size(); ++i) {
      const RowResult &row = result->rows[i];
      outs() << "[" << i << "] ";
      if (tok)
        outs() << row.text << "\n";
      else
        outs() << llvm::join(llvm::map_range(row.generatedIds,
                                             [](int64_t id) { return std::to_string(id); }),
                             ",")
               << "\n";
    }
  }
  for (size_t i = 0; i < result->rows.size(); ++i) {
    const RowMetrics &m = result->rows[i].metrics;
    errs() << format("[%zu] %lld prompt + %lld generated tokens (%s); TTFT %.1f ms, "
                     "prefill %.1f tok/s, decode %.1f tok/s, %.2f s\n",
                     i, (long long)m.promptTokens, (long long)m.generatedTokens,
                     result->rows[i].finishReason.c_str(),
                     m.timeToFirstToken * 1e3, m.prefillTokensPerSecond,
                     m.decodeTokensPerSecond, m.totalSeconds);
  }
  if (!flags.speculate.empty())
    errs() << format("speculative decoding (%s): %lld of %lld proposed tokens "
                     "accepted (%.1f%%), %lld decode steps\n",
                     flags.speculate.c_str(),
                     (long long)result->specAcceptedTokens,
                     (long long)result->specProposedTokens,
                     result->specProposedTokens
                         ? 100.0 * result->specAcceptedTokens /
                               result->specProposedTokens
                         : 0.0,
                     (long long)result->decodeSteps);
  return 0;
}

} // namespace qeff::tool
