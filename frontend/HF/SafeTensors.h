//===- SafeTensors.h - Memory-mapped safetensors reader/writer --*- C++ -*-===//
//
// Reads one .safetensors file (8-byte little-endian header length, a JSON
// header, then the data section) through a read-only mmap and hands out
// zero-copy views of its tensors. Everything in the header is validated before
// any view exists: a view's bytes always lie inside the mapping. Errors are
// absl::Status values whose message names the file and the tensor or field;
// nothing throws (this code is linked into -fno-exceptions MLIR tools).
//
// Format: https://github.com/huggingface/safetensors#format
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_HF_SAFETENSORS_H
#define QEFF_FRONTEND_HF_SAFETENSORS_H

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace qeff::hf {

/// Element types of the safetensors format (the subset qeff handles).
enum class DType {
  F64,
  F32,
  F16,
  BF16,
  I64,
  I32,
  I16,
  I8,
  U64,
  U32,
  U16,
  U8,
  Bool,
  /// 8-bit floats (OCP): E4M3FN (max 448, no infinities), E5M2 (IEEE-like),
  /// E8M0 (exponent only: 2^(e-127)). They hold quantized weights and their
  /// scales; frontend/Quant decodes them (Fp8.h), the importer never takes
  /// one as a weight.
  F8_E4M3,
  F8_E5M2,
  F8_E8M0
};

/// The format's spelling ("F32", "BF16", "BOOL", ...).
std::string_view dtypeName(DType dtype);
/// Parses the format's spelling; std::nullopt for anything unknown.
std::optional<DType> parseDType(std::string_view name);
/// Size of one element in bytes.
size_t dtypeSize(DType dtype);
bool isFloatingPoint(DType dtype);

/// Where a tensor lives inside its file. Offsets are relative to the start of
/// the data section, as in the header; `fileOffset()` is absolute.
struct TensorInfo {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  uint64_t begin = 0; ///< first byte, relative to the data section
  uint64_t end = 0;   ///< one past the last byte, relative to the data section

  uint64_t byteSize() const { return end - begin; }
  /// Product of the dims (1 for a scalar). Cannot overflow: validated on read.
  int64_t numElements() const;
};

class DenseSource;

/// A zero-copy view of a tensor's bytes inside a mapped file. Valid as long as
/// the owning SafeTensorsFile (or Checkpoint) lives. The data pointer is NOT
/// aligned in general (the header length is arbitrary): read with memcpy.
/// A tensor a Checkpoint decodes (quantized groups, GGUF blocks) has no bytes
/// of its own: `data` is null and `source` produces its values.
struct TensorView {
  const TensorInfo *info = nullptr;
  const std::byte *data = nullptr;
  const DenseSource *source = nullptr;

  std::string_view name() const { return info->name; }
  DType dtype() const { return info->dtype; }
  const std::vector<int64_t> &shape() const { return info->shape; }
  size_t byteSize() const { return info->byteSize(); }
  int64_t numElements() const { return info->numElements(); }
};

/// One opened, validated, read-only mapped .safetensors file.
class SafeTensorsFile {
public:
  /// Maps and validates `path`. On error the message starts with the path.
  static absl::StatusOr<std::unique_ptr<SafeTensorsFile>>
  open(const std::string &path);

  ~SafeTensorsFile();
  SafeTensorsFile(const SafeTensorsFile &) = delete;
  SafeTensorsFile &operator=(const SafeTensorsFile &) = delete;

  const std::string &path() const { return path_; }
  uint64_t fileSize() const { return fileSize_; }
  /// Absolute file offset of the data section (8 + header length).
  uint64_t dataOffset() const { return dataOffset_; }

  /// Tensors in data-section order (ascending offsets).
  const std::vector<TensorInfo> &tensors() const { return tensors_; }
  /// The `__metadata__` string map (empty when absent).
  const std::map<std::string, std::string> &metadata() const {
    return metadata_;
  }

  bool contains(std::string_view name) const { return find(name) != nullptr; }
  /// nullptr when the file has no tensor of that name.
  const TensorInfo *find(std::string_view name) const;
  /// NotFound error naming the file and the tensor when absent.
  absl::StatusOr<TensorView> get(std::string_view name) const;
  /// View of a tensor of this file (`info` must come from `tensors()`/`find`).
  TensorView view(const TensorInfo &info) const;

private:
  SafeTensorsFile() = default;

  std::string path_;
  const std::byte *base_ = nullptr; ///< start of the mapping
  uint64_t fileSize_ = 0;
  uint64_t dataOffset_ = 0;
  std::vector<TensorInfo> tensors_;
  std::unordered_map<std::string_view, size_t> byName_;
  std::map<std::string, std::string> metadata_;
};

/// Validates a safetensors header (the JSON text between the length prefix and
/// the data section) against a data section of `dataSize` bytes. `fileName` is
/// used in messages only. Exposed for tests and tools that read headers alone.
absl::Status
parseSafeTensorsHeader(std::string_view headerText, uint64_t dataSize,
                       std::string_view fileName,
                       std::vector<TensorInfo> &tensors,
                       std::map<std::string, std::string> &metadata);

/// Upper bound on the header length accepted by the reader (as in the
/// reference implementation).
inline constexpr uint64_t kMaxSafeTensorsHeaderSize = 100'000'000;

/// A tensor to write: the bytes are copied from `data` (byteSize bytes, which
/// must equal numElements(shape) * dtypeSize(dtype)).
struct TensorToWrite {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  const void *data = nullptr;
  size_t byteSize = 0;
};

/// Writes a .safetensors file atomically (a temporary file in the same
/// directory, then rename). Tensors are laid out in name order; the header is
/// padded with spaces to a multiple of 8 bytes as the reference writer does.
absl::Status
writeSafeTensors(const std::string &path,
                 const std::vector<TensorToWrite> &tensors,
                 const std::map<std::string, std::string> &metadata = {});

} // namespace qeff::hf

#endif // QEFF_FRONTEND_HF_SAFETENSORS_H
