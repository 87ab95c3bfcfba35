//===- HostDevice.h - Reference device executing ONNX on the CPU -*- C++ -*-===//
//
// Loads model.onnx (+ external data through mmap; float32 initializers used in
// place from the mapping when aligned), inlines model-local functions, checks
// every node against the kernel table (unsupported op or attribute: an error
// naming the node, at load time), and builds a static plan: topological
// order, the last use of every value (buffers return to a pool right after
// it; inputs at their last use may be overwritten in place). Shapes are
// computed per run from the concrete input shapes. Load-time fusions: a
// Transpose of the last two dims feeding a MatMul's B becomes a transposed-B
// read; in fp32 (no checkFinite, no observer) also Mul(x, Sigmoid(x)) and the
// attention's Softmax(Where(mask, S * scale, fill)). QEFF_HOST_PROFILE=1 (or
// =shapes) prints per-op wall times to stderr when the device is destroyed.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_HOST_HOSTDEVICE_H
#define QEFF_RUNTIME_HOST_HOSTDEVICE_H

#include "qeff/runtime/Result.h"
#include "qeff/runtime/Session.h"

#include <memory>
#include <functional>
#include <set>
#include <string>

namespace qeff::runtime::host {

struct HostOptions {
  Numerics numerics = Numerics::FP32;
  /// MX emulation (SessionOptions::mx).
  MxOptions mx;
  std::set<std::string> fp32Nodes;
  bool checkFinite = false;
  int numThreads = 0;
  /// Lay the weights out at load (SessionOptions::prepackWeights).
  bool prepackWeights = false;
  /// The largest tensor a run may allocate (SessionOptions::maxTensorBytes).
  uint64_t maxTensorBytes = 0;
  /// Sees every float node output after it is computed (calibration).
  std::function<void(const std::string &node, const std::string &opType,
                     const Tensor &output)>
      outputObserver;
};

/// Loads `modelPath` for the host device.
Result<std::unique_ptr<Device>> loadHostDevice(const std::string &modelPath,
                                               const HostOptions &options);

} // namespace qeff::runtime::host

#endif // QEFF_RUNTIME_HOST_HOSTDEVICE_H
