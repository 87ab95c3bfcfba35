//===- Decoders.h - quantized Linear weights as dense sources ---*- C++ -*-===//
//
// Part of qeff. One DenseSource per packed layout, each producing the f32
// weight `[out, in]` of a quantized Linear exactly as the library's own
// dequantizer does in f32: `float(q - z) * float(scale)`, one rounding (for
// 4-bit codes and f16/bf16 scales the product is exact). The layouts, with
// the library and commit each follows:
//
//  AWQ GEMM (casper-hansen/AutoAWQ@88e4c76b2075, awq/utils/packing_utils.py):
//    qweight I32 [in, out/8] packed along out; nibble i of word c holds
//    output 8c + AWQ_ORDER[i], AWQ_ORDER = [0,2,4,6,1,3,5,7]; qzeros I32
//    [in/g, out/8] the same way, stored as is; scales [in/g, out].
//  GPTQ (ModelCloud/GPTQModel@f4c327a17eb3, nn_modules/qlinear/__init__.py
//    pack_original / dequantize_weight): qweight I32 [in*b/32, out] packed
//    along in (bits b*j of row r = input (32/b)*r + j); qzeros I32
//    [groups, out*b/32] packed along out; scales [groups, out]; g_idx [in]
//    (absent: i / g). Checkpoint format v1 ("gptq") stores zero - 1: the
//    word gets 0x11111111 (4 bits) / 0x01010101 (8 bits) added back,
//    wrapping as the library's convert_gptq_v1_to_v2_format does.
//  compressed-tensors (neuralmagic/compressed-tensors@52792be02ec0,
//    compressors/quantized_compressors/pack_quantized.py, utils/helpers):
//    pack-quantized weight_packed I32 [out, ceil(in*b/32)] packed along in
//    (element 8c+i in bits 4i of column c) as value + 2^(b-1);
//    weight_zero_point packed along out (dim 0) the same way; int- and
//    naive-quantized store the integers (I8) and float-quantized F8_E4M3 as
//    `weight`; weight_scale [out/bm, in/bn] by strategy (tensor, channel,
//    group, block), weight_g_idx [in] with actorder.
//  FP8 blocks (quant_method fp8; transformers FineGrainedFP8, DeepSeek-V3):
//    weight F8_E4M3 [out, in], weight_scale_inv [ceil(out/bm), ceil(in/bn)]
//    which multiplies despite its name.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_QUANT_DECODERS_H
#define QEFF_FRONTEND_QUANT_DECODERS_H

#include "frontend/HF/Checkpoint.h"

#include <memory>
#include <string>
#include <vector>

namespace qeff::quant {

/// AutoAWQ's pack order and its inverse.
inline constexpr int kAwqOrder[8] = {0, 2, 4, 6, 1, 3, 5, 7};
inline constexpr int kAwqReverseOrder[8] = {0, 4, 1, 5, 2, 6, 3, 7};

/// AWQ GEMM, 4 bits. `groupSize` divides `in`.
struct AwqParts {
  hf::TensorView qweight, qzeros, scales;
  int64_t out = 0, in = 0, groupSize = 0;
};
std::shared_ptr<const hf::DenseSource> makeAwqSource(const AwqParts &parts);

/// GPTQ, 4 or 8 bits. `groupIndex` holds the group of every input.
struct GptqParts {
  hf::TensorView qweight, qzeros, scales;
  int64_t out = 0, in = 0, groups = 0;
  int bits = 4;
  bool v1 = true;
  std::vector<int32_t> groupIndex;
};
std::shared_ptr<const hf::DenseSource> makeGptqSource(GptqParts parts);

/// Integer or FP8 codes with scales on a grid of cells (compressed-tensors,
/// fp8): element (o, i) belongs to cell (o / blockRows, column group of i),
/// the column group being i / blockCols or groupIndex[i].
struct ScaledParts {
  enum class Codes {
    PackedInt, ///< `codes` I32 [out, ceil(in*bits/32)], value + 2^(bits-1)
    Elements,  ///< `codes` [out, in] of its dtype (I8, U8, F8_E4M3, F8_E5M2)
  } codesKind = Codes::Elements;
  hf::TensorView codes;
  int bits = 8;
  hf::TensorView scale; ///< [cellRows, cellCols] (any rank of that size)
  int64_t cellRows = 1, cellCols = 1;
  enum class Zero {
    None,
    PackedRows, ///< I32 [ceil(cellRows*bits/32), cellCols], value + 2^(b-1)
    Elements,   ///< [cellRows, cellCols] integers
  } zeroKind = Zero::None;
  hf::TensorView zero;
  int64_t out = 0, in = 0;
  int64_t blockRows = 1, blockCols = 1;
  std::vector<int32_t> groupIndex; ///< not empty: column groups of inputs
  std::string format;              ///< for summaries ("compressed-tensors int4")
};
std::shared_ptr<const hf::DenseSource> makeScaledSource(ScaledParts parts);

} // namespace qeff::quant

#endif // QEFF_FRONTEND_QUANT_DECODERS_H
