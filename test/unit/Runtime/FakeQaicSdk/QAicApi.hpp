//===- QAicApi.hpp - A fake of the AI 100 Platform SDK runtime API -*- C++
//-*-===//
//
// TEST ONLY. Declares, under the SDK's header name, the subset of the Cloud
// AI 100 Platform SDK's C++ runtime API (/opt/qti-aic/dev/inc/QAicApi.hpp,
// namespace qaic::rt) that runtime/qaic/QaicDevice.cpp uses, with the names,
// namespaces and call shapes of the public sources (docs/device.md, "QAIC
// device", lists them). Written for qeff from those descriptions, not copied
// from the SDK. FakeQaicSdk.cpp implements it as a simulated card; the unit
// test QEffQaicDeviceTest is the only thing that links it.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_TEST_FAKE_QAICAPI_HPP
#define QEFF_TEST_FAKE_QAICAPI_HPP

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

/// Status of an operation (values of the SDK's QAicTypes.h).
typedef enum {
  QS_SUCCESS = 0,
  QS_PERM = 1,
  QS_AGAIN = 2,
  QS_NOMEM = 3,
  QS_BUSY = 4,
  QS_NODEV = 5,
  QS_INVAL = 6,
  QS_NOSPC = 7,
  QS_BADFD = 8,
  QS_TIMEDOUT = 9,
  QS_PROTOCOL = 10,
  QS_UNSUPPORTED = 11,
  QS_DATA_CRC_ERROR = 12,
  QS_DEV_ERROR = 300,
  QS_ERROR = 500,
} QStatus;

using QID = int32_t;
using QAicContextProperties_t = uint32_t;

typedef enum {
  BUFFER_IO_TYPE_INVALID = 0,
  BUFFER_IO_TYPE_INPUT = 1,
  BUFFER_IO_TYPE_OUTPUT = 2,
  BUFFER_IO_TYPE_INVAL = 3,
} QAicBufferIoTypeEnum_t;

typedef enum {
  BUFFER_DATA_TYPE_FLOAT = 0,
  BUFFER_DATA_TYPE_FLOAT16 = 1,
  BUFFER_DATA_TYPE_INT8Q = 2,
  BUFFER_DATA_TYPE_UINT8Q = 3,
  BUFFER_DATA_TYPE_INT16Q = 4,
  BUFFER_DATA_TYPE_INT32Q = 5,
  BUFFER_DATA_TYPE_INT32I = 6,
  BUFFER_DATA_TYPE_INT64I = 7,
  BUFFER_DATA_TYPE_INT8 = 8,
  BUFFER_DATA_TYPE_INVAL = 9,
} QAicBufferDataTypeEnum_t;

/// A host buffer handed to an inference.
struct QBuffer {
  size_t size = 0;
  uint8_t *buf = nullptr;
  uint64_t handle = 0;
  uint32_t offset = 0;
  uint32_t type = 0;
};

namespace qaic::rt {

/// Thrown by the factories.
class CoreExceptionInit : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};
class CoreExceptionRuntime : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// One buffer of a program: name, index in the buffer list, direction, size
/// in bytes, data type.
struct BufferMapping {
  std::string bufferName;
  uint32_t index = 0;
  QAicBufferIoTypeEnum_t ioType = BUFFER_IO_TYPE_INVAL;
  uint32_t size = 0;
  bool isPartialBufferAllowed = false;
  QAicBufferDataTypeEnum_t dataType = BUFFER_DATA_TYPE_INVAL;
};
using BufferMappings = std::vector<BufferMapping>;

namespace v2 {
/// One allowed shape (one network specialization) of a buffer.
struct IoShape {
  std::vector<uint32_t> dims;
  QAicBufferDataTypeEnum_t dataType = BUFFER_DATA_TYPE_INVAL;
};
/// A buffer with its allowed shapes, one per specialization.
struct BufferMapping {
  rt::BufferMapping bufferMapping;
  std::vector<IoShape> ioShapes;
};
using BufferMappings = std::vector<BufferMapping>;
} // namespace v2

class Context;
class Qpc;
class InferenceHandle;
class InferenceSet;
using shContext = std::shared_ptr<Context>;
using shQpc = std::shared_ptr<Qpc>;
using shInferenceHandle = std::shared_ptr<InferenceHandle>;
using shInferenceSet = std::shared_ptr<InferenceSet>;

class Context {
public:
  static shContext Factory(QAicContextProperties_t *properties,
                           const std::vector<QID> &devices);
  const std::vector<QID> &devices() const { return devices_; }

private:
  std::vector<QID> devices_;
};

/// A QPC loaded from <basePath>/<filename>.
class Qpc {
public:
  static shQpc Factory(const std::string &basePath,
                       const std::string &filename = "programqpc.bin");
  const BufferMappings &getBufferMappings() const { return mappings_; }
  v2::BufferMappings getBufferMappingsV2() const { return mappingsV2_; }

private:
  BufferMappings mappings_;
  v2::BufferMappings mappingsV2_;
};

class InferenceHandle {
public:
  void setInputBuffers(const std::vector<QBuffer> &buffers) {
    inputs_ = buffers;
  }
  void setOutputBuffers(const std::vector<QBuffer> &buffers) {
    outputs_ = buffers;
  }
  void setBufferDimensions(
      const std::vector<std::pair<uint32_t, std::vector<uint32_t>>> &dims) {
    dims_ = dims;
  }

private:
  friend class InferenceSet;
  std::vector<QBuffer> inputs_, outputs_;
  std::vector<std::pair<uint32_t, std::vector<uint32_t>>> dims_;
  uint32_t id_ = 0;
};

/// Activations of a QPC on a device with a pool of inference handles.
class InferenceSet {
public:
  static shInferenceSet Factory(shContext context, shQpc qpc, QID device,
                                uint32_t setSize, uint32_t numActivations);
  QStatus getAvailable(shInferenceHandle &handle);
  QStatus submit(shInferenceHandle &handle, uint32_t id);
  QStatus getCompletedId(shInferenceHandle &handle, uint32_t id);
  QStatus putCompleted(shInferenceHandle &&handle);

  struct Card; ///< the simulated device (FakeQaicSdk.cpp)
  ~InferenceSet();

private:
  std::unique_ptr<Card> card_;
  std::vector<shInferenceHandle> available_, completed_;
};

} // namespace qaic::rt

#endif // QEFF_TEST_FAKE_QAICAPI_HPP
