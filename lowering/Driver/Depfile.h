//===- Depfile.h - the inputs of a compile, as a Make depfile ---*- C++ -*-===//
//
// Part of qeff. `qeff compile --depfile FILE` (and qeff_add_model() in the
// CMake package) tell a build system which files a compile read, so that
// Ninja and Make rerun it exactly when one of them changes. The list is the
// one the compile cache keys on (checkpointContentFiles: config, weights and
// their index, tokenizer files, generation config, chat template) plus the
// fp32-scopes file: it depends on the options and the checkpoint directory
// only, so a compile served from the cache writes the same depfile.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_LOWERING_DRIVER_DEPFILE_H
#define QEFF_LOWERING_DRIVER_DEPFILE_H

#include "lowering/Driver/CompileDriver.h"

#include <string>
#include <vector>

namespace mlir::qeff {

/// The files a compile of `options` reads, as absolute paths, sorted.
std::vector<std::string> compileInputFiles(const CompileOptions &options);

/// The file of `options.outputDir` the compile's emit kind produces last,
/// the depfile's target: qeff-manifest.json (device), model.onnx,
/// model.import.mlir or model.device.mlir; an absolute path.
std::string compilePrimaryOutput(const CompileOptions &options);

/// `target: input...` in Make syntax (spaces, '#' and '$' escaped as GCC
/// does), lines continued with a backslash.
std::string makeDepfile(const std::string &target,
                        const std::vector<std::string> &inputs);

/// Writes the depfile of a compile of `options` to `path`, atomically.
LogicalResult writeCompileDepfile(Location loc, const CompileOptions &options,
                                  const std::string &path);

} // namespace mlir::qeff

#endif // QEFF_LOWERING_DRIVER_DEPFILE_H
