//===- HostDeviceImpl.h - The host device's executor, shared by its files -===//
//
// Internal to runtime/host: the HostDevice class and its plan, split over
// HostDevice.cpp (load), HostPlan.cpp (plan) and HostExecute.cpp (execute).
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_HOST_HOSTDEVICEIMPL_H
#define QEFF_RUNTIME_HOST_HOSTDEVICEIMPL_H

#include "runtime/host/ExternalData.h"
#include "runtime/host/HostDevice.h"
#include "runtime/host/Kernel.h"

#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace qeff::runtime::host {

struct PlanNode {
  std::string name;
  std::string opType;
  std::vector<int> inputs;  ///< value ids, -1 for an omitted input
  std::vector<int> outputs; ///< value ids, -1 for an omitted output
  std::vector<bool> move;   ///< input handed over (last use)
  std::vector<int> freeAfter;
  std::unique_ptr<Kernel> kernel;
  bool fp32 = false;
  bool transB = false; ///< a MatMul reading B^T (a folded Transpose)
  /// A constant folded into the kernel (a MatMul's weight), -1 if none: for
  /// the inf/nan check, as if it were still an input.
  int foldedConst = -1;
  /// MX emulation (numerics/MxNumerics.cpp): a ScatterND writing retained
  /// state whose written slices are MXINT8-quantized, and the inputs that
  /// cross a tensor-parallel link (MXINT8-quantized before the kernel).
  bool mxKVWrite = false;
  std::vector<bool> mxIOInputs;
  const onnx::NodeProto *proto = nullptr; ///< valid during load only
};

inline std::string nodeLabel(const std::string &name, const std::string &opType) {
  return "node '" + name + "' (" + opType + ")";
}

inline bool isFloat(const Tensor &t) { return t.dtype() == DType::Float32; }
/// The 2-byte float dtypes a weight may keep (widened by the kernels).
inline bool isTwoByteFloat(DType d) { return d == DType::Float16 || d == DType::BFloat16; }

/// A Float16 or BFloat16 tensor widened to Float32 (parallel on ctx's pool).
Tensor widenHalf(const Context &ctx, const Tensor &t);

/// Rounds a float tensor to fp16 (in place when writable and unshared, else
/// into a copy).
Tensor roundedToHalf(Context &ctx, Tensor t);

/// True when a float (or float16) tensor holds an inf or NaN (false for
/// other dtypes): a branch-free scan the compiler vectorises, split over
/// ctx's pool.
bool anyNonFinite(const Context &ctx, const Tensor &t);

/// nonFinite_ states.
enum : uint8_t { kFinite = 0, kNonFinite = 1, kUnchecked = 2 };

/// The host device. load() (HostDevice.cpp) parses the model, loads the
/// constants and creates the kernels; buildPlan() (HostPlan.cpp) orders,
/// fuses and frees; run() (HostExecute.cpp) executes the plan.
class HostDevice : public Device {
public:
  explicit HostDevice(HostOptions options) : opts_(std::move(options)) {
    const char *prof = std::getenv("QEFF_HOST_PROFILE");
    profile_ = prof != nullptr;
    profileShapes_ = prof && std::string(prof) == "shapes";
  }
  ~HostDevice() override { printProfile(); }

  void load(const std::string &path);

  const std::vector<TensorInfo> &inputs() const override { return inputs_; }
  const std::vector<TensorInfo> &outputs() const override { return outputs_; }
  Status run(std::vector<Tensor> &inputs, std::vector<Tensor> &outputs) override;

private:
  int valueId(const std::string &name) {
    auto [it, inserted] = ids_.try_emplace(name, static_cast<int>(names_.size()));
    if (inserted)
      names_.push_back(name);
    return it->second;
  }
  Tensor loadInitializer(const onnx::TensorProto &t, const std::string &dir);
  // Plan (HostPlan.cpp): topological order, fusions, liveness.
  void buildPlan(std::vector<PlanNode> pending);
  void fusePlan();
  /// The node of `op` with `inputs` inputs producing a value it alone
  /// reads, not dropped; null otherwise (fusePlan's matcher).
  using SingleReader = std::function<PlanNode *(int value, const char *op, size_t inputs)>;
  void fuseRotateHalf(std::vector<bool> &drop, const std::vector<int> &producer,
                      const std::vector<int> &readers, const SingleReader &one);
  void dropNodes(const std::vector<bool> &drop);
  void packWeights();
  void selectRowsEarly(); // RowSelect.cpp
  // MX emulation (numerics/MxNumerics.cpp).
  void markMxNodes();
  void quantizeMxWeights();
  void quantizeMxWrites(const Tensor &indices, Tensor &out);
  void quantizeMxState(std::vector<Tensor> &outputs);
  Tensor quantizeMxIO(Context &ctx, const Tensor &t);
  void releaseMxWeight(const void *p, size_t bytes);
  void markReleasableMxWeights(const std::function<int(const PlanNode &)> &packedWeight);
  // Execution (HostExecute.cpp).
  void runNode(Context &ctx, PlanNode &node);
  bool anyInputNonFinite(const Context &ctx, const PlanNode &node);

  HostOptions opts_;
  std::shared_ptr<Arena> arena_ = std::make_shared<Arena>();
  std::unique_ptr<ExternalDataFiles> external_;
  std::unordered_map<std::string, int> ids_;
  std::vector<std::string> names_;
  std::vector<TensorInfo> inputs_, outputs_;
  std::vector<int> inputIds_, outputIds_;
  std::vector<Tensor> constants_;
  std::vector<bool> isConst_;
  std::vector<PlanNode> plan_;
  std::vector<Tensor> values_;
  /// Per value, for the inf/nan check: kFinite, kNonFinite, or kUnchecked
  /// (a constant nobody has needed to scan yet, see anyInputNonFinite).
  std::vector<uint8_t> nonFinite_;
  std::vector<Tensor> in_, out_;
  /// Retained-state outputs not written by a marked ScatterND: quantized
  /// whole after each run under mxint8 KV (indices into outputIds_).
  std::vector<size_t> mxWholeStateOutputs_;
  /// MXFP6 weight copies (anonymous mappings, returned to the system once
  /// laid out for the kernels) and whether each holds inf/nan.
  struct MxBuffer {
    const char *base;
    size_t size;
    int value;
    bool releasable = false; ///< read by one weight kernel only
  };
  std::vector<MxBuffer> mxBuffers_;
  std::map<int, bool> mxNonFinite_;

  // QEFF_HOST_PROFILE=1: wall time per op type, per input-shape signature,
  // printed to stderr when the device is destroyed.
  struct OpTime {
    double seconds = 0;
    int64_t calls = 0;
  };
  struct RunProfile {
    int64_t runs = 0;
    double seconds = 0;
    std::map<std::string, OpTime> ops;
  };
  void printProfile();
  bool profile_ = false, profileShapes_ = false;
  RunProfile *currentProfile_ = nullptr;
  std::map<std::string, RunProfile> profiles_;
};

} // namespace qeff::runtime::host

#endif // QEFF_RUNTIME_HOST_HOSTDEVICEIMPL_H
