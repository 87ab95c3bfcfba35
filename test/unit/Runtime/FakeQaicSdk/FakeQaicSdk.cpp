//===- FakeQaicSdk.cpp - A simulated AI 100 behind the fake SDK API -------===//
//
// TEST ONLY: see FakeQaicControl.h for the QPC format and the controls, and
// QAicApi.hpp for the sources ([api], [ex], [py], [types], [triton]) each
// behaviour follows. Behaviours no public source shows are marked GUESS.
//
//===----------------------------------------------------------------------===//

#include "FakeQaicControl.h"

#include "qeff/runtime/Tensor.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

namespace fakeqaic {

namespace {
struct Controls {
  std::map<std::string, QStatus> pending;
  bool hangNext = false;
  bool withholdNext = false;
  QStatus withholdStatus = QS_ERROR;
  double timeScale = 1.0;
  int hangDeadlineMs = 2000;
};
Controls &controls() {
  static Controls c;
  return c;
}

/// Whether `call` is to fail now (and forget it).
bool failing(const std::string &call, QStatus &status) {
  auto it = controls().pending.find(call);
  if (it == controls().pending.end())
    return false;
  status = it->second;
  controls().pending.erase(it);
  return true;
}
} // namespace

std::vector<Submission> &submissions() {
  static std::vector<Submission> s;
  return s;
}
std::vector<QID> &contextDevices() {
  static std::vector<QID> d;
  return d;
}
std::vector<SetCreated> &setsCreated() {
  static std::vector<SetCreated> s;
  return s;
}
std::vector<std::pair<std::string, QStatus>> &calls() {
  static std::vector<std::pair<std::string, QStatus>> c;
  return c;
}
std::vector<std::string> &log() {
  static std::vector<std::string> l;
  return l;
}
std::vector<std::string> &hangs() {
  static std::vector<std::string> h;
  return h;
}
void failNext(const std::string &call, QStatus status) {
  controls().pending[call] = status;
}
void hangNextInference() { controls().hangNext = true; }
void withholdNextHandle(QStatus status) {
  controls().withholdNext = true;
  controls().withholdStatus = status;
}
void setTimeScale(double scale) { controls().timeScale = scale; }
void setHangDeadlineMs(int ms) { controls().hangDeadlineMs = ms; }
void clear() {
  submissions().clear();
  contextDevices().clear();
  setsCreated().clear();
  calls().clear();
  log().clear();
  hangs().clear();
  controls() = Controls();
}

} // namespace fakeqaic

namespace qaic::rt {

namespace {

using Dims = std::vector<uint32_t>;
using DimsList = std::vector<std::pair<uint32_t, Dims>>;

QStatus record(const char *call, QStatus status) {
  fakeqaic::calls().emplace_back(call, status);
  return status;
}

QStatus failure(const char *call) {
  QStatus status = QS_SUCCESS;
  return fakeqaic::failing(call, status) ? status : QS_SUCCESS;
}

void throwIfFailing(const char *call) {
  QStatus status;
  if (fakeqaic::failing(call, status))
    throw CoreExceptionInit(std::string(call) + ": injected failure");
}

/// Bytes per element: [triton]'s GetElementSizeFromDataType.
uint32_t elementSize(QAicBufferDataTypeEnum_t type) {
  switch (type) {
  case BUFFER_DATA_TYPE_FLOAT:
  case BUFFER_DATA_TYPE_INT32I:
  case BUFFER_DATA_TYPE_INT32Q:
    return 4;
  case BUFFER_DATA_TYPE_FLOAT16:
  case BUFFER_DATA_TYPE_INT16Q:
  case BUFFER_DATA_TYPE_BFLOAT16:
    return 2;
  case BUFFER_DATA_TYPE_INT64I:
  case BUFFER_DATA_TYPE_FLOAT64C:
    return 8;
  case BUFFER_DATA_TYPE_INT8Q:
  case BUFFER_DATA_TYPE_UINT8Q:
  case BUFFER_DATA_TYPE_INT8:
  case BUFFER_DATA_TYPE_UINT8:
    return 1;
  default:
    return 0;
  }
}

QAicBufferDataTypeEnum_t typeNamed(const std::string &name) {
  static const std::map<std::string, QAicBufferDataTypeEnum_t> types = {
      {"float32", BUFFER_DATA_TYPE_FLOAT},   {"float16", BUFFER_DATA_TYPE_FLOAT16},
      {"bfloat16", BUFFER_DATA_TYPE_BFLOAT16}, {"int64", BUFFER_DATA_TYPE_INT64I},
      {"int32", BUFFER_DATA_TYPE_INT32I},    {"int32q", BUFFER_DATA_TYPE_INT32Q},
      {"int16q", BUFFER_DATA_TYPE_INT16Q},   {"int8", BUFFER_DATA_TYPE_INT8},
      {"int8q", BUFFER_DATA_TYPE_INT8Q},     {"uint8", BUFFER_DATA_TYPE_UINT8},
      {"uint8q", BUFFER_DATA_TYPE_UINT8Q},   {"float64c", BUFFER_DATA_TYPE_FLOAT64C}};
  auto it = types.find(name);
  if (it == types.end())
    throw CoreExceptionInit("fake QPC: unknown buffer type '" + name + "'");
  return it->second;
}

size_t product(const Dims &dims) {
  size_t n = 1;
  for (uint32_t d : dims)
    n *= d;
  return n;
}

std::string dimsText(const Dims &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

const Dims kSkipped = {0};

} // namespace

/// What the card needs of a QPC beyond its buffer mappings.
struct Qpc::Program {
  v2::BufferMappings buffers;
  std::vector<size_t> explicitSize; ///< "size" of the fake QPC, 0: none
  uint32_t numDevices = 1;
  size_t numInputs = 0, numOutputs = 0;

  /// Bytes a full buffer of binding `k` with `dims` must have: dims x
  /// element size ([py] sizes its buffers from the binding type's itemsize
  /// and the dims); the binding's own size for storage that declares one
  /// (GUESS: runtime.md says a buffer is checked against `size`).
  size_t requiredBytes(size_t k, const Dims &dims) const {
    if (explicitSize[k])
      return explicitSize[k];
    return product(dims) * elementSize(buffers[k].bufferMapping.dataType);
  }
};

Qpc::~Qpc() = default;

shContext Context::Factory(QAicContextProperties_t *,
                           const std::vector<QID> &devices) {
  throwIfFailing("Context::Factory");
  if (devices.empty())
    throw CoreExceptionInit("Context: no devices");
  auto context = std::make_shared<Context>();
  context->devices_ = devices;
  fakeqaic::contextDevices().insert(fakeqaic::contextDevices().end(),
                                    devices.begin(), devices.end());
  return context;
}

shQpc Qpc::Factory(const std::string &basePath, const std::string &filename) {
  throwIfFailing("Qpc::Factory");
  std::ifstream f(basePath + "/" + filename);
  if (!f)
    throw CoreExceptionInit("QpcFile: failed to open " + basePath + "/" +
                            filename);
  std::stringstream text;
  text << f.rdbuf();
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception &e) {
    throw CoreExceptionInit(std::string("fake QPC: ") + e.what());
  }
  auto qpc = std::make_shared<Qpc>();
  auto program = std::make_shared<Program>();
  program->numDevices = json.value("num_devices", 1u);
  uint32_t index = 0;
  for (const auto &b : json.at("buffers")) {
    v2::BufferMapping m;
    m.bufferMapping.bufferName = b.at("name").get<std::string>();
    m.bufferMapping.index = index++;
    bool input = b.at("dir") == "in";
    m.bufferMapping.ioType = input ? BUFFER_IO_TYPE_INPUT : BUFFER_IO_TYPE_OUTPUT;
    (input ? program->numInputs : program->numOutputs)++;
    m.bufferMapping.dataType = typeNamed(b.at("type").get<std::string>());
    m.bufferMapping.isPartialBufferAllowed = b.value("partial", false);
    size_t largest = 0;
    for (const auto &dims : b.at("shapes")) {
      v2::IoShape shape;
      shape.dims = dims.get<Dims>();
      shape.dataType = m.bufferMapping.dataType;
      largest = std::max(largest, product(shape.dims));
      m.ioShapes.push_back(shape);
    }
    size_t given = b.value("size", size_t(0));
    program->explicitSize.push_back(given);
    m.bufferMapping.size = static_cast<uint32_t>(
        given ? given : largest * elementSize(m.bufferMapping.dataType));
    qpc->mappings_.push_back(m.bufferMapping);
    program->buffers.push_back(m);
    qpc->mappingsV2_.push_back(std::move(m));
  }
  qpc->program_ = std::move(program);
  return qpc;
}

/// A handle's buffers and dims ([api]: the handle holds the data of one
/// inference; [ex] reuses one handle's dims across inferences).
struct InferenceHandle::State {
  std::shared_ptr<const Qpc::Program> program;
  DimsList dims;
  std::vector<QBuffer> inputs, outputs;
  bool inputsSet = false, outputsSet = false;
  uint32_t id = 0;

  /// Buffers of one direction against the current dims. GUESS: sizes are
  /// checked when buffers are set (ExecObj::setData in the open runtime
  /// returns QS_INVAL for invalid buffers).
  QStatus check(const std::vector<QBuffer> &list, bool input) {
    size_t want = input ? program->numInputs : program->numOutputs;
    if (list.size() != want) {
      fakeqaic::log().push_back(std::string(input ? "input" : "output") +
                                " buffers: " + std::to_string(list.size()) +
                                " given, the program has " + std::to_string(want));
      return QS_INVAL;
    }
    size_t next = 0;
    for (size_t k = 0; k < program->buffers.size(); ++k) {
      const BufferMapping &b = program->buffers[k].bufferMapping;
      if ((b.ioType == BUFFER_IO_TYPE_INPUT) != input)
        continue;
      const QBuffer &q = list[next++];
      const Dims &d = dims[k].second;
      if (d == kSkipped)
        continue; // the size of a skipped buffer is not looked at ([ex])
      size_t need = program->requiredBytes(k, d);
      if (q.size != need || !q.buf) {
        fakeqaic::log().push_back("buffer '" + b.bufferName + "' has " +
                                  std::to_string(q.size) + " bytes, its dims " +
                                  dimsText(d) + " need " + std::to_string(need));
        return QS_INVAL;
      }
    }
    return QS_SUCCESS;
  }
};

QStatus InferenceHandle::setBufferDimensions(const DimsList &dims) {
  if (QStatus s = failure("setBufferDimensions"); s != QS_SUCCESS)
    return record("setBufferDimensions", s);
  if (dims.size() != state_->program->buffers.size()) {
    fakeqaic::log().push_back("setBufferDimensions: " +
                              std::to_string(dims.size()) + " entries for " +
                              std::to_string(state_->program->buffers.size()) +
                              " buffers");
    return record("setBufferDimensions", QS_INVAL);
  }
  state_->dims = dims;
  return record("setBufferDimensions", QS_SUCCESS);
}

QStatus InferenceHandle::setInputBuffers(const std::vector<QBuffer> &buffers) {
  QStatus status = failure("setInputBuffers");
  if (status == QS_SUCCESS)
    status = state_->check(buffers, true);
  state_->inputsSet = status == QS_SUCCESS;
  if (status == QS_SUCCESS)
    state_->inputs = buffers;
  return record("setInputBuffers", status);
}

QStatus InferenceHandle::setOutputBuffers(const std::vector<QBuffer> &buffers) {
  QStatus status = failure("setOutputBuffers");
  if (status == QS_SUCCESS)
    status = state_->check(buffers, false);
  state_->outputsSet = status == QS_SUCCESS;
  if (status == QS_SUCCESS)
    state_->outputs = buffers;
  return record("setOutputBuffers", status);
}

/// The card: the program, its handles and the cache it retains.
struct InferenceSet::Card {
  std::shared_ptr<const Qpc::Program> program;
  uint32_t timeoutMs = 5000; ///< data path ([types]: the kernel's default)
  std::mutex mutex;
  std::condition_variable returned;
  std::vector<shInferenceHandle> available;
  struct InFlight {
    shInferenceHandle handle;
    QStatus result = QS_SUCCESS;
    bool hangs = false;
  };
  std::map<uint32_t, InFlight> inFlight;
  std::vector<float> cache; ///< past_key.0 as the card keeps it
  Dims cacheDims;

  const v2::BufferMappings &buffers() const { return program->buffers; }
  int find(const std::string &name) const {
    for (size_t i = 0; i < buffers().size(); ++i)
      if (buffers()[i].bufferMapping.bufferName == name)
        return static_cast<int>(i);
    return -1;
  }
  QAicBufferDataTypeEnum_t type(int k) const {
    return buffers()[k].bufferMapping.dataType;
  }

  static double get(const QBuffer &q, QAicBufferDataTypeEnum_t t, size_t i) {
    switch (t) {
    case BUFFER_DATA_TYPE_FLOAT:
      return reinterpret_cast<const float *>(q.buf)[i];
    case BUFFER_DATA_TYPE_FLOAT16:
      return qeff::runtime::halfToFloat(reinterpret_cast<const uint16_t *>(q.buf)[i]);
    case BUFFER_DATA_TYPE_BFLOAT16: {
      uint32_t bits = uint32_t(reinterpret_cast<const uint16_t *>(q.buf)[i]) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    case BUFFER_DATA_TYPE_INT64I:
      return double(reinterpret_cast<const int64_t *>(q.buf)[i]);
    case BUFFER_DATA_TYPE_INT32I:
      return reinterpret_cast<const int32_t *>(q.buf)[i];
    default:
      return q.buf[i];
    }
  }
  static void set(QBuffer &q, QAicBufferDataTypeEnum_t t, size_t i, double v) {
    switch (t) {
    case BUFFER_DATA_TYPE_FLOAT:
      reinterpret_cast<float *>(q.buf)[i] = float(v);
      break;
    case BUFFER_DATA_TYPE_FLOAT16:
      reinterpret_cast<uint16_t *>(q.buf)[i] = qeff::runtime::floatToHalf(float(v));
      break;
    case BUFFER_DATA_TYPE_BFLOAT16: {
      float f = float(v);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      reinterpret_cast<uint16_t *>(q.buf)[i] = uint16_t(bits >> 16);
      break;
    }
    default:
      break;
    }
  }

  QStatus fail(const std::string &why) {
    fakeqaic::log().push_back(why);
    return QS_INVAL; // GUESS: the status of a failed inference
  }

  /// Runs one inference; its status is what getCompletedId reports. The
  /// checks are those [py] reports after a failed completion: "No matching
  /// dimension found" and "Partial buffer not allowed for".
  QStatus run(InferenceHandle::State &h) {
    const DimsList &dims = h.dims;
    std::vector<QBuffer> byIndex(buffers().size());
    size_t in = 0, out = 0;
    for (size_t k = 0; k < buffers().size(); ++k) {
      bool input = buffers()[k].bufferMapping.ioType == BUFFER_IO_TYPE_INPUT;
      byIndex[k] = input ? h.inputs[in++] : h.outputs[out++];
    }
    for (size_t k = 0; k < buffers().size(); ++k) {
      const BufferMapping &b = buffers()[k].bufferMapping;
      const auto &[elem, d] = dims[k];
      if (d == kSkipped) {
        if (!b.isPartialBufferAllowed)
          return fail("Partial buffer not allowed for " + b.bufferName);
        continue;
      }
      if (elem != elementSize(b.dataType))
        return fail("buffer '" + b.bufferName + "': element size " +
                    std::to_string(elem) + ", the binding's type has " +
                    std::to_string(elementSize(b.dataType)));
      if (byIndex[k].size != program->requiredBytes(k, d) || !byIndex[k].buf)
        return fail("buffer '" + b.bufferName + "' does not match its dims " +
                    dimsText(d));
    }
    size_t numShapes = buffers().front().ioShapes.size(), shape = numShapes;
    for (size_t s = 0; s < numShapes && shape == numShapes; ++s) {
      bool match = true;
      for (size_t k = 0; k < buffers().size(); ++k)
        if (dims[k].second != kSkipped)
          match &= dims[k].second == buffers()[k].ioShapes[s].dims;
      if (match)
        shape = s;
    }
    if (shape == numShapes)
      return fail("No matching dimension found");
    return compute(byIndex, dims, shape);
  }

  /// The toy network (FakeQaicControl.h).
  QStatus compute(std::vector<QBuffer> &byIndex, const DimsList &dims,
                  size_t shape) {
    int ids = find("input_ids"), pos = find("position_ids"),
        past = find("past_key.0"), logits = find("logits"),
        out = find("past_key.0_RetainedState");
    if (ids < 0 || pos < 0 || past < 0)
      return QS_SUCCESS; // not the toy network: nothing to compute
    for (int k : {ids, pos})
      if (dims[k].second == kSkipped)
        return fail("no data for '" + buffers()[k].bufferMapping.bufferName + "'");
    const Dims &cd = buffers()[past].ioShapes[shape].dims; // [B, 1, ctx, 2]
    if (cacheDims != cd) { // first use: whatever the memory held
      cacheDims = cd;
      cache.assign(product(cd), 7.0f);
    }
    if (dims[past].second != kSkipped) {
      if (program->explicitSize[past]) {
        // MX storage: only zeros are understood (a reset).
        const QBuffer &q = byIndex[past];
        for (size_t i = 0; i < q.size; ++i)
          if (q.buf[i])
            return fail("past_key.0: the fake decodes only an all-zero MX buffer");
        cache.assign(cache.size(), 0.f);
      } else {
        for (size_t i = 0; i < cache.size(); ++i)
          cache[i] = float(get(byIndex[past], type(past), i));
      }
    }
    const uint32_t B = dims[ids].second[0], S = dims[ids].second[1], ctx = cd[2];
    for (uint32_t b = 0; b < B; ++b)
      for (uint32_t j = 0; j < S; ++j) {
        int64_t p = int64_t(get(byIndex[pos], type(pos), b * S + j));
        double t = get(byIndex[ids], type(ids), b * S + j);
        if (p < 0)
          p += ctx;
        cache[(b * ctx + p) * 2 + 0] = qeff::runtime::roundToHalf(float(t));
        cache[(b * ctx + p) * 2 + 1] = qeff::runtime::roundToHalf(float(10 * t));
      }
    if (logits >= 0 && dims[logits].second != kSkipped)
      for (uint32_t b = 0; b < B; ++b)
        for (uint32_t k = 0; k < 2; ++k) {
          double sum = 0;
          for (uint32_t p = 0; p < ctx; ++p)
            sum += cache[(b * ctx + p) * 2 + k];
          set(byIndex[logits], type(logits), b * 2 + k, sum);
        }
    if (out >= 0 && dims[out].second != kSkipped)
      for (size_t i = 0; i < cache.size(); ++i)
        set(byIndex[out], type(out), i, cache[i]);
    return QS_SUCCESS;
  }
};

namespace {
/// Waits on `card` until `ready` or the test-only deadline; records a hang
/// and returns false when the deadline passes.
template <typename Ready>
bool waitOrRecordHang(InferenceSet::Card &card, std::unique_lock<std::mutex> &lock,
                      Ready ready, const std::string &what) {
  auto deadline = std::chrono::milliseconds(fakeqaic::controls().hangDeadlineMs);
  if (card.returned.wait_for(lock, deadline, ready))
    return true;
  std::string message = "fake qaic: " + what + " would block forever on a real card";
  std::fprintf(stderr, "%s\n", message.c_str());
  fakeqaic::hangs().push_back(message);
  return false;
}

std::vector<QID> parseMapping(const std::string &mapping) {
  std::vector<QID> ids;
  std::stringstream s(mapping);
  std::string part;
  while (std::getline(s, part, ':')) {
    size_t used = 0;
    int id = -1;
    try {
      id = std::stoi(part, &used);
    } catch (const std::exception &) {
      used = 0;
    }
    if (used == 0 || used != part.size() || id < 0)
      throw CoreExceptionInit("InferenceSet: devMapping '" + mapping +
                              "' is not q0:q1:...");
    ids.push_back(id);
  }
  return ids;
}
} // namespace

InferenceSet::InferenceSet(std::unique_ptr<Card> card) : card_(std::move(card)) {}
InferenceSet::~InferenceSet() = default;

shInferenceSet InferenceSet::Factory(shContext context, shQpc qpc, QID device,
                                     uint32_t setSize, uint32_t numActivations,
                                     const InferenceSetProperties *properties) {
  throwIfFailing("InferenceSet::Factory");
  if (!context || !qpc || setSize == 0 || numActivations == 0)
    throw CoreExceptionInit("InferenceSet: invalid arguments");
  const auto &devices = context->devices();
  if (std::find(devices.begin(), devices.end(), device) == devices.end())
    throw CoreExceptionInit("InferenceSet: device " + std::to_string(device) +
                            " is not in the context"); // GUESS
  const Qpc::Program &program = qpc->program();
  std::string mapping = properties ? properties->programProperties.devMapping : "";
  // [api]: devMapping names the devices of a network that needs several
  // and is valid only for such networks; [py] sets it for more than one
  // device and never otherwise. Refusing the other cases is a GUESS.
  if (program.numDevices > 1) {
    std::vector<QID> ids = parseMapping(mapping);
    std::set<QID> distinct(ids.begin(), ids.end());
    if (ids.size() != program.numDevices || distinct.size() != ids.size())
      throw CoreExceptionInit(
          "InferenceSet: the program needs " + std::to_string(program.numDevices) +
          " devices and programProperties.devMapping is '" + mapping + "'");
    for (QID id : ids)
      if (std::find(devices.begin(), devices.end(), id) == devices.end())
        throw CoreExceptionInit("InferenceSet: devMapping names device " +
                                std::to_string(id) + ", not in the context");
  } else if (!mapping.empty()) {
    throw CoreExceptionInit("InferenceSet: devMapping '" + mapping +
                            "' for a single-device program");
  }
  auto card = std::make_unique<Card>();
  card->program = std::shared_ptr<const Qpc::Program>(qpc, &program);
  uint32_t timeout = properties ? properties->programProperties.dataPathTimeoutMs : 0;
  card->timeoutMs = timeout ? timeout : 5000;
  // [api]: setSize x numActivations handles, all available at first.
  for (uint32_t i = 0; i < setSize * numActivations; ++i) {
    auto state = std::make_shared<InferenceHandle::State>();
    state->program = card->program;
    for (const auto &b : program.buffers) {
      // A fresh handle knows the binding's full dims ([sample] binds
      // buffers of BufferMapping::size without setting any).
      Dims largest;
      for (const auto &s : b.ioShapes)
        if (product(s.dims) >= product(largest) || largest.empty())
          largest = s.dims;
      state->dims.emplace_back(elementSize(b.bufferMapping.dataType), largest);
    }
    card->available.push_back(std::make_shared<InferenceHandle>(state));
  }
  fakeqaic::SetCreated created;
  created.device = device;
  created.setSize = setSize;
  created.numActivations = numActivations;
  created.hasProperties = properties != nullptr;
  created.devMapping = mapping;
  created.dataPathTimeoutMs = timeout;
  fakeqaic::setsCreated().push_back(created);
  return std::make_shared<InferenceSet>(std::move(card));
}

QStatus InferenceSet::getAvailable(shInferenceHandle &handle) {
  if (QStatus s = failure("getAvailable"); s != QS_SUCCESS)
    return s;
  std::unique_lock<std::mutex> lock(card_->mutex);
  if (!waitOrRecordHang(*card_, lock, [&] { return !card_->available.empty(); },
                        "getAvailable (no handle was put back)"))
    return QS_TIMEDOUT; // fake only: the real call does not return
  handle = card_->available.back();
  card_->available.pop_back();
  return QS_SUCCESS;
}

QStatus InferenceSet::submit(shInferenceHandle &handle, uint32_t id) {
  if (QStatus s = failure("submit"); s != QS_SUCCESS)
    return record("submit", s); // the handle stays with the caller
  if (!handle || !handle->state_->inputsSet || !handle->state_->outputsSet) {
    fakeqaic::log().push_back("submit: the handle's buffers are not set");
    return record("submit", QS_INVAL);
  }
  InferenceHandle::State &h = *handle->state_;
  fakeqaic::Submission sub;
  for (const QBuffer &q : h.inputs)
    sub.inputSizes.push_back(q.size);
  for (const QBuffer &q : h.outputs)
    sub.outputSizes.push_back(q.size);
  sub.dims = h.dims;
  Card::InFlight flight;
  flight.handle = handle;
  flight.hangs = std::exchange(fakeqaic::controls().hangNext, false);
  flight.result = flight.hangs ? QS_TIMEDOUT : card_->run(h);
  sub.result = flight.result;
  fakeqaic::submissions().push_back(sub);
  h.id = id;
  {
    std::lock_guard<std::mutex> lock(card_->mutex);
    card_->inFlight[id] = flight;
  }
  handle.reset();
  return record("submit", QS_SUCCESS);
}

QStatus InferenceSet::getCompletedId(shInferenceHandle &handle, uint32_t id) {
  std::unique_lock<std::mutex> lock(card_->mutex);
  if (!waitOrRecordHang(*card_, lock, [&] { return card_->inFlight.count(id) > 0; },
                        "getCompletedId(" + std::to_string(id) +
                            ") (no such inference was submitted)"))
    return QS_TIMEDOUT;
  Card::InFlight flight = card_->inFlight[id];
  card_->inFlight.erase(id);
  lock.unlock();
  auto &c = fakeqaic::controls();
  if (c.withholdNext) {
    // GUESS: a completion that fails without handing the handle back; the
    // set has one handle less from now on.
    c.withholdNext = false;
    return c.withholdStatus;
  }
  if (flight.hangs) {
    // The kernel's wait gives up after the data-path timeout ([types]: the
    // kernel default is 5000 ms; [py] sets 60000).
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(
        card_->timeoutMs * c.timeScale));
  }
  handle = flight.handle;
  QStatus injected = failure("getCompletedId");
  return injected != QS_SUCCESS ? injected : flight.result;
}

QStatus InferenceSet::putCompleted(shInferenceHandle &&handle) {
  if (!handle)
    return QS_INVAL;
  {
    std::lock_guard<std::mutex> lock(card_->mutex);
    card_->available.push_back(std::move(handle));
  }
  card_->returned.notify_all();
  return QS_SUCCESS;
}

} // namespace qaic::rt
