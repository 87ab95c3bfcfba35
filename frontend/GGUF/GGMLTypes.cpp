//===- GGMLTypes.cpp - ggml tensor types and their dequantization ---------===//
//
// Part of qeff. See GGMLTypes.h. Element orders (within a block): Q4_0/Q4_1
// and IQ4_NL put byte j's low nibble at j and high nibble at j + 16; the
// K-quants work in 256-value super-blocks of 16 or 32 sub-blocks with 6-bit
// (Q4_K/Q5_K) or 8-bit (Q6_K) scales. No FMA contraction: gguf-py multiplies
// and adds in separate f32 operations.
//
//===----------------------------------------------------------------------===//

#include "frontend/GGUF/GGMLTypes.h"

#include "frontend/Quant/Fp8.h"

#include <cstring>

#pragma clang fp contract(off)

namespace qeff::gguf {

using quant::bf16BitsToF32;
using quant::halfToF32;
using quant::loadU16;
using quant::loadU32;

namespace {
constexpr GGMLType kTypes[] = {
    {0, "F32", 1, 4, true},        {1, "F16", 1, 2, true},
    {2, "Q4_0", 32, 18, true},     {3, "Q4_1", 32, 20, true},
    {6, "Q5_0", 32, 22, true},     {7, "Q5_1", 32, 24, true},
    {8, "Q8_0", 32, 34, true},     {9, "Q8_1", 32, 36, false},
    {10, "Q2_K", 256, 84, true},   {11, "Q3_K", 256, 110, true},
    {12, "Q4_K", 256, 144, true},  {13, "Q5_K", 256, 176, true},
    {14, "Q6_K", 256, 210, true},  {15, "Q8_K", 256, 292, false},
    {16, "IQ2_XXS", 256, 66, false}, {17, "IQ2_XS", 256, 74, false},
    {18, "IQ3_XXS", 256, 98, false}, {19, "IQ1_S", 256, 50, false},
    {20, "IQ4_NL", 32, 18, true},  {21, "IQ3_S", 256, 110, false},
    {22, "IQ2_S", 256, 82, false}, {23, "IQ4_XS", 256, 136, true},
    {24, "I8", 1, 1, false},       {25, "I16", 1, 2, false},
    {26, "I32", 1, 4, false},      {27, "I64", 1, 8, false},
    {28, "F64", 1, 8, false},      {29, "IQ1_M", 256, 56, false},
    {30, "BF16", 1, 2, true},      {34, "TQ1_0", 256, 54, false},
    {35, "TQ2_0", 256, 66, false}, {39, "MXFP4", 32, 17, false},
};

constexpr int8_t kIQ4Values[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                   1,    13,   25,  38,  53,  69,  89,  113};

inline float f16(const std::byte *p) { return halfToF32(loadU16(p)); }
inline uint8_t u8(const std::byte *p) { return static_cast<uint8_t>(*p); }

/// Q4_K / Q5_K 6-bit scale and min of sub-block j (get_scale_min).
inline void scaleMinK4(const std::byte *s, int j, uint8_t &sc, uint8_t &m) {
  if (j < 4) {
    sc = u8(s + j) & 0x3F;
    m = u8(s + j + 4) & 0x3F;
  } else {
    sc = (u8(s + j + 4) & 0x0F) | ((u8(s + j - 4) >> 2) & 0x30);
    m = (u8(s + j + 4) >> 4) | ((u8(s + j) >> 2) & 0x30);
  }
}
} // namespace

const GGMLType *ggmlType(uint32_t id) {
  for (const GGMLType &t : kTypes)
    if (t.id == id)
      return &t;
  return nullptr;
}

std::string ggmlTypeName(uint32_t id) {
  if (const GGMLType *t = ggmlType(id))
    return t->name;
  return "type " + std::to_string(id);
}

void decodeBlock(uint32_t type, const std::byte *b, float *y) {
  switch (type) {
  case kF32:
    std::memcpy(y, b, 4);
    return;
  case kF16:
    y[0] = f16(b);
    return;
  case kBF16:
    y[0] = bf16BitsToF32(loadU16(b));
    return;
  case kQ8_0: {
    float d = f16(b);
    for (int j = 0; j < 32; ++j)
      y[j] = float(int8_t(u8(b + 2 + j))) * d;
    return;
  }
  case kQ4_0: {
    float d = f16(b);
    for (int j = 0; j < 16; ++j) {
      y[j] = d * float(int(u8(b + 2 + j) & 0x0F) - 8);
      y[j + 16] = d * float(int(u8(b + 2 + j) >> 4) - 8);
    }
    return;
  }
  case kQ4_1: {
    float d = f16(b), m = f16(b + 2);
    for (int j = 0; j < 16; ++j) {
      y[j] = d * float(u8(b + 4 + j) & 0x0F) + m;
      y[j + 16] = d * float(u8(b + 4 + j) >> 4) + m;
    }
    return;
  }
  case kQ5_0: {
    float d = f16(b);
    uint32_t qh = loadU32(b + 2);
    for (int j = 0; j < 16; ++j) {
      int lo = (u8(b + 6 + j) & 0x0F) | (((qh >> j) & 1) << 4);
      int hi = (u8(b + 6 + j) >> 4) | (((qh >> (j + 16)) & 1) << 4);
      y[j] = d * float(lo - 16);
      y[j + 16] = d * float(hi - 16);
    }
    return;
  }
  case kQ5_1: {
    float d = f16(b), m = f16(b + 2);
    uint32_t qh = loadU32(b + 4);
    for (int j = 0; j < 16; ++j) {
      int lo = (u8(b + 8 + j) & 0x0F) | (((qh >> j) & 1) << 4);
      int hi = (u8(b + 8 + j) >> 4) | (((qh >> (j + 16)) & 1) << 4);
      y[j] = d * float(lo) + m;
      y[j + 16] = d * float(hi) + m;
    }
    return;
  }
  case kIQ4_NL: {
    float d = f16(b);
    for (int j = 0; j < 16; ++j) {
      y[j] = d * float(kIQ4Values[u8(b + 2 + j) & 0x0F]);
      y[j + 16] = d * float(kIQ4Values[u8(b + 2 + j) >> 4]);
    }
    return;
  }
  case kQ2_K: {
    // scales[16], qs[64], d, dmin.
    const std::byte *scales = b, *qs = b + 16;
    float d = f16(b + 80), dmin = f16(b + 82);
    for (int sub = 0; sub < 16; ++sub) { // 16 values share a scale and min
      uint8_t sc = u8(scales + sub);
      float dl = d * float(sc & 0xF), ml = dmin * float(sc >> 4);
      for (int e = sub * 16; e < sub * 16 + 16; ++e) {
        int h = e / 128, j = (e % 128) / 32, l = e % 32;
        int q = (u8(qs + h * 32 + l) >> (2 * j)) & 3;
        y[e] = dl * float(q) - ml;
      }
    }
    return;
  }
  case kQ3_K: {
    // hmask[32], qs[64], scales[12], d.
    const std::byte *hmask = b, *qs = b + 32, *sc = b + 96;
    float d = f16(b + 108);
    float dl[16];
    for (int k = 0; k < 16; ++k) {
      int lo = (u8(sc + k % 8) >> (4 * (k / 8))) & 0x0F;
      int hi = (u8(sc + 8 + k % 4) >> (2 * (k / 4))) & 0x03;
      dl[k] = d * float(int8_t(uint8_t(lo | (hi << 4))) - 32);
    }
    for (int e = 0; e < 256; ++e) {
      int h = e / 128, j = (e % 128) / 32, l = e % 32;
      int ql = (u8(qs + h * 32 + l) >> (2 * j)) & 3;
      int qhBit = ((u8(hmask + l) >> (e / 32)) & 1) ^ 1;
      y[e] = dl[e / 16] * float(ql - (qhBit << 2));
    }
    return;
  }
  case kQ4_K:
  case kQ5_K: {
    // d, dmin, scales[12], (Q5_K: qh[32]), qs[128].
    float d = f16(b), dmin = f16(b + 2);
    const std::byte *scales = b + 4;
    const std::byte *qh = type == kQ5_K ? b + 16 : nullptr;
    const std::byte *qs = type == kQ5_K ? b + 48 : b + 16;
    for (int sub = 0; sub < 8; ++sub) {
      uint8_t sc, m;
      scaleMinK4(scales, sub, sc, m);
      float dl = d * float(sc), ml = dmin * float(m);
      int c = sub / 2, nib = sub % 2;
      for (int l = 0; l < 32; ++l) {
        int q = (u8(qs + c * 32 + l) >> (4 * nib)) & 0x0F;
        if (qh)
          q |= ((u8(qh + l) >> sub) & 1) << 4;
        y[sub * 32 + l] = dl * float(q) - ml;
      }
    }
    return;
  }
  case kQ6_K: {
    // ql[128], qh[64], scales[16] (int8), d.
    const std::byte *ql = b, *qh = b + 128, *sc = b + 192;
    float d = f16(b + 208);
    for (int sub = 0; sub < 16; ++sub) { // 16 values share a scale
      float dl = d * float(int8_t(u8(sc + sub)));
      for (int e = sub * 16; e < sub * 16 + 16; ++e) {
        int h = e / 128, nib = (e % 128) / 64, k = e % 64;
        int lo = (u8(ql + h * 64 + k) >> (4 * nib)) & 0x0F;
        int j = (e % 128) / 32, l = e % 32;
        int hi = (u8(qh + h * 32 + l) >> (2 * j)) & 0x03;
        y[e] = dl * float((lo | (hi << 4)) - 32);
      }
    }
    return;
  }
  case kIQ4_XS: {
    // d, scales_h (u16), scales_l[4], qs[128].
    float d = f16(b);
    uint16_t sh = loadU16(b + 2);
    const std::byte *sl = b + 4, *qs = b + 8;
    for (int sub = 0; sub < 8; ++sub) {
      int lo = (u8(sl + sub / 2) >> (4 * (sub % 2))) & 0x0F;
      int hi = (sh >> (2 * sub)) & 0x03;
      float dl = d * float(int8_t(uint8_t(lo | (hi << 4))) - 32);
      for (int k = 0; k < 32; ++k) {
        int nib = k / 16, kk = k % 16;
        int q = (u8(qs + sub * 16 + kk) >> (4 * nib)) & 0x0F;
        y[sub * 32 + k] = dl * float(kIQ4Values[q]);
      }
    }
    return;
  }
  default:
    return;
  }
}

} // namespace qeff::gguf
