//===- SafeFile.h - Reading untrusted files -------------------*- C++ -*-===//
//
// Part of qeff. Checkpoints, tokenizers, configs and artifact directories come
// from strangers. Every file qeff reads goes through openRegularFile: a FIFO,
// socket or device is refused (opened with O_NONBLOCK, so opening never
// blocks) and whole-file reads are bounded. Errors are one line naming the
// file.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_SUPPORT_SAFEFILE_H
#define QEFF_SUPPORT_SAFEFILE_H

#include <cstdint>
#include <string>

namespace qeff::support {

/// Size limits of whole-file reads.
constexpr uint64_t kConfigFileLimit = uint64_t(16) << 20;    ///< config.json & co.
constexpr uint64_t kTokenizerFileLimit = uint64_t(512) << 20; ///< tokenizer.json, vocab

/// Opens `path` read-only when it is a regular file (symlinks followed).
/// Returns the descriptor (blocking mode, close-on-exec) and its size, or -1
/// with `error` set to "<path>: <reason>".
int openRegularFile(const std::string &path, uint64_t &size, std::string &error);

/// Reads the whole regular file `path` of at most `limit` bytes into `out`.
/// False with `error` set on failure (missing, not a regular file, too big,
/// read error).
bool readRegularFile(const std::string &path, uint64_t limit, std::string &out,
                     std::string &error);

/// Copies the regular file `from` of at most `limit` bytes to `to` (created
/// or truncated), in chunks: a FIFO or device is refused like readRegularFile
/// refuses it, and a file that grows while being copied is copied up to the
/// size it had when opened. False with `error` naming the file at fault.
bool copyRegularFile(const std::string &from, const std::string &to, uint64_t limit,
                     std::string &error);

/// True when `path` exists and is a regular file (following symlinks), without
/// opening it.
bool isRegularFile(const std::string &path);

/// `relative` (a path stored inside an artifact) resolved against `dir`:
/// refused when it is absolute, has a `..` component, or resolves (through
/// symlinks) outside `dir`'s real path. On success `resolved` is the real
/// path. `error` says why not.
bool resolveInside(const std::string &dir, const std::string &relative,
                   std::string &resolved, std::string &error);

} // namespace qeff::support

#endif // QEFF_SUPPORT_SAFEFILE_H
