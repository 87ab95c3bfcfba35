//===- QuantConfig.h - config.json quantization_config ----------*- C++ -*-===//
//
// Part of qeff. The `quantization_config` of a pre-quantized checkpoint, as
// the quantization libraries write it, parsed into what the dequantizers
// need. Supported: AutoAWQ GEMM (`awq`), GPTQ (`gptq`, AutoGPTQ/GPTQModel v1
// and v2 checkpoints, 4 and 8 bits), Neural Magic compressed-tensors
// (`compressed-tensors`: pack-quantized, int-quantized, naive-quantized,
// float-quantized) and block-scaled FP8 (`fp8`, DeepSeek-V3 / Qwen3-FP8).
// Everything else is refused with the field at fault named: other AWQ
// kernels, GPTQ 3-bit or kernel formats, dynamic or sparse compressed-tensors
// schemes, bitsandbytes, unknown methods.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_QUANT_QUANTCONFIG_H
#define QEFF_FRONTEND_QUANT_QUANTCONFIG_H

#include "frontend/HF/JsonConfig.h"

#include <optional>
#include <string>
#include <vector>

namespace qeff::quant {

enum class Method { AWQ, GPTQ, CompressedTensors, FP8, MXFP4 };

/// A module-name pattern as the libraries match them: Python `re.match`
/// (anchored at the start only).
struct NamePattern {
  std::string regex;
  /// True when `name` matches (PCRE2, anchored at the start).
  bool matches(const std::string &name) const;
};

/// GPTQModel `dynamic`: per-module overrides; "-:" patterns skip modules.
struct GPTQRule {
  NamePattern pattern;
  bool skip = false;
  std::optional<int> bits;
  std::optional<int64_t> groupSize;
  std::optional<bool> sym, descAct;
};

/// One compressed-tensors config group (its `weights` quantization args).
struct CTGroup {
  std::string name;
  /// Class names ("Linear") or module names / "re:" regexes.
  std::vector<std::string> targets;
  std::string format;      ///< the group's format, else the top-level one
  int bits = 8;
  bool isFloat = false;    ///< type "float" (FP8) rather than "int"
  bool symmetric = true;
  std::string strategy;    ///< tensor, channel, group, block
  int64_t groupSize = 0;   ///< strategy group
  int64_t blockRows = 0, blockCols = 0; ///< strategy block
  bool actOrder = false;   ///< actorder set: a weight_g_idx tensor may exist
};

struct QuantScheme {
  Method method = Method::AWQ;
  /// "awq", "gptq", "compressed-tensors", "fp8", "mxfp4".
  std::string methodName;
  // AWQ and GPTQ.
  int bits = 4;
  int64_t groupSize = 128; ///< -1: one group over all inputs
  bool zeroPoint = true;   ///< AWQ
  bool sym = true;         ///< GPTQ
  bool descAct = false;    ///< GPTQ
  bool gptqV1 = true;      ///< GPTQ checkpoint_format "gptq": zeros stored - 1
  std::vector<GPTQRule> dynamic;
  /// AWQ / fp8 / mxfp4 `modules_to_not_convert` (substring match, as the
  /// libraries; mxfp4 decodes only `_blocks` / `_scales` pairs anyway).
  std::vector<std::string> notConvert;
  // compressed-tensors.
  std::string format;
  std::vector<CTGroup> groups;
  std::vector<std::string> ignore;
  // fp8.
  int64_t blockRows = 0, blockCols = 0; ///< 0: per-tensor scale
};

/// The checkpoint's quantization_config, std::nullopt when config.json has
/// none. Errors name config.json and the field.
absl::StatusOr<std::optional<QuantScheme>>
parseQuantizationConfig(const hf::JsonConfig &config);

/// A compressed-tensors `targets`/`ignore` entry against a module name: "re:"
/// regexes (re.match), exact names, or the class name "Linear" (every module
/// the checkpoint packs is a Linear).
bool ctTargetMatches(const std::string &target, const std::string &module);

} // namespace qeff::quant

#endif // QEFF_FRONTEND_QUANT_QUANTCONFIG_H
