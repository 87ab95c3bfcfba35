//===- ExternalData.cpp - ONNX external data of an untrusted artifact -----===//

#include "runtime/host/ExternalData.h"

#include "runtime/host/Kernel.h"
#include "support/CheckedMath.h"
#include "support/SafeFile.h"

#include <cerrno>
#include <cstring>

#include <sys/mman.h>
#include <unistd.h>

namespace qeff::runtime::host {

std::shared_ptr<MappedFile> MappedFile::open(const std::string &path) {
  uint64_t size = 0;
  std::string error;
  int fd = support::openRegularFile(path, size, error);
  if (fd < 0)
    fail(error);
  auto m = std::shared_ptr<MappedFile>(new MappedFile);
  m->size_ = static_cast<size_t>(size);
  if (m->size_) {
    void *p = mmap(nullptr, m->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      fail(path + ": cannot map: " + std::strerror(err));
    }
    m->base_ = static_cast<const char *>(p);
  }
  ::close(fd);
  return m;
}

MappedFile::~MappedFile() {
  if (base_)
    munmap(const_cast<char *>(base_), size_);
}

namespace {

/// A decimal 64-bit count of an external_data entry ("offset", "length").
uint64_t parseCount(const onnx::TensorProto &t, const std::string &key,
                    const std::string &value) {
  uint64_t n = 0;
  bool ok = !value.empty() && value.size() <= 20;
  for (char c : value) {
    ok = ok && c >= '0' && c <= '9' && support::checkedMul<uint64_t>(n, 10, n) &&
         support::checkedAdd<uint64_t>(n, uint64_t(c - '0'), n);
    if (!ok)
      break;
  }
  QEFF_CHECK(ok && n <= static_cast<uint64_t>(INT64_MAX),
        "initializer '" + t.name() + "': external data field '" + key + "' is '" + value +
            "', not a non-negative integer");
  return n;
}

} // namespace

ExternalDataFiles::File &ExternalDataFiles::file(const onnx::TensorProto &t,
                                                 const std::string &location) {
  std::string resolved, why;
  QEFF_CHECK(support::resolveInside(dir_, location, resolved, why),
        "initializer '" + t.name() + "': external data location refused: " + why);
  File &f = files_[resolved];
  if (!f.map) {
    try {
      f.map = MappedFile::open(resolved);
    } catch (const KernelError &e) {
      fail("initializer '" + t.name() + "': external data '" + location + "': " + e.what());
    }
  }
  return f;
}

void ExternalDataFiles::claim(File &f, const std::string &location, const std::string &name,
                              uint64_t offset, uint64_t bytes) {
  if (bytes == 0)
    return;
  uint64_t end = offset + bytes; // checked against the file size already
  auto next = f.ranges.lower_bound(offset);
  if (next != f.ranges.end() && next->first == offset && next->second.end == end)
    return; // the same bytes twice: shared weights
  auto clash = [&](const std::string &other) {
    fail("initializers '" + other + "' and '" + name + "' overlap in '" + location +
         "' (bytes from " + std::to_string(offset) + "): a corrupt or crafted artifact");
  };
  if (next != f.ranges.end() && next->first < end)
    clash(next->second.name);
  if (next != f.ranges.begin()) {
    auto prev = std::prev(next);
    if (prev->second.end > offset)
      clash(prev->second.name);
  }
  f.ranges.emplace(offset, Range{end, name});
}

Tensor ExternalDataFiles::load(const onnx::TensorProto &t) {
  std::string location;
  uint64_t offset = 0;
  bool hasLength = false;
  uint64_t length = 0;
  for (const auto &kv : t.external_data()) {
    if (kv.key() == "location")
      location = kv.value();
    else if (kv.key() == "offset")
      offset = parseCount(t, "offset", kv.value());
    else if (kv.key() == "length") {
      length = parseCount(t, "length", kv.value());
      hasLength = true;
    }
  }
  QEFF_CHECK(!location.empty(), "initializer '" + t.name() + "' has external data without a location");
  DType dt;
  try {
    dt = dtypeFromOnnx(t.data_type());
  } catch (const KernelError &e) {
    fail("initializer '" + t.name() + "': " + e.what());
  }
  Shape shape(t.dims().begin(), t.dims().end());
  uint64_t bytes;
  try {
    bytes = byteSize(dt, shape);
  } catch (const SizeError &e) {
    fail("initializer '" + t.name() + "': " + e.what());
  }
  QEFF_CHECK(!hasLength || length == bytes,
        "initializer '" + t.name() + "': external length " + std::to_string(length) +
            " does not match its shape " + shapeString(shape) + " (" + std::to_string(bytes) +
            " bytes)");
  File &f = file(t, location);
  const MappedFile &map = *f.map;
  QEFF_CHECK(offset <= map.size() && bytes <= map.size() - offset,
        "initializer '" + t.name() + "': bytes [" + std::to_string(offset) + ", " +
            (bytes > UINT64_MAX - offset ? std::string("overflow")
                                         : std::to_string(offset + bytes)) +
            ") lie outside '" + location + "' (" + std::to_string(map.size()) + " bytes)");
  claim(f, location, t.name(), offset, bytes);
  const char *src = map.data() + offset;
  if (reinterpret_cast<uintptr_t>(src) % dtypeSize(dt) == 0)
    return Tensor::view(dt, shape, const_cast<char *>(src), f.map, /*readOnly=*/true);
  Tensor r = Tensor::empty(dt, shape);
  if (bytes)
    std::memcpy(r.rawData(), src, bytes);
  return r;
}

void ExternalDataFiles::release(const void *p, size_t bytes) {
  uintptr_t b = reinterpret_cast<uintptr_t>(p), e = b + bytes;
  for (auto &[path, f] : files_) {
    uintptr_t base = reinterpret_cast<uintptr_t>(f.map->data());
    if (b < base || e > base + f.map->size())
      continue;
    uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    uintptr_t first = (b + page - 1) / page * page, last = e / page * page;
    if (last > first)
      madvise(reinterpret_cast<void *>(first), last - first, MADV_DONTNEED);
    return;
  }
}

void ExternalDataFiles::populate(const void *p, size_t bytes) {
#ifndef MADV_POPULATE_READ
  constexpr int MADV_POPULATE_READ = 22;
#endif
  uintptr_t b = reinterpret_cast<uintptr_t>(p), e = b + bytes;
  long physPages = sysconf(_SC_PHYS_PAGES);
  uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  for (auto &[path, f] : files_) {
    uintptr_t base = reinterpret_cast<uintptr_t>(f.map->data());
    if (b < base || e > base + f.map->size() || e <= b)
      continue;
    if (physPages <= 0 || f.map->size() / page > static_cast<uintptr_t>(physPages) / 2)
      return;
    uintptr_t first = b / page * page, last = (e + page - 1) / page * page;
    (void)madvise(reinterpret_cast<void *>(first), last - first, MADV_POPULATE_READ);
    return;
  }
}

} // namespace qeff::runtime::host
