//===- QAicApi.hpp - A fake of the AI 100 Platform SDK runtime API -*- C++ -*-===//
//
// TEST ONLY. Declares, under the SDK's header name, the subset of the Cloud
// AI 100 Platform SDK's C++ runtime API (/opt/qti-aic/dev/inc/QAicApi.hpp,
// namespace qaic::rt) that runtime/qaic/QaicDevice.cpp uses. Written for qeff
// from public descriptions, nothing copied. Every name and shape says where it
// is taken from; what no public source shows is marked GUESS. Sources:
//   [api]    quic/cloud-ai-sdk-pages docs/Cpp-API/runtime.md
//   [ex]     quic/efficient-transformers
//            examples/performance/cpp_execution/InferenceSetIOBuffer.cpp
//   [sample] quic/cloud-ai-sdk samples/cpp/cpp_qpc_inference/main.cpp
//   [types]  quic/software-kit-for-qualcomm-cloud-ai-100
//            inc/qaic-openrt-api-hpp/qaic-api-common/QAicTypes.h and
//            QAicRuntimeTypes.h (the open runtime's shared types)
//   [py]     quic/efficient-transformers QEfficient/generation/cloud_infer.py
//            (the same runtime through its Python binding)
//   [triton] Qualcomm's Triton backend for qaic devices (its element sizes)
// FakeQaicSdk.cpp implements it as a simulated card; the unit test
// QEffQaicDeviceTest is the only thing that links it.
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

/// Status of an operation: names and values of [types] QAicTypes.h.
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

using QID = int32_t;                    // [types]
using QAicContextProperties_t = uint32_t; // [types] QAicContextProperties

/// Buffer direction. [types] declares these in an `enum class`; the SDK
/// header the public examples compile against uses them unqualified ([ex]
/// `bufmap.ioType == BUFFER_IO_TYPE_INPUT`, [sample] `case
/// BUFFER_IO_TYPE_INPUT:`), so the fake declares a plain enum.
typedef enum {
  BUFFER_IO_TYPE_INVALID = 0,
  BUFFER_IO_TYPE_INPUT = 1,
  BUFFER_IO_TYPE_OUTPUT = 2,
  BUFFER_IO_TYPE_INVAL = 3,
} QAicBufferIoTypeEnum_t;

/// Buffer data types: 0..9 as [api] and [types] list them (unqualified as in
/// [sample]). BFLOAT16, UINT8 and FLOAT64C are names of the current SDK
/// ([triton] maps them to 2, 1 and 8 bytes); their values are a GUESS (the
/// code under test must use the names only).
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
  BUFFER_DATA_TYPE_BFLOAT16 = 10,
  BUFFER_DATA_TYPE_UINT8 = 11,
  BUFFER_DATA_TYPE_FLOAT64C = 12,
} QAicBufferDataTypeEnum_t;

/// A host buffer handed to an inference: the members of [types] QBuffer.
struct QBuffer {
  size_t size = 0;
  uint8_t *buf = nullptr;
  uint64_t handle = 0;
  uint32_t offset = 0;
  uint32_t type = 0;
};

/// Program properties. SubmitNumRetries and SubmitRetryTimeoutMs are
/// [types] QAicProgramProperties; devMapping is listed by [api]
/// (InferenceSetProperties::programProperties) and set by [py] as
/// "q0:q1:..."; dataPathTimeoutMs is the field [py] sets to 60000 through
/// the Python binding. The C++ type of the last two is a GUESS.
struct QAicProgramProperties {
  uint32_t selectMask = 0;
  uint32_t SubmitNumRetries = 0;
  uint32_t SubmitRetryTimeoutMs = 0;
  std::string devMapping;
  uint32_t dataPathTimeoutMs = 0;
};

/// [types] QAicQueueProperties.
struct QAicQueueProperties {
  uint32_t properties = 0;
  uint32_t numThreadsPerQueue = 0;
};

namespace qaic::rt {

/// Exception types of the factories ([api]: "a proper exception will be
/// thrown"); the names are those of the open runtime's
/// QAicOpenRtExceptions.hpp.
class CoreExceptionInit : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};
class CoreExceptionRuntime : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// One buffer of a program: the members [api] and [types] list.
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
/// One allowed shape (one network specialization) of a buffer, as [ex] and
/// [triton] read `ioShapes[i].dims`.
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

/// [api] Context: created from properties and the devices it uses.
class Context {
public:
  static shContext Factory(QAicContextProperties_t *properties,
                           const std::vector<QID> &devices);
  const std::vector<QID> &devices() const { return devices_; }

private:
  std::vector<QID> devices_;
};

/// [api] Qpc, from a base path and a file name (default programqpc.bin).
class Qpc {
public:
  static shQpc Factory(const std::string &basePath,
                       const std::string &filename = "programqpc.bin");
  const BufferMappings &getBufferMappings() const { return mappings_; }
  v2::BufferMappings getBufferMappingsV2() const { return mappingsV2_; }

  struct Program; ///< what the fake card needs of the QPC (FakeQaicSdk.cpp)
  const Program &program() const { return *program_; }
  ~Qpc();

private:
  BufferMappings mappings_;
  v2::BufferMappings mappingsV2_;
  std::shared_ptr<Program> program_;
};

/// [api] InferenceSetProperties: its four members.
struct InferenceSetProperties {
  QAicProgramProperties programProperties;
  QAicQueueProperties queueProperties;
  std::string name;
  uint32_t id = 0;
};

/// [api] InferenceHandle: obtained from InferenceSet::getAvailable, holds
/// the buffers and dims of one inference. The setters return a QStatus (the
/// open runtime's ExecObj::setData does, QS_INVAL for invalid buffers);
/// that they validate the buffers against the dims known at that moment is
/// a GUESS, the reason [ex] sets the dims before the buffers.
class InferenceHandle {
public:
  QStatus setInputBuffers(const std::vector<QBuffer> &buffers);
  QStatus setOutputBuffers(const std::vector<QBuffer> &buffers);
  QStatus setBufferDimensions(
      const std::vector<std::pair<uint32_t, std::vector<uint32_t>>> &dims);

  struct State; ///< FakeQaicSdk.cpp
  explicit InferenceHandle(std::shared_ptr<State> state)
      : state_(std::move(state)) {}

private:
  friend class InferenceSet;
  std::shared_ptr<State> state_;
};

/// [api] InferenceSet: `NumActivations` instances of the program with
/// `SetSize` handles each. The trailing properties parameter (pointer,
/// nullptr for defaults, like the open runtime's ExecObj::Factory) is a
/// GUESS of how the SDK takes [api]'s InferenceSetProperties.
class InferenceSet {
public:
  static shInferenceSet
  Factory(shContext context, shQpc qpc, QID device, uint32_t setSize,
          uint32_t numActivations,
          const InferenceSetProperties *properties = nullptr);
  /// [api]: blocks until a handle is available (returned by putCompleted).
  QStatus getAvailable(shInferenceHandle &handle);
  /// [ex], [sample]: submit a handle under an id.
  QStatus submit(shInferenceHandle &handle, uint32_t id);
  /// [api]: waits for the inference with `id` to complete.
  QStatus getCompletedId(shInferenceHandle &handle, uint32_t id);
  /// [api]: returns a completed handle to the available list.
  QStatus putCompleted(shInferenceHandle &&handle);

  struct Card; ///< the simulated device (FakeQaicSdk.cpp)
  explicit InferenceSet(std::unique_ptr<Card> card);
  ~InferenceSet();

private:
  std::unique_ptr<Card> card_;
};

} // namespace qaic::rt

#endif // QEFF_TEST_FAKE_QAICAPI_HPP
