//===- CompileCache.cpp - artifacts cached by content ---------------------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "lowering/Driver/CompileCache.h"

#include "lowering/Driver/Artifacts.h"

#include "frontend/GGUF/GGUFModel.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cstdlib>

using namespace mlir;
using namespace mlir::qeff;

namespace {
std::string join(const std::string &dir, StringRef name) {
  SmallString<256> p(dir);
  llvm::sys::path::append(p, name);
  return std::string(p.str());
}

const char *emitName(EmitKind emit) {
  switch (emit) {
  case EmitKind::MLIRImport:
    return "mlir-import";
  case EmitKind::MLIRDevice:
    return "mlir-device";
  case EmitKind::ONNX:
    return "onnx";
  case EmitKind::Device:
    return "device";
  }
  return "?";
}
} // namespace

std::string mlir::qeff::defaultCacheDir() {
  if (const char *env = std::getenv("QEFF_CACHE_DIR"); env && *env)
    return env;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return join(xdg, "qeff");
  if (const char *home = std::getenv("HOME"); home && *home)
    return join(join(home, ".cache"), "qeff");
  return join(llvm::sys::fs::getMainExecutable(nullptr, nullptr),
              "../qeff-cache");
}

bool mlir::qeff::isGGUFCheckpoint(const std::string &checkpoint) {
  return !llvm::sys::fs::is_directory(checkpoint) && ::qeff::gguf::isGGUFPath(checkpoint);
}

std::string mlir::qeff::checkpointContentDir(const std::string &checkpoint) {
  if (!isGGUFCheckpoint(checkpoint))
    return checkpoint;
  StringRef parent = llvm::sys::path::parent_path(checkpoint);
  return parent.empty() ? "." : parent.str();
}

std::vector<std::string>
mlir::qeff::checkpointContentFiles(const std::string &dir) {
  if (isGGUFCheckpoint(dir))
    return {llvm::sys::path::filename(dir).str()};
  std::vector<std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    StringRef name = llvm::sys::path::filename(it->path());
    if (name.ends_with(".safetensors") || name.ends_with(".json") ||
        name == "tokenizer.model" || name == "chat_template.jinja")
      files.push_back(name.str());
  }
  std::sort(files.begin(), files.end());
  return files;
}

LogicalResult mlir::qeff::compileCacheKey(Location loc,
                                          CompileOptions &options,
                                          std::string &key) {
  // Every option that changes what lands in the artifact directory. The
  // qaic-compile path decides whether a QPC is built, so it is part too.
  key = std::string("qeff ") + QEFF_VERSION_STRING;
  key += " emit=" + std::string(emitName(options.emit));
  key += " ctx=" + std::to_string(options.ctxLen) +
         " prefill=" + std::to_string(options.prefillSeqLen) +
         " batch=" + std::to_string(options.batchSize);
  if (options.fullBatchSize > 0)
    key += " full_batch=" + std::to_string(options.fullBatchSize);
  key += " cores=" + std::to_string(options.numCores);
  key += options.kvWindow == KVWindow::Rolling ? " kv_window=rolling" : "";
  if (options.numDevices != 1)
    key += " devices=" + std::to_string(options.numDevices);
  for (int64_t k : options.numSpeculativeTokens)
    key += " speculative_tokens=" + std::to_string(k);
  if (options.onDeviceSampling)
    key += " sampler max_top_k_ids=" + std::to_string(options.maxTopKIds);
  if (options.outlineLayers != OutlineLayers::Auto)
    key += options.outlineLayers == OutlineLayers::On ? " outline_layers=on"
                                                      : " outline_layers=off";
  key += options.mxfp6 ? " mxfp6" : "";
  key += options.mxint8KV ? " mxint8_kv" : "";
  key += options.legacySpecializations ? " legacy_specializations" : "";
  key += options.weightsDType == ExportWeightsDType::F16    ? " weights=f16"
         : options.weightsDType == ExportWeightsDType::BF16 ? " weights=bf16"
                                                            : " weights=ir";
  if (options.calibrate > 0)
    key += " calibrate=" + std::to_string(options.calibrate);
  for (const std::string &scope : options.fp32Scopes)
    key += " fp32_scope=" + scope;
  if (!options.fp32ScopesFile.empty()) {
    std::string hash = hashFile(options.fp32ScopesFile);
    if (hash.empty())
      return emitError(loc) << "cannot read fp32 scopes file '"
                            << options.fp32ScopesFile << "'";
    key += " fp32_scopes_file=" + hash;
  }
  key += " qaic=" + findQAicCompile(options.qaicCompile);
  key += " aic_hw_version=" + options.aicHwVersion;
  for (const std::string &arg : options.qaicArgs)
    key += " qaic_arg=" + arg;
  std::string contentDir = checkpointContentDir(options.checkpointDir);
  for (const std::string &file :
       checkpointContentFiles(options.checkpointDir)) {
    std::string path = join(contentDir, file);
    // A hash the caller computed already (qeff compile --models hashes in the
    // batch, then compiles a miss in a card process) is not computed again.
    auto known = options.knownHashes.find(file);
    std::string hash =
        known != options.knownHashes.end() ? known->second : hashFile(path);
    if (hash.empty())
      return emitError(loc) << "cannot read '" << path << "'";
    key += " " + file + "=" + hash;
    options.knownHashes[file] = hash; // the manifest needs them too
  }
  return success();
}

LogicalResult mlir::qeff::lookupCompileCache(Location loc,
                                             CompileOptions &options,
                                             const std::string &cacheDir,
                                             CacheResult &result) {
  std::string key;
  if (failed(compileCacheKey(loc, options, key)))
    return failure();
  result.key = hashText(key);
  result.artifactDir = join(cacheDir, result.key);
  result.hit =
      llvm::sys::fs::exists(join(result.artifactDir, "qeff-manifest.json"));
  options.outputDir = result.artifactDir;
  return success();
}

namespace {
/// An exclusive flock(2) on a file, released (and the file closed) on
/// destruction. The lock files stay: removing one would race with a waiter.
class KeyLock {
public:
  ~KeyLock() {
    if (fd_ >= 0) {
      llvm::sys::fs::unlockFile(fd_);
      llvm::sys::fs::closeFile(fd_);
    }
  }
  std::error_code lock(const std::string &path,
                       const std::function<void()> &onWait) {
    llvm::Expected<llvm::sys::fs::file_t> fd = llvm::sys::fs::openNativeFileForWrite(
        path, llvm::sys::fs::CD_OpenAlways, llvm::sys::fs::OF_None);
    if (!fd)
      return llvm::errorToErrorCode(fd.takeError());
    fd_ = *fd;
    if (!llvm::sys::fs::tryLockFile(fd_))
      return {};
    if (onWait)
      onWait();
    return llvm::sys::fs::lockFile(fd_);
  }

private:
  int fd_ = -1;
};
} // namespace

LogicalResult mlir::qeff::compileThroughCache(
    MLIRContext &context, CompileOptions options, const std::string &cacheDir,
    CacheResult &result, CompileReport &report,
    const std::function<void()> &onLockWait,
    const std::function<void()> &onCompile) {
  Location loc = FileLineColLoc::get(&context, options.checkpointDir, 0, 0);
  if (failed(lookupCompileCache(loc, options, cacheDir, result)))
    return failure();
  if (result.hit)
    return success();
  if (std::error_code ec = llvm::sys::fs::create_directories(cacheDir))
    return emitError(loc) << "cannot create the cache directory '" << cacheDir
                          << "': " << ec.message();
  // One compile per key: whoever holds the lock builds, the others find the
  // entry complete once they get it.
  KeyLock lock;
  if (std::error_code ec =
          lock.lock(join(cacheDir, "." + result.key + ".lock"), onLockWait))
    return emitError(loc) << "cannot lock the cache entry " << result.key
                          << " in '" << cacheDir << "': " << ec.message();
  if (llvm::sys::fs::exists(join(result.artifactDir, "qeff-manifest.json"))) {
    result.hit = true;
    return success();
  }
  if (onCompile)
    onCompile();
  return compileCheckpoint(context, options, report);
}
