//===- GenerationConfig.cpp - generation_config.json ----------------------===//

#include "frontend/HF/GenerationConfig.h"

#include "frontend/HF/JsonUtil.h"

#include "frontend/HF/ModelConfig.h"

#include "absl/strings/str_cat.h"

#include <filesystem>
#include <set>

namespace qeff::hf {

absl::StatusOr<GenerationConfig>
GenerationConfig::fromJson(const JsonConfig &json) {
  GenerationConfig g;
  QEFF_HF_ASSIGN_OR_RETURN(g.bosTokenId, json.getOptionalInt("bos_token_id"));
  QEFF_HF_ASSIGN_OR_RETURN(g.padTokenId, json.getOptionalInt("pad_token_id"));
  QEFF_HF_ASSIGN_OR_RETURN(g.eosTokenIds, json.getTokenIds("eos_token_id"));
  if (json.has("max_length")) {
    QEFF_HF_ASSIGN_OR_RETURN(g.maxLength, json.getPositiveInt("max_length"));
  }
  if (json.has("max_new_tokens")) {
    QEFF_HF_ASSIGN_OR_RETURN(g.maxNewTokens,
                             json.getPositiveInt("max_new_tokens"));
  }
  QEFF_HF_ASSIGN_OR_RETURN(g.doSample, json.getBool("do_sample", false));
  QEFF_HF_ASSIGN_OR_RETURN(g.temperature, json.getOptionalFloat("temperature"));
  QEFF_HF_ASSIGN_OR_RETURN(g.topP, json.getOptionalFloat("top_p"));
  QEFF_HF_ASSIGN_OR_RETURN(g.topK, json.getOptionalInt("top_k"));
  return g;
}

absl::StatusOr<GenerationConfig> readGenerationConfig(const std::string &path) {
  QEFF_HF_ASSIGN_OR_RETURN(JsonConfig json, JsonConfig::read(path));
  return GenerationConfig::fromJson(json);
}

absl::StatusOr<std::optional<GenerationConfig>>
readGenerationConfigIfPresent(const std::string &dir) {
  std::string path = dir.empty() || dir.back() == '/'
                         ? dir + "generation_config.json"
                         : dir + "/generation_config.json";
  if (!detail::isRegularFile(path))
    return std::optional<GenerationConfig>();
  QEFF_HF_ASSIGN_OR_RETURN(GenerationConfig g, readGenerationConfig(path));
  return std::optional<GenerationConfig>(std::move(g));
}

absl::StatusOr<std::vector<int64_t>>
eosTokenIdsOf(const std::string &dir, const std::vector<int64_t> &tokenizerEos) {
  std::set<int64_t> eos(tokenizerEos.begin(), tokenizerEos.end());
  QEFF_HF_ASSIGN_OR_RETURN(std::optional<GenerationConfig> g,
                           readGenerationConfigIfPresent(dir));
  if (g)
    eos.insert(g->eosTokenIds.begin(), g->eosTokenIds.end());
  std::string configPath = (std::filesystem::path(dir) / "config.json").string();
  std::error_code ec;
  if (std::filesystem::exists(configPath, ec)) {
    QEFF_HF_ASSIGN_OR_RETURN(JsonConfig c, readConfigJson(configPath));
    QEFF_HF_ASSIGN_OR_RETURN(std::vector<int64_t> ids,
                             c.getTokenIds("eos_token_id"));
    eos.insert(ids.begin(), ids.end());
  }
  return std::vector<int64_t>(eos.begin(), eos.end());
}

} // namespace qeff::hf
