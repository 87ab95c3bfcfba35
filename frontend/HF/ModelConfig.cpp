//===- ModelConfig.cpp - config.json of a decoder-only HF model -----------===//

#include "frontend/HF/ModelConfig.h"

#include "frontend/HF/JsonUtil.h"

#include "absl/strings/str_cat.h"

#include <cmath>
#include <sys/stat.h>

namespace qeff::hf {

using detail::Json;

FamilyDefaults FamilyDefaults::llama() {
  FamilyDefaults d;
  d.vocabSize = 32000;
  d.hiddenSize = 4096;
  d.intermediateSize = 11008;
  d.numHiddenLayers = 32;
  d.numAttentionHeads = 32;
  d.hiddenAct = "silu";
  d.maxPositionEmbeddings = 2048;
  d.rmsNormEps = 1e-6;
  d.ropeTheta = 10000.0;
  d.tieWordEmbeddings = false;
  d.bosTokenId = 1;
  d.eosTokenIds = {2};
  return d;
}

FamilyDefaults FamilyDefaults::mistral() {
  FamilyDefaults d = llama();
  d.intermediateSize = 14336;
  d.numKeyValueHeads = 8;
  d.maxPositionEmbeddings = 4096 * 32;
  d.slidingWindow = 4096;
  return d;
}

FamilyDefaults FamilyDefaults::qwen2() {
  FamilyDefaults d = llama();
  d.vocabSize = 151936;
  d.intermediateSize = 22016;
  d.maxPositionEmbeddings = 32768;
  d.slidingWindow = 4096; // used only with use_sliding_window (configure)
  d.bosTokenId.reset();
  d.eosTokenIds.clear();
  return d;
}

FamilyDefaults FamilyDefaults::gemma() {
  FamilyDefaults d = llama();
  d.vocabSize = 256000;
  d.hiddenSize = 3072;
  d.intermediateSize = 24576;
  d.numHiddenLayers = 28;
  d.numAttentionHeads = 16;
  d.numKeyValueHeads = 16;
  d.hiddenAct = "gelu_pytorch_tanh";
  d.maxPositionEmbeddings = 8192;
  d.tieWordEmbeddings = true;
  d.bosTokenId = 2;
  d.eosTokenIds = {1};
  d.padTokenId = 0;
  return d;
}

FamilyDefaults FamilyDefaults::phi3() {
  FamilyDefaults d = llama();
  d.vocabSize = 32064;
  d.hiddenSize = 3072;
  d.intermediateSize = 8192;
  d.maxPositionEmbeddings = 4096;
  d.rmsNormEps = 1e-5;
  d.slidingWindow = std::nullopt;
  d.eosTokenIds = {32000};
  d.padTokenId = 32000;
  d.originalMaxPositionEmbeddings = 4096;
  return d;
}

FamilyDefaults FamilyDefaults::mixtral() {
  FamilyDefaults d = mistral();
  d.rmsNormEps = 1e-5;
  d.ropeTheta = 1e6;
  d.slidingWindow = std::nullopt;
  return d;
}

FamilyDefaults FamilyDefaults::gpt2() {
  FamilyDefaults d;
  d.vocabSize = 50257;
  d.hiddenSize = 768;
  d.intermediateSize = 4 * 768; // n_inner = null: 4 * n_embd (configure)
  d.numHiddenLayers = 12;
  d.numAttentionHeads = 12;
  d.hiddenAct = "gelu_new";
  d.maxPositionEmbeddings = 1024;
  d.rmsNormEps = 1e-5;
  d.tieWordEmbeddings = true;
  d.rotary = false;
  d.bosTokenId = 50256;
  d.eosTokenIds = {50256};
  d.attributeMap = {{"hidden_size", "n_embd"},
                    {"num_hidden_layers", "n_layer"},
                    {"num_attention_heads", "n_head"},
                    {"max_position_embeddings", "n_positions"},
                    {"intermediate_size", "n_inner"},
                    {"hidden_act", "activation_function"},
                    {"rms_norm_eps", "layer_norm_epsilon"}};
  return d;
}

FamilyDefaults FamilyDefaults::gptj() {
  FamilyDefaults d = gpt2();
  d.vocabSize = 50400;
  d.hiddenSize = 4096;
  d.intermediateSize = 4 * 4096;
  d.numHiddenLayers = 28;
  d.numAttentionHeads = 16;
  d.maxPositionEmbeddings = 2048;
  d.tieWordEmbeddings = false;
  d.rotary = true;
  return d;
}

FamilyDefaults FamilyDefaults::codegen() {
  FamilyDefaults d = gptj();
  d.hiddenSize = 4096;
  d.intermediateSize = 4 * 4096;
  d.numHiddenLayers = 28;
  d.numAttentionHeads = 16;
  return d;
}

FamilyDefaults FamilyDefaults::gptBigCode() {
  FamilyDefaults d = gpt2();
  d.hiddenAct = "gelu_pytorch_tanh";
  return d;
}

FamilyDefaults FamilyDefaults::phi() {
  FamilyDefaults d;
  d.vocabSize = 51200;
  d.hiddenSize = 2048;
  d.intermediateSize = 8192;
  d.numHiddenLayers = 24;
  d.numAttentionHeads = 32;
  d.hiddenAct = "gelu_new";
  d.maxPositionEmbeddings = 2048;
  d.rmsNormEps = 1e-5;
  d.partialRotaryFactor = 0.5;
  d.tieWordEmbeddings = false;
  d.bosTokenId = 1;
  d.eosTokenIds = {2};
  d.attributeMap = {{"rms_norm_eps", "layer_norm_eps"}};
  return d;
}

FamilyDefaults FamilyDefaults::falcon() {
  FamilyDefaults d;
  d.vocabSize = 65024;
  d.hiddenSize = 4544;
  d.intermediateSize = 4 * 4544; // ffn_hidden_size = null: 4 * hidden
  d.numHiddenLayers = 32;
  d.numAttentionHeads = 71;
  d.hiddenAct = "gelu";
  d.maxPositionEmbeddings = 2048;
  d.rmsNormEps = 1e-5;
  d.tieWordEmbeddings = true;
  // Rotary only without ALiBi; the family checks the rotary dims itself.
  d.rotary = false;
  d.bosTokenId = 11;
  d.eosTokenIds = {11};
  // num_kv_heads depends on multi_query / new_decoder_architecture
  // (configure); num_key_value_heads is never in a Falcon config.
  d.attributeMap = {{"intermediate_size", "ffn_hidden_size"},
                    {"hidden_act", "activation"},
                    {"num_key_value_heads", "num_kv_heads"},
                    {"rms_norm_eps", "layer_norm_epsilon"}};
  return d;
}

FamilyDefaults FamilyDefaults::mpt() {
  FamilyDefaults d;
  d.vocabSize = 50368;
  d.hiddenSize = 2048;
  d.intermediateSize = 4 * 2048; // always 4 * d_model in transformers
  d.numHiddenLayers = 24;
  d.numAttentionHeads = 16;
  d.hiddenAct = "gelu";
  d.maxPositionEmbeddings = 2048;
  d.rmsNormEps = 1e-5;
  d.tieWordEmbeddings = true;
  d.rotary = false;
  d.attributeMap = {{"hidden_size", "d_model"},
                    {"num_hidden_layers", "n_layers"},
                    {"num_attention_heads", "n_heads"},
                    {"max_position_embeddings", "max_seq_len"},
                    {"rms_norm_eps", "layer_norm_epsilon"}};
  return d;
}

int64_t ModelConfig::rotaryDim() const {
  return static_cast<int64_t>(static_cast<double>(headDim) *
                              partialRotaryFactor);
}

absl::StatusOr<std::string> architectureOf(const JsonConfig &json) {
  auto it = json.json().find("architectures");
  if (it != json.json().end() && !it->is_null()) {
    if (!it->is_array())
      return json.fieldError("architectures",
                             detail::cat("must be a list of class names, got ",
                                         detail::describe(*it)));
    if (!it->empty()) {
      const Json &first = (*it)[0];
      if (!first.is_string() || first.get_ref<const std::string &>().empty())
        return json.fieldError(
            "architectures", detail::cat("must be a list of class names, got ",
                                         detail::describe(*it)));
      return first.get<std::string>();
    }
  }
  QEFF_HF_ASSIGN_OR_RETURN(std::optional<std::string> modelType,
                           json.getOptionalString("model_type"));
  if (modelType && !modelType->empty())
    return *modelType;
  return absl::InvalidArgumentError(
      detail::cat(json.fileName(), ": neither 'architectures' nor "
                                   "'model_type' names the model class"));
}


absl::StatusOr<ModelConfig>
ModelConfig::fromJson(const JsonConfig &json, const FamilyDefaults &defaults) {
  auto name = [&](const char *canonical) -> std::string {
    auto it = defaults.attributeMap.find(canonical);
    return it == defaults.attributeMap.end() ? canonical : it->second;
  };
  ModelConfig c;
  c.raw = json;
  QEFF_HF_ASSIGN_OR_RETURN(c.architecture, architectureOf(json));
  QEFF_HF_ASSIGN_OR_RETURN(c.modelType, json.getString("model_type", ""));
  QEFF_HF_ASSIGN_OR_RETURN(
      c.vocabSize, json.getPositiveInt(name("vocab_size"), defaults.vocabSize));
  QEFF_HF_ASSIGN_OR_RETURN(
      c.hiddenSize,
      json.getPositiveInt(name("hidden_size"), defaults.hiddenSize));
  QEFF_HF_ASSIGN_OR_RETURN(c.intermediateSize,
                           json.getPositiveInt(name("intermediate_size"),
                                               defaults.intermediateSize));
  QEFF_HF_ASSIGN_OR_RETURN(
      c.numHiddenLayers,
      json.getPositiveInt(name("num_hidden_layers"), defaults.numHiddenLayers));
  QEFF_HF_ASSIGN_OR_RETURN(c.numAttentionHeads,
                           json.getPositiveInt(name("num_attention_heads"),
                                               defaults.numAttentionHeads));
  QEFF_HF_ASSIGN_OR_RETURN(
      c.numKeyValueHeads,
      json.getPositiveInt(
          name("num_key_value_heads"),
          defaults.numKeyValueHeads.value_or(c.numAttentionHeads)));
  std::string headDimField = name("head_dim");
  c.headDimGiven = json.has(headDimField);
  if (c.headDimGiven) {
    QEFF_HF_ASSIGN_OR_RETURN(c.headDim, json.getPositiveInt(headDimField));
  } else {
    if (c.hiddenSize % c.numAttentionHeads != 0)
      return json.fieldError(name("num_attention_heads"),
                             detail::cat("(", c.numAttentionHeads,
                                         ") must divide ", name("hidden_size"),
                                         " (", c.hiddenSize,
                                         ") when head_dim is not given"));
    c.headDim = c.hiddenSize / c.numAttentionHeads;
  }
  if (c.numAttentionHeads % c.numKeyValueHeads != 0)
    return json.fieldError(name("num_key_value_heads"),
                           detail::cat("(", c.numKeyValueHeads,
                                       ") must divide ",
                                       name("num_attention_heads"), " (",
                                       c.numAttentionHeads, ")"));

  QEFF_HF_ASSIGN_OR_RETURN(
      c.hiddenAct, json.getString(name("hidden_act"), defaults.hiddenAct));
  QEFF_HF_ASSIGN_OR_RETURN(c.maxPositionEmbeddings,
                           json.getPositiveInt(name("max_position_embeddings"),
                                               defaults.maxPositionEmbeddings));
  QEFF_HF_ASSIGN_OR_RETURN(
      c.rmsNormEps, json.getFloat(name("rms_norm_eps"), defaults.rmsNormEps));
  if (c.rmsNormEps < 0)
    return json.fieldError(
        name("rms_norm_eps"),
        detail::cat("must not be negative, got ", c.rmsNormEps));
  QEFF_HF_ASSIGN_OR_RETURN(
      c.ropeTheta, json.getFloat(name("rope_theta"), defaults.ropeTheta));
  if (c.ropeTheta <= 0)
    return json.fieldError(name("rope_theta"),
                           detail::cat("must be positive, got ", c.ropeTheta));
  QEFF_HF_ASSIGN_OR_RETURN(c.partialRotaryFactor,
                           json.getFloat(name("partial_rotary_factor"),
                                         defaults.partialRotaryFactor));
  if (!(c.partialRotaryFactor > 0 && c.partialRotaryFactor <= 1))
    return json.fieldError(
        name("partial_rotary_factor"),
        detail::cat("must be in (0, 1], got ", c.partialRotaryFactor));
  if (defaults.rotary) {
    int64_t rotary = c.rotaryDim();
    if (rotary <= 0 || rotary % 2 != 0)
      return json.fieldError(
          c.headDimGiven ? headDimField : name("num_attention_heads"),
          detail::cat("gives a rotary dimension of ", rotary, " (head_dim ",
                      c.headDim, " x partial_rotary_factor ",
                      c.partialRotaryFactor,
                      "); rotary embeddings need a positive even one"));
  }

  if (absl::Status status = parseRopeScaling(json, defaults, c); !status.ok())
    return status;

  QEFF_HF_ASSIGN_OR_RETURN(
      c.tieWordEmbeddings,
      json.getBool(name("tie_word_embeddings"), defaults.tieWordEmbeddings));
  std::string swField = name("sliding_window");
  if (json.json().contains(swField)) {
    // Present: null disables the window even when the family has one.
    QEFF_HF_ASSIGN_OR_RETURN(std::optional<int64_t> sw,
                             json.getOptionalInt(swField));
    if (sw && *sw <= 0)
      return json.fieldError(swField, detail::cat("must be null or a positive "
                                                  "integer, got ",
                                                  *sw));
    c.slidingWindow = sw;
  } else {
    c.slidingWindow = defaults.slidingWindow;
  }
  QEFF_HF_ASSIGN_OR_RETURN(
      c.attentionBias,
      json.getBool(name("attention_bias"), defaults.attentionBias));
  QEFF_HF_ASSIGN_OR_RETURN(c.mlpBias,
                           json.getBool(name("mlp_bias"), defaults.mlpBias));

  // Token ids: absent falls back to the family default; explicit null is None.
  auto optionalId = [&](const char *field, std::optional<int64_t> dflt)
      -> absl::StatusOr<std::optional<int64_t>> {
    if (!json.json().contains(name(field)))
      return dflt;
    return json.getOptionalInt(name(field));
  };
  QEFF_HF_ASSIGN_OR_RETURN(c.bosTokenId,
                           optionalId("bos_token_id", defaults.bosTokenId));
  QEFF_HF_ASSIGN_OR_RETURN(c.padTokenId,
                           optionalId("pad_token_id", defaults.padTokenId));
  if (json.json().contains(name("eos_token_id"))) {
    QEFF_HF_ASSIGN_OR_RETURN(c.eosTokenIds,
                             json.getTokenIds(name("eos_token_id")));
  } else {
    c.eosTokenIds = defaults.eosTokenIds;
  }
  QEFF_HF_ASSIGN_OR_RETURN(c.torchDtype, json.getString("torch_dtype", ""));
  return c;
}

absl::StatusOr<JsonConfig> readConfigJson(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    return JsonConfig::read(path.back() == '/' ? path + "config.json"
                                               : path + "/config.json");
  return JsonConfig::read(path);
}

absl::StatusOr<ModelConfig> readModelConfig(const std::string &path,
                                            const FamilyDefaults &defaults) {
  QEFF_HF_ASSIGN_OR_RETURN(JsonConfig json, readConfigJson(path));
  return ModelConfig::fromJson(json, defaults);
}

} // namespace qeff::hf
