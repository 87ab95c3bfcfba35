//===- PrecisionList.h - reading node_precision.yaml ------------*- C++ -*-===//
//
// Part of qeff. The fp32 node list of an artifact (node_precision.yaml, which
// `qeff compile` writes for qaic-compile's -node-precision-info), read back
// for the host device's fp16 emulation (`qeff run --numerics fp16`, the
// Python module's Session).
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_LOWERING_DRIVER_PRECISIONLIST_H
#define QEFF_LOWERING_DRIVER_PRECISIONLIST_H

#include "qeff/runtime/Result.h"

#include <set>
#include <string>

namespace mlir::qeff {

/// The node names of `path` (none when the file does not exist). Anything
/// but the form qeff writes is an error naming the line.
::qeff::runtime::Result<std::set<std::string>>
readPrecisionList(const std::string &path);

} // namespace mlir::qeff

#endif // QEFF_LOWERING_DRIVER_PRECISIONLIST_H
