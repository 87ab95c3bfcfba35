//===- WeightConversion.h - Element conversions for the exporter -*- C++
//-*-===//
//
// Part of qeff. The exporter streams checkpoint tensors into the ONNX external
// data file, converting the storage dtype to the initializer's dtype on the
// way (bf16 -> f32 exactly, f32 -> f16 with round-to-nearest-even and clipping
// to the fp16 range) and transposing 2-D tensors blockwise. These are pure
// functions on byte buffers: no MLIR, no ONNX, no allocation, so the unit tests
// in test/unit/Export check them directly. Source buffers may be unaligned
// (safetensors data is): every load and store goes through memcpy.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_LOWERING_EXPORT_WEIGHTCONVERSION_H
#define QEFF_LOWERING_EXPORT_WEIGHTCONVERSION_H

#include "frontend/HF/SafeTensors.h"

#include <cstddef>
#include <cstdint>

namespace qeff::exporter {

using hf::DType;

/// Largest finite fp16 value; conversions to f16 clip to +-kF16Max.
inline constexpr float kF16Max = 65504.0f;

/// bf16 bits -> f32, exact.
float bf16ToF32(uint16_t bits);
/// f32 -> bf16 bits, round to nearest even; NaN stays a (quiet) NaN.
uint16_t f32ToBF16(float value);
/// f16 bits -> f32, exact (subnormals, infinities and NaN included).
float f16ToF32(uint16_t bits);
/// f32 -> f16 bits, round to nearest even. A value whose magnitude exceeds
/// kF16Max (infinities included) becomes +-kF16Max and sets `clipped`; NaN
/// stays a NaN and is not counted.
uint16_t f32ToF16(float value, bool &clipped);

/// True when convertElements supports `from` -> `to`: identity for every
/// dtype, and any float dtype (F64, F32, F16, BF16) to any other.
bool canConvert(DType from, DType to);

/// Converts `count` elements of dtype `from` at `src` into dtype `to` at `dst`
/// (buffers must not overlap). Returns how many values were clipped to the
/// fp16 range (0 unless `to` is F16). Requires canConvert(from, to).
uint64_t convertElements(const std::byte *src, DType from, std::byte *dst,
                         DType to, size_t count);

/// Transposition without conversion: `src` is a row-major [rows, cols] tensor
/// of `elemSize`-byte elements; writes rows [rowBegin, rowEnd) of its
/// transpose (shape [cols, rows]) contiguously into `dst`, i.e.
/// dst[(j - rowBegin) * rows + i] = src[i * cols + j]. Cache-blocked.
void transposeRows(const std::byte *src, size_t elemSize, int64_t rows,
                   int64_t cols, int64_t rowBegin, int64_t rowEnd,
                   std::byte *dst);

/// transposeRows and convertElements in one pass: writes rows
/// [rowBegin, rowEnd) of the transpose of the row-major [rows, cols] tensor
/// `src` (dtype `from`) contiguously into `dst` as dtype `to`, i.e.
/// dst[(j - rowBegin) * rows + i] = convert(src[i * cols + j]). Returns how
/// many values were clipped to the fp16 range, as convertElements does.
/// Requires canConvert(from, to). Cache-blocked; one pass over the data
/// instead of two (the exporter's Linear weights, bf16 -> f32).
uint64_t transposeConvertRows(const std::byte *src, DType from, int64_t rows,
                              int64_t cols, int64_t rowBegin, int64_t rowEnd,
                              std::byte *dst, DType to);

/// The general transposition: writes the transpose of the tile rows
/// [rowBegin, rowEnd) x columns [colBegin, colEnd) of the row-major source
/// `src` (dtype `from`, `srcCols` columns) into `dst` (dtype `to`) whose rows
/// are `dstStride` elements apart:
/// dst[(j - colBegin) * dstStride + (i - rowBegin)] = convert(src[i * srcCols + j]).
/// transposeConvertRows is the tile of all source rows; the exporter also
/// writes a Linear weight strip by strip of source rows (each strip a set of
/// output columns), so that only a strip of the source is resident at a time.
/// On CPUs with AVX2 and F16C, bf16/f16/f32 -> f32/f16 use a vector kernel
/// (TransposeKernels.h) with the same results.
uint64_t transposeConvertTile(const std::byte *src, DType from,
                              int64_t srcCols, int64_t rowBegin,
                              int64_t rowEnd, int64_t colBegin, int64_t colEnd,
                              std::byte *dst, int64_t dstStride, DType to);

/// Whether transposeConvertTile may use its vector kernel (initially: when
/// the CPU has one). Tests switch it off to check the scalar code.
bool &vectorTransposeEnabled();

} // namespace qeff::exporter

#endif // QEFF_LOWERING_EXPORT_WEIGHTCONVERSION_H
