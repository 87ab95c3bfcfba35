//===- TransposeKernels.h - Vector kernels of the exporter -------*- C++ -*-===//
//
// Part of qeff. Internal to lowering/Export: the AVX2 + F16C kernel behind
// transposeConvertTile (WeightConversion.h) for the dtype pairs an export
// spends its time on (bf16, f16 or f32 sources; f32 or f16 outputs), and the
// scalar code it falls back to for the tile's ragged edges. Both give the
// same bits (unit-tested against each other on every special value).
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_LOWERING_EXPORT_TRANSPOSEKERNELS_H
#define QEFF_LOWERING_EXPORT_TRANSPOSEKERNELS_H

#include "lowering/Export/WeightConversion.h"

namespace qeff::exporter::detail {

/// The portable transposeConvertTile.
uint64_t transposeConvertTileScalar(const std::byte *src, DType from,
                                    int64_t srcCols, int64_t rowBegin,
                                    int64_t rowEnd, int64_t colBegin,
                                    int64_t colEnd, std::byte *dst,
                                    int64_t dstStride, DType to);

/// True when this CPU runs the vector kernel (AVX2 and F16C).
bool cpuHasTransposeKernel();

/// The vector transposeConvertTile for from in {BF16, F16, F32} and to in
/// {F32, F16} (but not f16 -> f16, a plain copy); returns false, writing
/// nothing, for any other pair. Requires
/// cpuHasTransposeKernel().
bool transposeConvertTileAVX2(const std::byte *src, DType from,
                              int64_t srcCols, int64_t rowBegin,
                              int64_t rowEnd, int64_t colBegin, int64_t colEnd,
                              std::byte *dst, int64_t dstStride, DType to,
                              uint64_t &clipped);

} // namespace qeff::exporter::detail

#endif // QEFF_LOWERING_EXPORT_TRANSPOSEKERNELS_H
