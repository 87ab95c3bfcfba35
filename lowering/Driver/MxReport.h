//===- MxReport.h - what -mxfp6-matmul will compress ------------*- C++ -*-===//
//
// Part of qeff. `qeff compile --report-mx` (and qeff-manifest.json's "mx"):
// per initializer of model.onnx, whether qaic-compile's -mxfp6-matmul
// compresses it (a float matrix whose every reader takes it as the second
// operand of a MatMul or Gemm, through Cast and last-two-dims Transpose
// nodes and into model-local functions) and its bytes on the device: MXFP6
// blocks of 32 along the reduction axis (32 x 6 bits + an 8-bit E8M0 scale,
// 25 bytes) for those, fp16 (-convert-to-fp16) for the other floats. A
// float matrix of at least kMxWarnBytes left uncompressed because it is the
// first operand of a MatMul (a weight-first product) gets a warning. With
// measured errors, each compressed tensor's relative RMS error under MXFP6
// (the weights read from model.onnx.data), to rank what to keep out of it.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_LOWERING_DRIVER_MXREPORT_H
#define QEFF_LOWERING_DRIVER_MXREPORT_H

#include "mlir/IR/Location.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::qeff {

/// Uncompressed float matrices at least this large (in fp16) are warned of.
inline constexpr uint64_t kMxWarnBytes = uint64_t(1) << 20;

struct MxTensorReport {
  std::string name;
  std::vector<int64_t> shape;
  bool compressed = false;
  /// Why not, when not ("first operand of MatMul '<node>'", "read by
  /// Gather", "not a float matrix").
  std::string reason;
  uint64_t deviceBytes = 0; ///< with -mxfp6-matmul
  uint64_t fp16Bytes = 0;   ///< without it
  double error = -1;        ///< relative RMS error under MXFP6 (-1: not measured)
};

struct MxReport {
  std::vector<MxTensorReport> tensors;
  uint64_t compressedBytes = 0, uncompressedBytes = 0, fp16Bytes = 0;
  int64_t compressedTensors = 0;
  std::vector<std::string> warnings;
};

/// Analyses `model` (an ONNX file; its external data is read only with
/// `measureErrors`). Errors are emitted at `loc`.
LogicalResult mxCompressionReport(Location loc, const std::string &model, bool measureErrors,
                                  MxReport &report);

/// The report as qeff-manifest.json records it.
nlohmann::ordered_json mxReportJson(const MxReport &report);

/// The report as `qeff compile --report-mx` prints it: totals, warnings,
/// every tensor, and (when measured) the tensors with the largest error.
void printMxReport(const MxReport &report, bool compiledWithMxfp6, llvm::raw_ostream &os);

} // namespace mlir::qeff

#endif // QEFF_LOWERING_DRIVER_MXREPORT_H
