//===- Session.cpp - Running a qeff artifact on a device ------------------===//

#include "qeff/runtime/Session.h"

#include "runtime/ArtifactCheck.h"
#include "runtime/QaicConfig.h"
#include "runtime/host/HostDevice.h"
#if QEFF_HAVE_QAIC
#include "runtime/qaic/QaicDevice.h"
#endif

#include "support/SafeFile.h"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace qeff::runtime {

namespace fs = std::filesystem;

static const char kRetainedSuffix[] = "_RetainedState";

Result<std::vector<Specialization>> parseSpecializations(const std::string &text,
                                                        const std::string &source) {
  try {
    auto json = nlohmann::json::parse(text);
    const nlohmann::json *list = &json;
    if (json.is_object()) {
      if (!json.contains("specializations"))
        return makeError(source + ": no \"specializations\" list");
      list = &json["specializations"];
    }
    if (!list->is_array())
      return makeError(source + ": \"specializations\" must be a list");
    std::vector<Specialization> specs;
    for (size_t i = 0; i < list->size(); ++i) {
      const auto &entry = (*list)[i];
      if (!entry.is_object())
        return makeError(source + ": specialization #" + std::to_string(i) +
                         " is not an object");
      Specialization spec;
      spec.name = entry.value("name", "specialization #" + std::to_string(i));
      // The flat legacy form has the symbols at the top of each entry.
      const nlohmann::json &symbols = entry.contains("symbols") ? entry["symbols"] : entry;
      if (!symbols.is_object())
        return makeError(source + ": \"symbols\" of " + spec.name + " is not an object");
      for (auto it = symbols.begin(); it != symbols.end(); ++it) {
        if (it.key() == "name")
          continue;
        int64_t value;
        if (it.value().is_number_integer()) {
          value = it.value().get<int64_t>();
        } else if (it.value().is_string()) {
          const std::string s = it.value().get<std::string>();
          size_t used = 0;
          try {
            value = std::stoll(s, &used);
          } catch (const std::exception &) {
            used = 0;
          }
          if (used == 0 || used != s.size())
            return makeError(source + ": " + spec.name + ": symbol '" + it.key() +
                             "' has the non-integer value \"" + s + "\"");
        } else {
          return makeError(source + ": " + spec.name + ": symbol '" + it.key() +
                           "' must be an integer string");
        }
        if (value < 0)
          return makeError(source + ": " + spec.name + ": symbol '" + it.key() +
                           "' is negative");
        spec.symbols[it.key()] = value;
      }
      specs.push_back(std::move(spec));
    }
    return specs;
  } catch (const nlohmann::json::exception &e) {
    return makeError(source + ": invalid JSON: " + e.what());
  }
}

Result<std::vector<int>> resolveDeviceGroup(const SessionOptions &options,
                                            int64_t numDevices) {
  if (numDevices < 1)
    return makeError("num_devices must be at least 1, got " +
                     std::to_string(numDevices));
  std::vector<int> group = options.deviceGroup;
  if (group.empty()) {
    for (int64_t d = 0; d < numDevices; ++d)
      group.push_back(options.qaicDeviceId + static_cast<int>(d));
    return group;
  }
  std::set<int> seen;
  for (int id : group) {
    if (id < 0)
      return makeError("the device group holds the negative device id " +
                       std::to_string(id));
    if (!seen.insert(id).second)
      return makeError("the device group names device " + std::to_string(id) +
                       " twice");
  }
  if (static_cast<int64_t>(group.size()) != numDevices)
    return makeError(
        "the device group names " + std::to_string(group.size()) +
        " device" + (group.size() == 1 ? "" : "s") +
        " but the artifact was compiled for " + std::to_string(numDevices) +
        " (qeff compile --num-devices " + std::to_string(numDevices) +
        "); give exactly " + std::to_string(numDevices) + " device id" +
        (numDevices == 1 ? "" : "s"));
  return group;
}

/// `num_devices` of an artifact directory's qeff-manifest.json, read as
/// `text` (1 when the manifest or the field is absent: a bare model file or an
/// older artifact).
static Result<int64_t> manifestNumDevices(const std::string &text, const fs::path &path) {
  if (text.empty())
    return int64_t(1);
  auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object())
    return makeError(path.string() + ": invalid JSON");
  if (!json.contains("num_devices"))
    return int64_t(1);
  const auto &n = json["num_devices"];
  if (!n.is_number_integer() || n.get<int64_t>() < 1)
    return makeError(path.string() + ": \"num_devices\" must be a positive integer");
  return n.get<int64_t>();
}

/// `seq_len_dependent_rope.threshold` of the manifest `text` (the sequence
/// length up to which rope frequencies that follow it stay fixed), or -1
/// when absent (no such scaling, or no manifest).
static Result<int64_t> manifestRopeThreshold(const std::string &text,
                                             const fs::path &path) {
  if (text.empty())
    return int64_t(-1);
  auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object())
    return makeError(path.string() + ": invalid JSON");
  if (!json.contains("seq_len_dependent_rope"))
    return int64_t(-1);
  const auto &rope = json["seq_len_dependent_rope"];
  if (!rope.is_object() || !rope.contains("threshold") ||
      !rope["threshold"].is_number_integer() || rope["threshold"].get<int64_t>() < 0)
    return makeError(path.string() + ": \"seq_len_dependent_rope.threshold\" must be "
                     "a non-negative integer");
  return rope["threshold"].get<int64_t>();
}

/// A flat (legacy) specializations.json names no specialization; the
/// manifest's list does ("Prefill", "Decode", which generation looks for):
/// its names are taken when its symbols agree entry by entry.
static void nameFromManifest(std::vector<Specialization> &specs, const std::string &text) {
  auto unnamed = [&](size_t i) { return specs[i].name == "specialization #" + std::to_string(i); };
  bool any = false;
  for (size_t i = 0; i < specs.size(); ++i)
    any |= unnamed(i);
  if (!any || text.empty())
    return;
  auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object() || !json.contains("specializations"))
    return;
  nlohmann::json wrapped = nlohmann::json::object();
  wrapped["specializations"] = json["specializations"];
  auto named = parseSpecializations(wrapped.dump(), "qeff-manifest.json");
  if (!named || named->size() != specs.size())
    return;
  for (size_t i = 0; i < specs.size(); ++i)
    if ((*named)[i].symbols != specs[i].symbols)
      return;
  for (size_t i = 0; i < specs.size(); ++i)
    if (unnamed(i))
      specs[i].name = (*named)[i].name;
}

Session::Session() = default;
Session::Session(Session &&) noexcept = default;
Session &Session::operator=(Session &&) noexcept = default;
Session::~Session() = default;

const std::vector<TensorInfo> &Session::inputInfos() const { return device_->inputs(); }
const std::vector<TensorInfo> &Session::outputInfos() const { return device_->outputs(); }

bool qaicDeviceAvailable(std::string *why) {
#if QEFF_HAVE_QAIC
  if (why)
    why->clear();
  return true;
#else
  if (why)
    *why = QEFF_QAIC_PROBE;
  return false;
#endif
}

Result<Session> Session::open(const std::string &artifact, DeviceKind kind,
                              const SessionOptions &options) {
  try {
    if (kind == DeviceKind::Qaic) {
      std::string why;
      if (!qaicDeviceAvailable(&why))
        return makeError("device qaic is unavailable: " + why + "; use the host device");
      if (!fs::is_directory(artifact))
        return makeError("device qaic opens a `qeff compile` output directory (with its "
                         "qpc/), and '" + artifact + "' is not a directory");
    }
    fs::path modelPath, dir;
    if (kind == DeviceKind::Qaic) {
      dir = artifact;
    } else if (fs::is_regular_file(artifact)) {
      modelPath = artifact;
      dir = modelPath.parent_path();
    } else if (fs::is_directory(artifact)) {
      dir = artifact;
      modelPath = dir / options.modelFile;
    } else {
      return makeError("'" + artifact + "' is neither an artifact directory nor a model file");
    }
    if (kind == DeviceKind::Host && !fs::exists(modelPath))
      return makeError("'" + artifact + "' has no " + modelPath.filename().string());
    if (kind == DeviceKind::Host) {
      // A regular, non-empty file (a FIFO would block, /dev/zero never end,
      // and protobuf parses 0 bytes as an empty model).
      std::string error;
      uint64_t size = 0;
      int fd = support::openRegularFile(modelPath.string(), size, error);
      if (fd < 0)
        return makeError(error);
      ::close(fd);
      if (size == 0)
        return makeError(modelPath.string() +
                         ": empty file (0 bytes), not an ONNX model (a truncated copy?)");
    }

    Session session;
    fs::path specPath = dir / "specializations.json";
    fs::path manifestPath = dir / "qeff-manifest.json";
    const bool isDir = fs::is_directory(artifact);
    if (isDir && fs::exists(specPath)) {
      std::string text, error;
      if (!support::readRegularFile(specPath.string(), support::kConfigFileLimit, text, error))
        return makeError(error);
      auto specs = parseSpecializations(text, specPath.string());
      if (!specs)
        return makeError(specs.error());
      session.specializations_ = std::move(specs).value();
    }
    std::string manifestText;
    if (isDir && fs::exists(manifestPath)) {
      std::string error;
      if (!support::readRegularFile(manifestPath.string(), support::kConfigFileLimit,
                                    manifestText, error))
        return makeError(error);
    }

    nameFromManifest(session.specializations_, manifestText);

    auto numDevices = manifestNumDevices(manifestText, manifestPath);
    if (!numDevices)
      return makeError(numDevices.error());
    auto group = resolveDeviceGroup(options, *numDevices);
    if (!group)
      return makeError(group.error());
    auto ropeThreshold = manifestRopeThreshold(manifestText, manifestPath);
    if (!ropeThreshold)
      return makeError(ropeThreshold.error());
    session.ropeThreshold_ = *ropeThreshold;

    if (options.mx.any() && kind == DeviceKind::Qaic)
      return makeError("MX emulation (--numerics " + numericsName(options) +
                       ") is a host-device option: the AI 100 computes as qaic-compile "
                       "built the QPC");
    if (options.mx.mxint8IO && *numDevices <= 1)
      return makeError("--numerics mxint8-io emulates the links between the devices of a "
                       "tensor-parallel artifact, and '" + artifact +
                       "' was compiled for one device (qeff compile --num-devices N)");

    if (kind == DeviceKind::Qaic) {
#if QEFF_HAVE_QAIC
      SessionOptions qaicOptions = options;
      qaicOptions.deviceGroup = *group;
      auto device = qaic::loadQaicDevice(dir.string(), qaicOptions);
      if (!device)
        return makeError(device.error());
      session.device_ = std::move(device).value();
#endif
    } else {
      host::HostOptions hostOptions;
      hostOptions.numerics = options.numerics;
      hostOptions.mx = options.mx;
      hostOptions.fp32Nodes = options.fp32Nodes;
      hostOptions.checkFinite = options.checkFinite;
      hostOptions.numThreads = options.numThreads;
      hostOptions.prepackWeights = options.prepackWeights;
      hostOptions.maxTensorBytes = options.maxTensorBytes;
      session.maxTensorBytes_ = options.maxTensorBytes;
      hostOptions.outputObserver = options.outputObserver;
      auto device = host::loadHostDevice(modelPath.string(), hostOptions);
      if (!device)
        return makeError(device.error());
      session.device_ = std::move(device).value();
    }

    for (const auto &in : session.device_->inputs())
      for (const auto &out : session.device_->outputs())
        if (out.name == in.name + kRetainedSuffix)
          session.stateNames_.push_back(in.name);

    // The artifact's other files must agree with the model before anything
    // is sized from them.
    if (kind == DeviceKind::Host && session.device_->outputs().empty())
      return makeError(modelPath.string() +
                       ": the model has no graph outputs (not a qeff artifact, or truncated)");
    const std::string modelName =
        kind == DeviceKind::Host ? modelPath.string() : (dir / "model.onnx").string();
    // (On qaic the tensor infos are the QPC's bindings, whose dtypes follow
    // custom_io.yaml rather than model.onnx: the host device checks these.)
    if (kind == DeviceKind::Host)
      if (Status s = checkSpecializations(session.specializations_, session.device_->inputs(),
                                          session.stateNames_, specPath.string(), modelName);
          !s)
        return makeError(s.error());
    if (kind == DeviceKind::Host && !manifestText.empty())
      if (Status s = checkManifest(manifestText, session.device_->inputs(),
                                   session.device_->outputs(), session.specializations_,
                                   manifestPath.string(), modelName, specPath.string());
          !s)
        return makeError(s.error());
    return session;
  } catch (const std::bad_alloc &) {
    return makeError("opening '" + artifact + "': out of memory");
  } catch (const std::exception &e) {
    return makeError("opening '" + artifact + "': " + e.what());
  }
}

namespace {

/// `t` in the declared dtype (the host computes float16 values in float32).
Tensor toDeclared(const Tensor &t, DType declared) {
  if (declared == DType::Float16 && t.dtype() == DType::Float32) {
    Tensor r = Tensor::empty(DType::Float16, t.shape());
    for (int64_t i = 0; i < t.numElements(); ++i)
      r.data<uint16_t>()[i] = floatToHalf(t.data<float>()[i]);
    return r;
  }
  return t;
}

std::string shapesOf(const TensorMap &inputs) {
  std::string s;
  for (const auto &[name, t] : inputs)
    s += (s.empty() ? "" : ", ") + name + " " + shapeString(t.shape());
  return s;
}

} // namespace

Status Session::run(const TensorMap &inputs) {
  try {
    const auto &infos = device_->inputs();
    auto isState = [&](const std::string &n) {
      return std::find(stateNames_.begin(), stateNames_.end(), n) != stateNames_.end();
    };
    for (const auto &[name, t] : inputs) {
      bool known = false;
      for (const auto &info : infos)
        known |= info.name == name;
      if (!known) {
        std::string names;
        for (const auto &info : infos)
          if (!isState(info.name))
            names += (names.empty() ? "" : ", ") + info.name;
        return makeError("unknown input '" + name + "' (the model's inputs: " + names + ")");
      }
    }

    // Bind the symbols: from the given shapes, then the matching specialization.
    std::map<std::string, int64_t> bound;
    for (const auto &info : infos) {
      auto it = inputs.find(info.name);
      if (it == inputs.end())
        continue;
      const Shape &shape = it->second.shape();
      if (!info.hasShape)
        continue;
      if (shape.size() != info.dims.size())
        return makeError("input '" + info.name + "' has shape " + shapeString(shape) +
                         ", the model wants " + dimsString(info.dims));
      for (size_t d = 0; d < shape.size(); ++d) {
        const Dim &dim = info.dims[d];
        if (dim.value >= 0 && dim.value != shape[d])
          return makeError("input '" + info.name + "' has shape " + shapeString(shape) +
                           ", the model wants " + dimsString(info.dims));
        if (dim.symbol.empty())
          continue;
        auto [b, inserted] = bound.emplace(dim.symbol, shape[d]);
        if (!inserted && b->second != shape[d])
          return makeError("inconsistent shapes: symbol '" + dim.symbol + "' is " +
                           std::to_string(b->second) + " in one input and " +
                           std::to_string(shape[d]) + " in '" + info.name + "' (" +
                           shapesOf(inputs) + ")");
      }
    }
    const Specialization *spec = nullptr;
    if (!specializations_.empty()) {
      for (const auto &s : specializations_) {
        bool match = true;
        for (const auto &[sym, value] : bound) {
          auto it = s.symbols.find(sym);
          match &= it == s.symbols.end() || it->second == value;
        }
        if (match) {
          spec = &s;
          break;
        }
      }
      if (!spec) {
        std::string allowed;
        for (const auto &s : specializations_) {
          std::string shapes;
          for (const auto &info : infos) {
            if (isState(info.name))
              continue;
            std::string dims = "[";
            for (size_t d = 0; d < info.dims.size(); ++d) {
              const Dim &dim = info.dims[d];
              auto it = s.symbols.find(dim.symbol);
              dims += (d ? ", " : "") +
                      (dim.value >= 0 ? std::to_string(dim.value)
                       : it != s.symbols.end() ? std::to_string(it->second)
                                               : dim.symbol);
            }
            shapes += (shapes.empty() ? "" : ", ") + info.name + " " + dims + "]";
          }
          allowed += "; " + s.name + ": " + shapes;
        }
        return makeError("the input shapes (" + shapesOf(inputs) +
                         ") match no specialization. Allowed" + allowed);
      }
      for (const auto &[sym, value] : spec->symbols)
        bound.emplace(sym, value);
    }

    // Assemble the device inputs, retained state from the session (or, on a
    // device that keeps it, an empty tensor: keep the device's state).
    const bool deviceKeepsState = device_->keepsState();
    std::vector<Tensor> deviceInputs;
    for (const auto &info : infos) {
      auto it = inputs.find(info.name);
      if (it != inputs.end()) {
        deviceInputs.push_back(it->second);
        continue;
      }
      if (!isState(info.name))
        return makeError("missing input '" + info.name + "' " + dimsString(info.dims));
      if (deviceKeepsState) {
        deviceInputs.emplace_back();
        continue;
      }
      auto st = state_.find(info.name);
      Shape shape;
      for (size_t d = 0; d < info.dims.size(); ++d) {
        const Dim &dim = info.dims[d];
        if (dim.value >= 0) {
          shape.push_back(dim.value);
          continue;
        }
        auto b = bound.find(dim.symbol);
        // Without a specialization, an existing state keeps its own size.
        if (b == bound.end() && st != state_.end() && !dim.symbol.empty() &&
            st->second.rank() == static_cast<int64_t>(info.dims.size()))
          b = bound.emplace(dim.symbol, st->second.shape()[d]).first;
        if (b == bound.end())
          return makeError(
              "retained-state input '" + info.name + "' " + dimsString(info.dims) +
              " cannot be sized: " +
              (specializations_.empty()
                   ? "the artifact has no specializations.json, so past inputs must be given"
                   : "symbol '" + dim.symbol + "' is bound by no specialization"));
        shape.push_back(b->second);
      }
      if (st != state_.end() && st->second.shape() == shape) {
        deviceInputs.push_back(std::move(st->second));
        state_.erase(st);
      } else {
        DType dtype = info.dtype == DType::Float16 ? DType::Float32 : info.dtype;
        auto bytes = maxTensorBytes_ ? byteSize(dtype, shape) : 0;
        if (bytes > maxTensorBytes_)
          return makeError("retained-state input '" + info.name + "' " + shapeString(shape) +
                           " needs " + std::to_string(bytes) +
                           " bytes, more than the session's limit of " +
                           std::to_string(maxTensorBytes_) + " (maxTensorBytes)");
        deviceInputs.push_back(Tensor::zeros(dtype, shape));
      }
    }

    std::vector<Tensor> deviceOutputs;
    Status status = device_->run(deviceInputs, deviceOutputs);
    if (!status) {
      // The state may have been half updated in place.
      state_.clear();
      if (deviceKeepsState)
        device_->resetState();
      outputs_.clear();
      return status;
    }
    outputs_.clear();
    const auto &outInfos = device_->outputs();
    for (size_t i = 0; i < outInfos.size(); ++i) {
      const std::string &name = outInfos[i].name;
      size_t n = name.size(), k = std::strlen(kRetainedSuffix);
      if (n > k && name.compare(n - k, k, kRetainedSuffix) == 0 &&
          isState(name.substr(0, n - k))) {
        if (!deviceKeepsState)
          state_[name.substr(0, n - k)] = std::move(deviceOutputs[i]);
        continue;
      }
      outputs_[name] = toDeclared(deviceOutputs[i], outInfos[i].dtype);
    }
    lastSpecialization_ = spec ? spec->name : "";
    return {};
  } catch (const std::exception &e) {
    state_.clear();
    if (device_->keepsState())
      device_->resetState();
    return makeError(std::string("run: ") +
                     (dynamic_cast<const std::bad_alloc *>(&e) ? "out of memory" : e.what()));
  }
}

Result<Tensor> Session::getOutput(const std::string &name) const {
  auto it = outputs_.find(name);
  if (it != outputs_.end())
    return it->second;
  std::string names;
  for (const auto &[n, t] : outputs_)
    names += (names.empty() ? "" : ", ") + n;
  if (name.size() > std::strlen(kRetainedSuffix) &&
      name.find(kRetainedSuffix) != std::string::npos)
    return makeError("'" + name + "' is retained state: use readState()");
  return makeError("no output '" + name + "' (" +
                   (outputs_.empty() ? std::string("no successful run yet")
                                     : "outputs: " + names) +
                   ")");
}

Result<Tensor> Session::readState(const std::string &name) const {
  std::string key = name;
  size_t k = std::strlen(kRetainedSuffix);
  if (key.size() > k && key.compare(key.size() - k, k, kRetainedSuffix) == 0)
    key.resize(key.size() - k);
  if (std::find(stateNames_.begin(), stateNames_.end(), key) == stateNames_.end())
    return makeError("'" + name + "' is not retained state");
  if (device_->keepsState())
    return device_->readState(key);
  auto it = state_.find(key);
  if (it == state_.end())
    return makeError("retained state '" + key + "' does not exist yet (no run since open, "
                     "reset or a failed run)");
  DType declared = DType::Float32;
  for (const auto &info : device_->inputs())
    if (info.name == key)
      declared = info.dtype;
  if (declared == DType::Float16)
    return toDeclared(it->second, declared);
  return it->second.clone();
}

void Session::reset() {
  if (device_->keepsState())
    device_->resetState();
  for (auto &[name, t] : state_) {
    if (t.uniquelyOwned())
      std::memset(t.rawData(), 0, t.byteSize());
    else
      t = Tensor::zeros(t.dtype(), t.shape());
  }
}

} // namespace qeff::runtime
