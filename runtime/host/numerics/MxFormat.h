//===- MxFormat.h - OCP Microscaling (MX) v1.0 arithmetic -------*- C++ -*-===//
//
// The element formats of the OCP Microscaling Formats (MX) Specification
// v1.0 (FP8 E4M3/E5M2, FP6 E3M2/E2M3, FP4 E2M1, INT8), the E8M0 shared scale,
// and the conversion of blocks of float32 values to them. Everything is
// exact: exponents come from the float's bits (never a float log2), scaling
// is by powers of two, and element rounding is std::round (ties away from
// zero, `nearest`) or std::nearbyint (ties to even, `even`), so a value just
// under a half step never rounds up. docs/numerics.md says where this
// follows the specification and where microsoft/microxcaling differs.
//
// Block conversion (spec section 6.3): X = 2^(floor(log2(max|V|)) - emax),
// the exponent clamped to the E8M0 range [-127, 127]; each V/X rounded on
// its own exponent (subnormals kept) and saturated to +-max normal.
// Special values: a NaN, or an Inf the element type cannot encode, makes the
// scale NaN (0xFF: every element of the block decodes as NaN); E5M2 keeps
// +-Inf and E4M3/E5M2 keep NaN elements, the scale then taken over the
// finite values. An all-zero block gets the smallest scale, 2^-127.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_HOST_NUMERICS_MXFORMAT_H
#define QEFF_RUNTIME_HOST_NUMERICS_MXFORMAT_H

#include "qeff/runtime/Session.h"

#include <cstdint>
#include <string>

namespace qeff::runtime::mx {

enum class Element { FP8_E4M3, FP8_E5M2, FP6_E3M2, FP6_E2M3, FP4_E2M1, INT8 };

struct ElementInfo {
  const char *name;
  int bits;      ///< code width
  int ebits;     ///< exponent bits (0: INT8)
  int mbits;     ///< explicit mantissa bits (INT8: 6 fraction bits)
  int bias;      ///< exponent bias
  int emax;      ///< exponent of the largest normal (INT8: 0)
  int emin;      ///< exponent of the smallest normal (INT8: 0)
  double maxNormal;
  bool hasInf, hasNaN;
};

const ElementInfo &info(Element e);

/// The OCP MX block size.
inline constexpr int kBlockSize = 32;

/// The value of an element code (its low `bits` bits): +-0, subnormals,
/// normals, and for E4M3/E5M2 NaN (and E5M2 +-Inf). INT8 is two's
/// complement times 2^-6, so 0x80 decodes to -2.0.
double decodeElement(Element e, uint32_t code);
/// The E8M0 scale: 2^(code - 127), 0xFF = NaN.
double decodeScale(uint8_t code);

/// The element code nearest `value` (a value already divided by the
/// scale) under `rounding`, saturated to +-max normal. -0.0 and negative
/// values rounding to zero keep their sign in the float types (which have
/// -0); INT8 has no -0 and gives code 0. INT8 saturates symmetrically to
/// +-127/64: conversion never produces code 0x80 (-2.0).
uint32_t encodeElement(Element e, double value, MxRounding rounding);

/// The E8M0 scale code of a block (spec 6.3), from its values.
uint8_t blockScale(Element e, const float *values, int64_t count);

/// One block converted to codes: the scale and one code per value.
void encodeBlock(Element e, MxRounding rounding, const float *values, int64_t count,
                 uint8_t &scale, uint32_t *codes);

/// Fake quantization: each value replaced in place by the float32 value of
/// its MX encoding (exactly decode(encode(v)); every such value is a
/// float32). `data` is viewed as [outer, axisLen, inner]; blocks of
/// `blockSize` consecutive indices along the middle axis share a scale (the
/// last block of an axis may be shorter). Parallel over `threads` (0: 1).
void fakeQuantize(float *data, int64_t outer, int64_t axisLen, int64_t inner, int blockSize,
                  Element e, MxRounding rounding, int threads = 1);

/// The same over one contiguous run of values (the block axis innermost).
void fakeQuantizeRow(float *data, int64_t count, int blockSize, Element e,
                     MxRounding rounding);

/// "nearest" / "even".
const char *roundingName(MxRounding rounding);

} // namespace qeff::runtime::mx

#endif // QEFF_RUNTIME_HOST_NUMERICS_MXFORMAT_H
