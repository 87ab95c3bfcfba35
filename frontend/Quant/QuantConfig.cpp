//===- QuantConfig.cpp - config.json quantization_config ------------------===//
//
// Part of qeff. See QuantConfig.h. The field names and defaults follow the
// libraries' config classes: transformers AwqConfig / GPTQConfig /
// FineGrainedFP8Config (huggingface/transformers@0095b9765393), GPTQModel
// QuantizeConfig (ModelCloud/GPTQModel@f4c327a17eb3) and compressed-tensors
// QuantizationConfig / QuantizationArgs (neuralmagic/compressed-tensors@
// 52792be02ec0).
//
//===----------------------------------------------------------------------===//

#include "frontend/Quant/QuantConfig.h"
#include "frontend/Quant/QuantUtil.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <memory>

namespace qeff::quant {

using Json = nlohmann::json;

bool NamePattern::matches(const std::string &name) const {
  int error = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code *code = pcre2_compile(
      reinterpret_cast<PCRE2_SPTR>(regex.data()), regex.size(),
      PCRE2_ANCHORED | PCRE2_UTF, &error, &offset, nullptr);
  if (!code)
    return false;
  pcre2_match_data *match = pcre2_match_data_create_from_pattern(code, nullptr);
  int rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(name.data()),
                       name.size(), 0, 0, match, nullptr);
  pcre2_match_data_free(match);
  pcre2_code_free(code);
  return rc >= 0;
}

bool ctTargetMatches(const std::string &target, const std::string &module) {
  if (target.rfind("re:", 0) == 0)
    return NamePattern{target.substr(3)}.matches(module);
  if (target == "Linear")
    return true;
  return target == module;
}

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string describe(const Json &v) {
  return v.dump(-1, ' ', false, Json::error_handler_t::replace);
}

/// A list of strings (absent or null: empty).
absl::Status stringList(const hf::JsonConfig &c, const char *field,
                        std::vector<std::string> &out) {
  out.clear();
  auto it = c.json().find(field);
  if (it == c.json().end() || it->is_null())
    return absl::OkStatus();
  if (!it->is_array())
    return c.fieldError(field, "must be a list of strings, got " + describe(*it));
  for (const Json &v : *it) {
    if (!v.is_string())
      return c.fieldError(field, "must be a list of strings, got " + describe(*it));
    out.push_back(v.get<std::string>());
  }
  return absl::OkStatus();
}

/// Validates a regex once so a bad pattern is reported, not silently
/// matching nothing.
absl::Status checkRegex(const hf::JsonConfig &c, const std::string &field,
                        const std::string &regex) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code *code =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(regex.data()), regex.size(),
                    PCRE2_ANCHORED | PCRE2_UTF, &error, &offset, nullptr);
  if (code) {
    pcre2_code_free(code);
    return absl::OkStatus();
  }
  PCRE2_UCHAR text[256];
  pcre2_get_error_message(error, text, sizeof(text));
  return c.fieldError(field, "holds the regex '" + regex +
                                 "', which does not compile: " +
                                 reinterpret_cast<const char *>(text));
}

absl::Status parseAWQ(const hf::JsonConfig &c, QuantScheme &s) {
  // AutoAWQ's own quant_config.json spellings are accepted too.
  const char *bitsField = c.has("w_bit") && !c.has("bits") ? "w_bit" : "bits";
  const char *groupField =
      c.has("q_group_size") && !c.has("group_size") ? "q_group_size" : "group_size";
  QEFF_QUANT_ASSIGN(int64_t bits, c.getInt(bitsField, 4));
  if (bits != 4)
    return c.fieldError(bitsField, "is " + std::to_string(bits) +
                                       "; AWQ checkpoints are supported with 4 bits only");
  s.bits = 4;
  QEFF_QUANT_ASSIGN(s.groupSize, c.getInt(groupField, 128));
  if (s.groupSize == 0 || s.groupSize < -1)
    return c.fieldError(groupField, "must be a positive group size or -1, got " +
                                        std::to_string(s.groupSize));
  QEFF_QUANT_ASSIGN(s.zeroPoint, c.getBool("zero_point", true));
  QEFF_QUANT_ASSIGN(std::string version, c.getString("version", "gemm"));
  if (lower(version) != "gemm")
    return c.fieldError(
        "version", "is '" + version +
                       "'; only AWQ GEMM checkpoints are supported (the gemv, "
                       "gemv_fast, marlin, exllama and ipex kernels pack "
                       "differently)");
  return stringList(c, "modules_to_not_convert", s.notConvert);
}

absl::Status parseGPTQRuleFields(const hf::JsonConfig &c, const std::string &key,
                                 const Json &value, GPTQRule &rule) {
  std::string field = "dynamic." + key;
  if (!value.is_object())
    return c.fieldError(field, "must be an object of overrides, got " + describe(value));
  for (auto it = value.begin(); it != value.end(); ++it) {
    const Json &v = it.value();
    if (it.key() == "bits" && v.is_number_integer())
      rule.bits = v.get<int>();
    else if (it.key() == "group_size" && v.is_number_integer())
      rule.groupSize = v.get<int64_t>();
    else if (it.key() == "sym" && v.is_boolean())
      rule.sym = v.get<bool>();
    else if (it.key() == "desc_act" && v.is_boolean())
      rule.descAct = v.get<bool>();
    else
      return c.fieldError(field + "." + it.key(),
                          "is not an override qeff applies (bits, group_size, "
                          "sym, desc_act), got " + describe(v));
  }
  return absl::OkStatus();
}

absl::Status checkGPTQBits(const hf::JsonConfig &c, const std::string &field,
                           int64_t bits) {
  if (bits == 4 || bits == 8)
    return absl::OkStatus();
  return c.fieldError(field, "is " + std::to_string(bits) +
                                 "; GPTQ checkpoints are supported with 4 or 8 "
                                 "bits (3-bit and 2-bit packings are not)");
}

absl::Status parseGPTQ(const hf::JsonConfig &c, QuantScheme &s) {
  QEFF_QUANT_ASSIGN(int64_t bits, c.getInt("bits", 4));
  if (absl::Status st = checkGPTQBits(c, "bits", bits); !st.ok())
    return st;
  s.bits = int(bits);
  QEFF_QUANT_ASSIGN(s.groupSize, c.getInt("group_size", 128));
  if (s.groupSize == 0 || s.groupSize < -1)
    return c.fieldError("group_size", "must be a positive group size or -1, got " +
                                          std::to_string(s.groupSize));
  QEFF_QUANT_ASSIGN(s.sym, c.getBool("sym", true));
  QEFF_QUANT_ASSIGN(s.descAct, c.getBool("desc_act", false));
  // GPTQModel writes checkpoint_format (and format); AutoGPTQ neither (v1).
  const char *formatField = c.has("checkpoint_format") ? "checkpoint_format" : "format";
  QEFF_QUANT_ASSIGN(std::string format, c.getString(formatField, "gptq"));
  if (format == "gptq")
    s.gptqV1 = true;
  else if (format == "gptq_v2")
    s.gptqV1 = false;
  else
    return c.fieldError(formatField,
                        "is '" + format +
                            "'; GPTQ checkpoints are supported in the gptq (v1) "
                            "and gptq_v2 formats (marlin, bitblas, ipex and "
                            "other kernel layouts are not)");
  QEFF_QUANT_ASSIGN(std::string packDType, c.getString("pack_dtype", "int32"));
  if (packDType != "int32")
    return c.fieldError("pack_dtype", "is '" + packDType + "'; only int32 packing is supported");
  auto dyn = c.json().find("dynamic");
  if (dyn != c.json().end() && !dyn->is_null()) {
    if (!dyn->is_object())
      return c.fieldError("dynamic", "must be an object of module-name regexes, got " +
                                         describe(*dyn));
    for (auto it = dyn->begin(); it != dyn->end(); ++it) {
      GPTQRule rule;
      std::string key = it.key();
      // GPTQModel: "-:" skips matching modules, "+:" (or nothing) overrides.
      if (key.rfind("-:", 0) == 0) {
        rule.skip = true;
        key = key.substr(2);
      } else if (key.rfind("+:", 0) == 0) {
        key = key.substr(2);
      }
      if (absl::Status st = checkRegex(c, "dynamic." + it.key(), key); !st.ok())
        return st;
      rule.pattern.regex = key;
      if (absl::Status st = parseGPTQRuleFields(c, it.key(), it.value(), rule); !st.ok())
        return st;
      if (rule.bits)
        if (absl::Status st = checkGPTQBits(c, "dynamic." + it.key() + ".bits", *rule.bits);
            !st.ok())
          return st;
      s.dynamic.push_back(std::move(rule));
    }
  }
  return absl::OkStatus();
}

absl::Status parseCTGroup(const hf::JsonConfig &c, const std::string &name,
                          const Json &group, const std::string &topFormat,
                          CTGroup &g) {
  std::string base = "config_groups." + name;
  if (!group.is_object())
    return c.fieldError(base, "must be an object, got " + describe(group));
  g.name = name;
  auto targets = group.find("targets");
  if (targets == group.end() || !targets->is_array())
    return c.fieldError(base + ".targets", "must be a list of module names or classes");
  for (const Json &t : *targets) {
    if (!t.is_string())
      return c.fieldError(base + ".targets", "must be a list of strings, got " +
                                                 describe(*targets));
    std::string target = t.get<std::string>();
    if (target.rfind("re:", 0) == 0)
      if (absl::Status st = checkRegex(c, base + ".targets", target.substr(3)); !st.ok())
        return st;
    g.targets.push_back(target);
  }
  g.format = topFormat;
  if (auto f = group.find("format"); f != group.end() && f->is_string())
    g.format = f->get<std::string>();
  auto weights = group.find("weights");
  if (weights == group.end() || weights->is_null())
    return c.fieldError(base + ".weights",
                        "is missing: only weight quantization is supported");
  if (!weights->is_object())
    return c.fieldError(base + ".weights", "must be an object, got " + describe(*weights));
  const Json &w = *weights;
  auto get = [&](const char *key) -> const Json * {
    auto it = w.find(key);
    return it == w.end() || it->is_null() ? nullptr : &*it;
  };
  std::string wf = base + ".weights.";
  if (const Json *d = get("dynamic"); d && (!d->is_boolean() || d->get<bool>()))
    return c.fieldError(wf + "dynamic",
                        "is " + describe(*d) +
                            ": dynamic weight quantization (weights quantized at "
                            "run time) has no stored quantized weights to import");
  const Json *bits = get("num_bits");
  if (!bits || !bits->is_number_integer())
    return c.fieldError(wf + "num_bits", "must be an integer");
  g.bits = bits->get<int>();
  std::string type = "int";
  if (const Json *t = get("type"); t && t->is_string())
    type = t->get<std::string>();
  g.isFloat = type == "float";
  if (type != "int" && type != "float")
    return c.fieldError(wf + "type", "is '" + type + "'; supported: int, float");
  if (g.isFloat && g.bits != 8)
    return c.fieldError(wf + "num_bits", "is " + std::to_string(g.bits) +
                                             " for type float; only FP8 (8 bits) "
                                             "is supported (NVFP4 is not)");
  if (!g.isFloat && g.bits != 4 && g.bits != 8)
    return c.fieldError(wf + "num_bits", "is " + std::to_string(g.bits) +
                                             "; int weights are supported with 4 or 8 bits");
  if (const Json *sym = get("symmetric"); sym && sym->is_boolean())
    g.symmetric = sym->get<bool>();
  g.strategy = "tensor";
  if (const Json *st = get("strategy"); st && st->is_string())
    g.strategy = st->get<std::string>();
  if (g.strategy == "group") {
    const Json *gs = get("group_size");
    if (!gs || !gs->is_number_integer() || gs->get<int64_t>() <= 0)
      return c.fieldError(wf + "group_size", "must be a positive integer for strategy group");
    g.groupSize = gs->get<int64_t>();
  } else if (g.strategy == "block") {
    const Json *bs = get("block_structure");
    if (!bs || !bs->is_array() || bs->size() != 2 || !(*bs)[0].is_number_integer() ||
        !(*bs)[1].is_number_integer() || (*bs)[0].get<int64_t>() <= 0 ||
        (*bs)[1].get<int64_t>() <= 0)
      return c.fieldError(wf + "block_structure",
                          "must be two positive integers for strategy block");
    g.blockRows = (*bs)[0].get<int64_t>();
    g.blockCols = (*bs)[1].get<int64_t>();
  } else if (g.strategy != "tensor" && g.strategy != "channel") {
    return c.fieldError(wf + "strategy",
                        "is '" + g.strategy +
                            "'; supported: tensor, channel, group, block "
                            "(tensor_group, token and others are not)");
  }
  if (const Json *a = get("actorder"); a && !(a->is_boolean() && !a->get<bool>()))
    g.actOrder = true;
  static const char *kFormats[] = {"pack-quantized", "int-quantized",
                                   "naive-quantized", "float-quantized"};
  if (std::find(std::begin(kFormats), std::end(kFormats), g.format) == std::end(kFormats))
    return c.fieldError(g.format == topFormat ? "format" : base + ".format",
                        "is '" + g.format +
                            "'; supported compressed-tensors formats: "
                            "pack-quantized, int-quantized, naive-quantized, "
                            "float-quantized (sparse, marlin-24, nvfp4 and "
                            "others are not)");
  if (g.format == "float-quantized" && !g.isFloat)
    return c.fieldError(wf + "type", "must be float for format float-quantized");
  if (g.format != "float-quantized" && g.isFloat)
    return c.fieldError(wf + "type", "is float but the format is '" + g.format + "'");
  return absl::OkStatus();
}

absl::Status parseCT(const hf::JsonConfig &c, QuantScheme &s) {
  QEFF_QUANT_ASSIGN(s.format, c.getString("format", "dense"));
  QEFF_QUANT_ASSIGN(std::string status, c.getString("quantization_status", "compressed"));
  if (status != "compressed")
    return c.fieldError("quantization_status",
                        "is '" + status +
                            "'; only compressed checkpoints (quantized weights "
                            "stored packed) are supported");
  if (auto sp = c.json().find("sparsity_config");
      sp != c.json().end() && !sp->is_null() && !(sp->is_object() && sp->empty()))
    return c.fieldError("sparsity_config",
                        "is set: sparse compressed-tensors checkpoints are not supported");
  if (absl::Status st = stringList(c, "ignore", s.ignore); !st.ok())
    return st;
  for (const std::string &target : s.ignore)
    if (target.rfind("re:", 0) == 0)
      if (absl::Status st = checkRegex(c, "ignore", target.substr(3)); !st.ok())
        return st;
  auto groups = c.json().find("config_groups");
  if (groups == c.json().end() || !groups->is_object() || groups->empty())
    return c.fieldError("config_groups", "must be a non-empty object of quantization groups");
  for (auto it = groups->begin(); it != groups->end(); ++it) {
    CTGroup g;
    if (absl::Status st = parseCTGroup(c, it.key(), it.value(), s.format, g); !st.ok())
      return st;
    s.groups.push_back(std::move(g));
  }
  return absl::OkStatus();
}

absl::Status parseFP8(const hf::JsonConfig &c, QuantScheme &s) {
  QEFF_QUANT_ASSIGN(std::string fmt, c.getString("fmt", "e4m3"));
  if (fmt != "e4m3")
    return c.fieldError("fmt", "is '" + fmt + "'; only e4m3 FP8 weights are supported");
  auto block = c.json().find("weight_block_size");
  if (block != c.json().end() && !block->is_null()) {
    if (!block->is_array() || block->size() != 2 || !(*block)[0].is_number_integer() ||
        !(*block)[1].is_number_integer() || (*block)[0].get<int64_t>() <= 0 ||
        (*block)[1].get<int64_t>() <= 0)
      return c.fieldError("weight_block_size",
                          "must be two positive integers, got " + describe(*block));
    s.blockRows = (*block)[0].get<int64_t>();
    s.blockCols = (*block)[1].get<int64_t>();
  }
  QEFF_QUANT_ASSIGN(std::string scaleFmt, c.getString("scale_fmt", "ue8m0"));
  if (scaleFmt != "ue8m0")
    return c.fieldError("scale_fmt", "is '" + scaleFmt + "'; supported: ue8m0 (or absent)");
  return stringList(c, "modules_to_not_convert", s.notConvert);
}

/// `architectures[0]` ("" when absent).
absl::StatusOr<std::string> firstArchitecture(const hf::JsonConfig &config) {
  auto it = config.json().find("architectures");
  if (it == config.json().end() || !it->is_array() || it->empty() ||
      !(*it)[0].is_string())
    return std::string();
  return (*it)[0].get<std::string>();
}

} // namespace

absl::StatusOr<std::optional<QuantScheme>>
parseQuantizationConfig(const hf::JsonConfig &config) {
  QEFF_QUANT_ASSIGN(std::optional<hf::JsonConfig> q,
                    config.getOptionalObject("quantization_config"));
  if (!q)
    return std::optional<QuantScheme>();
  const hf::JsonConfig &c = *q;
  QEFF_QUANT_ASSIGN(std::optional<std::string> method, c.getOptionalString("quant_method"));
  if (!method)
    return c.fieldError("quant_method", "is missing: the quantization method is unknown");
  QuantScheme s;
  s.methodName = *method;
  absl::Status status;
  if (*method == "awq") {
    s.method = Method::AWQ;
    status = parseAWQ(c, s);
  } else if (*method == "gptq") {
    s.method = Method::GPTQ;
    status = parseGPTQ(c, s);
  } else if (*method == "compressed-tensors") {
    s.method = Method::CompressedTensors;
    status = parseCT(c, s);
  } else if (*method == "fp8") {
    s.method = Method::FP8;
    status = parseFP8(c, s);
  } else if (*method == "mxfp4") {
    // transformers' Mxfp4Config: the packed experts are found by their
    // `_blocks` / `_scales` names (Mxfp4.cpp); the rest is stored plain.
    s.method = Method::MXFP4;
    QEFF_QUANT_ASSIGN(std::string arch, firstArchitecture(config));
    if (arch != "GptOssForCausalLM")
      return c.fieldError("quant_method",
                          "is 'mxfp4', which qeff reads for GptOssForCausalLM "
                          "experts only, not for '" + arch + "'");
    status = stringList(c, "modules_to_not_convert", s.notConvert);
  } else if (*method == "bitsandbytes") {
    return c.fieldError("quant_method",
                        "is 'bitsandbytes': bitsandbytes checkpoints are not "
                        "supported (their NF4/int8 layouts belong to the CUDA "
                        "library; use the unquantized checkpoint)");
  } else {
    return c.fieldError("quant_method",
                        "is '" + *method +
                            "', which qeff cannot import; supported: awq, gptq, "
                            "compressed-tensors, fp8, mxfp4");
  }
  if (!status.ok())
    return status;
  return std::optional<QuantScheme>(std::move(s));
}

} // namespace qeff::quant
