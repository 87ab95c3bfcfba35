//===- ModelConfig.h - config.json of a decoder HF model --------*- C++ -*-===//
//
// The fields the decoder families need, read from config.json with the Hugging
// Face defaults for absent fields and validated (positive sizes, heads dividing
// hidden, kv heads dividing heads, even rotary dims, known rope scaling).
// Defaults that differ per family (tie_word_embeddings, sliding_window, the
// sizes PretrainedConfig subclasses default to, attribute aliases such as
// GPT-2's n_embd) come from the FamilyDefaults the importer passes.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_HF_MODELCONFIG_H
#define QEFF_FRONTEND_HF_MODELCONFIG_H

#include "frontend/HF/JsonConfig.h"

#include <map>

namespace qeff::hf {

enum class RopeScalingType { None, Linear, Llama3, Yarn, Dynamic, LongRope };

/// `rope_scaling` of config.json ("type" or "rope_type"), resolved as
/// transformers resolves it (RopeScalingConfig.cpp).
struct RopeScaling {
  RopeScalingType type = RopeScalingType::None;
  double factor = 1.0;
  /// Llama 3 only.
  double lowFreqFactor = 1.0;
  double highFreqFactor = 4.0;
  /// The context the scaling refers to: llama3's band context, yarn's
  /// correction-range context, the dynamic / longrope threshold.
  int64_t originalMaxPositionEmbeddings = 0;
  /// Yarn's correction range (transformers' defaults).
  double betaFast = 32.0, betaSlow = 1.0;
  /// Yarn: the correction range rounded to whole dimensions (transformers
  /// 4.55's `truncate`, default true; 4.44.2 always rounds).
  bool truncate = true;
  /// Yarn, longrope: cos and sin are multiplied by it.
  double attentionFactor = 1.0;
  /// Longrope: one divisor per rotary frequency, below and above the
  /// threshold.
  std::vector<double> shortFactor, longFactor;

  /// "linear", "llama3", "yarn", "dynamic", "longrope" ("" for None).
  const char *name() const;
};

/// What a family's PretrainedConfig subclass defaults to. Absent sizes without
/// a default are errors ("missing (required)").
struct FamilyDefaults {
  std::optional<int64_t> vocabSize, hiddenSize, intermediateSize,
      numHiddenLayers, numAttentionHeads;
  /// std::nullopt: num_key_value_heads defaults to num_attention_heads.
  std::optional<int64_t> numKeyValueHeads;
  std::string hiddenAct = "silu";
  int64_t maxPositionEmbeddings = 2048;
  double rmsNormEps = 1e-6;
  double ropeTheta = 10000.0;
  double partialRotaryFactor = 1.0;
  bool tieWordEmbeddings = true; ///< PretrainedConfig's default
  std::optional<int64_t> slidingWindow;
  /// The top-level `original_max_position_embeddings` (Phi3Config: 4096),
  /// the longrope threshold; std::nullopt: the family has no such field.
  std::optional<int64_t> originalMaxPositionEmbeddings;
  bool attentionBias = false;
  bool mlpBias = false;
  /// Whether the family is read as transformers >= 4.55 reads yarn: the
  /// correction range at `rope_scaling.original_max_position_embeddings`
  /// (max_position_embeddings then already states the extended context) and
  /// `truncate`. Otherwise 4.44.2's reading: both refused unless neutral.
  bool yarnReadsOriginalContext = false;
  /// Whether the family uses rotary embeddings (the head/rotary dim checks).
  bool rotary = true;
  std::optional<int64_t> bosTokenId, padTokenId;
  std::vector<int64_t> eosTokenIds;
  /// HF `attribute_map`: canonical name -> the name this family's config.json
  /// uses (e.g. {"hidden_size", "n_embd"}).
  std::map<std::string, std::string> attributeMap;

  /// transformers' <Family>Config defaults, with the attribute map of the
  /// family's config.json field names. Norm epsilons of every kind land in
  /// `rms_norm_eps`, plain-MLP widths in `intermediate_size`, activations in
  /// `hidden_act`.
  static FamilyDefaults llama();
  static FamilyDefaults mistral();
  static FamilyDefaults qwen2();
  static FamilyDefaults gemma();
  static FamilyDefaults phi3();
  static FamilyDefaults mixtral();
  static FamilyDefaults gpt2();
  static FamilyDefaults gptj();
  static FamilyDefaults codegen();
  static FamilyDefaults gptBigCode();
  static FamilyDefaults phi();
  static FamilyDefaults falcon();
  static FamilyDefaults mpt();
};

struct ModelConfig {
  /// architectures[0], else model_type.
  std::string architecture;
  std::string modelType;
  int64_t vocabSize = 0;
  int64_t hiddenSize = 0;
  int64_t intermediateSize = 0;
  int64_t numHiddenLayers = 0;
  int64_t numAttentionHeads = 0;
  int64_t numKeyValueHeads = 0;
  int64_t headDim = 0;
  /// Whether head_dim came from config.json (else hidden / heads).
  bool headDimGiven = false;
  std::string hiddenAct;
  int64_t maxPositionEmbeddings = 0;
  double rmsNormEps = 0;
  double ropeTheta = 0;
  RopeScaling ropeScaling;
  double partialRotaryFactor = 1.0;
  bool tieWordEmbeddings = false;
  std::optional<int64_t> slidingWindow;
  /// The top-level `original_max_position_embeddings` (Phi3Config: 4096),
  /// the longrope threshold; std::nullopt: the family has no such field.
  std::optional<int64_t> originalMaxPositionEmbeddings;
  bool attentionBias = false;
  bool mlpBias = false;
  /// Whether the family is read as transformers >= 4.55 reads yarn: the
  /// correction range at `rope_scaling.original_max_position_embeddings`
  /// (max_position_embeddings then already states the extended context) and
  /// `truncate`. Otherwise 4.44.2's reading: both refused unless neutral.
  bool yarnReadsOriginalContext = false;
  std::optional<int64_t> bosTokenId, padTokenId;
  std::vector<int64_t> eosTokenIds;
  /// torch_dtype ("float32", "bfloat16", ...); empty when absent.
  std::string torchDtype;

  /// The whole config.json, for family-specific fields.
  std::optional<JsonConfig> raw;

  /// Rotated dims per head: head_dim * partial_rotary_factor.
  int64_t rotaryDim() const;

  /// Reads the fields from a parsed config.json and validates them.
  static absl::StatusOr<ModelConfig> fromJson(const JsonConfig &json,
                                              const FamilyDefaults &defaults);
};

/// Reads `rope_scaling` into `config.ropeScaling` (after the sizes, the
/// rotary dimension and max_position_embeddings are known): types linear,
/// llama3, yarn, dynamic, longrope (and su, its older name); the
/// combinations transformers versions disagree on are refused at their
/// field.
absl::Status parseRopeScaling(const JsonConfig &json,
                              const FamilyDefaults &defaults,
                              ModelConfig &config);

/// The context a config's model serves, for sizing a default ctx_len:
/// max_position_embeddings, times the factor for the rope scaling types
/// that extend it (linear, dynamic, yarn); 0 when absent or malformed.
int64_t servedContext(const JsonConfig &json);

/// The HF class a config names: architectures[0], falling back to model_type.
absl::StatusOr<std::string> architectureOf(const JsonConfig &json);

/// Reads `<dir>/config.json` (or `path` itself when it is a file).
absl::StatusOr<JsonConfig> readConfigJson(const std::string &path);
absl::StatusOr<ModelConfig> readModelConfig(const std::string &path,
                                            const FamilyDefaults &defaults);

} // namespace qeff::hf

#endif // QEFF_FRONTEND_HF_MODELCONFIG_H
