//===- GGMLSource.cpp - a GGUF tensor as a dense source -------------------===//
//
// Part of qeff. See GGMLSource.h.
//
//===----------------------------------------------------------------------===//

#include "frontend/GGUF/GGMLSource.h"

#include "frontend/GGUF/GGMLTypes.h"

#include <algorithm>

#pragma clang fp contract(off)

namespace qeff::gguf {

namespace {
class GGMLSource final : public hf::DenseSource {
public:
  explicit GGMLSource(GGMLSourceSpec spec) : s_(std::move(spec)) {
    const GGMLType *t = ggmlType(s_.tensor->type);
    block_ = t->blockSize;
    typeSize_ = t->typeSize;
    cols_ = s_.tensor->ne[0];
    rows_ = s_.tensor->numElements() / cols_;
    rowBytes_ = cols_ / block_ * typeSize_;
  }

  void decode(int64_t r0, int64_t r1, int64_t c0, int64_t c1, float *dst,
              int64_t ld) const override {
    if (!s_.transpose) {
      for (int64_t r = r0; r < r1; ++r)
        fileRow(fileRowOf(r), c0, c1, dst + (r - r0) * ld, 1);
      return;
    }
    // Dense (r, c) is file (c, r): file rows c0..c1, their columns r0..r1.
    for (int64_t c = c0; c < c1; ++c)
      fileRow(fileRowOf(c), r0, r1, dst + (c - c0), ld);
  }
  void decodeTransposed(int64_t c0, int64_t c1, int64_t r0, int64_t r1,
                        float *dst, int64_t ld) const override {
    // Groups of kGroup file rows are decoded a block at a time into a small
    // tile, then written out as runs of kGroup floats per output row: one
    // cache line per write instead of one per element.
    if (!s_.transpose) {
      constexpr int64_t kGroup = 16;
      int64_t span = block_ == 1 ? 256 : block_;
      float tile[kGroup][256];
      for (int64_t r = r0; r < r1; r += kGroup) {
        int64_t g = std::min(kGroup, r1 - r);
        for (int64_t b = c0 / span; b * span < c1; ++b) {
          int64_t lo = std::max(c0, b * span), hi = std::min(c1, (b + 1) * span);
          for (int64_t k = 0; k < g; ++k)
            fileRow(fileRowOf(r + k), lo, hi, tile[k], 1);
          for (int64_t c = lo; c < hi; ++c) {
            float *out = dst + (c - c0) * ld + (r - r0);
            for (int64_t k = 0; k < g; ++k)
              out[k] = tile[k][c - lo];
          }
        }
      }
      return;
    }
    for (int64_t c = c0; c < c1; ++c)
      fileRow(fileRowOf(c), r0, r1, dst + (c - c0) * ld, 1);
  }
  int64_t columnBlock() const override { return s_.transpose ? 1 : block_; }
  std::vector<std::pair<const std::byte *, size_t>>
  packedRanges() const override {
    return {{s_.tensor->data, s_.tensor->bytes}};
  }
  std::string format() const override {
    return "GGUF " + ggmlTypeName(s_.tensor->type);
  }

private:
  int64_t fileRowOf(int64_t r) const {
    return s_.rowMap.empty() ? r : s_.rowMap[static_cast<size_t>(r)];
  }
  /// Columns [c0, c1) of file row `row`, every `step` floats from `out`.
  void fileRow(int64_t row, int64_t c0, int64_t c1, float *out,
               int64_t step) const {
    const std::byte *base = s_.tensor->data + row * rowBytes_;
    float tmp[256];
    for (int64_t b = c0 / block_; b * block_ < c1; ++b) {
      decodeBlock(s_.tensor->type, base + b * typeSize_, tmp);
      int64_t lo = std::max(c0, b * block_), hi = std::min(c1, (b + 1) * block_);
      for (int64_t c = lo; c < hi; ++c) {
        float v = tmp[c - b * block_];
        out[(c - c0) * step] = s_.offset != 0.0f ? v + s_.offset : v;
      }
    }
  }

  GGMLSourceSpec s_;
  int64_t block_ = 1, typeSize_ = 4, cols_ = 0, rows_ = 0, rowBytes_ = 0;
};
} // namespace

std::shared_ptr<const hf::DenseSource> makeGGMLSource(GGMLSourceSpec spec) {
  return std::make_shared<GGMLSource>(std::move(spec));
}

} // namespace qeff::gguf
