//===- RopeScalingConfig.cpp - config.json `rope_scaling` -----------------===//
//
// Part of qeff. Reads `rope_scaling` and resolves it as transformers
// (modeling_rope_utils.py) does: defaults filled in, yarn's and longrope's
// attention factor computed. Where transformers versions read a field
// differently (4.44.2 ignores keys later versions use), the combination is
// refused at that field rather than guessed.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/ModelConfig.h"

#include "frontend/HF/JsonUtil.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <tuple>

namespace qeff::hf {

using detail::Json;

const char *RopeScaling::name() const {
  switch (type) {
  case RopeScalingType::None:
    return "";
  case RopeScalingType::Linear:
    return "linear";
  case RopeScalingType::Llama3:
    return "llama3";
  case RopeScalingType::Yarn:
    return "yarn";
  case RopeScalingType::Dynamic:
    return "dynamic";
  case RopeScalingType::LongRope:
    return "longrope";
  }
  return "";
}

namespace {

absl::StatusOr<double> requiredPositiveFloat(const JsonConfig &json,
                                             std::string_view field) {
  QEFF_HF_ASSIGN_OR_RETURN(std::optional<double> v,
                           json.getOptionalFloat(field));
  if (!v)
    return json.fieldError(field, "is missing (required)");
  if (*v <= 0)
    return json.fieldError(field, detail::cat("must be positive, got ", *v));
  return *v;
}

/// A context-extending factor (yarn, dynamic): at least 1.
absl::StatusOr<double> extensionFactor(const JsonConfig &rs,
                                       std::string_view type) {
  QEFF_HF_ASSIGN_OR_RETURN(double factor, requiredPositiveFloat(rs, "factor"));
  if (factor < 1.0)
    return rs.fieldError("factor", detail::cat("must be at least 1 for ", type,
                                               " scaling, got ", factor));
  return factor;
}

/// `rope_scaling.original_max_position_embeddings` where transformers
/// 4.44.2 takes the original context from max_position_embeddings (yarn,
/// dynamic): accepted only when the two agree.
absl::Status sameOriginalContext(const JsonConfig &rs, const ModelConfig &c,
                                 std::string_view type) {
  QEFF_HF_ASSIGN_OR_RETURN(std::optional<int64_t> original,
                           rs.getOptionalInt("original_max_position_embeddings"));
  if (original && *original != c.maxPositionEmbeddings)
    return rs.fieldError(
        "original_max_position_embeddings",
        detail::cat("(", *original, ") differs from max_position_embeddings (",
                    c.maxPositionEmbeddings, "), which is not supported for ",
                    type,
                    " scaling: transformers 4.44.2 ignores this field and "
                    "takes the original context from max_position_embeddings, "
                    "later versions take it from here; make the two equal"));
  return absl::OkStatus();
}

/// transformers' get_mscale: 0.1 * mscale * ln(scale) + 1, 1 for scale <= 1.
double yarnMscale(double scale, double mscale) {
  return scale <= 1.0 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0;
}

absl::Status parseYarn(const JsonConfig &rs, const FamilyDefaults &defaults,
                       ModelConfig &c) {
  RopeScaling &r = c.ropeScaling;
  QEFF_HF_ASSIGN_OR_RETURN(r.factor, extensionFactor(rs, "yarn"));
  r.originalMaxPositionEmbeddings = c.maxPositionEmbeddings;
  if (defaults.yarnReadsOriginalContext) {
    // transformers 4.55: `rope_scaling.get("original_max_position_embeddings")
    // or config.max_position_embeddings`; `factor` stays the explicit one.
    QEFF_HF_ASSIGN_OR_RETURN(
        std::optional<int64_t> original,
        rs.getOptionalInt("original_max_position_embeddings"));
    if (original && *original <= 0)
      return rs.fieldError("original_max_position_embeddings",
                           detail::cat("must be positive, got ", *original));
    if (original)
      r.originalMaxPositionEmbeddings = *original;
    // `rope_scaling.get("truncate", True)`.
    if (auto t = rs.json().find("truncate");
        t != rs.json().end() && !t->is_null()) {
      if (!t->is_boolean())
        return rs.fieldError("truncate", "must be true or false");
      r.truncate = t->get<bool>();
    }
  } else {
    if (absl::Status status = sameOriginalContext(rs, c, "yarn"); !status.ok())
      return status;
    if (auto t = rs.json().find("truncate");
        t != rs.json().end() && !(t->is_boolean() && t->get<bool>()))
      return rs.fieldError(
          "truncate",
          "other than true is not supported for this class: transformers "
          "4.44.2 ignores it and always rounds yarn's correction range");
  }
  // `rope_scaling.get("beta_fast") or 32`: null and 0 give the default.
  for (auto [field, value, dflt] :
       {std::tuple{"beta_fast", &r.betaFast, 32.0},
        std::tuple{"beta_slow", &r.betaSlow, 1.0}}) {
    QEFF_HF_ASSIGN_OR_RETURN(std::optional<double> v, rs.getOptionalFloat(field));
    if (v && *v < 0)
      return rs.fieldError(field, detail::cat("must be positive, got ", *v));
    *value = v && *v != 0 ? *v : dflt;
  }
  QEFF_HF_ASSIGN_OR_RETURN(std::optional<double> attention,
                           rs.getOptionalFloat("attention_factor"));
  QEFF_HF_ASSIGN_OR_RETURN(std::optional<double> mscale,
                           rs.getOptionalFloat("mscale"));
  QEFF_HF_ASSIGN_OR_RETURN(std::optional<double> mscaleAllDim,
                           rs.getOptionalFloat("mscale_all_dim"));
  if (attention) {
    if (*attention <= 0)
      return rs.fieldError("attention_factor",
                           detail::cat("must be positive, got ", *attention));
    r.attentionFactor = *attention;
  } else if (mscale && *mscale != 0 && mscaleAllDim && *mscaleAllDim != 0) {
    // DeepSeek's form (transformers >= 4.45; 4.44.2 ignores both keys).
    r.attentionFactor =
        yarnMscale(r.factor, *mscale) / yarnMscale(r.factor, *mscaleAllDim);
  } else {
    r.attentionFactor = yarnMscale(r.factor, 1.0);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<double>> factorList(const JsonConfig &rs,
                                               std::string_view field,
                                               int64_t expected) {
  auto it = rs.json().find(std::string(field));
  if (it == rs.json().end() || it->is_null())
    return rs.fieldError(field, "is missing (required for longrope)");
  std::vector<double> values;
  if (it->is_array())
    for (const Json &v : *it) {
      if (!v.is_number() || !(v.get<double>() > 0))
        return rs.fieldError(field, "must be a list of positive numbers");
      values.push_back(v.get<double>());
    }
  else
    return rs.fieldError(field, "must be a list of positive numbers");
  if (int64_t(values.size()) != expected)
    return rs.fieldError(
        field, detail::cat("has ", values.size(),
                           " entries; longrope needs one per rotary frequency "
                           "(rotary dimension / 2 = ",
                           expected, ")"));
  return values;
}

absl::Status parseLongRope(const JsonConfig &json, const JsonConfig &rs,
                           const FamilyDefaults &defaults, ModelConfig &c) {
  RopeScaling &r = c.ropeScaling;
  int64_t half = c.rotaryDim() / 2;
  QEFF_HF_ASSIGN_OR_RETURN(r.shortFactor, factorList(rs, "short_factor", half));
  QEFF_HF_ASSIGN_OR_RETURN(r.longFactor, factorList(rs, "long_factor", half));
  // The threshold is the top-level field (Phi3Config's, default 4096).
  if (!json.has("original_max_position_embeddings") &&
      !defaults.originalMaxPositionEmbeddings)
    return json.fieldError("rope_scaling",
                           "longrope needs the top-level "
                           "'original_max_position_embeddings' (the context "
                           "the short factors cover)");
  QEFF_HF_ASSIGN_OR_RETURN(
      r.originalMaxPositionEmbeddings,
      json.getPositiveInt("original_max_position_embeddings",
                          defaults.originalMaxPositionEmbeddings));
  int64_t original = r.originalMaxPositionEmbeddings;
  QEFF_HF_ASSIGN_OR_RETURN(std::optional<int64_t> nested,
                           rs.getOptionalInt("original_max_position_embeddings"));
  if (nested && *nested != original)
    return rs.fieldError(
        "original_max_position_embeddings",
        detail::cat("(", *nested,
                    ") differs from the top-level original_max_position_"
                    "embeddings (",
                    original, "), which transformers reads; make them equal"));
  if (rs.has("attention_factor"))
    return rs.fieldError(
        "attention_factor",
        "is not supported for longrope: transformers 4.44.2 (Phi-3) ignores "
        "it and derives the factor from max_position_embeddings / "
        "original_max_position_embeddings, later versions apply it");
  // Phi-3: the factor of cos and sin depends only on the config.
  double scale = double(c.maxPositionEmbeddings) / double(original);
  r.factor = scale;
  r.attentionFactor =
      scale <= 1.0 ? 1.0
                   : std::sqrt(1.0 + std::log(scale) / std::log(double(original)));
  return absl::OkStatus();
}

} // namespace

int64_t servedContext(const JsonConfig &json) {
  auto positions = json.getInt("max_position_embeddings", 0);
  if (!positions.ok() || *positions <= 0)
    return 0;
  auto rs = json.getOptionalObject("rope_scaling");
  if (!rs.ok() || !*rs)
    return *positions;
  auto type = (*rs)->getString("rope_type", "");
  if (type.ok() && type->empty())
    type = (*rs)->getString("type", "");
  auto factor = (*rs)->getFloat("factor", 1.0);
  if (!type.ok() || !factor.ok() || !(*factor > 1.0) || *factor > 1024 ||
      (*type != "linear" && *type != "dynamic" && *type != "yarn"))
    return *positions;
  // Yarn read as transformers 4.55 reads it: max_position_embeddings is the
  // extended context when the original one is stated below it.
  if (auto original = (*rs)->getInt("original_max_position_embeddings", 0);
      *type == "yarn" && original.ok() && *original > 0 &&
      *original < *positions)
    return *positions;
  return static_cast<int64_t>(std::ceil(double(*positions) * *factor));
}

absl::Status parseRopeScaling(const JsonConfig &json,
                              const FamilyDefaults &defaults, ModelConfig &c) {
  RopeScaling &r = c.ropeScaling;
  r = RopeScaling{};
  QEFF_HF_ASSIGN_OR_RETURN(std::optional<JsonConfig> rs,
                           json.getOptionalObject("rope_scaling"));
  if (!rs)
    return absl::OkStatus();
  QEFF_HF_ASSIGN_OR_RETURN(std::optional<std::string> type,
                           rs->getOptionalString("rope_type"));
  if (!type) {
    QEFF_HF_ASSIGN_OR_RETURN(type, rs->getOptionalString("type"));
  }
  if (!type)
    return json.fieldError("rope_scaling", "has no 'rope_type' or 'type'");
  if (*type == "default")
    return absl::OkStatus();
  if (*type == "linear") {
    r.type = RopeScalingType::Linear;
    QEFF_HF_ASSIGN_OR_RETURN(r.factor, requiredPositiveFloat(*rs, "factor"));
    return absl::OkStatus();
  }
  if (*type == "llama3") {
    r.type = RopeScalingType::Llama3;
    QEFF_HF_ASSIGN_OR_RETURN(r.factor, requiredPositiveFloat(*rs, "factor"));
    QEFF_HF_ASSIGN_OR_RETURN(r.lowFreqFactor,
                             requiredPositiveFloat(*rs, "low_freq_factor"));
    QEFF_HF_ASSIGN_OR_RETURN(r.highFreqFactor,
                             requiredPositiveFloat(*rs, "high_freq_factor"));
    QEFF_HF_ASSIGN_OR_RETURN(
        r.originalMaxPositionEmbeddings,
        rs->getPositiveInt("original_max_position_embeddings"));
    if (r.highFreqFactor <= r.lowFreqFactor)
      return rs->fieldError(
          "high_freq_factor",
          detail::cat("(", r.highFreqFactor,
                      ") must be greater than low_freq_factor (",
                      r.lowFreqFactor, ")"));
    return absl::OkStatus();
  }
  if (*type == "yarn") {
    r.type = RopeScalingType::Yarn;
    return parseYarn(*rs, defaults, c);
  }
  if (*type == "dynamic") {
    r.type = RopeScalingType::Dynamic;
    QEFF_HF_ASSIGN_OR_RETURN(r.factor, extensionFactor(*rs, "dynamic"));
    if (absl::Status s = sameOriginalContext(*rs, c, "dynamic"); !s.ok())
      return s;
    r.originalMaxPositionEmbeddings = c.maxPositionEmbeddings;
    return absl::OkStatus();
  }
  // "su" is longrope's name before transformers 4.42 (the same computation).
  if (*type == "longrope" || *type == "su") {
    r.type = RopeScalingType::LongRope;
    return parseLongRope(json, *rs, defaults, c);
  }
  return json.fieldError(
      "rope_scaling",
      detail::cat("has unknown type '", *type,
                  "' (supported: linear, llama3, yarn, dynamic, longrope)"));
}

} // namespace qeff::hf
