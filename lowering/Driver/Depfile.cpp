//===- Depfile.cpp - the inputs of a compile, as a Make depfile -----------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "lowering/Driver/Depfile.h"

#include "lowering/Driver/Artifacts.h"
#include "lowering/Driver/CompileCache.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::qeff;

namespace {
std::string absolute(StringRef path) {
  SmallString<256> p(path);
  llvm::sys::fs::make_absolute(p);
  llvm::sys::path::remove_dots(p, /*remove_dot_dot=*/true);
  return std::string(p.str());
}

std::string join(StringRef dir, StringRef name) {
  SmallString<256> p(dir);
  llvm::sys::path::append(p, name);
  return std::string(p.str());
}

/// A path as Make (and Ninja's depfile parser) reads it.
std::string escape(StringRef path) {
  std::string out;
  for (char c : path) {
    if (c == ' ' || c == '#')
      out += '\\';
    else if (c == '$')
      out += '$';
    out += c;
  }
  return out;
}
} // namespace

std::vector<std::string>
mlir::qeff::compileInputFiles(const CompileOptions &options) {
  std::string checkpoint = absolute(options.checkpointDir);
  std::string dir = checkpointContentDir(checkpoint);
  std::vector<std::string> files;
  for (const std::string &name : checkpointContentFiles(checkpoint))
    files.push_back(join(dir, name));
  if (!options.fp32ScopesFile.empty())
    files.push_back(absolute(options.fp32ScopesFile));
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

std::string mlir::qeff::compilePrimaryOutput(const CompileOptions &options) {
  const char *name = "qeff-manifest.json";
  switch (options.emit) {
  case EmitKind::MLIRImport:
    name = "model.import.mlir";
    break;
  case EmitKind::MLIRDevice:
    name = "model.device.mlir";
    break;
  case EmitKind::ONNX:
    name = "model.onnx";
    break;
  case EmitKind::Device:
    break;
  }
  return join(absolute(options.outputDir), name);
}

std::string mlir::qeff::makeDepfile(const std::string &target,
                                    const std::vector<std::string> &inputs) {
  std::string text = escape(target) + ":";
  for (const std::string &input : inputs)
    text += " \\\n  " + escape(input);
  return text + "\n";
}

LogicalResult mlir::qeff::writeCompileDepfile(Location loc,
                                              const CompileOptions &options,
                                              const std::string &path) {
  for (const std::string &input : compileInputFiles(options))
    if (input.find('\n') != std::string::npos)
      return emitError(loc) << "cannot write depfile '" << path
                            << "': the input path '" << input
                            << "' holds a newline";
  std::string dir = llvm::sys::path::parent_path(absolute(path)).str();
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return emitError(loc) << "cannot create the directory of depfile '"
                          << path << "': " << ec.message();
  return writeFileAtomically(
      loc, path,
      makeDepfile(compilePrimaryOutput(options), compileInputFiles(options)));
}
