//===- GGUFFile.h - llama.cpp GGUF file reader ------------------*- C++ -*-===//
//
// Part of qeff. Reads a GGUF file (versions 2 and 3, little-endian) through a
// read-only mmap: the header, the typed metadata key/value pairs, the tensor
// infos and the aligned data section (`general.alignment`, default 32).
// Everything is validated before anything is handed out, against the file's
// own size: string and array lengths, counts, dimensions, tensor types
// (block sizes), offsets (aligned, inside the data section, not
// overlapping), duplicate keys and names. Errors name the file and the key
// or tensor; nothing throws, nothing reads past the mapping.
//
// Format: ggml-org/ggml docs/gguf.md; type ids and block sizes:
// ggml-org/llama.cpp@150f157acf0f ggml/include/ggml.h, gguf-py constants.py.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_GGUF_GGUFFILE_H
#define QEFF_FRONTEND_GGUF_GGUFFILE_H

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qeff::gguf {

/// A metadata value. Arrays hold their elements; nested arrays are allowed
/// (the format permits them) but nothing qeff reads uses one.
struct Value {
  enum class Type : uint32_t {
    U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, Bool = 7,
    String = 8, Array = 9, U64 = 10, I64 = 11, F64 = 12
  };
  Type type = Type::U8;
  /// Integers and bools (sign-extended for the signed types).
  int64_t i = 0;
  uint64_t u = 0;
  double f = 0;
  std::string s;
  Type elementType = Type::U8; ///< Array
  std::vector<Value> array;

  bool isInteger() const;
  bool isFloat() const { return type == Type::F32 || type == Type::F64; }
  /// A number as double (integers too).
  std::optional<double> asDouble() const;
  /// An integer in int64 range.
  std::optional<int64_t> asInt() const;
};

/// The name of a metadata type ("uint32", "string", ...).
std::string_view valueTypeName(Value::Type type);

/// One tensor: ggml dims (`ne[0]` the contiguous one) and where its blocks
/// are.
struct TensorInfo {
  std::string name;
  std::vector<int64_t> ne;
  uint32_t type = 0;
  uint64_t offset = 0; ///< relative to the data section
  uint64_t bytes = 0;
  const std::byte *data = nullptr;

  int64_t numElements() const;
};

class GGUFFile {
public:
  static absl::StatusOr<std::unique_ptr<GGUFFile>> open(const std::string &path);
  /// Parses an in-memory image (the fuzzer and tests); `bytes` must outlive
  /// the result.
  static absl::StatusOr<std::unique_ptr<GGUFFile>>
  parse(const std::byte *bytes, uint64_t size, std::string name);
  ~GGUFFile();
  GGUFFile(const GGUFFile &) = delete;
  GGUFFile &operator=(const GGUFFile &) = delete;

  const std::string &path() const { return path_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t fileSize() const { return size_; }

  const std::map<std::string, Value, std::less<>> &metadata() const {
    return metadata_;
  }
  /// nullptr when absent.
  const Value *find(std::string_view key) const;
  /// Typed getters: NotFound when absent (unless a default is given),
  /// InvalidArgument naming the key on a type mismatch.
  absl::StatusOr<std::string> getString(std::string_view key) const;
  absl::StatusOr<int64_t> getInt(std::string_view key) const;
  absl::StatusOr<int64_t> getInt(std::string_view key, int64_t dflt) const;
  absl::StatusOr<double> getFloat(std::string_view key) const;
  absl::StatusOr<double> getFloat(std::string_view key, double dflt) const;
  absl::StatusOr<bool> getBool(std::string_view key, bool dflt) const;
  /// An array of `type` (any integer type for ints).
  absl::StatusOr<const std::vector<Value> *>
  getArray(std::string_view key, Value::Type type) const;

  const std::vector<TensorInfo> &tensors() const { return tensors_; }
  const TensorInfo *findTensor(std::string_view name) const;

  /// InvalidArgument "<file>: metadata '<key>' <message>".
  absl::Status keyError(std::string_view key, std::string_view message) const;

private:
  GGUFFile() = default;
  absl::Status parseAll();

  std::string path_;
  const std::byte *base_ = nullptr;
  uint64_t size_ = 0;
  bool mapped_ = false;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  std::map<std::string, Value, std::less<>> metadata_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> byName_;
};

} // namespace qeff::gguf

#endif // QEFF_FRONTEND_GGUF_GGUFFILE_H
