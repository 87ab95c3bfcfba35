//===- FakeQaicSdk.cpp - A simulated AI 100 behind the fake SDK API -------===//
//
// TEST ONLY: see FakeQaicControl.h. Checks what a runtime would check (buffer
// counts, sizes against dims, dims against the allowed shapes, skipped
// buffers only where the state lives on the card) and runs a toy network.
//
//===----------------------------------------------------------------------===//

#include "FakeQaicControl.h"

#include "qeff/runtime/Tensor.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

namespace fakeqaic {

namespace {
std::map<std::string, QStatus> &pending() {
  static std::map<std::string, QStatus> p;
  return p;
}

/// Whether `call` is to fail now (and forget it).
bool failing(const std::string &call, QStatus &status) {
  auto it = pending().find(call);
  if (it == pending().end())
    return false;
  status = it->second;
  pending().erase(it);
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
void failNext(const std::string &call, QStatus status) {
  pending()[call] = status;
}
void clear() {
  submissions().clear();
  contextDevices().clear();
  pending().clear();
}

} // namespace fakeqaic

namespace qaic::rt {

namespace {

QStatus failure(const char *call) {
  QStatus status = QS_SUCCESS;
  return fakeqaic::failing(call, status) ? status : QS_SUCCESS;
}

void throwIfFailing(const char *call) {
  QStatus status;
  if (fakeqaic::failing(call, status))
    throw CoreExceptionInit(std::string(call) + ": injected failure");
}

uint32_t elementSize(QAicBufferDataTypeEnum_t type) {
  switch (type) {
  case BUFFER_DATA_TYPE_FLOAT:
  case BUFFER_DATA_TYPE_INT32I:
  case BUFFER_DATA_TYPE_INT32Q:
    return 4;
  case BUFFER_DATA_TYPE_FLOAT16:
    return 2;
  case BUFFER_DATA_TYPE_INT64I:
    return 8;
  default:
    return 1;
  }
}

QAicBufferDataTypeEnum_t typeNamed(const std::string &name) {
  if (name == "float32")
    return BUFFER_DATA_TYPE_FLOAT;
  if (name == "float16")
    return BUFFER_DATA_TYPE_FLOAT16;
  if (name == "int64")
    return BUFFER_DATA_TYPE_INT64I;
  if (name == "int32")
    return BUFFER_DATA_TYPE_INT32I;
  if (name == "int8")
    return BUFFER_DATA_TYPE_INT8;
  return BUFFER_DATA_TYPE_INVAL;
}

size_t product(const std::vector<uint32_t> &dims) {
  size_t n = 1;
  for (uint32_t d : dims)
    n *= d;
  return n;
}

} // namespace

shContext Context::Factory(QAicContextProperties_t *,
                           const std::vector<QID> &devices) {
  throwIfFailing("Context::Factory");
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
  auto json = nlohmann::json::parse(text.str());
  auto qpc = std::make_shared<Qpc>();
  uint32_t index = 0;
  for (const auto &b : json.at("buffers")) {
    v2::BufferMapping m;
    m.bufferMapping.bufferName = b.at("name").get<std::string>();
    m.bufferMapping.index = index++;
    m.bufferMapping.ioType =
        b.at("dir") == "in" ? BUFFER_IO_TYPE_INPUT : BUFFER_IO_TYPE_OUTPUT;
    m.bufferMapping.dataType = typeNamed(b.at("type").get<std::string>());
    size_t largest = 0;
    for (const auto &dims : b.at("shapes")) {
      v2::IoShape shape;
      shape.dims = dims.get<std::vector<uint32_t>>();
      shape.dataType = m.bufferMapping.dataType;
      largest = std::max(largest, product(shape.dims));
      m.ioShapes.push_back(shape);
    }
    m.bufferMapping.size = largest * elementSize(m.bufferMapping.dataType);
    qpc->mappings_.push_back(m.bufferMapping);
    qpc->mappingsV2_.push_back(std::move(m));
  }
  return qpc;
}

/// The card: the QPC's buffers and the cache it retains.
struct InferenceSet::Card {
  v2::BufferMappings buffers;
  std::vector<float> cache; ///< past_key.0 as the card keeps it
  std::vector<uint32_t> cacheDims;
  QStatus result = QS_SUCCESS; ///< of the last submitted inference

  int find(const std::string &name) const {
    for (size_t i = 0; i < buffers.size(); ++i)
      if (buffers[i].bufferMapping.bufferName == name)
        return static_cast<int>(i);
    return -1;
  }

  /// Reads element `i` of buffer `q` of type `t` as a double.
  static double get(const QBuffer &q, QAicBufferDataTypeEnum_t t, size_t i) {
    switch (t) {
    case BUFFER_DATA_TYPE_FLOAT:
      return reinterpret_cast<const float *>(q.buf)[i];
    case BUFFER_DATA_TYPE_FLOAT16:
      return qeff::runtime::halfToFloat(
          reinterpret_cast<const uint16_t *>(q.buf)[i]);
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
      reinterpret_cast<uint16_t *>(q.buf)[i] =
          qeff::runtime::floatToHalf(float(v));
      break;
    default:
      break;
    }
  }

  /// Runs one inference on the buffers by index.
  QStatus
  run(std::vector<QBuffer> &byIndex,
      const std::vector<std::pair<uint32_t, std::vector<uint32_t>>> &dims) {
    // Dims against the allowed shapes: every bound buffer in one shape.
    size_t numShapes = buffers.front().ioShapes.size(), shape = numShapes;
    for (size_t s = 0; s < numShapes && shape == numShapes; ++s) {
      bool match = true;
      for (size_t k = 0; k < buffers.size(); ++k)
        if (dims[k].second != std::vector<uint32_t>{0})
          match &= dims[k].second == buffers[k].ioShapes[s].dims;
      if (match)
        shape = s;
    }
    if (shape == numShapes)
      return QS_ERROR; // "No matching dimension found"
    int ids = find("input_ids"), pos = find("position_ids"),
        past = find("past_key.0"), logits = find("logits"),
        out = find("past_key.0_RetainedState");
    if (ids < 0 || pos < 0 || past < 0)
      return QS_SUCCESS; // not the toy network: nothing to compute
    for (int k : {ids, pos})
      if (dims[k].second == std::vector<uint32_t>{0})
        return QS_ERROR;
    const std::vector<uint32_t> &cd =
        buffers[past].ioShapes[shape].dims; // [B, 1, ctx, 2]
    if (cacheDims != cd) { // first use: whatever the memory held
      cacheDims = cd;
      cache.assign(product(cd), 7.0f);
    }
    auto type = [&](int k) { return buffers[k].bufferMapping.dataType; };
    if (dims[past].second != std::vector<uint32_t>{0})
      for (size_t i = 0; i < cache.size(); ++i)
        cache[i] = float(get(byIndex[past], type(past), i));
    const uint32_t B = dims[ids].second[0], S = dims[ids].second[1],
                   ctx = cd[2];
    for (uint32_t b = 0; b < B; ++b)
      for (uint32_t j = 0; j < S; ++j) {
        int64_t p = int64_t(get(byIndex[pos], type(pos), b * S + j));
        double t = get(byIndex[ids], type(ids), b * S + j);
        if (p < 0)
          p += ctx;
        cache[(b * ctx + p) * 2 + 0] = qeff::runtime::roundToHalf(float(t));
        cache[(b * ctx + p) * 2 + 1] =
            qeff::runtime::roundToHalf(float(10 * t));
      }
    if (logits >= 0 && dims[logits].second != std::vector<uint32_t>{0})
      for (uint32_t b = 0; b < B; ++b)
        for (uint32_t k = 0; k < 2; ++k) {
          double sum = 0;
          for (uint32_t p = 0; p < ctx; ++p)
            sum += cache[(b * ctx + p) * 2 + k];
          set(byIndex[logits], type(logits), b * 2 + k, sum);
        }
    if (out >= 0 && dims[out].second != std::vector<uint32_t>{0})
      for (size_t i = 0; i < cache.size(); ++i)
        set(byIndex[out], type(out), i, cache[i]);
    return QS_SUCCESS;
  }
};

InferenceSet::~InferenceSet() = default;

shInferenceSet InferenceSet::Factory(shContext context, shQpc qpc, QID,
                                     uint32_t setSize,
                                     uint32_t numActivations) {
  throwIfFailing("InferenceSet::Factory");
  if (!context || !qpc || setSize == 0 || numActivations == 0)
    throw CoreExceptionInit("InferenceSet: invalid arguments");
  auto set = std::make_shared<InferenceSet>();
  set->card_ = std::make_unique<Card>();
  set->card_->buffers = qpc->getBufferMappingsV2();
  for (uint32_t i = 0; i < setSize * numActivations; ++i)
    set->available_.push_back(std::make_shared<InferenceHandle>());
  return set;
}

QStatus InferenceSet::getAvailable(shInferenceHandle &handle) {
  if (QStatus s = failure("getAvailable"); s != QS_SUCCESS)
    return s;
  if (available_.empty())
    return QS_AGAIN; // the real call blocks; a test would hang
  handle = available_.back();
  available_.pop_back();
  return QS_SUCCESS;
}

QStatus InferenceSet::submit(shInferenceHandle &handle, uint32_t id) {
  if (QStatus s = failure("submit"); s != QS_SUCCESS)
    return s;
  if (!handle)
    return QS_INVAL;
  fakeqaic::Submission record;
  for (const QBuffer &q : handle->inputs_)
    record.inputSizes.push_back(q.size);
  for (const QBuffer &q : handle->outputs_)
    record.outputSizes.push_back(q.size);
  record.dims = handle->dims_;
  fakeqaic::submissions().push_back(record);

  // The buffer lists in the QPC's index order, inputs and outputs apart.
  const auto &buffers = card_->buffers;
  std::vector<QBuffer> byIndex(buffers.size());
  size_t in = 0, out = 0;
  for (size_t k = 0; k < buffers.size(); ++k) {
    bool input = buffers[k].bufferMapping.ioType == BUFFER_IO_TYPE_INPUT;
    auto &list = input ? handle->inputs_ : handle->outputs_;
    size_t &next = input ? in : out;
    if (next >= list.size())
      return QS_INVAL;
    byIndex[k] = list[next++];
  }
  if (in != handle->inputs_.size() || out != handle->outputs_.size() ||
      handle->dims_.size() != buffers.size())
    return QS_INVAL;
  for (size_t k = 0; k < buffers.size(); ++k) {
    const auto &[elem, dims] = handle->dims_[k];
    if (elem != elementSize(buffers[k].bufferMapping.dataType))
      return QS_INVAL;
    if (dims == std::vector<uint32_t>{0})
      continue; // partial: kept on the card, or not wanted
    if (byIndex[k].size != product(dims) * elem || !byIndex[k].buf)
      return QS_INVAL;
  }
  handle->id_ = id;
  card_->result = card_->run(byIndex, handle->dims_);
  completed_.push_back(handle);
  handle.reset();
  return QS_SUCCESS;
}

QStatus InferenceSet::getCompletedId(shInferenceHandle &handle, uint32_t id) {
  // An injected failure is the inference's status: the handle comes back.
  QStatus injected = failure("getCompletedId");
  for (auto it = completed_.begin(); it != completed_.end(); ++it)
    if ((*it)->id_ == id) {
      handle = *it;
      completed_.erase(it);
      return injected != QS_SUCCESS ? injected : card_->result;
    }
  return QS_INVAL;
}

QStatus InferenceSet::putCompleted(shInferenceHandle &&handle) {
  if (!handle)
    return QS_INVAL;
  available_.push_back(std::move(handle));
  return QS_SUCCESS;
}

} // namespace qaic::rt
