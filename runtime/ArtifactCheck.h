//===- ArtifactCheck.h - Artifact files checked against model.onnx -*- C++ -*-===//
//
// Part of qeff. An artifact directory is untrusted input: its
// specializations.json and qeff-manifest.json must agree with the model.onnx
// they sit beside before anything is sized from them. Every error names both
// files and the field.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_ARTIFACTCHECK_H
#define QEFF_RUNTIME_ARTIFACTCHECK_H

#include "qeff/runtime/Session.h"

#include <string>
#include <vector>

namespace qeff::runtime {

/// The largest value a specialization symbol may take.
constexpr int64_t kMaxSymbolValue = int64_t(1) << 24;
/// The largest retained-state tensor a specialization may size (64 GiB).
constexpr int64_t kMaxStateBytes = int64_t(1) << 36;

/// Each specialization's symbols are in 1..kMaxSymbolValue and size every
/// retained-state input (`stateNames`) within kMaxStateBytes.
Status checkSpecializations(const std::vector<Specialization> &specs,
                            const std::vector<TensorInfo> &inputs,
                            const std::vector<std::string> &stateNames,
                            const std::string &specFile, const std::string &modelFile);

/// qeff-manifest.json (`text`) describes the model's inputs and outputs
/// (names, dtypes, shapes in order) and the specializations of
/// specializations.json.
Status checkManifest(const std::string &text, const std::vector<TensorInfo> &inputs,
                     const std::vector<TensorInfo> &outputs,
                     const std::vector<Specialization> &specs,
                     const std::string &manifestFile, const std::string &modelFile,
                     const std::string &specFile);

} // namespace qeff::runtime

#endif // QEFF_RUNTIME_ARTIFACTCHECK_H
