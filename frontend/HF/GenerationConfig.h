//===- GenerationConfig.h - generation_config.json --------------*- C++ -*-===//
//
// The token ids and limits of a checkpoint's generation_config.json (when the
// file exists). eos_token_id may be an integer or a list of integers, each a
// token id (non-negative).
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_HF_GENERATIONCONFIG_H
#define QEFF_FRONTEND_HF_GENERATIONCONFIG_H

#include "frontend/HF/JsonConfig.h"

namespace qeff::hf {

struct GenerationConfig {
  std::optional<int64_t> bosTokenId, padTokenId;
  std::vector<int64_t> eosTokenIds;
  std::optional<int64_t> maxLength, maxNewTokens;
  bool doSample = false;
  std::optional<double> temperature, topP;
  std::optional<int64_t> topK;

  static absl::StatusOr<GenerationConfig> fromJson(const JsonConfig &json);
};

/// Reads a generation_config.json file.
absl::StatusOr<GenerationConfig> readGenerationConfig(const std::string &path);
/// Reads `<dir>/generation_config.json`; std::nullopt when the file is absent.
absl::StatusOr<std::optional<GenerationConfig>>
readGenerationConfigIfPresent(const std::string &dir);

/// The ids that end a sequence on `dir`'s model (a checkpoint or artifact
/// directory): `tokenizerEos` (the tokenizer's), generation_config.json's and
/// config.json's eos_token_id, sorted and unique. A file that is present but
/// malformed, or an id < 0, is an error naming it, never ignored.
absl::StatusOr<std::vector<int64_t>>
eosTokenIdsOf(const std::string &dir, const std::vector<int64_t> &tokenizerEos);

} // namespace qeff::hf

#endif // QEFF_FRONTEND_HF_GENERATIONCONFIG_H
