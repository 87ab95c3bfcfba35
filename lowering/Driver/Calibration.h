//===- Calibration.h - fp16 ranges measured on the host device --*- C++ -*-===//
//
// Part of qeff. `qeff compile --calibrate[=N]`: runs the device artifact on
// the host device in fp32 over sample prompts, records the largest |value| of
// every node output, and returns the nodes that must stay fp32 on an fp16
// device: those whose range comes near the fp16 limit, and the matrix
// products that consume them (an fp16 MatMul would convert its fp32 input
// back to fp16 and overflow there).
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_LOWERING_DRIVER_CALIBRATION_H
#define QEFF_LOWERING_DRIVER_CALIBRATION_H

#include "mlir/IR/Location.h"
#include "mlir/Support/LogicalResult.h"

#include <string>
#include <utility>
#include <vector>

namespace mlir::qeff {

struct CalibrationReport {
  int prompts = 0;
  int64_t tokens = 0;
  /// The nodes marked fp32 and the largest |value| seen at each (for the
  /// consumers: the value entering them).
  std::vector<std::pair<std::string, float>> fp32Nodes;
  /// The largest |value| over all other nodes.
  float maxElsewhere = 0;
};

/// |value| above which a node output is kept in fp32 (a quarter of the
/// largest finite fp16, 65504, for headroom over inputs not sampled).
inline constexpr float kCalibrationThreshold = 65504.0f / 4;

/// Calibrates the artifact in `artifactDir` with `numPrompts` sample prompts
/// (encoded with the artifact's tokenizer when it has one, else seeded random
/// ids). Errors are emitted at `loc`.
LogicalResult calibrateFP32Nodes(Location loc, const std::string &artifactDir,
                                 int numPrompts, CalibrationReport &report);

} // namespace mlir::qeff

#endif // QEFF_LOWERING_DRIVER_CALIBRATION_H
