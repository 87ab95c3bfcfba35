//===- GGMLTypes.h - ggml tensor types and their dequantization -*- C++ -*-===//
//
// Part of qeff. The ggml tensor types a GGUF file may hold (id, name, block
// size, bytes per block) and exact f32 decoders for F32, F16, BF16, Q4_0,
// Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL and IQ4_XS.
// Each decoder is gguf-py's numpy dequantizer (ggml-org/llama.cpp@
// 150f157acf0f gguf-py/gguf/quants.py, the same arithmetic as
// ggml-quants.c dequantize_row_*) restated per block with the same f32
// operations in the same order, so results match it bit for bit. The other
// types (IQ1/IQ2/IQ3, TQ, Q8_K, MXFP4, integers) are known by name and size
// so that files holding them parse; importing one is refused by name.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_GGUF_GGMLTYPES_H
#define QEFF_FRONTEND_GGUF_GGMLTYPES_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace qeff::gguf {

struct GGMLType {
  uint32_t id;
  const char *name;
  int64_t blockSize; ///< elements per block
  int64_t typeSize;  ///< bytes per block
  bool decodable;    ///< qeff dequantizes it
};

/// nullptr for an id ggml does not define.
const GGMLType *ggmlType(uint32_t id);
/// "Q4_K", or "type 77" for an unknown id.
std::string ggmlTypeName(uint32_t id);

enum : uint32_t {
  kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ4_1 = 3, kQ5_0 = 6, kQ5_1 = 7, kQ8_0 = 8,
  kQ2_K = 10, kQ3_K = 11, kQ4_K = 12, kQ5_K = 13, kQ6_K = 14,
  kIQ4_NL = 20, kIQ4_XS = 23, kBF16 = 30,
};

/// Decodes one block of a decodable type (blockSize values; one value for
/// F32/F16/BF16) into `out`.
void decodeBlock(uint32_t type, const std::byte *block, float *out);

} // namespace qeff::gguf

#endif // QEFF_FRONTEND_GGUF_GGMLTYPES_H
