//===- Commit.cpp - Crash-safe publication of compile outputs -------------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "lowering/Driver/Commit.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kStaging = ".qeff-staging-";
constexpr llvm::StringLiteral kRetired = ".qeff-retired-";

std::string join(llvm::StringRef dir, llvm::StringRef name) {
  llvm::SmallString<256> p(dir);
  llvm::sys::path::append(p, name);
  return p.str().str();
}

/// The names a qeff compile writes at the top of its output directory: a
/// directory holding only these (or a qeff-manifest.json) is an earlier
/// output that a recompile may replace.
bool isOutputName(llvm::StringRef name) {
  return llvm::is_contained({"config.json", "generation_config.json", "tokenizer.json",
                             "tokenizer_config.json", "special_tokens_map.json",
                             "tokenizer.model", "model.onnx", "model.onnx.data",
                             "specializations.json", "custom_io.yaml",
                             "node_precision.yaml", "qeff-manifest.json", "qaic-compile.sh",
                             "qpc", "model.import.mlir", "model.device.mlir"},
                            name);
}

/// fsync of a file or directory; errors other than "cannot be synced" count.
std::error_code syncPath(const std::string &path, bool directory) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (directory ? O_DIRECTORY : 0));
  if (fd < 0)
    return std::error_code(errno, std::generic_category());
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0 && err != EINVAL && err != EROFS)
    return std::error_code(err, std::generic_category());
  return {};
}

/// fsyncs every regular file below `dir`, then the directories bottom-up.
std::error_code syncTree(const std::string &dir) {
  std::error_code ec;
  std::vector<std::string> dirs = {dir};
  for (llvm::sys::fs::recursive_directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    llvm::sys::fs::file_type type = it->type();
    if (type == llvm::sys::fs::file_type::directory_file)
      dirs.push_back(it->path());
    else if (type == llvm::sys::fs::file_type::regular_file)
      if (std::error_code rc = syncPath(it->path(), false))
        return rc;
  }
  if (ec)
    return ec;
  for (auto it = dirs.rbegin(); it != dirs.rend(); ++it)
    if (std::error_code rc = syncPath(*it, true))
      return rc;
  return {};
}

/// The pid in `.<name>.qeff-staging-<pid>-<random>` (or -retired-), or 0.
pid_t ownerOf(llvm::StringRef entry, llvm::StringRef marker) {
  size_t at = entry.find(marker);
  if (at == llvm::StringRef::npos)
    return 0;
  llvm::StringRef rest = entry.drop_front(at + marker.size());
  unsigned long long pid = 0;
  if (rest.consumeInteger(10, pid) || !rest.starts_with("-") || pid == 0)
    return 0;
  return static_cast<pid_t>(pid);
}

bool processAlive(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

/// Removes `.<base>.qeff-staging-*` and `.<base>.qeff-retired-*` beside the
/// output whose process is gone.
void removeStale(const std::string &parent, llvm::StringRef base) {
  std::error_code ec;
  std::string prefix = "." + base.str();
  std::vector<std::string> stale;
  for (llvm::sys::fs::directory_iterator it(parent, ec), end; it != end && !ec;
       it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    if (!name.starts_with(prefix))
      continue;
    llvm::StringRef rest = name.drop_front(prefix.size());
    for (llvm::StringRef marker : {kStaging, kRetired})
      if (rest.starts_with(marker)) {
        pid_t pid = ownerOf(rest, marker);
        if (pid > 0 && !processAlive(pid))
          stale.push_back(it->path());
      }
  }
  for (const std::string &path : stale)
    llvm::sys::fs::remove_directories(path, /*IgnoreErrors=*/true);
}

/// `path` made absolute, with symlinks and `..` resolved (realpath) for the
/// part that exists; the components that do not exist yet are appended.
std::string physicalPath(llvm::StringRef path) {
  llvm::SmallString<256> existing(path);
  llvm::sys::fs::make_absolute(existing);
  llvm::sys::path::remove_dots(existing, /*remove_dot_dot=*/true);
  std::vector<std::string> missing;
  while (!llvm::sys::fs::exists(existing) && llvm::sys::path::has_relative_path(existing)) {
    missing.push_back(llvm::sys::path::filename(existing).str());
    llvm::sys::path::remove_filename(existing);
  }
  llvm::SmallString<256> real;
  if (llvm::sys::fs::real_path(existing, real))
    real = existing;
  for (auto it = missing.rbegin(); it != missing.rend(); ++it)
    llvm::sys::path::append(real, *it);
  return real.str().str();
}

/// `path` is `dir` or below it (both physical paths).
bool isWithin(llvm::StringRef path, llvm::StringRef dir) {
  if (dir == "/")
    return true;
  return path == dir || (path.starts_with(dir) && path.drop_front(dir.size()).starts_with("/"));
}

} // namespace

LogicalResult mlir::qeff::checkOutputOutsideCheckpoint(Location loc,
                                                       const std::string &outputDir,
                                                       const std::string &checkpointDir) {
  std::string checkpoint = physicalPath(checkpointDir);
  // The output itself (a symlink to the checkpoint), and the directory its
  // staging directory is created in.
  std::string output = physicalPath(outputDir);
  llvm::SmallString<256> parent(outputDir);
  llvm::sys::path::remove_filename(parent);
  std::string parentReal = physicalPath(parent.empty() ? "." : parent.str());
  if (!isWithin(output, checkpoint) && !isWithin(parentReal, checkpoint))
    return success();
  std::string resolved = isWithin(output, checkpoint) ? output : parentReal;
  return emitError(loc) << "the output directory " << outputDir
                        << (resolved == checkpoint ? " is" : " is inside")
                        << " the checkpoint directory " << checkpointDir
                        << (resolved == outputDir ? "" : " (it resolves to " + resolved + ")")
                        << "; qeff never writes into a checkpoint: choose another -o";
}

LogicalResult mlir::qeff::createStagingDir(Location loc, const std::string &outputDir,
                                           std::string &staging) {
  llvm::StringRef parent = llvm::sys::path::parent_path(outputDir);
  llvm::StringRef base = llvm::sys::path::filename(outputDir);
  if (parent.empty() || base.empty() || base == "." || base == "..")
    return emitError(loc) << "the output directory " << outputDir
                          << " has no name of its own; choose another -o";
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(outputDir, status)) {
    if (!llvm::sys::fs::is_directory(status))
      return emitError(loc) << "the output " << outputDir
                            << " exists and is not a directory";
    std::error_code ec;
    std::vector<std::string> foreign;
    bool hasManifest = false;
    for (llvm::sys::fs::directory_iterator it(outputDir, ec), end; it != end && !ec;
         it.increment(ec)) {
      llvm::StringRef name = llvm::sys::path::filename(it->path());
      hasManifest |= name == "qeff-manifest.json";
      if (!isOutputName(name))
        foreign.push_back(name.str());
    }
    if (ec)
      return emitError(loc) << "cannot list the output directory " << outputDir << ": "
                            << ec.message();
    if (!hasManifest && !foreign.empty())
      return emitError(loc) << "the output directory " << outputDir
                            << " holds files no qeff compile wrote (e.g. '" << foreign.front()
                            << "'); a compile replaces its output directory whole, so "
                               "choose a new or empty -o";
  }
  if (std::error_code ec = llvm::sys::fs::create_directories(parent))
    return emitError(loc) << "cannot create the directory " << parent << ": "
                          << ec.message();
  removeStale(parent.str(), base);
  llvm::SmallString<256> path;
  std::string model = join(parent, "." + base.str() + kStaging.str() +
                                        std::to_string(::getpid()) + "-%%%%%%");
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory(model, path))
    return emitError(loc) << "cannot create a staging directory beside " << outputDir
                          << ": " << ec.message();
  // createUniqueDirectory appends its own suffix; keep the pid-bearing name.
  staging = path.str().str();
  return success();
}

LogicalResult mlir::qeff::publishStagingDir(
    Location loc, const std::string &staging, const std::string &outputDir,
    std::vector<std::pair<std::string, uint64_t>> &files) {
  if (std::error_code ec = syncTree(staging))
    return emitError(loc) << "cannot sync the staged files in " << staging << ": "
                          << ec.message();
  llvm::StringRef parent = llvm::sys::path::parent_path(outputDir);
  llvm::StringRef base = llvm::sys::path::filename(outputDir);
  // rename(2) replaces an empty directory; a non-empty earlier output is
  // first moved aside (its removal can then fail or be killed harmlessly:
  // the next compile removes it).
  std::string retired;
  if (::rename(staging.c_str(), outputDir.c_str()) != 0) {
    if (errno != ENOTEMPTY && errno != EEXIST)
      return emitError(loc) << "cannot publish " << outputDir << ": "
                            << std::strerror(errno);
    retired = join(parent, "." + base.str() + kRetired.str() + std::to_string(::getpid()) +
                               "-" + std::to_string(std::rand()));
    if (::rename(outputDir.c_str(), retired.c_str()) != 0)
      return emitError(loc) << "cannot move the earlier " << outputDir
                            << " aside: " << std::strerror(errno);
    if (::rename(staging.c_str(), outputDir.c_str()) != 0)
      return emitError(loc) << "cannot publish " << outputDir << ": "
                            << std::strerror(errno);
  }
  if (std::error_code ec = syncPath(parent.str(), true))
    return emitError(loc) << "cannot sync " << parent << ": " << ec.message();
  if (!retired.empty())
    llvm::sys::fs::remove_directories(retired, /*IgnoreErrors=*/true);

  std::error_code ec;
  std::vector<std::string> names;
  for (llvm::sys::fs::directory_iterator it(outputDir, ec), end; it != end && !ec;
       it.increment(ec))
    names.push_back(it->path());
  llvm::sort(names);
  for (const std::string &name : names) {
    uint64_t size = 0;
    llvm::sys::fs::file_size(name, size);
    files.emplace_back(name, size);
  }
  return success();
}

void mlir::qeff::removeStagingDir(const std::string &staging) {
  if (!staging.empty())
    llvm::sys::fs::remove_directories(staging, /*IgnoreErrors=*/true);
}
