//===- SafeFile.cpp - Reading untrusted files -----------------------------===//

#include "support/SafeFile.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace qeff::support {

static std::string quoted(const std::string &path) { return path; }

static const char *kindOf(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "a special file";
}

int openRegularFile(const std::string &path, uint64_t &size, std::string &error) {
  // O_NONBLOCK: opening a FIFO without a writer would otherwise block forever.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    error = quoted(path) + ": cannot open: " + std::strerror(errno);
    return -1;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    error = quoted(path) + ": cannot stat: " + std::strerror(errno);
    ::close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    error = quoted(path) + ": not a regular file (" + kindOf(st.st_mode) + ")";
    ::close(fd);
    return -1;
  }
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0)
    ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  size = static_cast<uint64_t>(st.st_size);
  return fd;
}

/// openRegularFile of a file of at most `limit` bytes.
static int openBoundedFile(const std::string &path, uint64_t limit, uint64_t &size,
                           std::string &error) {
  int fd = openRegularFile(path, size, error);
  if (fd >= 0 && size > limit) {
    error = quoted(path) + ": file is too large (" + std::to_string(size) + " bytes, limit " +
            std::to_string(limit) + ")";
    ::close(fd);
    return -1;
  }
  return fd;
}

bool readRegularFile(const std::string &path, uint64_t limit, std::string &out,
                     std::string &error) {
  uint64_t size = 0;
  int fd = openBoundedFile(path, limit, size, error);
  if (fd < 0)
    return false;
  out.clear();
  out.resize(size);
  uint64_t done = 0;
  while (done < size) {
    ssize_t n = ::read(fd, &out[done], size - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      error = quoted(path) + ": read error: " + std::strerror(errno);
      ::close(fd);
      return false;
    }
    if (n == 0)
      break; // shrank while reading
    done += static_cast<uint64_t>(n);
  }
  out.resize(done);
  ::close(fd);
  return true;
}

bool copyRegularFile(const std::string &from, const std::string &to, uint64_t limit,
                     std::string &error) {
  uint64_t size = 0;
  int in = openBoundedFile(from, limit, size, error);
  if (in < 0)
    return false;
  int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666);
  if (out < 0) {
    error = quoted(to) + ": cannot create: " + std::strerror(errno);
    ::close(in);
    return false;
  }
  std::string chunk(std::min<uint64_t>(size, uint64_t(1) << 20), '\0');
  uint64_t done = 0;
  bool ok = true;
  while (ok && done < size) {
    ssize_t n = ::read(in, chunk.data(), std::min<uint64_t>(chunk.size(), size - done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      error = quoted(from) + (n < 0 ? ": read error: " + std::string(std::strerror(errno))
                                    : std::string(": shrank while being copied"));
      ok = false;
      break;
    }
    for (ssize_t written = 0; ok && written < n;) {
      ssize_t w = ::write(out, chunk.data() + written, size_t(n - written));
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0) {
        error = quoted(to) + ": write error: " + std::strerror(errno);
        ok = false;
      } else {
        written += w;
      }
    }
    done += uint64_t(n);
  }
  ::close(in);
  if (::close(out) != 0 && ok) {
    error = quoted(to) + ": write error: " + std::strerror(errno);
    ok = false;
  }
  return ok;
}

bool isRegularFile(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool resolveInside(const std::string &dir, const std::string &relative,
                   std::string &resolved, std::string &error) {
  if (relative.empty()) {
    error = "an empty path";
    return false;
  }
  if (relative[0] == '/') {
    error = "the absolute path '" + relative + "' (only paths inside the artifact directory "
            "are allowed)";
    return false;
  }
  if (relative.find('\0') != std::string::npos) {
    error = "a path with a NUL byte";
    return false;
  }
  // Any `..` component is refused, even one that would stay inside.
  size_t start = 0;
  while (start <= relative.size()) {
    size_t end = relative.find('/', start);
    if (end == std::string::npos)
      end = relative.size();
    if (relative.compare(start, end - start, "..") == 0 && end - start == 2) {
      error = "the path '" + relative + "' with a '..' component (only paths inside the "
              "artifact directory are allowed)";
      return false;
    }
    start = end + 1;
  }
  char dirReal[PATH_MAX], fileReal[PATH_MAX];
  if (!::realpath(dir.empty() ? "." : dir.c_str(), dirReal)) {
    error = "the directory '" + dir + "': " + std::strerror(errno);
    return false;
  }
  std::string joined = std::string(dirReal) + "/" + relative;
  if (!::realpath(joined.c_str(), fileReal)) {
    error = "'" + relative + "': " + std::strerror(errno);
    return false;
  }
  std::string base(dirReal), real(fileReal);
  if (base != "/" && (real.size() <= base.size() || real.compare(0, base.size(), base) != 0 ||
                      real[base.size()] != '/')) {
    error = "'" + relative + "', which resolves (through a symlink) to '" + real +
            "' outside the artifact directory";
    return false;
  }
  resolved = real;
  return true;
}

} // namespace qeff::support
