//===- CompileCache.h - artifacts cached by content -------------*- C++ -*-===//
//
// Part of qeff. The content-addressed artifact cache behind `qeff infer`
// (and every command that compiles a checkpoint on the user's behalf): the
// key covers the qeff version, every compile option that changes the
// artifacts, and the content of every checkpoint file (config, weights,
// tokenizer, generation config, the fp32-scopes file). A second compile with
// the same key reuses the entry; a changed weight file does not.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_LOWERING_DRIVER_COMPILECACHE_H
#define QEFF_LOWERING_DRIVER_COMPILECACHE_H

#include "lowering/Driver/CompileDriver.h"

#include <string>

namespace mlir::qeff {

/// $QEFF_CACHE_DIR, else $XDG_CACHE_HOME/qeff, else ~/.cache/qeff.
std::string defaultCacheDir();

/// The checkpoint files whose content decides the artifacts (by name,
/// sorted): *.safetensors, *.json, tokenizer.model, chat_template.jinja; for
/// a GGUF file, the file itself (its packed bytes are the whole model).
std::vector<std::string> checkpointContentFiles(const std::string &dir);

/// The directory checkpointContentFiles names its files relative to: the
/// checkpoint directory, or the directory of a GGUF file.
std::string checkpointContentDir(const std::string &checkpoint);

/// Whether a checkpoint path is a GGUF file (not an HF directory).
bool isGGUFCheckpoint(const std::string &checkpoint);

/// The cache key of a compile: the qeff version, every option that changes
/// the artifacts (not outputDir, progress or the hashes themselves), and
/// the BLAKE3 hash of every checkpoint content file (taken from
/// `options.knownHashes` where given, else computed). Fills
/// `options.knownHashes` so the manifest reuses the hashes. Errors (a file
/// that cannot be read) name the file.
LogicalResult compileCacheKey(Location loc, CompileOptions &options,
                              std::string &key);

struct CacheResult {
  std::string artifactDir; ///< <cacheDir>/<hash of the key>
  std::string key;         ///< the key's hash (32 hex digits)
  bool hit = false;        ///< the entry existed; nothing was compiled
};

/// The cache entry of a compile: its key and directory, and whether it is
/// complete already (its qeff-manifest.json exists). Fills
/// `options.knownHashes` and sets `options.outputDir` to the entry.
LogicalResult lookupCompileCache(Location loc, CompileOptions &options,
                                 const std::string &cacheDir,
                                 CacheResult &result);

/// Compiles `options.checkpointDir` into the cache entry of its key unless
/// that entry is complete already (its qeff-manifest.json exists).
/// `options.outputDir` is ignored. `report` is filled only on a miss.
///
/// A miss takes the key's lock (`<cacheDir>/.<key>.lock`, flock(2)) and looks
/// again: two compiles of one key, in one process or in several sharing the
/// cache, build it once; the second is a hit. `onLockWait` is called when the
/// lock is held by another compile (before waiting for it), `onCompile` when
/// the compile starts (a miss).
LogicalResult compileThroughCache(MLIRContext &context, CompileOptions options,
                                  const std::string &cacheDir,
                                  CacheResult &result, CompileReport &report,
                                  const std::function<void()> &onLockWait = {},
                                  const std::function<void()> &onCompile = {});

} // namespace mlir::qeff

#endif // QEFF_LOWERING_DRIVER_COMPILECACHE_H
