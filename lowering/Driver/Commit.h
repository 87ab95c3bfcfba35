//===- Commit.h - Crash-safe publication of compile outputs -----*- C++ -*-===//
//
// Part of qeff. A compile writes into a hidden staging directory beside the
// output directory (`.<name>.qeff-staging-<pid>-<random>`), fsyncs every file
// and the directory, then publishes it with one rename(2) over the output
// name. A killed or failed compile therefore leaves nothing under the output
// name (and no compile-cache entry); a recompile replaces the earlier output
// whole, so no file of an earlier compile survives. Staging directories of
// dead processes are removed by the next compile into the same parent.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_LOWERING_DRIVER_COMMIT_H
#define QEFF_LOWERING_DRIVER_COMMIT_H

#include "mlir/IR/Location.h"
#include "mlir/Support/LogicalResult.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mlir::qeff {

/// Refuses an `outputDir` that is `checkpointDir` or lies inside it, with
/// symlinks and `..` resolved as far as the path exists (the staging
/// directory is created beside the output: inside the checkpoint too). qeff
/// only ever reads a checkpoint.
LogicalResult checkOutputOutsideCheckpoint(Location loc, const std::string &outputDir,
                                           const std::string &checkpointDir);

/// Checks that `outputDir` may receive a compile (absent, empty, or an
/// earlier qeff output), removes stale staging directories of dead processes
/// beside it, creates its parent and a fresh staging directory.
LogicalResult createStagingDir(Location loc, const std::string &outputDir,
                               std::string &staging);

/// fsyncs every file of `staging` and the directory itself, then renames it
/// to `outputDir` (replacing an earlier output whole) and fsyncs the parent.
/// `files` receives the published paths and sizes.
LogicalResult publishStagingDir(Location loc, const std::string &staging,
                                const std::string &outputDir,
                                std::vector<std::pair<std::string, uint64_t>> &files);

/// Removes a staging directory (a failed compile).
void removeStagingDir(const std::string &staging);

} // namespace mlir::qeff

#endif // QEFF_LOWERING_DRIVER_COMMIT_H
