//===- GGMLSource.h - a GGUF tensor as a dense source -----------*- C++ -*-===//
//
// Part of qeff. A ggml tensor of a mapped GGUF file presented as the dense
// f32 matrix of its Hugging Face twin: the file's rows of ne[0] values
// decoded block by block (GGMLTypes.h), optionally with the rows permuted
// (the llama Q/K un-permute, Falcon's fused QKV order), transposed (GPT-2's
// Conv1D weights) or shifted by a constant (Gemma's `1 + w` norms).
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_GGUF_GGMLSOURCE_H
#define QEFF_FRONTEND_GGUF_GGMLSOURCE_H

#include "frontend/GGUF/GGUFFile.h"
#include "frontend/HF/Checkpoint.h"

#include <memory>
#include <vector>

namespace qeff::gguf {

struct GGMLSourceSpec {
  const TensorInfo *tensor = nullptr; ///< decodable type (checked by caller)
  /// Not empty: dense row r is file row rowMap[r] (before transposing).
  std::vector<int64_t> rowMap;
  /// The dense matrix is the transpose of the file's [rows, ne[0]].
  bool transpose = false;
  /// Added to every value after decoding (f32); 0 leaves them exact.
  float offset = 0.0f;
};

std::shared_ptr<const hf::DenseSource> makeGGMLSource(GGMLSourceSpec spec);

} // namespace qeff::gguf

#endif // QEFF_FRONTEND_GGUF_GGMLSOURCE_H
