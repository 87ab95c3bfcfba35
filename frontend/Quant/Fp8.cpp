//===- Fp8.cpp - 8-bit float and half decoding ----------------------------===//
//
// Part of qeff. See Fp8.h.
//
//===----------------------------------------------------------------------===//

#include "frontend/Quant/Fp8.h"

#include <array>
#include <cmath>
#include <limits>

namespace qeff::quant {

namespace {
/// A minifloat with `mbits` mantissa bits and exponent bias `bias`:
/// subnormal for exponent 0, (1 + m / 2^mbits) * 2^(e - bias) otherwise.
float minifloat(bool negative, int exponent, int mantissa, int mbits,
                int bias) {
  float value = exponent == 0
                    ? std::ldexp(float(mantissa), 1 - bias - mbits)
                    : std::ldexp(float((1 << mbits) + mantissa),
                                 exponent - bias - mbits);
  return negative ? -value : value;
}

std::array<float, 256> makeE4M3() {
  std::array<float, 256> table{};
  for (int c = 0; c < 256; ++c) {
    if ((c & 0x7F) == 0x7F)
      table[c] = std::numeric_limits<float>::quiet_NaN();
    else
      table[c] = minifloat(c & 0x80, (c >> 3) & 0xF, c & 7, 3, 7);
  }
  return table;
}

std::array<float, 256> makeE5M2() {
  std::array<float, 256> table{};
  for (int c = 0; c < 256; ++c) {
    int e = (c >> 2) & 0x1F, m = c & 3;
    if (e == 0x1F)
      table[c] = m ? std::numeric_limits<float>::quiet_NaN()
                   : ((c & 0x80) ? -INFINITY : INFINITY);
    else
      table[c] = minifloat(c & 0x80, e, m, 2, 15);
  }
  return table;
}
} // namespace

float e4m3ToF32(uint8_t code) {
  static const std::array<float, 256> table = makeE4M3();
  return table[code];
}

float e5m2ToF32(uint8_t code) {
  static const std::array<float, 256> table = makeE5M2();
  return table[code];
}

float e8m0ToF32(uint8_t code) {
  if (code == 0xFF)
    return std::numeric_limits<float>::quiet_NaN();
  return std::ldexp(1.0f, int(code) - 127);
}

float halfToF32(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1F, man = h & 0x3FF, bits;
  if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (man << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  } else if (man == 0) {
    bits = sign;
  } else {
    // Subnormal: normalize.
    int shift = 0;
    while (!(man & 0x400)) {
      man <<= 1;
      ++shift;
    }
    man &= 0x3FF;
    bits = sign | (uint32_t(113 - shift) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

bool isScaleDType(hf::DType dtype) {
  switch (dtype) {
  case hf::DType::F32:
  case hf::DType::F16:
  case hf::DType::BF16:
  case hf::DType::F64:
  case hf::DType::F8_E4M3:
  case hf::DType::F8_E5M2:
  case hf::DType::F8_E8M0:
    return true;
  default:
    return false;
  }
}

float loadAsF32(const std::byte *data, hf::DType dtype, int64_t i) {
  switch (dtype) {
  case hf::DType::F32: {
    float f;
    std::memcpy(&f, data + 4 * i, 4);
    return f;
  }
  case hf::DType::F64: {
    double d;
    std::memcpy(&d, data + 8 * i, 8);
    return float(d);
  }
  case hf::DType::F16:
    return halfToF32(loadU16(data + 2 * i));
  case hf::DType::BF16:
    return bf16BitsToF32(loadU16(data + 2 * i));
  case hf::DType::F8_E4M3:
    return e4m3ToF32(uint8_t(data[i]));
  case hf::DType::F8_E5M2:
    return e5m2ToF32(uint8_t(data[i]));
  case hf::DType::F8_E8M0:
    return e8m0ToF32(uint8_t(data[i]));
  case hf::DType::I8:
    return float(int8_t(data[i]));
  case hf::DType::U8:
  case hf::DType::Bool:
    return float(uint8_t(data[i]));
  case hf::DType::I16:
    return float(int16_t(loadU16(data + 2 * i)));
  case hf::DType::U16:
    return float(loadU16(data + 2 * i));
  case hf::DType::I32:
    return float(int32_t(loadU32(data + 4 * i)));
  case hf::DType::U32:
    return float(loadU32(data + 4 * i));
  case hf::DType::I64:
  case hf::DType::U64: {
    int64_t v;
    std::memcpy(&v, data + 8 * i, 8);
    return dtype == hf::DType::I64 ? float(v) : float(uint64_t(v));
  }
  }
  return 0.0f;
}

} // namespace qeff::quant
