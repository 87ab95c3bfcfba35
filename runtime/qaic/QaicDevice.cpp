//===- QaicDevice.cpp - The Cloud AI 100 device (Platform SDK) ------------===//
//
// The SDK calls used (all in namespace qaic::rt of QAicApi.hpp):
//   Context::Factory(nullptr, group)            a runtime context on the group
//   Qpc::Factory(dir)                           <dir>/programqpc.bin
//   qpc->getBufferMappingsV2()                  bindings + allowed shapes
//   InferenceSet::Factory(ctx, qpc, group[0], 1, 1, &properties)
//                                               one activation, one handle;
//                                               devMapping, data-path timeout
//   set->getAvailable(handle)                   blocks until a handle is free
//   handle->setBufferDimensions, then setInputBuffers / setOutputBuffers
//   set->submit(handle, id), set->getCompletedId(handle, id),
//   set->putCompleted(std::move(handle))
// Factories throw on failure (std::exception subclasses); every other call
// returns a QStatus, which is checked and named in the error. Nothing aborts.
// docs/device.md ("QAIC device") gives the public sources of each call.
//
//===----------------------------------------------------------------------===//

#include "runtime/qaic/QaicDevice.h"
#include "runtime/qaic/QaicSupport.h"

#include "runtime/QaicConfig.h"

#include "QAicApi.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <optional>
#include <type_traits>
#include <utility>

namespace qeff::runtime::qaic {

namespace {

namespace fs = std::filesystem;

constexpr char kRetainedSuffix[] = "_RetainedState";
constexpr char kQpcFile[] = "programqpc.bin";
/// Bounds of SessionOptions::qaicTimeoutMs (one day).
constexpr int64_t kMaxTimeoutMs = 24ll * 3600 * 1000;

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() > suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// QStatus as the SDK names it (QAicTypes.h).
std::string statusText(QStatus status) {
  static const std::pair<int, const char *> names[] = {
      {QS_SUCCESS, "QS_SUCCESS"},
      {QS_PERM, "QS_PERM (permission denied)"},
      {QS_AGAIN, "QS_AGAIN (try again)"},
      {QS_NOMEM, "QS_NOMEM (not enough memory)"},
      {QS_BUSY, "QS_BUSY (device or resource busy)"},
      {QS_NODEV, "QS_NODEV (no such device)"},
      {QS_INVAL, "QS_INVAL (invalid argument)"},
      {QS_NOSPC, "QS_NOSPC (no space)"},
      {QS_BADFD, "QS_BADFD (bad file descriptor)"},
      {QS_TIMEDOUT, "QS_TIMEDOUT (timeout)"},
      {QS_PROTOCOL, "QS_PROTOCOL (protocol error)"},
      {QS_UNSUPPORTED, "QS_UNSUPPORTED"},
      {QS_DEV_ERROR, "QS_DEV_ERROR (device error)"},
      {QS_ERROR, "QS_ERROR (error)"}};
  int code = static_cast<int>(status);
  const char *name = "unknown status";
  for (const auto &[value, text] : names)
    if (value == code)
      name = text;
  return std::string(name) + ", status " + std::to_string(code);
}

/// Host storage and element size of a QPC buffer type, by the SDK's names
/// (runtime.md's list; BFLOAT16, UINT8 and FLOAT64C where this SDK's header
/// has them, cmake/QEffQaicSdk.cmake). Sizes as Qualcomm's Triton backend
/// gives them.
template <typename E>
std::optional<std::pair<Storage, uint32_t>> storageOf(E type) {
  int t = static_cast<int>(type);
  auto is = [t](auto name) { return t == static_cast<int>(name); };
  if (is(BUFFER_DATA_TYPE_FLOAT))
    return std::make_pair(Storage::F32, 4u);
  if (is(BUFFER_DATA_TYPE_FLOAT16))
    return std::make_pair(Storage::F16, 2u);
  if (is(BUFFER_DATA_TYPE_INT64I))
    return std::make_pair(Storage::I64, 8u);
  if (is(BUFFER_DATA_TYPE_INT32I) || is(BUFFER_DATA_TYPE_INT32Q))
    return std::make_pair(Storage::I32, 4u);
  if (is(BUFFER_DATA_TYPE_INT8))
    return std::make_pair(Storage::Byte, 1u);
  if (is(BUFFER_DATA_TYPE_INT8Q) || is(BUFFER_DATA_TYPE_UINT8Q))
    return std::make_pair(Storage::Opaque, 1u);
  if (is(BUFFER_DATA_TYPE_INT16Q))
    return std::make_pair(Storage::Opaque, 2u);
#if QEFF_QAIC_HAS_BFLOAT16
  if (is(BUFFER_DATA_TYPE_BFLOAT16))
    return std::make_pair(Storage::BF16, 2u);
#endif
#if QEFF_QAIC_HAS_UINT8
  if (is(BUFFER_DATA_TYPE_UINT8))
    return std::make_pair(Storage::Byte, 1u);
#endif
#if QEFF_QAIC_HAS_FLOAT64C
  if (is(BUFFER_DATA_TYPE_FLOAT64C))
    return std::make_pair(Storage::Opaque, 8u);
#endif
  return std::nullopt;
}

/// Sets a text field of an SDK properties struct, whatever its C++ type (a
/// std::string, a const char * or a char array: the header's is not public).
template <typename Field> void setText(Field &field, const std::string &text) {
  if constexpr (std::is_array_v<Field>) {
    std::strncpy(field, text.c_str(), sizeof(field) - 1);
    field[sizeof(field) - 1] = 0;
  } else {
    field = text.c_str();
  }
}

/// One buffer binding of the QPC.
struct Binding {
  std::string name;
  uint32_t index = 0; ///< position in the QPC's buffer list
  bool input = false;
  bool retained = false; ///< `past_*` input or `*_RetainedState` output
  Storage storage = Storage::F32;
  uint32_t elemSize = 4;
  size_t byteSize = 0; ///< BufferMapping::size
  std::vector<Dims> shapes; ///< allowed dims, one per specialization

  /// Bytes of a full buffer of `dims`: dims x element size, the binding's
  /// own size for storage qeff does not interpret (MXINT8: block scales).
  size_t fullBytes(const Dims &dims) const {
    if (storage == Storage::Opaque)
      return byteSize;
    return static_cast<size_t>(numElements(Shape(dims.begin(), dims.end()))) * elemSize;
  }
};

// The SDK's shared-pointer types, as its factories return them.
using ContextPtr = decltype(::qaic::rt::Context::Factory(
    nullptr, std::declval<std::vector<QID> &>()));
using QpcPtr = decltype(::qaic::rt::Qpc::Factory(std::declval<std::string>()));
using SetPtr = decltype(::qaic::rt::InferenceSet::Factory(
    std::declval<ContextPtr &>(), std::declval<QpcPtr &>(), QID{}, uint32_t{},
    uint32_t{}));
using HandlePtr = ::qaic::rt::shInferenceHandle;

class QaicDevice final : public Device {
public:
  const std::vector<TensorInfo> &inputs() const override { return inputs_; }
  const std::vector<TensorInfo> &outputs() const override { return outputs_; }
  bool keepsState() const override { return true; }
  void resetState() override { zeroState_ = true; }
  Result<Tensor> readState(const std::string &name) const override {
    return makeError(
        "retained state '" + name +
        "' stays on the AI 100 card and is not read back (the qaic device "
        "binds no buffer to the _RetainedState outputs); run on the host "
        "device to inspect it");
  }

  Status run(std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    try {
      return runOnCard(inputs, outputs);
    } catch (const std::exception &e) {
      return makeError(std::string("qaic: ") + e.what());
    }
  }

  static Result<std::unique_ptr<Device>> load(const fs::path &dir,
                                              const SessionOptions &options);

private:
  Status runOnCard(std::vector<Tensor> &inputs, std::vector<Tensor> &outputs);
  /// The specialization whose allowed shapes match every given input.
  Result<size_t> selectShape(const std::vector<Tensor> &inputs) const;
  Status readBindings(const std::string &qpcFile);
  /// Sets dims, then buffers, on `handle`; the error names the call.
  Status bind(const HandlePtr &handle,
              const std::vector<std::pair<uint32_t, Dims>> &dims,
              const std::vector<QBuffer> &in, const std::vector<QBuffer> &out);
  /// Marks the session unusable (the SDK kept the handle) and says so.
  Status broken(const std::string &what);

  std::vector<TensorInfo> inputs_, outputs_;
  std::vector<Binding> bindings_; ///< by QPC index
  /// inputs_/outputs_ (declared order) -> bindings_.
  std::vector<size_t> inputBinding_, outputBinding_;
  size_t numShapes_ = 0;
  bool zeroState_ = true; ///< bind zeros to the past_* inputs on the next run
  std::vector<uint8_t> zeros_;
  uint32_t nextId_ = 0;
  int64_t timeoutMs_ = 0;
  std::string brokenWhy_; ///< non-empty: every run fails with it
  std::string devMapping_; ///< kept alive for the properties that point at it
  // Destroyed in reverse: the inference set before the QPC and the context.
  ContextPtr context_;
  QpcPtr qpc_;
  SetPtr set_;
  HandlePtr idle_; ///< a handle taken but not submitted (reused next run)
};

Status QaicDevice::readBindings(const std::string &qpcFile) {
  auto mappings = qpc_->getBufferMappingsV2();
  for (const auto &m : mappings) {
    Binding b;
    b.name = m.bufferMapping.bufferName;
    b.index = static_cast<uint32_t>(m.bufferMapping.index);
    int io = static_cast<int>(m.bufferMapping.ioType);
    if (io != BUFFER_IO_TYPE_INPUT && io != BUFFER_IO_TYPE_OUTPUT)
      continue;
    b.input = io == BUFFER_IO_TYPE_INPUT;
    b.retained = b.input ? b.name.rfind("past_", 0) == 0 : endsWith(b.name, kRetainedSuffix);
    auto storage = storageOf(m.bufferMapping.dataType);
    if (!storage)
      return makeError("qaic: QPC buffer '" + b.name + "' has the data type " +
                       std::to_string(static_cast<int>(m.bufferMapping.dataType)) +
                       ", which qeff does not handle");
    b.storage = storage->first;
    b.elemSize = storage->second;
    if (b.storage == Storage::Opaque && !b.retained)
      return makeError("qaic: QPC buffer '" + b.name +
                       "' has quantized or complex storage (data type " +
                       std::to_string(static_cast<int>(m.bufferMapping.dataType)) +
                       "), which qeff can neither feed nor read; only retained "
                       "state (past_*, *_RetainedState) may be stored so");
    // The KV cache stays on the card because its bindings are skipped
    // (dims {0}) on every run, which the SDK allows only for partial
    // buffers (QEfficient's session warns "Partial buffer not allowed for"
    // when a skipped binding is not).
    if (b.retained && !m.bufferMapping.isPartialBufferAllowed)
      return makeError("qaic: QPC buffer '" + b.name + "' of " + qpcFile +
                       " does not allow partial buffers "
                       "(isPartialBufferAllowed is false), so the KV cache cannot stay "
                       "on the card between runs; was the QPC compiled with "
                       "-retained-state (as qaic-compile.sh does)?");
    b.byteSize = m.bufferMapping.size;
    for (const auto &shape : m.ioShapes) {
      Dims dims;
      for (const auto &d : shape.dims)
        dims.push_back(static_cast<uint32_t>(d));
      b.shapes.push_back(std::move(dims));
    }
    bindings_.push_back(std::move(b));
  }
  std::sort(bindings_.begin(), bindings_.end(),
            [](const Binding &a, const Binding &b) { return a.index < b.index; });
  if (bindings_.empty())
    return makeError("qaic: the QPC has no input or output buffers");
  for (size_t k = 0; k < bindings_.size(); ++k)
    if (bindings_[k].index != k)
      return makeError("qaic: the QPC's buffer indices are not 0.." +
                       std::to_string(bindings_.size() - 1) + " (buffer '" +
                       bindings_[k].name + "' has index " +
                       std::to_string(bindings_[k].index) + ")");
  numShapes_ = bindings_.front().shapes.size();
  for (const Binding &b : bindings_)
    if (b.shapes.size() != numShapes_ || b.shapes.empty())
      return makeError("qaic: QPC buffer '" + b.name + "' has " +
                       std::to_string(b.shapes.size()) + " allowed shapes, '" +
                       bindings_.front().name + "' has " + std::to_string(numShapes_));

  // Declared inputs/outputs <-> bindings, both ways.
  auto map = [&](const std::vector<TensorInfo> &infos, bool input,
                 std::vector<size_t> &to) -> Status {
    for (const TensorInfo &info : infos) {
      auto it = std::find_if(bindings_.begin(), bindings_.end(), [&](const Binding &b) {
        return b.name == info.name && b.input == input;
      });
      if (it == bindings_.end())
        return makeError("qaic: the QPC has no " + std::string(input ? "input" : "output") +
                         " buffer '" + info.name +
                         "' (was it compiled from this directory's model.onnx?)");
      for (const Dims &dims : it->shapes)
        if (dims.size() != info.dims.size())
          return makeError("qaic: QPC buffer '" + info.name + "' has the shape " +
                           dimsText(dims) + ", the manifest declares " +
                           dimsString(info.dims));
      to.push_back(it - bindings_.begin());
    }
    return {};
  };
  if (Status s = map(inputs_, true, inputBinding_); !s)
    return s;
  if (Status s = map(outputs_, false, outputBinding_); !s)
    return s;
  for (const Binding &b : bindings_) {
    const auto &declared = b.input ? inputs_ : outputs_;
    if (std::none_of(declared.begin(), declared.end(),
                     [&](const TensorInfo &i) { return i.name == b.name; }))
      return makeError("qaic: QPC buffer '" + b.name + "' is not declared in qeff-manifest.json");
  }
  // The device reports what it binds (the KV cache is float16 per
  // custom_io.yaml; bfloat16 is converted to and from float32 here).
  for (size_t i = 0; i < inputs_.size(); ++i)
    inputs_[i].dtype = sessionDType(bindings_[inputBinding_[i]].storage, inputs_[i].dtype);
  for (size_t i = 0; i < outputs_.size(); ++i)
    outputs_[i].dtype = sessionDType(bindings_[outputBinding_[i]].storage, outputs_[i].dtype);
  return {};
}

Result<std::unique_ptr<Device>> QaicDevice::load(const fs::path &dir,
                                                 const SessionOptions &options) {
  if (options.numerics != Numerics::FP32 || !options.fp32Nodes.empty() ||
      options.checkFinite || options.outputObserver)
    return makeError("fp16 emulation, precision lists, finiteness checks and output "
                     "observers are host-device options; the AI 100 computes as "
                     "qaic-compile built the QPC");
  if (options.qaicTimeoutMs < 1 || options.qaicTimeoutMs > kMaxTimeoutMs)
    return makeError("the qaic data-path timeout (--qaic-timeout-ms) must be 1.." +
                     std::to_string(kMaxTimeoutMs) + " ms, got " +
                     std::to_string(options.qaicTimeoutMs));
  fs::path qpcDir = dir / "qpc";
  if (!fs::is_regular_file(qpcDir / kQpcFile))
    return makeError("'" + dir.string() + "' has no QPC (" + (qpcDir / kQpcFile).string() +
                     "): qaic-compile has not built it; run " +
                     (dir / "qaic-compile.sh").string() + " on a machine with the SDK");
  auto manifest = readManifest(dir / "qeff-manifest.json");
  if (!manifest)
    return makeError(manifest.error());

  auto device = std::make_unique<QaicDevice>();
  device->inputs_ = std::move(manifest->first);
  device->outputs_ = std::move(manifest->second);
  device->timeoutMs_ = options.qaicTimeoutMs;

  // An N-device QPC (--num-devices N) runs in one context over its device
  // group, with the program's devMapping naming the group as QEfficient's
  // session does ("q0:q1:..."); the inference set's queue is on the group's
  // first device.
  std::vector<QID> devices;
  for (int id : options.deviceGroup)
    devices.push_back(static_cast<QID>(id));
  if (devices.empty())
    devices.push_back(static_cast<QID>(options.qaicDeviceId));
  std::string where = "device";
  for (size_t i = 0; i < devices.size(); ++i) {
    where += (i ? "," : (devices.size() > 1 ? "s " : " ")) + std::to_string(devices[i]);
    if (devices.size() > 1)
      device->devMapping_ += (i ? ":" : "") + std::to_string(devices[i]);
  }
  std::string qpcFile = (qpcDir / kQpcFile).string();
  try {
    device->context_ = ::qaic::rt::Context::Factory(nullptr, devices);
    device->qpc_ = ::qaic::rt::Qpc::Factory(qpcDir.string());
  } catch (const std::exception &e) {
    return makeError("qaic: opening " + qpcFile + " on " + where + ": " + e.what());
  }
  if (!device->context_ || !device->qpc_)
    return makeError("qaic: the SDK could not open " + qpcFile);
  if (Status s = device->readBindings(qpcFile); !s)
    return makeError(s.error());

  try {
#if QEFF_QAIC_HAS_INFERENCE_SET_PROPERTIES
    ::qaic::rt::InferenceSetProperties properties{};
    properties.programProperties.dataPathTimeoutMs =
        static_cast<uint32_t>(device->timeoutMs_);
    if (!device->devMapping_.empty())
      setText(properties.programProperties.devMapping, device->devMapping_);
    device->set_ = ::qaic::rt::InferenceSet::Factory(device->context_, device->qpc_,
                                                     devices.front(), 1, 1, &properties);
#else
    if (devices.size() > 1)
      return makeError("qaic: this qeff was built against a Platform SDK whose "
                       "QAicApi.hpp has no InferenceSetProperties, so it cannot give the "
                       "program the devMapping of " + where);
    device->set_ = ::qaic::rt::InferenceSet::Factory(device->context_, device->qpc_,
                                                     devices.front(), 1, 1);
#endif
  } catch (const std::exception &e) {
    return makeError("qaic: loading the QPC on " + where + ": " + e.what());
  }
  if (!device->set_)
    return makeError("qaic: the SDK could not load the QPC on " + where);
  return std::unique_ptr<Device>(std::move(device));
}

Result<size_t> QaicDevice::selectShape(const std::vector<Tensor> &inputs) const {
  for (size_t s = 0; s < numShapes_; ++s) {
    bool match = true;
    for (size_t i = 0; i < inputs.size() && match; ++i) {
      if (!inputs[i].valid())
        continue;
      const Dims &dims = bindings_[inputBinding_[i]].shapes[s];
      const Shape &shape = inputs[i].shape();
      match = dims.size() == shape.size() &&
              std::equal(dims.begin(), dims.end(), shape.begin(),
                         [](uint32_t d, int64_t v) { return int64_t(d) == v; });
    }
    if (match)
      return s;
  }
  std::string given, allowed;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].valid())
      given += (given.empty() ? "" : ", ") + inputs_[i].name + " " +
               shapeString(inputs[i].shape());
  for (size_t s = 0; s < numShapes_; ++s) {
    allowed += "; #" + std::to_string(s) + ":";
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Binding &b = bindings_[inputBinding_[i]];
      if (!b.retained || inputs[i].valid())
        allowed += " " + b.name + " " + dimsText(b.shapes[s]);
    }
  }
  return makeError("qaic: the input shapes (" + given +
                   ") match no allowed shape of the QPC. Allowed" + allowed);
}

Status QaicDevice::broken(const std::string &what) {
  brokenWhy_ = "qaic: this session cannot run any more: " + what +
               ", so the next getAvailable would wait forever; open the artifact again";
  return makeError(brokenWhy_);
}

Status QaicDevice::bind(const HandlePtr &handle,
                        const std::vector<std::pair<uint32_t, Dims>> &dims,
                        const std::vector<QBuffer> &in, const std::vector<QBuffer> &out) {
  // Dims first: the SDK checks the buffers against the dims it knows (the
  // public LLM example sets setBufferDimensions before the buffers).
  auto failed = [&](const char *call, QStatus st) {
    std::string passed;
    for (size_t k = 0; k < bindings_.size(); ++k)
      if (dims[k].second != Dims{0})
        passed += (passed.empty() ? "" : ", ") + bindings_[k].name + " " +
                  dimsText(dims[k].second);
    return makeError(std::string("qaic: ") + call + " failed: " + statusText(st) +
                     " (buffers passed: " + passed + ")");
  };
  if (QStatus st = handle->setBufferDimensions(dims); st != QS_SUCCESS)
    return failed("setBufferDimensions", st);
  if (QStatus st = handle->setInputBuffers(in); st != QS_SUCCESS)
    return failed("setInputBuffers", st);
  if (QStatus st = handle->setOutputBuffers(out); st != QS_SUCCESS)
    return failed("setOutputBuffers", st);
  return {};
}

Status QaicDevice::runOnCard(std::vector<Tensor> &inputs, std::vector<Tensor> &outputs) {
  if (!brokenWhy_.empty())
    return makeError(brokenWhy_);
  if (inputs.size() != inputs_.size())
    return makeError("qaic: " + std::to_string(inputs.size()) + " inputs given, the QPC has " +
                     std::to_string(inputs_.size()));
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].valid() && !bindings_[inputBinding_[i]].retained)
      return makeError("qaic: missing input '" + inputs_[i].name + "'");
  auto shape = selectShape(inputs);
  if (!shape)
    return makeError(shape.error());
  const size_t s = *shape;

  // Host buffers by binding: given inputs (in the bound storage), zeros for
  // the state after a reset, fresh outputs; none for state kept on the card.
  std::vector<Tensor> hold(bindings_.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].valid())
      continue;
    const Binding &b = bindings_[inputBinding_[i]];
    auto t = toStorage(inputs[i], b.storage, b.name);
    if (!t)
      return makeError("qaic: " + t.error());
    hold[inputBinding_[i]] = std::move(*t);
  }
  for (size_t o = 0; o < outputs_.size(); ++o) {
    const Binding &b = bindings_[outputBinding_[o]];
    if (!b.retained)
      hold[outputBinding_[o]] = allocateStorage(b.storage, b.shapes[s]);
  }
  // A reset binds zeros sized from the binding itself: MXINT8 storage is
  // not dims x element size.
  size_t zeroBytes = 0;
  for (size_t k = 0; k < bindings_.size(); ++k)
    if (bindings_[k].input && bindings_[k].retained && !hold[k].valid() && zeroState_)
      zeroBytes = std::max(zeroBytes, bindings_[k].fullBytes(bindings_[k].shapes[s]));
  if (zeros_.size() < zeroBytes)
    zeros_.assign(zeroBytes, 0); // one block, read by every zeroed input

  static uint8_t empty[8] = {};
  std::vector<QBuffer> in, out;
  std::vector<std::pair<uint32_t, Dims>> dims(bindings_.size());
  for (size_t k = 0; k < bindings_.size(); ++k) {
    const Binding &b = bindings_[k];
    QBuffer q{};
    if (hold[k].valid()) {
      q.size = hold[k].byteSize();
      q.buf = static_cast<uint8_t *>(hold[k].rawData());
      dims[k] = {b.elemSize, Dims(hold[k].shape().begin(), hold[k].shape().end())};
    } else if (b.input && zeroState_) {
      q.size = b.fullBytes(b.shapes[s]);
      q.buf = zeros_.data();
      dims[k] = {b.elemSize, b.shapes[s]};
    } else {
      // Kept on the card: no host buffer, dims {0} (the SDK examples' form).
      q.size = 0;
      q.buf = empty;
      dims[k] = {b.elemSize, Dims{0}};
    }
    (b.input ? in : out).push_back(q);
  }

  HandlePtr handle = std::move(idle_);
  if (!handle) {
    // Blocks until a handle is free; the device's only handle is always put
    // back (or the session is marked broken), so it is free here.
    QStatus st = set_->getAvailable(handle);
    if (st != QS_SUCCESS || !handle)
      return makeError("qaic: getAvailable gave no inference handle: " + statusText(st));
  }
  if (Status st = bind(handle, dims, in, out); !st) {
    idle_ = std::move(handle);
    return st;
  }
  uint32_t id = nextId_++;
  if (QStatus st = set_->submit(handle, id); st != QS_SUCCESS) {
    if (!handle)
      return broken("submit failed with " + statusText(st) + " and kept the inference handle");
    idle_ = std::move(handle);
    return makeError("qaic: submitting the inference failed: " + statusText(st));
  }
  HandlePtr done;
  QStatus st = set_->getCompletedId(done, id);
  if (!done)
    return broken("inference " + std::to_string(id) + " failed with " + statusText(st) +
                  " and the SDK did not hand its inference handle back");
  if (QStatus put = set_->putCompleted(std::move(done)); put != QS_SUCCESS)
    return broken("putCompleted failed with " + statusText(put));
  if (st != QS_SUCCESS) {
    std::string passed;
    for (size_t k = 0; k < bindings_.size(); ++k)
      if (dims[k].second != Dims{0})
        passed += (passed.empty() ? "" : ", ") + bindings_[k].name + " " +
                  dimsText(dims[k].second);
    std::string timeout =
        st == QS_TIMEDOUT ? "; the data-path timeout is " + std::to_string(timeoutMs_) +
                                " ms (--qaic-timeout-ms)"
                          : "";
    return makeError("qaic: the inference failed: " + statusText(st) + timeout +
                     " (buffers passed: " + passed + ")");
  }
  zeroState_ = false;

  outputs.assign(outputs_.size(), Tensor());
  for (size_t o = 0; o < outputs_.size(); ++o) {
    const Binding &b = bindings_[outputBinding_[o]];
    if (!b.retained)
      outputs[o] = fromStorage(std::move(hold[outputBinding_[o]]), b.storage);
  }
  return {};
}

} // namespace

Result<std::unique_ptr<Device>> loadQaicDevice(const std::string &artifactDir,
                                               const SessionOptions &options) {
  try {
    return QaicDevice::load(artifactDir, options);
  } catch (const std::exception &e) {
    return makeError("qaic: opening '" + artifactDir + "': " + e.what());
  }
}

} // namespace qeff::runtime::qaic
