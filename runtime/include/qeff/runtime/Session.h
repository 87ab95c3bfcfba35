//===- Session.h - Running a qeff artifact on a device ----------*- C++ -*-===//
//
// A Session opens a `qeff compile` output directory (model.onnx + external
// data, specializations.json) on a device and runs it. It follows the device
// contract (docs/device.md): inputs `past_key.{i}`/`past_value.{i}` whose
// outputs `<name>_RetainedState` exist are retained state, kept by the session
// between runs and fed back in place; the caller passes only the per-step
// inputs (`input_ids`, `position_ids`, `batch_index`). The specialization is
// selected from the shapes of the given inputs. On the host device the session
// holds the retained state; on the AI 100 (DeviceKind::Qaic, when this build
// has the Platform SDK: qaicDeviceAvailable()) it stays on the card.
//
// In namespace qeff::runtime (test/package compiles this example as written):
//
//   Result<Session> s = Session::open(dir, DeviceKind::Host, {});
//   if (!s) { std::puts(s.error().c_str()); return 1; }
//   Status st = s->run({{"input_ids", ids}, {"position_ids", pos}});
//   if (!st) { std::puts(st.error().c_str()); return 1; }
//   Result<Tensor> logits = s->getOutput("logits"); // [batch, 1, vocab]
//   if (!logits) { std::puts(logits.error().c_str()); return 1; }
//
// No MLIR types; errors are Result values, never aborts or exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_SESSION_H
#define QEFF_RUNTIME_SESSION_H

#include "qeff/runtime/Result.h"
#include "qeff/runtime/Tensor.h"

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace qeff::runtime {

enum class DeviceKind { Host, Qaic };

/// How the host device computes floats.
enum class Numerics {
  /// Everything in float32.
  FP32,
  /// fp16 emulation: every float output of every node (and every float
  /// constant and input) rounded to IEEE fp16, as an fp16 device computes;
  /// nodes named in `SessionOptions::fp32Nodes` keep float32 outputs. The first
  /// node producing inf/nan from finite inputs fails the run, naming it.
  FP16,
};

/// Rounding of values to an MX element: `Nearest` rounds ties away from
/// zero (microsoft/microxcaling's default), `Even` ties to even.
enum class MxRounding { Nearest, Even };

/// Which axis of a MatMul weight [.., K, N] (Gemm: as its transB says) the
/// MXFP6 blocks of 32 run along: the reduction axis K or the output axis N.
enum class MxWeightAxis { Reduction, Output };

/// Host device: OCP Microscaling (MX) emulation of what qaic-compile's MX
/// options store (docs/numerics.md). Off by default: the default numerics
/// are bit-identical to a build without it. Combines with Numerics::FP16.
struct MxOptions {
  /// `-mxfp6-matmul`: every constant second operand of a MatMul or Gemm
  /// (the initializers the compiler compresses) fake-quantized to MXFP6
  /// E2M3 once, when the session opens.
  bool mxfp6Weights = false;
  /// mxint8 KV cache (custom_io.yaml): each retained-state write
  /// fake-quantized to MXINT8, blocks along the last axis (head_dim).
  bool mxint8KV = false;
  /// `-allow-mxint8-mdp-io`: the activations a tensor-parallel artifact
  /// (--num-devices N > 1) sends between devices fake-quantized to MXINT8
  /// (the attention and MLP outputs entering each decoder layer's residual
  /// add).
  bool mxint8IO = false;
  MxRounding rounding = MxRounding::Even;
  MxWeightAxis weightAxis = MxWeightAxis::Reduction;
  bool any() const { return mxfp6Weights || mxint8KV || mxint8IO; }
};

struct SessionOptions {
  Numerics numerics = Numerics::FP32;
  /// MX emulation (host device only).
  MxOptions mx;
  /// Nodes computed in fp32 under Numerics::FP16 (the precision list), by
  /// node name or by first output name (qaic's -node-precision-info form).
  /// A name that matches no node of the model is an error at open.
  std::set<std::string> fp32Nodes;
  /// Check every float node output for inf/nan in FP32 mode too.
  bool checkFinite = false;
  /// Threads for matrix products and large elementwise ops (0: all cores).
  int numThreads = 0;
  /// Host device: lay every constant weight out for the matrix kernels when
  /// the session opens (what a server wants: no request pays for it, as ONNX
  /// Runtime prepacks at session creation). Off, a weight is read in place
  /// by its first short product and laid out by the next (what a one-shot
  /// `qeff run` wants: the first token sooner).
  bool prepackWeights = false;
  /// Host device: the largest tensor (a node's value, when constant nodes
  /// are folded at open or in a run, or a retained-state buffer) it may
  /// allocate, in bytes; needing a larger one is an error naming the node or
  /// state input. 0: only the runtime's own 2^48-byte
  /// bound. For models that are not trusted to size their own tensors (the
  /// artifact fuzzer sets 64 MiB).
  uint64_t maxTensorBytes = 0;
  /// Model file inside the artifact directory.
  std::string modelFile = "model.onnx";
  /// Qaic device: the AI 100 card (QID) to run on.
  int qaicDeviceId = 0;
  /// Qaic device: how long one inference may take before the SDK gives up
  /// with QS_TIMEDOUT (the program's data-path timeout), in milliseconds,
  /// 1 .. 86400000. The kernel's own default is 5 s, too short for long
  /// prefill chunks of big models; 60 s is what QEfficient's session sets.
  int64_t qaicTimeoutMs = 60000;
  /// The device group an N-device artifact (`qeff compile --num-devices N`,
  /// `num_devices` in qeff-manifest.json) opens on: exactly N distinct
  /// device ids, else open() fails. Empty: qaicDeviceId .. qaicDeviceId+N-1.
  /// The host device runs the whole network as one device (the partition is
  /// the AI 100 compiler's business), after the same check.
  std::vector<int> deviceGroup;
  /// Host device: sees every float node output after it is computed (node
  /// name, op type, value). Calibration records ranges with it.
  std::function<void(const std::string &node, const std::string &opType,
                     const Tensor &output)>
      outputObserver;
};

/// The devices `options` open an artifact of `numDevices` devices on (the
/// check of SessionOptions::deviceGroup), or an error naming the mismatch.
Result<std::vector<int>> resolveDeviceGroup(const SessionOptions &options,
                                            int64_t numDevices);

/// One named specialization: symbol -> value.
struct Specialization {
  std::string name;
  std::map<std::string, int64_t> symbols;
};

/// A named set of tensors (inputs or outputs).
using TensorMap = std::map<std::string, Tensor>;

class Device;

class Session {
public:
  /// Opens `artifactDir` (or a path to an .onnx file) on `kind`. Load-time
  /// errors (missing files, unsupported ops or attributes, naming the node)
  /// are reported here.
  static Result<Session> open(const std::string &artifactDir, DeviceKind kind,
                              const SessionOptions &options = {});

  Session(Session &&) noexcept;
  Session &operator=(Session &&) noexcept;
  ~Session();

  /// Runs one step. `inputs` holds the per-step inputs by name; retained
  /// state is supplied by the session (an explicitly given past_* input
  /// replaces it). On success the outputs are available from getOutput();
  /// the `_RetainedState` outputs become the next run's state. A failed run
  /// resets the retained state to zeros.
  Status run(const TensorMap &inputs);

  /// A non-retained output of the last successful run (shares its buffer;
  /// valid until the next run).
  Result<Tensor> getOutput(const std::string &name) const;
  /// All non-retained outputs of the last run.
  const TensorMap &outputs() const { return outputs_; }

  /// A copy of a retained-state buffer, by input name (`past_key.0`) or
  /// output name (`past_key.0_RetainedState`). A device that keeps the state
  /// itself may refuse (the qaic device does: the state stays on the card).
  Result<Tensor> readState(const std::string &name) const;
  /// Zeroes every retained-state buffer (on a device that keeps the state,
  /// before its next run).
  void reset();

  /// The model's declared inputs/outputs, the retained-state input names and
  /// the specializations (empty without specializations.json).
  const std::vector<TensorInfo> &inputInfos() const;
  const std::vector<TensorInfo> &outputInfos() const;
  const std::vector<std::string> &stateNames() const { return stateNames_; }
  const std::vector<Specialization> &specializations() const {
    return specializations_;
  }
  /// The specialization the last run used (empty name when none).
  const std::string &lastSpecialization() const { return lastSpecialization_; }
  /// For rope frequencies that follow the call's sequence length L (dynamic
  /// NTK, longrope: qeff-manifest.json's `seq_len_dependent_rope`), the
  /// largest L at which they are still the fixed ones; -1 without such
  /// scaling. Past it a cached key depends on the step that wrote it.
  int64_t ropeThreshold() const { return ropeThreshold_; }

private:
  Session();

  std::unique_ptr<Device> device_;
  std::vector<Specialization> specializations_;
  std::vector<std::string> stateNames_; ///< retained-state input names
  TensorMap state_;                     ///< input name -> buffer
  TensorMap outputs_;
  std::string lastSpecialization_;
  uint64_t maxTensorBytes_ = 0; ///< SessionOptions::maxTensorBytes
  int64_t ropeThreshold_ = -1;  ///< ropeThreshold()
};

/// The interface a device implements (host CPU executor, AI 100).
class Device {
public:
  virtual ~Device() = default;
  virtual const std::vector<TensorInfo> &inputs() const = 0;
  virtual const std::vector<TensorInfo> &outputs() const = 0;
  /// Runs with every declared input in `inputs` (order of inputs()); fills
  /// `outputs` in the order of outputs(). Input tensors may be consumed
  /// (their buffers reused in place). On a device that keepsState(), a
  /// retained-state input the caller did not give is an empty Tensor (keep
  /// the device's state) and the `_RetainedState` outputs are left empty.
  virtual Status run(std::vector<Tensor> &inputs,
                     std::vector<Tensor> &outputs) = 0;

  /// True when the device keeps the retained state itself between runs (the
  /// AI 100 keeps the KV cache on the card); the Session then holds none.
  virtual bool keepsState() const { return false; }
  /// Zeroes the state the device keeps, at the latest before its next run.
  virtual void resetState() {}
  /// A copy of the kept state of retained-state input `name`.
  virtual Result<Tensor> readState(const std::string &name) const {
    return makeError("retained state '" + name + "' is not readable on this device");
  }
};

/// Parses a `--numerics` value: `fp32`, `fp16`, `mxfp6`, `mxint8-kv` and
/// `mxint8-io` joined by `+` (`fp16+mxfp6+mxint8-kv` is what qaic-compile's
/// `-convert-to-fp16 -mxfp6-matmul` with an mxint8 KV cache computes; MX
/// alone keeps float32 compute), into `options.numerics` and the flags of
/// `options.mx` (rounding and axis untouched). An error names the bad part.
Status parseNumerics(const std::string &text, SessionOptions &options);

/// The canonical spelling of the numerics of `options` (`fp32`,
/// `fp16+mxfp6+mxint8-kv`, ...).
std::string numericsName(const SessionOptions &options);

/// Whether this build has the AI 100 (qaic) device; when not, `why` (if
/// given) receives the reason: what was probed at configure time.
bool qaicDeviceAvailable(std::string *why = nullptr);

/// Parses a specializations.json text. `source` names it in messages.
Result<std::vector<Specialization>>
parseSpecializations(const std::string &text, const std::string &source);

} // namespace qeff::runtime

#endif // QEFF_RUNTIME_SESSION_H
