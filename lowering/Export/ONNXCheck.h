//===- ONNXCheck.h - onnx::checker behind an exception-free API -*- C++ -*-===//
//
// Part of qeff. The ONNX checker and shape inference report problems by
// throwing; MLIR-linked code is built without exceptions. This header is the
// boundary: it includes nothing from ONNX and nothing throws through it. The
// implementation (ONNXCheck.cpp) lives in its own plain C++ library,
// QEffONNXCheck, compiled with exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_LOWERING_EXPORT_ONNXCHECK_H
#define QEFF_LOWERING_EXPORT_ONNXCHECK_H

#include <optional>
#include <string>

namespace qeff::exporter {

/// Runs `onnx::checker::check_model` on the model file at `path` (which also
/// checks that external data files exist next to it) and then ONNX shape
/// inference in strict mode (type checks on, node-level errors fatal) on it.
/// Returns std::nullopt when both pass, else the checker's message.
std::optional<std::string> checkONNXModel(const std::string &path);

} // namespace qeff::exporter

#endif // QEFF_LOWERING_EXPORT_ONNXCHECK_H
