//===- ArtifactFuzzer.cpp - model.onnx (+ specializations) into the host ---===//
//
// Input: model.onnx bytes, optionally "\n----\n" and a specializations.json.
// The artifact is opened on the host device (parse, initializers, kernels,
// plan, specializations checked against the model); a model that opens runs
// once on small inputs when its inputs are int64 ids.

#include "qeff/runtime/Session.h"
#include "test/fuzz/FuzzUtil.h"

#include <filesystem>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace qeff::runtime;
  auto [model, specs] = qeff::fuzz::splitTwo(data, size);
  std::string dir = qeff::fuzz::scratchDir() + "/artifact";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  qeff::fuzz::writeScratch("artifact/model.onnx", model);
  if (!specs.empty())
    qeff::fuzz::writeScratch("artifact/specializations.json", specs);
  SessionOptions options;
  options.numThreads = 1;
  auto session = Session::open(dir, DeviceKind::Host, options);
  if (!session)
    return 0;
  TensorMap inputs;
  for (const TensorInfo &info : session->inputInfos()) {
    Shape shape;
    for (const Dim &d : info.dims)
      shape.push_back(d.value >= 0 && d.value <= 8 ? d.value : 1);
    if (info.dtype == DType::Int64)
      inputs[info.name] = Tensor::zeros(DType::Int64, shape);
  }
  (void)session->run(inputs);
  return 0;
}
