//===- GGUFFile.cpp - llama.cpp GGUF file reader --------------------------===//
//
// Part of qeff. See GGUFFile.h.
//
//===----------------------------------------------------------------------===//

#include "frontend/GGUF/GGUFFile.h"

#include "frontend/GGUF/GGMLTypes.h"
#include "support/SafeFile.h"

#include "absl/strings/str_cat.h"
#include "frontend/Quant/QuantUtil.h"
#include "absl/strings/str_join.h"

#include <algorithm>
#include <cerrno>
#include <functional>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

namespace qeff::gguf {

using quant::cat;

namespace {
constexpr uint32_t kMagic = 0x46554747; // "GGUF" little-endian
/// ggml's GGML_MAX_DIMS.
constexpr uint32_t kMaxDims = 4;
/// Arrays nest at most this deep (the format allows any depth; nothing
/// real uses more than one level, and a bound keeps the parser's stack small).
constexpr int kMaxNesting = 4;
/// Metadata values in all (array elements included): the largest real
/// vocabularies hold about 600k (tokens, scores, types, merges); the bound
/// keeps a small hostile file from claiming gigabytes of parsed values.
constexpr uint64_t kMaxValues = uint64_t(1) << 21;
} // namespace

bool Value::isInteger() const {
  switch (type) {
  case Type::U8: case Type::I8: case Type::U16: case Type::I16:
  case Type::U32: case Type::I32: case Type::U64: case Type::I64:
    return true;
  default:
    return false;
  }
}

std::optional<double> Value::asDouble() const {
  if (isFloat())
    return f;
  if (type == Type::U64)
    return double(u);
  if (isInteger())
    return double(i);
  return std::nullopt;
}

std::optional<int64_t> Value::asInt() const {
  if (type == Type::U64)
    return u <= uint64_t(INT64_MAX) ? std::optional<int64_t>(int64_t(u)) : std::nullopt;
  if (isInteger())
    return i;
  return std::nullopt;
}

std::string_view valueTypeName(Value::Type type) {
  static const char *kNames[] = {"uint8",  "int8",   "uint16", "int16", "uint32",
                                 "int32",  "float32", "bool",  "string", "array",
                                 "uint64", "int64",  "float64"};
  auto i = static_cast<uint32_t>(type);
  return i < 13 ? kNames[i] : "unknown";
}

int64_t TensorInfo::numElements() const {
  int64_t n = 1;
  for (int64_t d : ne)
    n *= d;
  return n;
}

namespace {
/// A bounds-checked cursor over the file image.
class Cursor {
public:
  Cursor(const std::byte *base, uint64_t size) : base_(base), size_(size) {}
  uint64_t pos() const { return pos_; }
  uint64_t remaining() const { return size_ - pos_; }
  bool read(void *out, uint64_t n) {
    if (n > remaining())
      return false;
    std::memcpy(out, base_ + pos_, n);
    pos_ += n;
    return true;
  }
  template <typename T> bool read(T &out) { return read(&out, sizeof(T)); }
  bool readString(std::string &out) {
    uint64_t n;
    if (!read(n) || n > remaining())
      return false;
    out.assign(reinterpret_cast<const char *>(base_ + pos_), n);
    pos_ += n;
    return true;
  }

private:
  const std::byte *base_;
  uint64_t size_;
  uint64_t pos_ = 0;
};

/// Smallest encoding of a value of `type` (bounds an array's count).
uint64_t minSize(Value::Type t) {
  switch (t) {
  case Value::Type::U8: case Value::Type::I8: case Value::Type::Bool:
    return 1;
  case Value::Type::U16: case Value::Type::I16:
    return 2;
  case Value::Type::U32: case Value::Type::I32: case Value::Type::F32:
    return 4;
  case Value::Type::String: case Value::Type::U64: case Value::Type::I64:
  case Value::Type::F64:
    return 8;
  case Value::Type::Array:
    return 12;
  }
  return 1;
}
} // namespace

GGUFFile::~GGUFFile() {
  if (mapped_ && base_)
    ::munmap(const_cast<std::byte *>(base_), size_);
}

absl::StatusOr<std::unique_ptr<GGUFFile>> GGUFFile::open(const std::string &path) {
  uint64_t size = 0;
  std::string error;
  int fd = support::openRegularFile(path, size, error);
  if (fd < 0)
    return error.find("not a regular file") != std::string::npos
               ? absl::InvalidArgumentError(error)
               : absl::NotFoundError(error);
  if (size < 24) {
    ::close(fd);
    return absl::InvalidArgumentError(
        cat(path, ": file is truncated: ", size,
                     " bytes, a GGUF file has at least the 24-byte header"));
  }
  void *mapping = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  int err = errno;
  ::close(fd);
  if (mapping == MAP_FAILED)
    return absl::InternalError(cat(path, ": mmap failed: ", std::strerror(err)));
  std::unique_ptr<GGUFFile> file(new GGUFFile());
  file->path_ = path;
  file->base_ = static_cast<const std::byte *>(mapping);
  file->size_ = size;
  file->mapped_ = true;
  if (absl::Status st = file->parseAll(); !st.ok())
    return st;
  return file;
}

absl::StatusOr<std::unique_ptr<GGUFFile>>
GGUFFile::parse(const std::byte *bytes, uint64_t size, std::string name) {
  std::unique_ptr<GGUFFile> file(new GGUFFile());
  file->path_ = std::move(name);
  file->base_ = bytes;
  file->size_ = size;
  if (absl::Status st = file->parseAll(); !st.ok())
    return st;
  return file;
}

absl::Status GGUFFile::parseAll() {
  auto fail = [&](auto &&...parts) {
    return absl::InvalidArgumentError(cat(path_, ": ", parts...));
  };
  Cursor c(base_, size_);
  uint32_t magic = 0;
  uint64_t numTensors = 0, numKV = 0;
  if (!c.read(magic) || magic != kMagic)
    return fail("not a GGUF file (the magic is not 'GGUF')");
  if (!c.read(version_))
    return fail("file is truncated in the header");
  if (version_ == 1)
    return fail("GGUF version 1 is not supported (versions 2 and 3 are)");
  if (version_ != 2 && version_ != 3) {
    if (version_ > 0xFFFF)
      return fail("GGUF version ", version_, " looks byte-swapped: big-endian "
                  "GGUF files are not supported");
    return fail("GGUF version ", version_, " is not supported (versions 2 and 3 are)");
  }
  if (!c.read(numTensors) || !c.read(numKV))
    return fail("file is truncated in the header");
  // Each tensor info takes at least 8+4+8+4+8 bytes, each pair 8+4+1.
  if (numTensors > c.remaining() / 32)
    return fail("header claims ", numTensors, " tensors, more than the ", size_,
                "-byte file can describe");
  if (numKV > c.remaining() / 13)
    return fail("header claims ", numKV, " metadata pairs, more than the ", size_,
                "-byte file can hold");

  // Values, recursively for arrays.
  uint64_t totalValues = 0;
  std::function<absl::Status(Value::Type, Value &, const std::string &, int)> readValue =
      [&](Value::Type type, Value &v, const std::string &key, int depth) -> absl::Status {
    v.type = type;
    auto truncated = [&] { return fail("metadata '", key, "': value runs past the end of the file"); };
    switch (type) {
    case Value::Type::U8: { uint8_t x; if (!c.read(x)) return truncated(); v.i = x; v.u = x; break; }
    case Value::Type::I8: { int8_t x; if (!c.read(x)) return truncated(); v.i = x; v.u = uint64_t(v.i); break; }
    case Value::Type::U16: { uint16_t x; if (!c.read(x)) return truncated(); v.i = x; v.u = x; break; }
    case Value::Type::I16: { int16_t x; if (!c.read(x)) return truncated(); v.i = x; v.u = uint64_t(v.i); break; }
    case Value::Type::U32: { uint32_t x; if (!c.read(x)) return truncated(); v.i = x; v.u = x; break; }
    case Value::Type::I32: { int32_t x; if (!c.read(x)) return truncated(); v.i = x; v.u = uint64_t(v.i); break; }
    case Value::Type::U64: { uint64_t x; if (!c.read(x)) return truncated(); v.u = x; v.i = int64_t(x); break; }
    case Value::Type::I64: { int64_t x; if (!c.read(x)) return truncated(); v.i = x; v.u = uint64_t(x); break; }
    case Value::Type::F32: { float x; if (!c.read(x)) return truncated(); v.f = x; break; }
    case Value::Type::F64: { double x; if (!c.read(x)) return truncated(); v.f = x; break; }
    case Value::Type::Bool: {
      uint8_t x;
      if (!c.read(x)) return truncated();
      if (x > 1) return fail("metadata '", key, "': bool value ", int(x), " is neither 0 nor 1");
      v.i = x; v.u = x;
      break;
    }
    case Value::Type::String:
      if (!c.readString(v.s))
        return fail("metadata '", key, "': string length runs past the end of the file");
      break;
    case Value::Type::Array: {
      uint32_t et;
      uint64_t count;
      if (!c.read(et) || !c.read(count)) return truncated();
      if (et > 12)
        return fail("metadata '", key, "': array of unknown value type ", et);
      if (depth >= kMaxNesting)
        return fail("metadata '", key, "': arrays nested deeper than ", kMaxNesting);
      v.elementType = static_cast<Value::Type>(et);
      totalValues += count;
      if (totalValues > kMaxValues)
        return fail("metadata '", key, "': the metadata holds more than ", kMaxValues,
                    " values in all");
      if (count > c.remaining() / minSize(v.elementType))
        return fail("metadata '", key, "': array of ", count, " ",
                    valueTypeName(v.elementType), " values runs past the end of the file");
      v.array.resize(count);
      for (uint64_t k = 0; k < count; ++k)
        if (absl::Status st = readValue(v.elementType, v.array[k], key, depth + 1); !st.ok())
          return st;
      break;
    }
    default:
      return fail("metadata '", key, "': unknown value type ", uint32_t(type));
    }
    return absl::OkStatus();
  };

  for (uint64_t k = 0; k < numKV; ++k) {
    std::string key;
    uint32_t type;
    if (!c.readString(key))
      return fail("metadata pair ", k, ": key length runs past the end of the file");
    if (!c.read(type))
      return fail("metadata '", key, "': file is truncated");
    if (type > 12)
      return fail("metadata '", key, "': unknown value type ", type);
    if (metadata_.count(key))
      return fail("metadata '", key, "' appears twice");
    Value v;
    if (absl::Status st = readValue(static_cast<Value::Type>(type), v, key, 0); !st.ok())
      return st;
    metadata_.emplace(std::move(key), std::move(v));
  }
  if (const Value *a = find("general.alignment")) {
    std::optional<int64_t> al = a->asInt();
    if (!al || *al <= 0 || *al > (1 << 20) || (*al & (*al - 1)) != 0)
      return keyError("general.alignment", "must be a power of two up to 2^20");
    alignment_ = uint64_t(*al);
  }

  tensors_.resize(numTensors);
  for (uint64_t k = 0; k < numTensors; ++k) {
    TensorInfo &t = tensors_[k];
    uint32_t nDims;
    if (!c.readString(t.name))
      return fail("tensor info ", k, ": name length runs past the end of the file");
    if (!c.read(nDims))
      return fail("tensor '", t.name, "': file is truncated");
    if (nDims == 0 || nDims > kMaxDims)
      return fail("tensor '", t.name, "': ", nDims, " dimensions (1 to ", kMaxDims, " allowed)");
    t.ne.resize(nDims);
    uint64_t elements = 1;
    for (uint32_t d = 0; d < nDims; ++d) {
      uint64_t n;
      if (!c.read(n))
        return fail("tensor '", t.name, "': file is truncated");
      if (n == 0 || n > (uint64_t(1) << 40) || __builtin_mul_overflow(elements, n, &elements) ||
          elements > (uint64_t(1) << 48))
        return fail("tensor '", t.name, "': dimension ", d, " is ", n,
                    " (each must be positive, the product below 2^48)");
      t.ne[d] = int64_t(n);
    }
    if (!c.read(t.type) || !c.read(t.offset))
      return fail("tensor '", t.name, "': file is truncated");
    const GGMLType *type = ggmlType(t.type);
    if (!type)
      return fail("tensor '", t.name, "': unknown ggml type ", t.type);
    if (t.ne[0] % type->blockSize != 0)
      return fail("tensor '", t.name, "': its rows of ", t.ne[0], " values are not a "
                  "multiple of the ", type->name, " block of ", type->blockSize);
    t.bytes = elements / uint64_t(type->blockSize) * uint64_t(type->typeSize);
    if (!byName_.emplace(t.name, k).second)
      return fail("tensor '", t.name, "' appears twice");
  }
  uint64_t dataStart = (c.pos() + alignment_ - 1) / alignment_ * alignment_;
  // A file without tensors (a vocabulary) need not pad to a data section.
  if (tensors_.empty())
    return absl::OkStatus();
  if (dataStart > size_)
    return fail("file is truncated before the data section (", size_, " bytes)");
  uint64_t dataSize = size_ - dataStart;
  // Tensors must lie inside the data section, aligned, and not overlap.
  std::vector<const TensorInfo *> order;
  for (TensorInfo &t : tensors_) {
    if (t.offset % alignment_ != 0)
      return fail("tensor '", t.name, "': offset ", t.offset, " is not a multiple of the alignment ",
                  alignment_);
    if (t.offset > dataSize || t.bytes > dataSize - t.offset)
      return fail("tensor '", t.name, "': bytes [", t.offset, ", ", t.offset + t.bytes,
                  ") of the data section run past the end of the file (the data section has ",
                  dataSize, " bytes; the file is truncated or the offset is wrong)");
    t.data = base_ + dataStart + t.offset;
    order.push_back(&t);
  }
  std::sort(order.begin(), order.end(),
            [](const TensorInfo *a, const TensorInfo *b) { return a->offset < b->offset; });
  for (size_t k = 1; k < order.size(); ++k)
    if (order[k]->offset < order[k - 1]->offset + order[k - 1]->bytes)
      return fail("tensors '", order[k - 1]->name, "' and '", order[k]->name, "' overlap");
  return absl::OkStatus();
}

const Value *GGUFFile::find(std::string_view key) const {
  auto it = metadata_.find(key);
  return it == metadata_.end() ? nullptr : &it->second;
}

const TensorInfo *GGUFFile::findTensor(std::string_view name) const {
  auto it = byName_.find(name);
  return it == byName_.end() ? nullptr : &tensors_[it->second];
}

absl::Status GGUFFile::keyError(std::string_view key, std::string_view message) const {
  return absl::InvalidArgumentError(cat(path_, ": metadata '", key, "' ", message));
}

absl::StatusOr<std::string> GGUFFile::getString(std::string_view key) const {
  const Value *v = find(key);
  if (!v)
    return absl::NotFoundError(cat(path_, ": metadata '", key, "' is missing"));
  if (v->type != Value::Type::String)
    return keyError(key, cat("must be a string, got ", valueTypeName(v->type)));
  return v->s;
}

absl::StatusOr<int64_t> GGUFFile::getInt(std::string_view key) const {
  const Value *v = find(key);
  if (!v)
    return absl::NotFoundError(cat(path_, ": metadata '", key, "' is missing"));
  std::optional<int64_t> i = v->asInt();
  if (!i)
    return keyError(key, cat("must be an integer, got ", valueTypeName(v->type)));
  return *i;
}

absl::StatusOr<int64_t> GGUFFile::getInt(std::string_view key, int64_t dflt) const {
  return find(key) ? getInt(key) : absl::StatusOr<int64_t>(dflt);
}

absl::StatusOr<double> GGUFFile::getFloat(std::string_view key) const {
  const Value *v = find(key);
  if (!v)
    return absl::NotFoundError(cat(path_, ": metadata '", key, "' is missing"));
  std::optional<double> d = v->asDouble();
  if (!d)
    return keyError(key, cat("must be a number, got ", valueTypeName(v->type)));
  return *d;
}

absl::StatusOr<double> GGUFFile::getFloat(std::string_view key, double dflt) const {
  return find(key) ? getFloat(key) : absl::StatusOr<double>(dflt);
}

absl::StatusOr<bool> GGUFFile::getBool(std::string_view key, bool dflt) const {
  const Value *v = find(key);
  if (!v)
    return dflt;
  if (v->type != Value::Type::Bool)
    return keyError(key, cat("must be a bool, got ", valueTypeName(v->type)));
  return v->i != 0;
}

absl::StatusOr<const std::vector<Value> *>
GGUFFile::getArray(std::string_view key, Value::Type type) const {
  const Value *v = find(key);
  if (!v)
    return absl::NotFoundError(cat(path_, ": metadata '", key, "' is missing"));
  bool wantInt = type == Value::Type::I64 || type == Value::Type::I32;
  bool ok = v->type == Value::Type::Array &&
            (v->elementType == type ||
             (wantInt && Value{v->elementType}.isInteger()) ||
             (type == Value::Type::F32 && v->elementType == Value::Type::F64));
  if (!ok)
    return keyError(key, cat("must be an array of ", valueTypeName(type), ", got ",
                                      v->type == Value::Type::Array
                                          ? cat("an array of ", valueTypeName(v->elementType))
                                          : std::string(valueTypeName(v->type))));
  return &v->array;
}

} // namespace qeff::gguf
