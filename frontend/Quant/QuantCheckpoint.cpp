//===- QuantCheckpoint.cpp - quantized checkpoints as dense views ---------===//
//
// Part of qeff. See QuantCheckpoint.h.
//
//===----------------------------------------------------------------------===//

#include "frontend/Quant/QuantCheckpoint.h"

#include "frontend/Quant/Decoders.h"
#include "frontend/Quant/Fp8.h"
#include "frontend/Quant/Mxfp4.h"
#include "frontend/Quant/QuantUtil.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <algorithm>
#include <set>

namespace qeff::quant {

namespace {

using hf::Checkpoint;
using hf::DType;
using hf::TensorView;

std::string shapeText(const std::vector<int64_t> &shape) {
  return cat("[", absl::StrJoin(shape, ", "), "]");
}

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string dtName(DType d) { return std::string(hf::dtypeName(d)); }

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool isIntDType(DType d) {
  return d == DType::I8 || d == DType::U8 || d == DType::I16 ||
         d == DType::U16 || d == DType::I32 || d == DType::U32 ||
         d == DType::I64 || d == DType::U64;
}

/// Builds the decoded tensors of one method, collecting errors with the
/// checkpoint's path.
class Dequantizer {
public:
  Dequantizer(Checkpoint &ckpt, const QuantScheme &scheme)
      : ckpt_(ckpt), scheme_(scheme) {}

  absl::Status run() {
    std::vector<std::string> names = ckpt_.tensorNames();
    std::set<std::string> modules;
    for (const std::string &name : names) {
      if (std::optional<std::string> m = packedModule(name))
        modules.insert(*m);
    }
    for (const std::string &m : modules) {
      absl::Status st = absl::OkStatus();
      switch (scheme_.method) {
      case Method::AWQ:
        st = awq(m);
        break;
      case Method::GPTQ:
        st = gptq(m);
        break;
      case Method::CompressedTensors:
        st = compressedTensors(m);
        break;
      case Method::FP8:
        st = fp8(m);
        break;
      case Method::MXFP4: // dequantizeMxfp4
        break;
      }
      if (!st.ok())
        return st;
    }
    // Activation and KV-cache quantization parameters: activations stay
    // float, so they have nothing to act on.
    for (const std::string &name : ckpt_.tensorNames())
      for (const char *suffix :
           {".input_scale", ".output_scale", ".input_zero_point",
            ".output_zero_point", ".k_scale", ".v_scale", ".q_scale"})
        if (endsWith(name, suffix))
          ckpt_.remove(name);
    return absl::OkStatus();
  }

private:
  /// The module a packed tensor belongs to, by the method's marker tensor.
  std::optional<std::string> packedModule(const std::string &name) const {
    auto strip = [&](const char *suffix) -> std::optional<std::string> {
      if (endsWith(name, suffix))
        return name.substr(0, name.size() - std::strlen(suffix));
      return std::nullopt;
    };
    switch (scheme_.method) {
    case Method::AWQ:
    case Method::GPTQ:
      return strip(".qweight");
    case Method::CompressedTensors:
      if (auto m = strip(".weight_packed"))
        return m;
      if (auto m = strip(".weight_scale")) {
        const hf::TensorInfo *w = ckpt_.find(*m + ".weight");
        if (w && !hf::isFloatingPoint(w->dtype))
          return m;
      }
      return std::nullopt;
    case Method::FP8:
      if (auto m = strip(".weight_scale_inv"))
        return m;
      if (auto m = strip(".weight_scale")) {
        const hf::TensorInfo *w = ckpt_.find(*m + ".weight");
        if (w && !hf::isFloatingPoint(w->dtype))
          return m;
      }
      return std::nullopt;
    case Method::MXFP4:
      return std::nullopt;
    }
    return std::nullopt;
  }

  absl::Status error(const std::string &tensor, const std::string &message) {
    return absl::InvalidArgumentError(cat(
        ckpt_.sourcePath(), ": tensor '", tensor, "': ", message));
  }

  /// The tensor `<m><suffix>`, or an error naming what the module lacks.
  absl::StatusOr<TensorView> part(const std::string &m, const std::string &suffix,
                                  const std::string &marker) {
    absl::StatusOr<TensorView> v = ckpt_.get(m + suffix);
    if (!v.ok())
      return absl::InvalidArgumentError(cat(
          ckpt_.sourcePath(), ": module '", m, "' is quantized (it has '", m,
          marker, "') but has no tensor '", m, suffix, "'"));
    return v;
  }

  absl::Status expectShape(const TensorView &v, const std::vector<int64_t> &shape,
                           const std::string &why) {
    if (v.shape() == shape)
      return absl::OkStatus();
    return error(std::string(v.name()),
                 cat("has shape ", shapeText(v.shape()), ", expected ",
                              shapeText(shape), " ", why));
  }

  absl::Status expectDType(const TensorView &v, std::initializer_list<DType> ok,
                           const std::string &what) {
    if (std::find(ok.begin(), ok.end(), v.dtype()) != ok.end())
      return absl::OkStatus();
    return error(std::string(v.name()),
                 cat("has dtype ", dtName(v.dtype()), "; ", what));
  }

  absl::Status expectScale(const TensorView &v) {
    if (isScaleDType(v.dtype()))
      return absl::OkStatus();
    return error(std::string(v.name()), cat("has dtype ", dtName(v.dtype()),
                                                     "; scales must be floating point"));
  }

  bool notConverted(const std::string &m) const {
    for (const std::string &key : scheme_.notConvert)
      if (!key.empty() && m.find(key) != std::string::npos)
        return true;
    return false;
  }

  /// Reads a group index tensor [in] into `out`, each in [0, groups).
  absl::Status readGroupIndex(const TensorView &v, int64_t in, int64_t groups,
                              std::vector<int32_t> &out) {
    if (absl::Status st = expectDType(v, {DType::I32, DType::I64},
                                      "a group index must be I32 or I64");
        !st.ok())
      return st;
    if (absl::Status st = expectShape(v, {in}, "(the group of every input)"); !st.ok())
      return st;
    out.resize(static_cast<size_t>(in));
    for (int64_t i = 0; i < in; ++i) {
      int64_t g = v.dtype() == DType::I32
                      ? int64_t(int32_t(loadU32(v.data + 4 * i)))
                      : [&] {
                          int64_t x;
                          std::memcpy(&x, v.data + 8 * i, 8);
                          return x;
                        }();
      if (g < 0 || g >= groups)
        return error(std::string(v.name()),
                     cat("entry ", i, " is group ", g, ", outside the ",
                                  groups, " groups of the scales"));
      out[static_cast<size_t>(i)] = int32_t(g);
    }
    return absl::OkStatus();
  }

  void replace(const std::string &m, std::shared_ptr<const hf::DenseSource> source,
               int64_t out, int64_t in, std::initializer_list<const char *> parts) {
    std::string file = ckpt_.filePathOf(m + *parts.begin());
    for (const char *suffix : parts)
      ckpt_.remove(m + suffix);
    hf::TensorInfo info;
    info.name = m + ".weight";
    info.shape = {out, in};
    ckpt_.addDecoded(std::move(info), std::move(source), file);
  }

  absl::Status awq(const std::string &m) {
    if (notConverted(m))
      return error(m + ".qweight",
                   "module '" + m +
                       "' is listed in quantization_config.modules_to_not_convert "
                       "but holds packed AWQ tensors");
    QEFF_QUANT_ASSIGN(TensorView qweight, part(m, ".qweight", ".qweight"));
    QEFF_QUANT_ASSIGN(TensorView qzeros, part(m, ".qzeros", ".qweight"));
    QEFF_QUANT_ASSIGN(TensorView scales, part(m, ".scales", ".qweight"));
    for (const TensorView *v : {&qweight, &qzeros})
      if (absl::Status st = expectDType(*v, {DType::I32, DType::U32},
                                        "AWQ packs 4-bit values into int32");
          !st.ok())
        return st;
    if (absl::Status st = expectScale(scales); !st.ok())
      return st;
    if (qweight.shape().size() != 2 || scales.shape().size() != 2)
      return error(m + ".qweight", "AWQ qweight and scales must be 2-D, got " +
                                       shapeText(qweight.shape()) + " and " +
                                       shapeText(scales.shape()));
    int64_t in = qweight.shape()[0], out = scales.shape()[1];
    if (out % 8 != 0)
      return error(m + ".scales", cat("has ", out,
                                               " outputs, not a multiple of the 8 "
                                               "values an AWQ int32 packs"));
    if (absl::Status st = expectShape(qweight, {in, out / 8},
                                      cat("(AWQ GEMM: [in, out / 8] for ",
                                                   out, " outputs)"));
        !st.ok())
      return st;
    int64_t g = scheme_.groupSize == -1 ? in : scheme_.groupSize;
    if (in % g != 0)
      return error(m + ".qweight",
                   cat("has ", in, " inputs, which quantization_config."
                                            "group_size ", g, " does not divide"));
    if (absl::Status st = expectShape(scales, {in / g, out},
                                      cat("(group size ", g, ")"));
        !st.ok())
      return st;
    if (absl::Status st = expectShape(qzeros, {in / g, out / 8},
                                      cat("(group size ", g, ")"));
        !st.ok())
      return st;
    AwqParts p{qweight, qzeros, scales, out, in, g};
    replace(m, makeAwqSource(p), out, in, {".qweight", ".qzeros", ".scales"});
    return absl::OkStatus();
  }

  absl::Status gptq(const std::string &m) {
    int bits = scheme_.bits;
    int64_t groupSize = scheme_.groupSize;
    bool descAct = scheme_.descAct;
    for (const GPTQRule &rule : scheme_.dynamic) {
      if (!rule.pattern.matches(m))
        continue;
      if (rule.skip)
        return error(m + ".qweight",
                     "module '" + m + "' matches quantization_config.dynamic '-:" +
                         rule.pattern.regex +
                         "' (not quantized) but holds packed GPTQ tensors");
      bits = rule.bits.value_or(bits);
      groupSize = rule.groupSize.value_or(groupSize);
      descAct = rule.descAct.value_or(descAct);
      break;
    }
    QEFF_QUANT_ASSIGN(TensorView qweight, part(m, ".qweight", ".qweight"));
    QEFF_QUANT_ASSIGN(TensorView qzeros, part(m, ".qzeros", ".qweight"));
    QEFF_QUANT_ASSIGN(TensorView scales, part(m, ".scales", ".qweight"));
    for (const TensorView *v : {&qweight, &qzeros})
      if (absl::Status st = expectDType(*v, {DType::I32, DType::U32},
                                        "GPTQ packs values into int32");
          !st.ok())
        return st;
    if (absl::Status st = expectScale(scales); !st.ok())
      return st;
    if (qweight.shape().size() != 2 || scales.shape().size() != 2)
      return error(m + ".qweight", "GPTQ qweight and scales must be 2-D, got " +
                                       shapeText(qweight.shape()) + " and " +
                                       shapeText(scales.shape()));
    int64_t perWord = 32 / bits;
    int64_t in = qweight.shape()[0] * perWord, out = qweight.shape()[1];
    int64_t groups = scales.shape()[0];
    if (absl::Status st = expectShape(scales, {groups, out},
                                      cat("(", out, " outputs)"));
        !st.ok())
      return st;
    if (absl::Status st = expectShape(qzeros, {groups, ceilDiv(out, perWord)},
                                      cat("(", groups, " groups of ", out,
                                                   " ", bits, "-bit zeros)"));
        !st.ok())
      return st;
    GptqParts p{qweight, qzeros, scales, out, in, groups, bits, scheme_.gptqV1, {}};
    if (const hf::TensorInfo *gi = ckpt_.find(m + ".g_idx")) {
      QEFF_QUANT_ASSIGN(TensorView gidx, ckpt_.get(gi->name));
      if (absl::Status st = readGroupIndex(gidx, in, groups, p.groupIndex); !st.ok())
        return st;
    } else {
      if (descAct)
        return error(m + ".qweight",
                     "quantization_config.desc_act is true but module '" + m +
                         "' has no '" + m +
                         ".g_idx': the order of its input groups is unknown");
      int64_t g = groupSize == -1 ? in : groupSize;
      if (groups != ceilDiv(in, g))
        return error(m + ".scales",
                     cat("has ", groups, " groups, but ", in,
                                  " inputs in groups of ", g, " make ", ceilDiv(in, g)));
      p.groupIndex.resize(static_cast<size_t>(in));
      for (int64_t i = 0; i < in; ++i)
        p.groupIndex[static_cast<size_t>(i)] = int32_t(i / g);
    }
    replace(m, makeGptqSource(std::move(p)), out, in,
            {".qweight", ".qzeros", ".scales", ".g_idx"});
    return absl::OkStatus();
  }

  /// Cell grid of a scale for `strategy` over [out, in].
  absl::Status scaleGrid(const std::string &m, const TensorView &scale,
                         const std::string &strategy, int64_t groupSize,
                         int64_t blockRows, int64_t blockCols, bool hasGroupIndex,
                         int64_t out, int64_t in, ScaledParts &p) {
    if (strategy == "tensor") {
      p.cellRows = p.cellCols = 1;
      p.blockRows = out;
      p.blockCols = in;
    } else if (strategy == "channel") {
      p.cellRows = out;
      p.cellCols = 1;
      p.blockRows = 1;
      p.blockCols = in;
    } else if (strategy == "group") {
      if (!hasGroupIndex && in % groupSize != 0)
        return error(scale.name().data(),
                     cat("module '", m, "' has ", in,
                                  " inputs, which group_size ", groupSize,
                                  " does not divide"));
      p.cellRows = out;
      p.cellCols = hasGroupIndex && scale.shape().size() == 2 ? scale.shape()[1]
                                                              : ceilDiv(in, groupSize);
      p.blockRows = 1;
      p.blockCols = groupSize;
    } else { // block
      p.cellRows = ceilDiv(out, blockRows);
      p.cellCols = ceilDiv(in, blockCols);
      p.blockRows = blockRows;
      p.blockCols = blockCols;
    }
    int64_t n = scale.numElements();
    bool shapeOk = n == p.cellRows * p.cellCols &&
                   (scale.shape().size() != 2 ||
                    (scale.shape()[0] == p.cellRows && scale.shape()[1] == p.cellCols));
    if (!shapeOk)
      return error(std::string(scale.name()),
                   cat("has shape ", shapeText(scale.shape()), ", expected [",
                                p.cellRows, ", ", p.cellCols, "] for strategy ",
                                strategy, " over a [", out, ", ", in, "] weight"));
    return absl::OkStatus();
  }

  absl::Status compressedTensors(const std::string &m) {
    for (const std::string &target : scheme_.ignore)
      if (ctTargetMatches(target, m) && target != "Linear")
        return error(m + ".weight_scale",
                     "module '" + m + "' matches quantization_config.ignore '" +
                         target + "' but holds quantized tensors");
    const CTGroup *group = nullptr;
    for (const CTGroup &g : scheme_.groups)
      for (const std::string &t : g.targets)
        if (!group && ctTargetMatches(t, m))
          group = &g;
    if (!group)
      return error(m + ".weight_scale",
                   "module '" + m +
                       "' holds quantized tensors but matches the targets of no "
                       "quantization_config.config_groups entry");
    bool packed = ckpt_.contains(m + ".weight_packed");
    const char *marker = packed ? ".weight_packed" : ".weight";
    QEFF_QUANT_ASSIGN(TensorView scale, part(m, ".weight_scale", marker));
    if (absl::Status st = expectScale(scale); !st.ok())
      return st;
    ScaledParts p;
    p.bits = group->bits;
    int64_t out = 0, in = 0;
    if (packed) {
      if (group->format != "pack-quantized")
        return error(m + ".weight_packed",
                     "is packed but config group '" + group->name + "' has format '" +
                         group->format + "'");
      QEFF_QUANT_ASSIGN(TensorView codes, part(m, ".weight_packed", marker));
      QEFF_QUANT_ASSIGN(TensorView shape, part(m, ".weight_shape", marker));
      if (absl::Status st = expectDType(codes, {DType::I32, DType::U32},
                                        "pack-quantized weights are int32 words");
          !st.ok())
        return st;
      if (!(shape.dtype() == DType::I64 || shape.dtype() == DType::I32) ||
          shape.numElements() != 2)
        return error(m + ".weight_shape", cat("must hold two integers (out, in), got ",
                                                       dtName(shape.dtype()), " ",
                                                       shapeText(shape.shape())));
      for (int k = 0; k < 2; ++k) {
        int64_t v;
        if (shape.dtype() == DType::I64)
          std::memcpy(&v, shape.data + 8 * k, 8);
        else
          v = int32_t(loadU32(shape.data + 4 * k));
        if (v <= 0 || v > (int64_t(1) << 40))
          return error(m + ".weight_shape", cat("holds dimension ", v));
        (k == 0 ? out : in) = v;
      }
      int64_t perWord = 32 / group->bits;
      if (absl::Status st = expectShape(codes, {out, ceilDiv(in, perWord)},
                                        cat("(weight_shape [", out, ", ", in,
                                                     "], ", group->bits, "-bit values)"));
          !st.ok())
        return st;
      p.codesKind = ScaledParts::Codes::PackedInt;
      p.codes = codes;
      p.format = cat("compressed-tensors int", group->bits);
    } else {
      QEFF_QUANT_ASSIGN(TensorView codes, part(m, ".weight", marker));
      if (codes.shape().size() != 2)
        return error(m + ".weight", "must be 2-D, got " + shapeText(codes.shape()));
      out = codes.shape()[0];
      in = codes.shape()[1];
      if (group->isFloat) {
        if (absl::Status st = expectDType(codes, {DType::F8_E4M3, DType::F8_E5M2},
                                          "float-quantized weights must be F8_E4M3 or F8_E5M2");
            !st.ok())
          return st;
        p.format = "compressed-tensors fp8";
      } else {
        if (absl::Status st = expectDType(codes, {DType::I8, DType::U8, DType::I16, DType::I32},
                                          "int-quantized weights must be integers");
            !st.ok())
          return st;
        p.format = cat("compressed-tensors int", group->bits);
      }
      p.codesKind = ScaledParts::Codes::Elements;
      p.codes = codes;
    }
    p.out = out;
    p.in = in;
    const hf::TensorInfo *gi = ckpt_.find(m + ".weight_g_idx");
    if (absl::Status st = scaleGrid(m, scale, group->strategy, group->groupSize,
                                    group->blockRows, group->blockCols, gi != nullptr,
                                    out, in, p);
        !st.ok())
      return st;
    p.scale = scale;
    if (gi) {
      QEFF_QUANT_ASSIGN(TensorView gidx, ckpt_.get(gi->name));
      if (absl::Status st = readGroupIndex(gidx, in, p.cellCols, p.groupIndex); !st.ok())
        return st;
    }
    if (const hf::TensorInfo *zi = ckpt_.find(m + ".weight_zero_point")) {
      QEFF_QUANT_ASSIGN(TensorView zero, ckpt_.get(zi->name));
      if (!isIntDType(zero.dtype()))
        return error(zi->name, cat("has dtype ", dtName(zero.dtype()),
                                            "; zero points must be integers"));
      if (packed && (zero.dtype() == DType::I32 || zero.dtype() == DType::U32) &&
          zero.numElements() != p.cellRows * p.cellCols) {
        int64_t perWord = 32 / group->bits;
        if (absl::Status st = expectShape(zero, {ceilDiv(p.cellRows, perWord), p.cellCols},
                                          "(zero points packed along the outputs)");
            !st.ok())
          return st;
        p.zeroKind = ScaledParts::Zero::PackedRows;
      } else {
        if (zero.numElements() != p.cellRows * p.cellCols)
          return error(zi->name, cat("has shape ", shapeText(zero.shape()),
                                              ", expected one zero point per scale (",
                                              p.cellRows, " x ", p.cellCols, ")"));
        p.zeroKind = ScaledParts::Zero::Elements;
      }
      p.zero = zero;
    } else if (!group->symmetric && !group->isFloat) {
      return error(m + ".weight_scale",
                   "config group '" + group->name +
                       "' is asymmetric but module '" + m + "' has no weight_zero_point");
    }
    replace(m, makeScaledSource(std::move(p)), out, in,
            {packed ? ".weight_packed" : ".weight", ".weight_scale", ".weight_shape",
             ".weight_zero_point", ".weight_g_idx"});
    return absl::OkStatus();
  }

  absl::Status fp8(const std::string &m) {
    bool inv = ckpt_.contains(m + ".weight_scale_inv");
    const char *scaleSuffix = inv ? ".weight_scale_inv" : ".weight_scale";
    if (notConverted(m))
      return error(m + scaleSuffix,
                   "module '" + m +
                       "' is listed in quantization_config.modules_to_not_convert "
                       "but holds FP8 tensors");
    QEFF_QUANT_ASSIGN(TensorView codes, part(m, ".weight", scaleSuffix));
    QEFF_QUANT_ASSIGN(TensorView scale, part(m, scaleSuffix, scaleSuffix));
    if (absl::Status st = expectDType(codes, {DType::F8_E4M3},
                                      "fp8 checkpoints store F8_E4M3 weights");
        !st.ok())
      return st;
    if (absl::Status st = expectScale(scale); !st.ok())
      return st;
    if (codes.shape().size() != 2)
      return error(m + ".weight", "must be 2-D, got " + shapeText(codes.shape()));
    ScaledParts p;
    p.out = codes.shape()[0];
    p.in = codes.shape()[1];
    p.codes = codes;
    p.codesKind = ScaledParts::Codes::Elements;
    p.format = "fp8 e4m3";
    std::string strategy = "tensor";
    int64_t bm = 0, bn = 0;
    if (scheme_.blockRows > 0) {
      strategy = "block";
      bm = scheme_.blockRows;
      bn = scheme_.blockCols;
      p.format += cat(" block ", bm, "x", bn);
    } else if (scale.numElements() == p.out && p.out > 1) {
      strategy = "channel";
    }
    if (absl::Status st = scaleGrid(m, scale, strategy, 0, bm, bn, false, p.out, p.in, p);
        !st.ok())
      return st;
    p.scale = scale;
    int64_t out = p.out, in = p.in;
    replace(m, makeScaledSource(std::move(p)), out, in, {".weight", scaleSuffix});
    return absl::OkStatus();
  }

  Checkpoint &ckpt_;
  const QuantScheme &scheme_;
};

} // namespace

absl::Status dequantizeCheckpoint(Checkpoint &checkpoint, const QuantScheme &scheme) {
  if (scheme.method == Method::MXFP4)
    return dequantizeMxfp4(checkpoint, scheme);
  return Dequantizer(checkpoint, scheme).run();
}

absl::StatusOr<std::unique_ptr<Checkpoint>>
openDenseCheckpoint(const std::string &dir, const hf::JsonConfig &config) {
  QEFF_QUANT_ASSIGN(std::optional<QuantScheme> scheme, parseQuantizationConfig(config));
  QEFF_QUANT_ASSIGN(std::unique_ptr<Checkpoint> ckpt, Checkpoint::open(dir));
  if (scheme) {
    if (absl::Status st = dequantizeCheckpoint(*ckpt, *scheme); !st.ok())
      return st;
    return ckpt;
  }
  // Packed tensors without the config that says how to read them.
  for (const std::string &name : ckpt->tensorNames()) {
    const hf::TensorInfo *info = ckpt->find(name);
    bool f8 = info->dtype == DType::F8_E4M3 || info->dtype == DType::F8_E5M2 ||
              info->dtype == DType::F8_E8M0;
    if (f8 || endsWith(name, ".qweight") || endsWith(name, ".weight_packed"))
      return absl::InvalidArgumentError(cat(
          ckpt->sourcePath(), ": tensor '", name, "' (", dtName(info->dtype),
          ") is a quantized tensor, but ", config.fileName(),
          " has no quantization_config saying how it is packed"));
  }
  return ckpt;
}

} // namespace qeff::quant
