//===- ExternalData.h - Writing the ONNX external data file ------*- C++ -*-===//
//
// Part of qeff. Writes the tensors of an export into one external data file,
// converting dtypes and transposing Linear weights on the way, in parallel,
// with the resident set bounded by a few chunks whatever the model's size.
//
// The file is laid out first (every tensor at an `alignment`-byte offset, the
// gaps zero) and then produced front to back: the converting threads fill
// staging buffers that a writer thread writes out while the next ones are
// filled. Writes bypass the page cache (O_DIRECT) where the file system
// allows it: the export writes up to twice the checkpoint's bytes (bf16 ->
// f32), and copying them into fresh page-cache pages costs more than the
// conversion itself; it also keeps a large export from evicting everything
// else from memory. Elsewhere the same buffers go through the page cache.
// The output bytes depend neither on the number of threads nor on the mode.
//
// Resident memory: the staging buffers (a few times the chunk size) plus the
// source pages being converted: they are dropped as soon as they are
// converted. Each chunk of a transposed tensor reads a few columns of every
// source row, so a large one (over `stripSourceAbove`) is swept in strips of
// source rows, each dropped behind the sweep (its pages are mapped again from
// the page cache by the next chunk); a smaller one is dropped at its end.
// The sweep costs a page fault per few source rows per chunk: at 64 MiB it
// took the 7B shape's MLP weights (90 MB of bf16, 22 chunks each) and cost
// 3.4x the CPU time of the whole export (47 s against 14 s of user time),
// so only sources past 96 MiB (LM heads, embeddings) are swept.
//
// Plain C++ (no MLIR, no ONNX): the unit tests in test/unit/Export drive it
// directly.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_LOWERING_EXPORT_EXTERNALDATA_H
#define QEFF_LOWERING_EXPORT_EXTERNALDATA_H

#include "frontend/HF/Checkpoint.h"
#include "frontend/HF/SafeTensors.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace qeff::exporter {

using hf::DType;

/// One tensor of the data file and how to produce its bytes.
struct DataTensor {
  /// Source elements, row-major, dtype `from` (may be unaligned).
  const std::byte *src = nullptr;
  /// Instead of `src`: a decoder of the [rows, cols] f32 matrix (a
  /// quantized or GGUF tensor; `from` is F32, `rows`/`cols` are set whether
  /// or not it is transposed). Decoded tile by tile into the staging
  /// buffers; its packed pages are dropped once the tensor is written.
  const hf::DenseSource *decoded = nullptr;
  DType from = DType::F32;
  /// Dtype in the file; canConvert(from, to) must hold.
  DType to = DType::F32;
  int64_t numElements = 0;
  /// When set, the source is [rows, cols] and the file holds its
  /// [cols, rows] transpose.
  bool transpose = false;
  int64_t rows = 0, cols = 0;
  /// When not empty: the tensor is the [rows, cols] matrix whose row r is
  /// row sourceRows[r] of the source (a row selection, rows may repeat);
  /// `rows`, `cols` and `numElements` describe the selected matrix, and
  /// `transpose` applies to it. Used for replicated KV heads.
  std::vector<int64_t> sourceRows;
  /// A decoded source's own width (DenseSource: [shape[0], the rest]) when
  /// a row selection reads rows of a stacked tensor's leading two
  /// dimensions ([E, R, C] as [E * R, C]); 0: `cols`.
  int64_t decodedCols = 0;
  /// The source is a read-only file mapping: its pages are dropped from the
  /// process (madvise DONTNEED) as soon as they have been converted.
  bool releaseSource = false;

  uint64_t fileBytes() const {
    return static_cast<uint64_t>(numElements) * hf::dtypeSize(to);
  }
};

enum class DataWriteMode {
  /// Direct where the file system supports it, else Buffered.
  Auto,
  /// O_DIRECT writes of block-aligned buffers (falls back to Buffered if the
  /// file system refuses them).
  Direct,
  /// Ordinary writes through the page cache.
  Buffered,
};

struct DataFileOptions {
  /// Every tensor starts at a multiple of this (a power of two, at most
  /// 4096).
  uint64_t alignment = 64;
  /// Converting threads; 0: the hardware's, at most 8. The writer is one
  /// more thread, mostly waiting for the disk.
  unsigned threads = 0;
  /// A chunk converts about this many output bytes (at least one transposed
  /// row); staging buffers are written out in blocks of this size.
  size_t chunkBytes = 8u << 20;
  DataWriteMode mode = DataWriteMode::Auto;
  /// Transposed tensors with a releasable source larger than this are read
  /// in strips of about `stripBytes` of source rows.
  size_t stripSourceAbove = 96u << 20;
  size_t stripBytes = 4u << 20;
  /// A reader thread asks the kernel to read the sources this many bytes
  /// ahead of the converter (madvise WILLNEED), so a checkpoint that is not
  /// in the page cache is read sequentially instead of page fault by page
  /// fault inside the transposition; at most an eighth of the machine's
  /// memory (the pages wait in the page cache, not in this process). 0 turns
  /// it off. 2 GiB took a cold 7B export from ~36 to ~31 s (warm: ~29 s;
  /// docs/performance.md).
  size_t readAheadBytes = size_t(2) << 30;
  /// Called on the calling thread after each tensor is converted, in order,
  /// with its index.
  std::function<void(size_t tensor)> progress;
  /// Polled on the calling thread after each tensor; true stops the write
  /// (the result's error is "cancelled").
  std::function<bool()> cancelled;
};

struct DataFileResult {
  /// Offset of each tensor in the file.
  std::vector<uint64_t> offsets;
  uint64_t fileBytes = 0;
  /// Values clipped to +-65504 by conversions to fp16.
  uint64_t clipped = 0;
  /// How the file was written (Direct or Buffered).
  DataWriteMode mode = DataWriteMode::Buffered;
  /// Set on failure: what went wrong, naming the file; `failedTensor` is the
  /// tensor being written then (or SIZE_MAX for file-level errors). The
  /// partial file is left for the caller's temporary directory to remove.
  std::string error;
  size_t failedTensor = SIZE_MAX;

  explicit operator bool() const { return error.empty(); }
};

/// The offsets `tensors` get in the file and its total size.
std::vector<uint64_t> layoutDataFile(const std::vector<DataTensor> &tensors,
                                     uint64_t alignment, uint64_t &fileBytes);

/// Creates `path` (which must not exist) and writes `tensors` into it as
/// described above.
DataFileResult writeDataFile(const std::string &path,
                             const std::vector<DataTensor> &tensors,
                             const DataFileOptions &options);

} // namespace qeff::exporter

#endif // QEFF_LOWERING_EXPORT_EXTERNALDATA_H
