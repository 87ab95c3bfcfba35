//===- SafeTensors.cpp - Memory-mapped safetensors reader/writer ----------===//

#include "frontend/HF/SafeTensors.h"

#include "support/SafeFile.h"

#include "frontend/HF/JsonUtil.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace qeff::hf {

using detail::Json;

//===----------------------------------------------------------------------===//
// DType
//===----------------------------------------------------------------------===//

namespace {
struct DTypeEntry {
  DType dtype;
  std::string_view name;
  size_t size;
};
constexpr DTypeEntry kDTypes[] = {
    {DType::F64, "F64", 8},   {DType::F32, "F32", 4}, {DType::F16, "F16", 2},
    {DType::BF16, "BF16", 2}, {DType::I64, "I64", 8}, {DType::I32, "I32", 4},
    {DType::I16, "I16", 2},   {DType::I8, "I8", 1},   {DType::U64, "U64", 8},
    {DType::U32, "U32", 4},   {DType::U16, "U16", 2}, {DType::U8, "U8", 1},
    {DType::Bool, "BOOL", 1}, {DType::F8_E4M3, "F8_E4M3", 1},
    {DType::F8_E5M2, "F8_E5M2", 1}, {DType::F8_E8M0, "F8_E8M0", 1}};

const DTypeEntry &entryOf(DType dtype) {
  for (const DTypeEntry &e : kDTypes)
    if (e.dtype == dtype)
      return e;
  return kDTypes[0]; // unreachable: every enumerator is listed
}
} // namespace

std::string_view dtypeName(DType dtype) { return entryOf(dtype).name; }
size_t dtypeSize(DType dtype) { return entryOf(dtype).size; }

std::optional<DType> parseDType(std::string_view name) {
  for (const DTypeEntry &e : kDTypes)
    if (e.name == name)
      return e.dtype;
  return std::nullopt;
}

bool isFloatingPoint(DType dtype) {
  return dtype == DType::F64 || dtype == DType::F32 || dtype == DType::F16 ||
         dtype == DType::BF16;
}

int64_t TensorInfo::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

//===----------------------------------------------------------------------===//
// Header validation
//===----------------------------------------------------------------------===//

namespace {

std::string shapeString(const std::vector<int64_t> &shape) {
  return detail::cat("[", absl::StrJoin(shape, ", "), "]");
}

/// Number of bytes of a tensor, or nullopt on overflow.
std::optional<uint64_t> checkedByteSize(const std::vector<int64_t> &shape,
                                        DType dtype) {
  uint64_t n = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(d), &n))
      return std::nullopt;
  if (n > static_cast<uint64_t>(INT64_MAX))
    return std::nullopt;
  uint64_t bytes;
  if (__builtin_mul_overflow(n, static_cast<uint64_t>(dtypeSize(dtype)),
                             &bytes))
    return std::nullopt;
  return bytes;
}

absl::Status parseEntry(const std::string &name, const Json &entry,
                        uint64_t dataSize, std::string_view fileName,
                        TensorInfo &info) {
  auto error = [&](auto &&...parts) {
    return absl::InvalidArgumentError(
        detail::cat(fileName, ": tensor '", name, "': ", parts...));
  };
  if (!entry.is_object())
    return error("entry must be a JSON object, got ", detail::describe(entry));
  info.name = name;

  auto dtypeIt = entry.find("dtype");
  if (dtypeIt == entry.end())
    return error("missing field 'dtype'");
  if (!dtypeIt->is_string())
    return error("field 'dtype' must be a string, got ",
                 detail::describe(*dtypeIt));
  const std::string &dtypeText = dtypeIt->get_ref<const std::string &>();
  std::optional<DType> dtype = parseDType(dtypeText);
  if (!dtype)
    return error("unknown dtype '", dtypeText, "'");
  info.dtype = *dtype;

  auto shapeIt = entry.find("shape");
  if (shapeIt == entry.end())
    return error("missing field 'shape'");
  if (!shapeIt->is_array())
    return error("field 'shape' must be an array of integers, got ",
                 detail::describe(*shapeIt));
  info.shape.clear();
  for (size_t i = 0; i < shapeIt->size(); ++i) {
    const Json &dim = (*shapeIt)[i];
    std::optional<int64_t> value = detail::asInt64(dim);
    if (!value)
      return error("dimension ", i, " of 'shape' must be an integer, got ",
                   detail::describe(dim));
    if (*value < 0)
      return error("negative dimension ", *value, " at index ", i,
                   " of 'shape'");
    info.shape.push_back(*value);
  }

  auto offsetsIt = entry.find("data_offsets");
  if (offsetsIt == entry.end())
    return error("missing field 'data_offsets'");
  std::optional<uint64_t> begin, end;
  if (offsetsIt->is_array() && offsetsIt->size() == 2) {
    begin = detail::asUInt64((*offsetsIt)[0]);
    end = detail::asUInt64((*offsetsIt)[1]);
  }
  if (!begin || !end)
    return error("field 'data_offsets' must be an array of two non-negative "
                 "integers, got ",
                 detail::describe(*offsetsIt));
  info.begin = *begin;
  info.end = *end;
  std::string range = detail::cat("[", info.begin, ", ", info.end, "]");
  if (info.end < info.begin)
    return error("data_offsets ", range, " end before they begin");
  if (info.end > dataSize)
    return error("data_offsets ", range, " extend beyond the data section (",
                 dataSize, " bytes)");

  std::optional<uint64_t> bytes = checkedByteSize(info.shape, info.dtype);
  if (!bytes)
    return error("shape ", shapeString(info.shape), " is too large");
  if (*bytes != info.byteSize())
    return error("shape ", shapeString(info.shape), " of ", dtypeText,
                 " needs ", *bytes, " bytes but data_offsets ", range, " span ",
                 info.byteSize());
  return absl::OkStatus();
}

} // namespace

absl::Status
parseSafeTensorsHeader(std::string_view headerText, uint64_t dataSize,
                       std::string_view fileName,
                       std::vector<TensorInfo> &tensors,
                       std::map<std::string, std::string> &metadata) {
  tensors.clear();
  metadata.clear();
  absl::StatusOr<Json> header =
      detail::parseJson(headerText, fileName, "header", "tensor name");
  if (!header.ok())
    return header.status();
  if (!header->is_object())
    return absl::InvalidArgumentError(
        detail::cat(fileName, ": header must be a JSON object, got ",
                    detail::describe(*header)));

  for (auto it = header->begin(); it != header->end(); ++it) {
    if (it.key() == "__metadata__") {
      const Json &meta = it.value();
      if (!meta.is_object())
        return absl::InvalidArgumentError(detail::cat(
            fileName, ": '__metadata__' must be an object of strings, got ",
            detail::describe(meta)));
      for (auto m = meta.begin(); m != meta.end(); ++m) {
        if (!m.value().is_string())
          return absl::InvalidArgumentError(detail::cat(
              fileName, ": '__metadata__' field '", m.key(),
              "' must be a string, got ", detail::describe(m.value())));
        metadata[m.key()] = m.value().get_ref<const std::string &>();
      }
      continue;
    }
    TensorInfo info;
    if (absl::Status s =
            parseEntry(it.key(), it.value(), dataSize, fileName, info);
        !s.ok())
      return s;
    tensors.push_back(std::move(info));
  }

  // The format requires the tensors to tile the data section exactly: ordered,
  // non-overlapping, no holes, nothing trailing.
  std::sort(tensors.begin(), tensors.end(),
            [](const TensorInfo &a, const TensorInfo &b) {
              if (a.begin != b.begin)
                return a.begin < b.begin;
              if (a.end != b.end)
                return a.end < b.end;
              return a.name < b.name;
            });
  uint64_t cursor = 0;
  const TensorInfo *prev = nullptr;
  for (const TensorInfo &t : tensors) {
    if (t.begin < cursor)
      return absl::InvalidArgumentError(
          detail::cat(fileName, ": tensors '", prev->name, "' [", prev->begin,
                      ", ", prev->end, "] and '", t.name, "' [", t.begin, ", ",
                      t.end, "] overlap"));
    if (t.begin > cursor)
      return absl::InvalidArgumentError(detail::cat(
          fileName, ": hole in the data section: bytes [", cursor, ", ",
          t.begin, ") before tensor '", t.name, "' belong to no tensor"));
    cursor = t.end;
    prev = &t;
  }
  if (cursor != dataSize)
    return absl::InvalidArgumentError(
        detail::cat(fileName, ": data section has ", dataSize - cursor,
                    " trailing bytes after the last tensor (", dataSize,
                    " bytes, ", cursor, " used)"));
  return absl::OkStatus();
}

//===----------------------------------------------------------------------===//
// SafeTensorsFile
//===----------------------------------------------------------------------===//

absl::StatusOr<std::unique_ptr<SafeTensorsFile>>
SafeTensorsFile::open(const std::string &path) {
  // O_NONBLOCK open + fstat: a FIFO or device is refused, never blocked on.
  uint64_t fileSize = 0;
  std::string openError;
  int fd = support::openRegularFile(path, fileSize, openError);
  if (fd < 0)
    return openError.find("not a regular file") != std::string::npos
               ? absl::InvalidArgumentError(openError)
               : absl::NotFoundError(openError);
  if (fileSize < 8) {
    ::close(fd);
    return absl::InvalidArgumentError(detail::cat(
        path, ": file is truncated: ", fileSize,
        " bytes, a safetensors file has at least the 8-byte header length"));
  }
  void *mapping = ::mmap(nullptr, fileSize, PROT_READ, MAP_PRIVATE, fd, 0);
  int mmapErrno = errno;
  ::close(fd);
  if (mapping == MAP_FAILED)
    return absl::InternalError(
        detail::cat(path, ": mmap failed: ", std::strerror(mmapErrno)));

  std::unique_ptr<SafeTensorsFile> file(new SafeTensorsFile());
  file->path_ = path;
  file->base_ = static_cast<const std::byte *>(mapping);
  file->fileSize_ = fileSize;

  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = (headerSize << 8) | static_cast<uint8_t>(file->base_[i]);
  if (headerSize > kMaxSafeTensorsHeaderSize)
    return absl::InvalidArgumentError(detail::cat(
        path, ": header length ", headerSize, " exceeds the limit of ",
        kMaxSafeTensorsHeaderSize, " bytes"));
  if (headerSize > fileSize - 8)
    return absl::InvalidArgumentError(detail::cat(
        path, ": header length ", headerSize,
        " extends beyond the end of the file (", fileSize, " bytes)"));
  file->dataOffset_ = 8 + headerSize;

  std::string_view headerText(reinterpret_cast<const char *>(file->base_ + 8),
                              headerSize);
  if (absl::Status s =
          parseSafeTensorsHeader(headerText, fileSize - file->dataOffset_, path,
                                 file->tensors_, file->metadata_);
      !s.ok())
    return s;
  for (size_t i = 0; i < file->tensors_.size(); ++i)
    file->byName_.emplace(file->tensors_[i].name, i);
  return file;
}

SafeTensorsFile::~SafeTensorsFile() {
  if (base_)
    ::munmap(const_cast<std::byte *>(base_), fileSize_);
}

const TensorInfo *SafeTensorsFile::find(std::string_view name) const {
  auto it = byName_.find(name);
  return it == byName_.end() ? nullptr : &tensors_[it->second];
}

absl::StatusOr<TensorView> SafeTensorsFile::get(std::string_view name) const {
  const TensorInfo *info = find(name);
  if (!info)
    return absl::NotFoundError(
        detail::cat(path_, ": no tensor named '", name, "'"));
  return view(*info);
}

TensorView SafeTensorsFile::view(const TensorInfo &info) const {
  return TensorView{&info, base_ + dataOffset_ + info.begin};
}

//===----------------------------------------------------------------------===//
// Writer
//===----------------------------------------------------------------------===//

namespace {

bool isValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80           ? 1
                 : (c >> 5) == 0x6  ? 2
                 : (c >> 4) == 0xE  ? 3
                 : (c >> 3) == 0x1E ? 4
                                    : 0;
    if (len == 0 || i + len > s.size())
      return false;
    for (size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2)
        return false;
    i += len;
  }
  return true;
}

absl::Status writeAll(int fd, const void *data, size_t size) {
  const char *p = static_cast<const char *>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return absl::InternalError(std::strerror(errno));
    p += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

} // namespace

absl::Status
writeSafeTensors(const std::string &path,
                 const std::vector<TensorToWrite> &tensors,
                 const std::map<std::string, std::string> &metadata) {
  auto error = [&](auto &&...parts) {
    return absl::InvalidArgumentError(detail::cat(path, ": ", parts...));
  };
  std::vector<const TensorToWrite *> order;
  for (const TensorToWrite &t : tensors) {
    if (t.name.empty() || t.name == "__metadata__" || !isValidUtf8(t.name))
      return error("invalid tensor name '", t.name, "'");
    for (int64_t d : t.shape)
      if (d < 0)
        return error("tensor '", t.name, "': negative dimension ", d);
    std::optional<uint64_t> bytes = checkedByteSize(t.shape, t.dtype);
    if (!bytes || *bytes != t.byteSize)
      return error("tensor '", t.name, "': shape ", shapeString(t.shape),
                   " of ", dtypeName(t.dtype), " does not match ", t.byteSize,
                   " bytes of data");
    if (t.byteSize > 0 && !t.data)
      return error("tensor '", t.name, "': no data");
    order.push_back(&t);
  }
  std::sort(order.begin(), order.end(),
            [](const TensorToWrite *a, const TensorToWrite *b) {
              return a->name < b->name;
            });
  for (size_t i = 1; i < order.size(); ++i)
    if (order[i]->name == order[i - 1]->name)
      return error("duplicate tensor name '", order[i]->name, "'");

  Json header = Json::object();
  if (!metadata.empty()) {
    Json meta = Json::object();
    for (const auto &[key, value] : metadata) {
      if (!isValidUtf8(key) || !isValidUtf8(value))
        return error("metadata '", key, "' is not valid UTF-8");
      meta[key] = value;
    }
    header["__metadata__"] = std::move(meta);
  }
  uint64_t offset = 0;
  for (const TensorToWrite *t : order) {
    Json entry = Json::object();
    entry["dtype"] = std::string(dtypeName(t->dtype));
    entry["shape"] = t->shape;
    entry["data_offsets"] = Json::array({offset, offset + t->byteSize});
    header[t->name] = std::move(entry);
    offset += t->byteSize;
  }
  std::string headerText =
      header.dump(-1, ' ', false, Json::error_handler_t::replace);
  headerText.append((8 - headerText.size() % 8) % 8, ' ');
  unsigned char prefix[8];
  for (int i = 0; i < 8; ++i)
    prefix[i] = static_cast<unsigned char>(
        (static_cast<uint64_t>(headerText.size()) >> (8 * i)) & 0xff);

  std::string tmpPath = path + ".tmp-XXXXXX";
  int fd = ::mkstemp(tmpPath.data());
  if (fd < 0)
    return absl::InternalError(detail::cat(
        path, ": cannot create temporary file: ", std::strerror(errno)));
  auto fail = [&](std::string_view what, const absl::Status &s) {
    ::close(fd);
    ::unlink(tmpPath.c_str());
    return absl::InternalError(
        detail::cat(path, ": ", what, ": ", s.message()));
  };
  ::fchmod(fd, 0644);
  if (absl::Status s = writeAll(fd, prefix, sizeof(prefix)); !s.ok())
    return fail("write failed", s);
  if (absl::Status s = writeAll(fd, headerText.data(), headerText.size());
      !s.ok())
    return fail("write failed", s);
  for (const TensorToWrite *t : order)
    if (absl::Status s = writeAll(fd, t->data, t->byteSize); !s.ok())
      return fail("write failed", s);
  if (::fsync(fd) != 0)
    return fail("fsync failed", absl::InternalError(std::strerror(errno)));
  if (::close(fd) != 0) {
    ::unlink(tmpPath.c_str());
    return absl::InternalError(
        detail::cat(path, ": close failed: ", std::strerror(errno)));
  }
  if (::rename(tmpPath.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmpPath.c_str());
    return absl::InternalError(
        detail::cat(path, ": rename failed: ", std::strerror(err)));
  }
  return absl::OkStatus();
}

} // namespace qeff::hf
