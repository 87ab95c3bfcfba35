//===- Mxfp4.cpp - GPT-OSS MXFP4 expert tensors as dense sources ----------===//
//
// Part of qeff. See Mxfp4.h. Each value is one FP4 code times a power of
// two: exact in f32 (and in the bf16 transformers decodes into), so the
// decoded tensor equals transformers' dequantized one bit for bit.
//
//===----------------------------------------------------------------------===//

#include "frontend/Quant/Mxfp4.h"

#include "frontend/Quant/QuantUtil.h"

#include <cmath>
#include <cstring>

#pragma clang fp contract(off)

namespace qeff::quant {

namespace {

using hf::Checkpoint;
using hf::DenseSource;
using hf::DType;

/// blocks [E, R, G, 16], scales [E, R, G] as the dense [E, (G * 32) * R]
/// matrix of the transposed [E, G * 32, R] tensor.
class Mxfp4Source final : public DenseSource {
public:
  Mxfp4Source(const std::byte *blocks, size_t blockBytes,
              const std::byte *scales, size_t scaleBytes, int64_t rows,
              int64_t groups)
      : blocks_(blocks), scales_(scales), blockBytes_(blockBytes),
        scaleBytes_(scaleBytes), rows_(rows), groups_(groups) {}

  void decode(int64_t r0, int64_t r1, int64_t c0, int64_t c1, float *dst,
              int64_t ld) const override {
    for (int64_t e = r0; e < r1; ++e)
      for (int64_t c = c0; c < c1; ++c)
        dst[(e - r0) * ld + (c - c0)] = at(e, c / rows_, c % rows_);
  }
  std::vector<std::pair<const std::byte *, size_t>>
  packedRanges() const override {
    return {{blocks_, blockBytes_}, {scales_, scaleBytes_}};
  }
  std::string format() const override { return "MXFP4"; }

private:
  /// Element [e, k, r] of the transposed tensor: out[e, r, k] of
  /// convert_moe_packed_tensors, k = 32 g + j, code j of block (e, r, g):
  /// byte j / 2, low nibble for even j (`sub[:, 0::2] = lut[idx_lo]`).
  float at(int64_t e, int64_t k, int64_t r) const {
    int64_t g = k / 32, j = k % 32;
    int64_t cell = (e * rows_ + r) * groups_ + g;
    auto byte = static_cast<uint8_t>(blocks_[cell * 16 + j / 2]);
    int code = (j % 2 == 0) ? (byte & 0x0F) : (byte >> 4);
    int exponent = int(static_cast<uint8_t>(scales_[cell])) - 127;
    // torch.ldexp(x, e) is x * 2.0 ** e: a power of two, then one exact
    // product.
    return kFp4Values[code] * std::ldexp(1.0f, exponent);
  }

  const std::byte *blocks_, *scales_;
  size_t blockBytes_, scaleBytes_;
  int64_t rows_, groups_;
};

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

bool endsWith(const std::string &s, const char *suffix) {
  size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

} // namespace

absl::Status dequantizeMxfp4(Checkpoint &ckpt, const QuantScheme &) {
  auto error = [&](const std::string &tensor, const std::string &message) {
    return absl::InvalidArgumentError(
        cat(ckpt.sourcePath(), ": tensor '", tensor, "': ", message));
  };
  for (const std::string &name : ckpt.tensorNames()) {
    if (!ckpt.contains(name))
      continue; // a scales tensor decoded with its blocks
    bool isBlocks = endsWith(name, "_blocks");
    if (!isBlocks && !endsWith(name, "_scales"))
      continue;
    std::string base = name.substr(0, name.size() - 7);
    std::string other = base + (isBlocks ? "_scales" : "_blocks");
    if (!ckpt.contains(other))
      return error(name, cat("is an MXFP4 ",
                             std::string(isBlocks ? "blocks" : "scales"),
                             " tensor without its '", other, "'"));
    if (!isBlocks)
      continue; // reached with its blocks
    const hf::TensorInfo blocks = *ckpt.find(name);
    const hf::TensorInfo scales = *ckpt.find(other);
    if (blocks.dtype != DType::U8)
      return error(name, cat("is ", hf::dtypeName(blocks.dtype),
                             "; MXFP4 blocks are U8 (two FP4 codes a byte)"));
    if (scales.dtype != DType::U8)
      return error(other, cat("is ", hf::dtypeName(scales.dtype),
                              "; MXFP4 scales are U8 (E8M0 exponents)"));
    // convert_moe_packed_tensors: `*prefix_shape, G, B = blocks.shape` with
    // the transpose(1, 2) of a [E, R, G * 32] result: rank 4, B = 16.
    if (blocks.shape.size() != 4 || blocks.shape[3] != 16)
      return error(name, cat("has shape ", shapeText(blocks.shape),
                             "; MXFP4 expert blocks are [experts, rows, "
                             "blocks, 16] (32 FP4 values in 16 bytes)"));
    std::vector<int64_t> want(blocks.shape.begin(), blocks.shape.end() - 1);
    if (scales.shape != want)
      return error(other, cat("has shape ", shapeText(scales.shape),
                              "; it must be the blocks' shape less the last "
                              "dimension, ",
                              shapeText(want), " ('", name, "' is ",
                              shapeText(blocks.shape), ")"));
    absl::StatusOr<hf::TensorView> b = ckpt.get(name), s = ckpt.get(other);
    if (!b.ok())
      return b.status();
    if (!s.ok())
      return s.status();
    // E8M0 255 is NaN (OCP MX); transformers would decode its zeros as NaN.
    for (int64_t i = 0, n = scales.numElements(); i < n; ++i)
      if (static_cast<uint8_t>(s->data[i]) == 255)
        return error(other, cat("holds the E8M0 NaN code 255 at element ", i));
    if (ckpt.contains(base))
      return error(name, cat("is packed, but the checkpoint also holds '",
                             base, "' unpacked"));
    int64_t experts = blocks.shape[0], rows = blocks.shape[1],
            groups = blocks.shape[2];
    auto source = std::make_shared<Mxfp4Source>(
        b->data, blocks.byteSize(), s->data, scales.byteSize(), rows, groups);
    std::string file = ckpt.filePathOf(name);
    ckpt.remove(name);
    ckpt.remove(other);
    hf::TensorInfo info;
    info.name = base;
    info.shape = {experts, groups * 32, rows};
    ckpt.addDecoded(std::move(info), std::move(source), file);
  }
  return absl::OkStatus();
}

} // namespace qeff::quant
