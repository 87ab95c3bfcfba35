//===- ONNXCheck.cpp - onnx::checker behind an exception-free API ---------===//
//
// Part of qeff. Compiled WITH exceptions (plain C++ library, not MLIR-linked):
// every exception of ONNX or protobuf is caught here and returned as text.
//
//===----------------------------------------------------------------------===//

#include "lowering/Export/ONNXCheck.h"

#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h" // defines ONNX_API, then includes onnx-ml.pb.h
#include "onnx/shape_inference/implementation.h"

#include <exception>
#include <fstream>

namespace qeff::exporter {

std::optional<std::string> checkONNXModel(const std::string &path) {
  try {
    onnx::checker::check_model(path);
  } catch (const onnx::checker::ValidationError &e) {
    return std::string("onnx checker: ") + e.what();
  } catch (const std::exception &e) {
    return std::string("onnx checker: ") + e.what();
  }
  try {
    std::ifstream in(path, std::ios::binary);
    onnx::ModelProto model;
    if (!in || !model.ParseFromIstream(&in))
      return "cannot read back " + path;
    onnx::ShapeInferenceOptions options(/*check_type=*/true,
                                        /*strict_mode=*/1,
                                        /*data_prop=*/false);
    onnx::shape_inference::InferShapes(
        model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception &e) {
    return std::string("onnx shape inference: ") + e.what();
  }
  return std::nullopt;
}

} // namespace qeff::exporter
