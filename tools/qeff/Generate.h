//===- Generate.h - text generation shared by run and infer -----*- C++ -*-===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_TOOLS_QEFF_GENERATE_H
#define QEFF_TOOLS_QEFF_GENERATE_H

#include "qeff/runtime/Result.h"
#include "qeff/runtime/Session.h"

#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <string>
#include <vector>

namespace qeff::tokenizer {
class Tokenizer;
} // namespace qeff::tokenizer

namespace qeff::tool {

/// The generation options of `qeff run` and `qeff infer`.
struct GenerateFlags {
  std::vector<std::string> tokenIds;  ///< "1,403,407" per prompt
  std::vector<std::string> prompts;   ///< text prompts
  std::string promptsFile;            ///< one prompt per line
  int64_t maxNewTokens = 128;
  std::string device = "host";
  std::string numerics = "fp32";
  std::string mxRounding = "even";  ///< --mx-rounding
  std::string mxWeightAxis = "k";   ///< --mx-weight-axis
  double temperature = 0, topP = 1, repetitionPenalty = 1;
  int64_t topK = 0;
  uint64_t seed = 0;
  std::vector<std::string> stops;
  bool json = false;
  int threads = 0;
  bool prepackWeights = false;
  std::string saveLogits; ///< safetensors file of the logits of every step
  std::string deviceGroup; ///< "0,1,2,3": the devices of an N-device artifact
  int64_t qaicTimeoutMs = 60000; ///< SessionOptions::qaicTimeoutMs
};

/// The device ids of --device-group ("0,1,2,3"), or an error naming the bad
/// entry.
qeff::runtime::Result<std::vector<int>>
parseDeviceGroup(const std::string &text);

/// Bounds of the generation options.
constexpr int64_t kMaxNewTokens = int64_t(1) << 20;
constexpr int kMaxThreads = 1024;
constexpr int64_t kMaxQaicTimeoutMs = 24ll * 3600 * 1000;

/// "" when the flags are sane, else the message naming the flag.
std::string checkGenerateFlags(const GenerateFlags &flags);

/// Registers the generation options on `sub` (llvm::cl) and returns the
/// storage they parse into.
GenerateFlags &generateFlags();
void addGenerateOptions(llvm::cl::SubCommand &sub);

/// Text prompts given, from --prompt or --prompts-file (the tokenizer is
/// needed to encode them).
std::vector<std::string> textPrompts(const GenerateFlags &flags,
                                     std::string &error);

/// The ids that end a sequence on `dir`'s model: the tokenizer's (may be
/// null), generation_config.json's and config.json's eos_token_id. An error
/// names a malformed file or a negative id.
qeff::runtime::Result<std::vector<int64_t>> eosIdsOf(const std::string &dir,
                                                     const tokenizer::Tokenizer *tokenizer);

/// Sets the numerics of `options` for running `artifactDir` on `device`
/// ("host" or "qaic"): `numerics` as --numerics spells it (parseNumerics),
/// the fp32 nodes of the artifact's node_precision.yaml for an fp16 mode,
/// and the MX rounding ("even" | "nearest") and weight block axis ("k" |
/// "n"). An error names the flag or file at fault.
qeff::runtime::Status applyNumerics(const std::string &artifactDir, const std::string &device,
                                    const std::string &numerics,
                                    const std::string &mxRounding,
                                    const std::string &mxWeightAxis,
                                    qeff::runtime::SessionOptions &options);

/// Registers --mx-rounding and --mx-weight-axis on `sub`, storing into
/// `rounding` and `axis` (which must outlive the parse).
void addMxOptions(llvm::cl::SubCommand &sub, std::string &rounding, std::string &axis);

/// Runs generation on a compiled artifact directory and prints the result
/// (streamed text, or --json). Returns the process exit code.
int generateOnArtifact(const std::string &artifactDir,
                       const GenerateFlags &flags, const char *command);

} // namespace qeff::tool

#endif // QEFF_TOOLS_QEFF_GENERATE_H
