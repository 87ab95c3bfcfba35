//===- QaicDevice.cpp - The Cloud AI 100 device (Platform SDK) ------------===//
//
// The SDK calls used (all in namespace qaic::rt of QAicApi.hpp):
//   Context::Factory(nullptr, {qid})            a runtime context on card qid
//   Qpc::Factory(dir)                           <dir>/programqpc.bin
//   qpc->getBufferMappingsV2()                  bindings + allowed shapes
//   InferenceSet::Factory(ctx, qpc, qid, 1, 1)  one activation, one handle
//   set->getAvailable(handle)
//   handle->setInputBuffers / setOutputBuffers / setBufferDimensions
//   set->submit(handle, id), set->getCompletedId(handle, id),
//   set->putCompleted(std::move(handle))
// Factories throw on failure (std::exception subclasses); the rest return a
// QStatus. Both become Result errors here; nothing aborts.
//
//===----------------------------------------------------------------------===//

#include "runtime/qaic/QaicDevice.h"

#include "QAicApi.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

namespace qeff::runtime::qaic {

namespace {

namespace fs = std::filesystem;

constexpr char kRetainedSuffix[] = "_RetainedState";
constexpr char kQpcFile[] = "programqpc.bin";

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

/// The runtime dtype of a QPC buffer, when qeff handles it.
template <typename E> std::optional<DType> dtypeOf(E type) {
  int t = static_cast<int>(type);
  if (t == BUFFER_DATA_TYPE_FLOAT)
    return DType::Float32;
  if (t == BUFFER_DATA_TYPE_FLOAT16)
    return DType::Float16;
  if (t == BUFFER_DATA_TYPE_INT64I)
    return DType::Int64;
  if (t == BUFFER_DATA_TYPE_INT32I || t == BUFFER_DATA_TYPE_INT32Q)
    return DType::Int32;
  if (t == BUFFER_DATA_TYPE_INT8)
    return DType::Bool;
  return std::nullopt;
}

std::optional<DType> dtypeOf(const std::string &name) {
  if (name == "float32")
    return DType::Float32;
  if (name == "float16")
    return DType::Float16;
  if (name == "int64")
    return DType::Int64;
  if (name == "int32")
    return DType::Int32;
  if (name == "bool")
    return DType::Bool;
  return std::nullopt;
}

using Dims = std::vector<uint32_t>;

std::string dimsText(const Dims &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

/// `t` in `want` (float32 <-> float16, int64 <-> int32), sharing its buffer
/// when no conversion is needed.
Result<Tensor> convert(const Tensor &t, DType want, const std::string &name) {
  if (t.dtype() == want)
    return t;
  Tensor r = Tensor::empty(want, t.shape());
  int64_t n = t.numElements();
  if (t.dtype() == DType::Float32 && want == DType::Float16) {
    for (int64_t i = 0; i < n; ++i)
      r.data<uint16_t>()[i] = floatToHalf(t.data<float>()[i]);
  } else if (t.dtype() == DType::Float16 && want == DType::Float32) {
    for (int64_t i = 0; i < n; ++i)
      r.data<float>()[i] = halfToFloat(t.data<uint16_t>()[i]);
  } else if (t.dtype() == DType::Int64 && want == DType::Int32) {
    for (int64_t i = 0; i < n; ++i)
      r.data<int32_t>()[i] = static_cast<int32_t>(t.data<int64_t>()[i]);
  } else if (t.dtype() == DType::Int32 && want == DType::Int64) {
    for (int64_t i = 0; i < n; ++i)
      r.data<int64_t>()[i] = t.data<int32_t>()[i];
  } else {
    return makeError("input '" + name + "' is " +
                     std::string(dtypeName(t.dtype())) + ", the QPC binds " +
                     std::string(dtypeName(want)));
  }
  return r;
}

/// One buffer binding of the QPC.
struct Binding {
  std::string name;
  uint32_t index = 0; ///< position in the QPC's buffer list
  bool input = false;
  bool retained = false; ///< `past_*` input or `*_RetainedState` output
  DType dtype = DType::Float32;
  std::vector<Dims> shapes; ///< allowed dims, one per specialization
};

/// Declared inputs and outputs from qeff-manifest.json.
Result<std::pair<std::vector<TensorInfo>, std::vector<TensorInfo>>>
readManifest(const fs::path &path) {
  std::ifstream f(path);
  if (!f)
    return makeError(
        "'" + path.parent_path().string() +
        "' has no qeff-manifest.json: the qaic device runs `qeff compile` "
        "output directories");
  std::stringstream text;
  text << f.rdbuf();
  try {
    auto json = nlohmann::json::parse(text.str());
    auto list = [&](const char *key) -> Result<std::vector<TensorInfo>> {
      if (!json.contains(key) || !json[key].is_array())
        return makeError(path.string() + ": no \"" + key + "\" list");
      std::vector<TensorInfo> infos;
      for (const auto &entry : json[key]) {
        TensorInfo info;
        info.name = entry.value("name", "");
        auto dtype = dtypeOf(entry.value("dtype", ""));
        if (info.name.empty() || !dtype)
          return makeError(path.string() + ": an entry of \"" + key +
                           "\" has no name or an unknown dtype");
        info.dtype = *dtype;
        for (const auto &d : entry.value("shape", nlohmann::json::array())) {
          Dim dim;
          if (d.is_number_integer())
            dim.value = d.get<int64_t>();
          else if (d.is_string())
            dim.symbol = d.get<std::string>();
          info.dims.push_back(dim);
        }
        infos.push_back(std::move(info));
      }
      return infos;
    };
    auto inputs = list("inputs");
    if (!inputs)
      return makeError(inputs.error());
    auto outputs = list("outputs");
    if (!outputs)
      return makeError(outputs.error());
    return std::make_pair(std::move(*inputs), std::move(*outputs));
  } catch (const nlohmann::json::exception &e) {
    return makeError(path.string() + ": invalid JSON: " + e.what());
  }
}

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

  std::vector<TensorInfo> inputs_, outputs_;
  std::vector<Binding> bindings_; ///< by QPC index
  /// inputs_/outputs_ (declared order) -> bindings_.
  std::vector<size_t> inputBinding_, outputBinding_;
  size_t numShapes_ = 0;
  bool zeroState_ = true; ///< bind zeros to the past_* inputs on the next run
  std::vector<uint8_t> zeros_;
  uint32_t nextId_ = 0;
  // Destroyed in reverse: the inference set before the QPC and the context.
  ContextPtr context_;
  QpcPtr qpc_;
  SetPtr set_;
  HandlePtr idle_; ///< a handle taken but not submitted (reused next run)
};

Result<std::unique_ptr<Device>>
QaicDevice::load(const fs::path &dir, const SessionOptions &options) {
  if (options.numerics != Numerics::FP32 || !options.fp32Nodes.empty() ||
      options.checkFinite || options.outputObserver)
    return makeError(
        "fp16 emulation, precision lists, finiteness checks and output "
        "observers are host-device options; the AI 100 computes as "
        "qaic-compile built the QPC");
  fs::path qpcDir = dir / "qpc";
  if (!fs::is_regular_file(qpcDir / kQpcFile))
    return makeError(
        "'" + dir.string() + "' has no QPC (" + (qpcDir / kQpcFile).string() +
        "): qaic-compile has not built it; run " +
        (dir / "qaic-compile.sh").string() + " on a machine with the SDK");
  auto manifest = readManifest(dir / "qeff-manifest.json");
  if (!manifest)
    return makeError(manifest.error());

  auto device = std::make_unique<QaicDevice>();
  device->inputs_ = std::move(manifest->first);
  device->outputs_ = std::move(manifest->second);

  // A multi-device QPC (--num-devices N) runs in one context over its
  // device group; the inference set is created on the group's first device,
  // as the SDK's Python session does with its device_ids.
  std::vector<QID> devices;
  for (int id : options.deviceGroup)
    devices.push_back(static_cast<QID>(id));
  if (devices.empty())
    devices.push_back(static_cast<QID>(options.qaicDeviceId));
  std::string where = "device";
  for (size_t i = 0; i < devices.size(); ++i)
    where += (i ? "," : (devices.size() > 1 ? "s " : " ")) +
             std::to_string(devices[i]);
  try {
    device->context_ = ::qaic::rt::Context::Factory(nullptr, devices);
    device->qpc_ = ::qaic::rt::Qpc::Factory(qpcDir.string());
  } catch (const std::exception &e) {
    return makeError("qaic: opening " + (qpcDir / kQpcFile).string() +
                     " on " + where +
                     ": " + e.what());
  }
  if (!device->context_ || !device->qpc_)
    return makeError("qaic: the SDK could not open " +
                     (qpcDir / kQpcFile).string());

  // The bindings and their allowed shapes.
  auto mappings = device->qpc_->getBufferMappingsV2();
  for (const auto &m : mappings) {
    Binding b;
    b.name = m.bufferMapping.bufferName;
    b.index = static_cast<uint32_t>(m.bufferMapping.index);
    int io = static_cast<int>(m.bufferMapping.ioType);
    if (io != BUFFER_IO_TYPE_INPUT && io != BUFFER_IO_TYPE_OUTPUT)
      continue;
    b.input = io == BUFFER_IO_TYPE_INPUT;
    b.retained = b.input ? b.name.rfind("past_", 0) == 0
                         : endsWith(b.name, kRetainedSuffix);
    auto dtype = dtypeOf(m.bufferMapping.dataType);
    if (!dtype)
      return makeError(
          "qaic: QPC buffer '" + b.name + "' has the data type " +
          std::to_string(static_cast<int>(m.bufferMapping.dataType)) +
          ", which qeff does not handle");
    b.dtype = *dtype;
    for (const auto &shape : m.ioShapes) {
      Dims dims;
      for (const auto &d : shape.dims)
        dims.push_back(static_cast<uint32_t>(d));
      b.shapes.push_back(std::move(dims));
    }
    device->bindings_.push_back(std::move(b));
  }
  auto &bindings = device->bindings_;
  std::sort(
      bindings.begin(), bindings.end(),
      [](const Binding &a, const Binding &b) { return a.index < b.index; });
  if (bindings.empty())
    return makeError("qaic: the QPC has no input or output buffers");
  for (size_t k = 0; k < bindings.size(); ++k)
    if (bindings[k].index != k)
      return makeError("qaic: the QPC's buffer indices are not 0.." +
                       std::to_string(bindings.size() - 1) + " (buffer '" +
                       bindings[k].name + "' has index " +
                       std::to_string(bindings[k].index) + ")");
  device->numShapes_ = bindings.front().shapes.size();
  for (const Binding &b : bindings)
    if (b.shapes.size() != device->numShapes_ || b.shapes.empty())
      return makeError("qaic: QPC buffer '" + b.name + "' has " +
                       std::to_string(b.shapes.size()) + " allowed shapes, '" +
                       bindings.front().name + "' has " +
                       std::to_string(device->numShapes_));

  // Declared inputs/outputs <-> bindings, both ways.
  auto map = [&](const std::vector<TensorInfo> &infos, bool input,
                 std::vector<size_t> &to) -> Status {
    for (const TensorInfo &info : infos) {
      auto it =
          std::find_if(bindings.begin(), bindings.end(), [&](const Binding &b) {
            return b.name == info.name && b.input == input;
          });
      if (it == bindings.end())
        return makeError("qaic: the QPC has no " +
                         std::string(input ? "input" : "output") + " buffer '" +
                         info.name +
                         "' (was it compiled from this "
                         "directory's model.onnx?)");
      for (const Dims &dims : it->shapes)
        if (dims.size() != info.dims.size())
          return makeError("qaic: QPC buffer '" + info.name +
                           "' has the shape " + dimsText(dims) +
                           ", the manifest declares " + dimsString(info.dims));
      to.push_back(it - bindings.begin());
    }
    return {};
  };
  if (Status s = map(device->inputs_, true, device->inputBinding_); !s)
    return makeError(s.error());
  if (Status s = map(device->outputs_, false, device->outputBinding_); !s)
    return makeError(s.error());
  for (const Binding &b : bindings) {
    const auto &declared = b.input ? device->inputs_ : device->outputs_;
    if (std::none_of(declared.begin(), declared.end(),
                     [&](const TensorInfo &i) { return i.name == b.name; }))
      return makeError("qaic: QPC buffer '" + b.name +
                       "' is not declared in "
                       "qeff-manifest.json");
  }
  // The device binds float16 state (custom_io.yaml) and reports what it binds.
  for (size_t i = 0; i < device->inputs_.size(); ++i)
    device->inputs_[i].dtype = bindings[device->inputBinding_[i]].dtype;
  for (size_t i = 0; i < device->outputs_.size(); ++i)
    device->outputs_[i].dtype = bindings[device->outputBinding_[i]].dtype;

  try {
    device->set_ = ::qaic::rt::InferenceSet::Factory(
        device->context_, device->qpc_, devices.front(), 1, 1);
  } catch (const std::exception &e) {
    return makeError("qaic: loading the QPC on " + where + ": " + e.what());
  }
  if (!device->set_)
    return makeError("qaic: the SDK could not load the QPC on " + where);
  return std::unique_ptr<Device>(std::move(device));
}

Result<size_t>
QaicDevice::selectShape(const std::vector<Tensor> &inputs) const {
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

Status QaicDevice::runOnCard(std::vector<Tensor> &inputs,
                             std::vector<Tensor> &outputs) {
  if (inputs.size() != inputs_.size())
    return makeError("qaic: " + std::to_string(inputs.size()) +
                     " inputs given, the QPC has " +
                     std::to_string(inputs_.size()));
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].valid() && !bindings_[inputBinding_[i]].retained)
      return makeError("qaic: missing input '" + inputs_[i].name + "'");
  auto shape = selectShape(inputs);
  if (!shape)
    return makeError(shape.error());
  const size_t s = *shape;

  // Host buffers by binding: given inputs (in the bound dtype), zeros for
  // the state after a reset, fresh outputs; empty for state kept on the card.
  std::vector<Tensor> hold(bindings_.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].valid())
      continue;
    const Binding &b = bindings_[inputBinding_[i]];
    auto t = convert(inputs[i], b.dtype, b.name);
    if (!t)
      return makeError("qaic: " + t.error());
    hold[inputBinding_[i]] = std::move(*t);
  }
  for (size_t o = 0; o < outputs_.size(); ++o) {
    const Binding &b = bindings_[outputBinding_[o]];
    if (b.retained)
      continue;
    hold[outputBinding_[o]] =
        Tensor::empty(b.dtype, Shape(b.shapes[s].begin(), b.shapes[s].end()));
  }
  size_t zeroBytes = 0;
  for (size_t k = 0; k < bindings_.size(); ++k)
    if (bindings_[k].input && bindings_[k].retained && !hold[k].valid() &&
        zeroState_)
      zeroBytes = std::max<size_t>(
          zeroBytes, numElements(Shape(bindings_[k].shapes[s].begin(),
                                       bindings_[k].shapes[s].end())) *
                         dtypeSize(bindings_[k].dtype));
  if (zeros_.size() < zeroBytes)
    zeros_.assign(zeroBytes, 0); // one block, read by every zeroed input

  static uint8_t empty[8] = {};
  std::vector<QBuffer> in, out;
  std::vector<std::pair<uint32_t, std::vector<uint32_t>>> dims(
      bindings_.size());
  for (size_t k = 0; k < bindings_.size(); ++k) {
    const Binding &b = bindings_[k];
    uint32_t elem = static_cast<uint32_t>(dtypeSize(b.dtype));
    QBuffer q{};
    if (hold[k].valid()) {
      q.size = hold[k].byteSize();
      q.buf = static_cast<uint8_t *>(hold[k].rawData());
      dims[k] = {elem, Dims(hold[k].shape().begin(), hold[k].shape().end())};
    } else if (b.input && zeroState_) {
      Dims d = b.shapes[s];
      q.size = numElements(Shape(d.begin(), d.end())) * elem;
      q.buf = zeros_.data();
      dims[k] = {elem, d};
    } else {
      // Kept on the card: no host buffer, dims {0} (the SDK examples' form).
      q.size = 0;
      q.buf = empty;
      dims[k] = {elem, Dims{0}};
    }
    (b.input ? in : out).push_back(q);
  }
  HandlePtr handle = std::move(idle_);
  if (!handle) {
    QStatus st = set_->getAvailable(handle);
    if (st != QS_SUCCESS || !handle)
      return makeError("qaic: no inference handle available: " +
                       statusText(st));
  }
  handle->setInputBuffers(in);
  handle->setOutputBuffers(out);
  handle->setBufferDimensions(dims);
  uint32_t id = nextId_++;
  if (QStatus st = set_->submit(handle, id); st != QS_SUCCESS) {
    idle_ = std::move(handle);
    return makeError("qaic: submitting the inference failed: " +
                     statusText(st));
  }
  HandlePtr done;
  QStatus st = set_->getCompletedId(done, id);
  if (done)
    set_->putCompleted(std::move(done));
  if (st != QS_SUCCESS) {
    std::string passed;
    for (size_t k = 0; k < bindings_.size(); ++k)
      if (dims[k].second != Dims{0})
        passed += (passed.empty() ? "" : ", ") + bindings_[k].name + " " +
                  dimsText(dims[k].second);
    return makeError("qaic: the inference failed: " + statusText(st) +
                     " (buffers passed: " + passed + ")");
  }
  zeroState_ = false;

  outputs.assign(outputs_.size(), Tensor());
  for (size_t o = 0; o < outputs_.size(); ++o)
    if (!bindings_[outputBinding_[o]].retained)
      outputs[o] = std::move(hold[outputBinding_[o]]);
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
