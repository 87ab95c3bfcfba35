//===- Decoders.cpp - quantized Linear weights as dense sources -----------===//
//
// Part of qeff. See Decoders.h. The arithmetic is the libraries' in f32, one
// product per element; contraction into FMA is off so that no compiler or
// target changes a bit.
//
//===----------------------------------------------------------------------===//

#include "frontend/Quant/Decoders.h"

#include "frontend/Quant/Fp8.h"

#include <algorithm>

#pragma clang fp contract(off)

namespace qeff::quant {

namespace {

using hf::DenseSource;
using hf::TensorView;

std::pair<const std::byte *, size_t> rangeOf(const TensorView &v) {
  return {v.data, v.byteSize()};
}

/// Scales of one row of a scale grid as f32 (unaligned, any float dtype).
inline float scaleAt(const TensorView &s, int64_t i) {
  return loadAsF32(s.data, s.dtype(), i);
}

class AwqSource final : public DenseSource {
public:
  explicit AwqSource(const AwqParts &p) : p_(p), words_(p.out / 8) {}

  void decode(int64_t r0, int64_t r1, int64_t c0, int64_t c1, float *dst,
              int64_t ld) const override {
    for (int64_t i = c0; i < c1; ++i)
      row(i, r0, r1, dst + (i - c0), ld);
  }
  void decodeTransposed(int64_t c0, int64_t c1, int64_t r0, int64_t r1,
                        float *dst, int64_t ld) const override {
    for (int64_t i = c0; i < c1; ++i)
      row(i, r0, r1, dst + (i - c0) * ld, 1);
  }
  std::vector<std::pair<const std::byte *, size_t>>
  packedRanges() const override {
    return {rangeOf(p_.qweight), rangeOf(p_.qzeros), rangeOf(p_.scales)};
  }
  std::string format() const override {
    return "AWQ int4 g" + std::to_string(p_.groupSize);
  }

private:
  /// Outputs [o0, o1) of input `i`, every `step` floats from `out`.
  void row(int64_t i, int64_t o0, int64_t o1, float *out, int64_t step) const {
    int64_t g = i / p_.groupSize;
    const std::byte *q = p_.qweight.data + 4 * i * words_;
    const std::byte *z = p_.qzeros.data + 4 * g * words_;
    // One qweight and one qzeros word serve 8 outputs.
    int64_t word = -1;
    uint32_t qw = 0, zw = 0;
    for (int64_t o = o0; o < o1; ++o) {
      if ((o >> 3) != word) {
        word = o >> 3;
        qw = loadU32(q + 4 * word);
        zw = loadU32(z + 4 * word);
      }
      int shift = 4 * kAwqReverseOrder[o & 7];
      int32_t qv = int32_t((qw >> shift) & 0xF);
      int32_t zv = int32_t((zw >> shift) & 0xF);
      float s = scaleAt(p_.scales, g * p_.out + o);
      out[(o - o0) * step] = float(qv - zv) * s;
    }
  }

  AwqParts p_;
  int64_t words_;
};

class GptqSource final : public DenseSource {
public:
  explicit GptqSource(GptqParts p)
      : p_(std::move(p)), perWord_(32 / p_.bits),
        mask_((1u << p_.bits) - 1),
        zeroWords_((p_.out + perWord_ - 1) / perWord_),
        zeroBias_(!p_.v1 ? 0u : p_.bits == 4 ? 0x11111111u : 0x01010101u) {}

  void decode(int64_t r0, int64_t r1, int64_t c0, int64_t c1, float *dst,
              int64_t ld) const override {
    for (int64_t i = c0; i < c1; ++i)
      row(i, r0, r1, dst + (i - c0), ld);
  }
  void decodeTransposed(int64_t c0, int64_t c1, int64_t r0, int64_t r1,
                        float *dst, int64_t ld) const override {
    for (int64_t i = c0; i < c1; ++i)
      row(i, r0, r1, dst + (i - c0) * ld, 1);
  }
  std::vector<std::pair<const std::byte *, size_t>>
  packedRanges() const override {
    return {rangeOf(p_.qweight), rangeOf(p_.qzeros), rangeOf(p_.scales)};
  }
  std::string format() const override {
    return "GPTQ int" + std::to_string(p_.bits);
  }

private:
  void row(int64_t i, int64_t o0, int64_t o1, float *out, int64_t step) const {
    int64_t g = p_.groupIndex[i];
    const std::byte *q = p_.qweight.data + 4 * (i / perWord_) * p_.out;
    int qshift = int(p_.bits * (i % perWord_));
    const std::byte *z = p_.qzeros.data + 4 * g * zeroWords_;
    // v1 stores zero - 1 per field; the library adds the bias word back
    // (uint32 wrap), so a borrow across fields comes back as it went. One
    // zero word serves perWord_ outputs.
    int64_t word = -1;
    uint32_t zw = 0;
    for (int64_t o = o0; o < o1; ++o) {
      if (o / perWord_ != word) {
        word = o / perWord_;
        zw = loadU32(z + 4 * word) + zeroBias_;
      }
      int32_t qv = int32_t((loadU32(q + 4 * o) >> qshift) & mask_);
      int32_t zv = int32_t((zw >> (p_.bits * (o % perWord_))) & mask_);
      float s = scaleAt(p_.scales, g * p_.out + o);
      out[(o - o0) * step] = s * float(qv - zv);
    }
  }

  GptqParts p_;
  int64_t perWord_;
  uint32_t mask_;
  int64_t zeroWords_;
  uint32_t zeroBias_;
};

class ScaledSource final : public DenseSource {
public:
  explicit ScaledSource(ScaledParts p) : p_(std::move(p)) {
    if (p_.codesKind == ScaledParts::Codes::PackedInt) {
      perWord_ = 32 / p_.bits;
      words_ = (p_.in + perWord_ - 1) / perWord_;
      offset_ = 1 << (p_.bits - 1);
    }
    if (p_.zeroKind == ScaledParts::Zero::PackedRows)
      zeroPerWord_ = 32 / p_.bits;
  }

  void decode(int64_t r0, int64_t r1, int64_t c0, int64_t c1, float *dst,
              int64_t ld) const override {
    for (int64_t o = r0; o < r1; ++o) {
      int64_t cellRow = o / p_.blockRows;
      float *out = dst + (o - r0) * ld;
      for (int64_t i = c0; i < c1; ++i) {
        int64_t cellCol =
            p_.groupIndex.empty() ? i / p_.blockCols : p_.groupIndex[i];
        int64_t cell = cellRow * p_.cellCols + cellCol;
        float s = scaleAt(p_.scale, cell);
        if (isFloatCodes()) {
          out[i - c0] = code(o, i) * s;
        } else {
          int32_t q = intCode(o, i) - zeroAt(cellRow, cellCol, cell);
          out[i - c0] = float(q) * s;
        }
      }
    }
  }
  std::vector<std::pair<const std::byte *, size_t>>
  packedRanges() const override {
    std::vector<std::pair<const std::byte *, size_t>> r = {rangeOf(p_.codes),
                                                           rangeOf(p_.scale)};
    if (p_.zeroKind != ScaledParts::Zero::None)
      r.push_back(rangeOf(p_.zero));
    return r;
  }
  std::string format() const override { return p_.format; }

private:
  bool isFloatCodes() const {
    return p_.codesKind == ScaledParts::Codes::Elements &&
           (p_.codes.dtype() == hf::DType::F8_E4M3 ||
            p_.codes.dtype() == hf::DType::F8_E5M2);
  }
  float code(int64_t o, int64_t i) const {
    return loadAsF32(p_.codes.data, p_.codes.dtype(), o * p_.in + i);
  }
  int32_t intCode(int64_t o, int64_t i) const {
    if (p_.codesKind == ScaledParts::Codes::PackedInt) {
      uint32_t w = loadU32(p_.codes.data + 4 * (o * words_ + i / perWord_));
      int32_t u = int32_t((w >> (p_.bits * (i % perWord_))) & ((1u << p_.bits) - 1));
      return u - offset_;
    }
    return int32_t(code(o, i));
  }
  int32_t zeroAt(int64_t cellRow, int64_t cellCol, int64_t cell) const {
    switch (p_.zeroKind) {
    case ScaledParts::Zero::None:
      return 0;
    case ScaledParts::Zero::Elements:
      return int32_t(loadAsF32(p_.zero.data, p_.zero.dtype(), cell));
    case ScaledParts::Zero::PackedRows: {
      uint32_t w = loadU32(p_.zero.data +
                           4 * ((cellRow / zeroPerWord_) * p_.cellCols + cellCol));
      int32_t u = int32_t((w >> (p_.bits * (cellRow % zeroPerWord_))) &
                          ((1u << p_.bits) - 1));
      return u - (1 << (p_.bits - 1));
    }
    }
    return 0;
  }

  ScaledParts p_;
  int64_t perWord_ = 1, words_ = 0, zeroPerWord_ = 1;
  int32_t offset_ = 0;
};

} // namespace

std::shared_ptr<const DenseSource> makeAwqSource(const AwqParts &parts) {
  return std::make_shared<AwqSource>(parts);
}
std::shared_ptr<const DenseSource> makeGptqSource(GptqParts parts) {
  return std::make_shared<GptqSource>(std::move(parts));
}
std::shared_ptr<const DenseSource> makeScaledSource(ScaledParts parts) {
  return std::make_shared<ScaledSource>(std::move(parts));
}

} // namespace qeff::quant
