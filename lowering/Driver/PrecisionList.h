//===- PrecisionList.h - an artifact's numerics on the host -----*- C++ -*-===//
//
// Part of qeff. The fp32 node list of an artifact (node_precision.yaml, which
// `qeff compile` writes for qaic-compile's -node-precision-info), read back
// for the host device's fp16 emulation, and the --numerics options that use
// it: what `qeff run`, `qeff serve`, `qeff eval` and the Python module's
// Session share.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_LOWERING_DRIVER_PRECISIONLIST_H
#define QEFF_LOWERING_DRIVER_PRECISIONLIST_H

#include "qeff/runtime/Result.h"
#include "qeff/runtime/Session.h"

#include <set>
#include <string>

namespace mlir::qeff {

/// The node names of `path` (none when the file does not exist). Anything
/// but the form qeff writes is an error naming the line.
::qeff::runtime::Result<std::set<std::string>>
readPrecisionList(const std::string &path);

/// Sets the numerics of `options` for running `artifactDir` on `device`
/// ("host" or "qaic"): `numerics` as --numerics spells it (parseNumerics),
/// the fp32 nodes of the artifact's node_precision.yaml for an fp16 mode,
/// and the MX rounding ("even" | "nearest") and weight block axis ("k" |
/// "n"). An error names the flag or file at fault.
::qeff::runtime::Status applyNumerics(const std::string &artifactDir,
                                      const std::string &device,
                                      const std::string &numerics,
                                      const std::string &mxRounding,
                                      const std::string &mxWeightAxis,
                                      ::qeff::runtime::SessionOptions &options);

} // namespace mlir::qeff

#endif // QEFF_LOWERING_DRIVER_PRECISIONLIST_H
