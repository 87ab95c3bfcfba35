//===- Artifacts.h - the files a compile writes -----------------*- C++ -*-===//
//
// Part of qeff. Text artifacts next to model.onnx: specializations.json,
// custom_io.yaml and qeff-manifest.json, each written from the device IR.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_LOWERING_DRIVER_ARTIFACTS_H
#define QEFF_LOWERING_DRIVER_ARTIFACTS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include <string>

namespace mlir::qeff {

/// {"specializations": [{"name": ..., "symbols": {...}}]} from the module's
/// `qeff.specializations`; the flat legacy form lists the symbol maps only.
std::string specializationsJson(ModuleOp module, bool legacy);

/// One entry per retained-state input and output with its precision
/// (`float16`, or `mxint8` for the KV cache with --mxint8-kv).
std::string customIOYaml(ModuleOp module, bool mxint8KV);

/// A 128-bit content hash (BLAKE3, truncated) of a file, as 32 hex digits,
/// streamed in constant memory; "" on error.
std::string hashFile(const std::string &path);
/// The same hash of a string.
std::string hashText(StringRef text);

/// Writes `contents` to `path` through a temporary file and a rename.
LogicalResult writeFileAtomically(Location loc, const std::string &path,
                                  StringRef contents);

} // namespace mlir::qeff

#endif // QEFF_LOWERING_DRIVER_ARTIFACTS_H
