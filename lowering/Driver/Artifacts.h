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
#include <vector>

namespace mlir::qeff {

/// {"specializations": [{"name": ..., "symbols": {...}}]} from the module's
/// `qeff.specializations`; the flat legacy form lists the symbol maps only.
std::string specializationsJson(ModuleOp module, bool legacy);

/// One entry per retained-state input and output with its precision
/// (`float16`, or `mxint8` for the KV cache with --mxint8-kv).
std::string customIOYaml(ModuleOp module, bool mxint8KV);

/// The manifest's `seq_len_dependent_rope` for the device IR (before
/// lowering): `{"kind": "dynamic" | "longrope", "threshold": T}` when some
/// qeff.rotary takes its frequencies from the call's sequence length L
/// (fixed while L <= T; the smallest T of them), "" when none does. A
/// cached key then depends on the step that wrote it, which prefix caching
/// must know (docs/serving.md).
std::string seqLenDependentRopeJson(ModuleOp module);

/// What qaic-compile prints when it takes only the flat specializations
/// form (quic/efficient-transformers#1129, where it exits with 255).
inline constexpr const char *kNamedSpecializationsRejected =
    "[json.exception.type_error.302] type must be string, but is object";

/// `arg` as one POSIX shell word: as it is when that is unambiguous, else
/// single-quoted.
std::string shellQuote(StringRef arg);

/// qaic-compile.sh: runs the compiler with `args` (relative to the artifact
/// directory) from there. The compiler is $QAIC_COMPILE, else
/// <sdk>/exec/qaic-compile, else <sdk>/exec/qaic-exec with -compile-only,
/// <sdk> being $QEFF_QAIC_SDK_DIR or /opt/qti-aic. With `flatSpecializations`
/// (the flat form of a named specializations.json), an Apps SDK that
/// rejects the named form (quic/efficient-transformers#1129) is given the
/// flat one.
std::string qaicCompileScript(const std::vector<std::string> &args,
                              const std::string &flatSpecializations);

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
