//===- Fp8.h - 8-bit float and half decoding for dequantizers ---*- C++ -*-===//
//
// Part of qeff. Exact decodings of the element types quantized checkpoints
// store: OCP FP8 E4M3FN (bias 7, no infinities, 0x7F/0xFF NaN, max 448), E5M2
// (bias 15, IEEE-like), E8M0 (2^(e-127), 0xFF NaN; MX scales), IEEE half and
// bfloat16. Every value is exactly representable in f32, so a decode is a
// table lookup or a bit shift: no rounding happens here.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_QUANT_FP8_H
#define QEFF_FRONTEND_QUANT_FP8_H

#include "frontend/HF/SafeTensors.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace qeff::quant {

float e4m3ToF32(uint8_t code);
float e5m2ToF32(uint8_t code);
float e8m0ToF32(uint8_t code);
float halfToF32(uint16_t bits);
inline float bf16BitsToF32(uint16_t bits) {
  uint32_t w = uint32_t(bits) << 16;
  float f;
  std::memcpy(&f, &w, 4);
  return f;
}

/// Element `i` of a little-endian array of `dtype` (a float or integer
/// safetensors dtype) at `data` (unaligned), as f32. Integers convert
/// exactly up to 2^24.
float loadAsF32(const std::byte *data, hf::DType dtype, int64_t i);

/// Whether loadAsF32 reads `dtype`.
bool isScaleDType(hf::DType dtype);

/// Little-endian unaligned loads.
inline uint32_t loadU32(const std::byte *p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint16_t loadU16(const std::byte *p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

} // namespace qeff::quant

#endif // QEFF_FRONTEND_QUANT_FP8_H
