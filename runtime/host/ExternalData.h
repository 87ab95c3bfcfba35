//===- ExternalData.h - ONNX external data of an untrusted artifact -*- C++ -*-===//
//
// Part of qeff. Initializers stored outside model.onnx name a file by a path
// relative to the model's directory. The artifact comes from a stranger, so
// the path must stay inside that directory (no absolute path, no `..`, no
// symlink leading out), the file must be regular (a FIFO would block the
// load, a device never end), and every byte range must lie inside the file
// without partially overlapping another initializer's.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_HOST_EXTERNALDATA_H
#define QEFF_RUNTIME_HOST_EXTERNALDATA_H

#include "qeff/runtime/Tensor.h"

#include "onnx/onnx_pb.h"

#include <map>
#include <memory>
#include <string>

namespace qeff::runtime::host {

/// A read-only mapping of a whole regular file (refused otherwise).
class MappedFile {
public:
  /// Throws KernelError naming `path` when it is not a readable regular file.
  static std::shared_ptr<MappedFile> open(const std::string &path);
  ~MappedFile();
  const char *data() const { return base_; }
  size_t size() const { return size_; }

private:
  MappedFile() = default;
  const char *base_ = nullptr;
  size_t size_ = 0;
};

/// The external-data files of one model directory, each mapped once.
class ExternalDataFiles {
public:
  explicit ExternalDataFiles(std::string dir) : dir_(std::move(dir)) {}

  /// The tensor of an EXTERNAL initializer: a view into the mapping when
  /// aligned, else a copy (float16 stays float16: the executor widens it
  /// where a kernel needs float32). Throws KernelError
  /// naming the initializer and the field at fault.
  Tensor load(const onnx::TensorProto &tensor);
  /// Drops the whole pages of [p, p + bytes) from a mapping (madvise
  /// DONTNEED: read again from the file if touched again). No-op for memory
  /// outside the mappings.
  void release(const void *p, size_t bytes);
  /// Maps the pages of [p, p + bytes) now, in one call (MADV_POPULATE_READ,
  /// Linux 5.14; an older kernel refuses it, which changes nothing), when it
  /// lies in a mapping of a file under half the machine's memory. The bytes
  /// are not read by the CPU: the pages are the page cache's (read from the
  /// file first, in order, when they are not there). For a weight about to
  /// be read whole: left to page faults, the first products of the 1.1B
  /// shape took one fault per 16 pages inside the GEMM (0.2-0.5 s of a
  /// 3.4-4.3 s first prefill on one thread) against 0.09 s for populating
  /// the 4.4 GB of weights (docs/performance.md). A larger file is left to
  /// faults: populating it would evict its own first pages. No-op for
  /// memory outside the mappings.
  void populate(const void *p, size_t bytes);

private:
  struct Range {
    uint64_t end;
    std::string name;
  };
  struct File {
    std::shared_ptr<MappedFile> map;
    std::map<uint64_t, Range> ranges; ///< by offset
  };
  File &file(const onnx::TensorProto &tensor, const std::string &location);
  void claim(File &f, const std::string &location, const std::string &name,
             uint64_t offset, uint64_t bytes);

  std::string dir_;
  std::map<std::string, File> files_; ///< by resolved path
};

} // namespace qeff::runtime::host

#endif // QEFF_RUNTIME_HOST_EXTERNALDATA_H
