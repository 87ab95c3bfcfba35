//===- ONNXExporter.h - onnx dialect -> model.onnx + external data -*- C++
//-*-===//
//
// Part of qeff. Writes the public function of an onnx-dialect module as an
// ONNX model (opset 17, IR version 8) and its weights as one external data
// file, streamed tensor by tensor from the checkpoint's mmap (ExternalData.h):
//
//   <outputDir>/<modelName>.onnx        ModelProto; initializers hold no bytes
//   <outputDir>/<modelName>.onnx.data   every qeff.weight and every constant
//                                       larger than 1 KiB, 64-byte aligned
//
// Input contract (what the lowering produces): a module with `qeff.model`
// (and optionally a `qeff.checkpoint_dir` string, relative to the .mlir
// file's directory); one public func whose arguments and results carry
// `qeff.name` (the ONNX I/O name) and `qeff.dims` (the dim_param of each
// dynamic dimension); a body of `onnx.*` ops, `qeff.weight` and
// `func.return`. Any other op is an error at that op.
//
// Names: node `/<scope>/<OpType>_<n>` where scope is the innermost NameLoc of
// the op's location and n counts that op type in that scope; its outputs
// `<node>_output_<i>`; initializers are the checkpoint tensor names (`.T`
// appended when transposed); constants `/<scope>/Constant_<n>`. The output is
// byte-for-byte deterministic.
//
// Writes are atomic: everything goes to `<outputDir>/.qeff-tmp-XXXXXX/`, is
// checked there (onnx::checker + strict shape inference), then renamed into
// place; on any error the temp directory is removed and nothing is left.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_LOWERING_EXPORT_ONNXEXPORTER_H
#define QEFF_LOWERING_EXPORT_ONNXEXPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace qeff::hf {
class Checkpoint;
} // namespace qeff::hf

namespace mlir::qeff {

/// How float weights are stored in the external data file.
enum class ExportWeightsDType {
  /// As the IR says: the element type of each `qeff.weight` result.
  AsIR,
  /// fp16: float weights are converted to fp16 (round to nearest even,
  /// clipped to +-65504; clipped values are counted in the report). A weight
  /// whose IR type is not f16 gets a `Cast` node back to its IR type, so the
  /// graph's types are unchanged.
  F16,
  /// bf16: float weights are converted to bf16 (round to nearest even; no
  /// clipping: bf16 has f32's range), with a `Cast` back as for F16.
  BF16,
};

/// Progress of the weight stream, reported after each tensor written to the
/// external data file.
struct ExportProgress {
  size_t tensorsDone = 0;
  size_t tensorsTotal = 0;
  uint64_t bytesDone = 0;
  uint64_t bytesTotal = 0;
  std::string_view tensorName; ///< the tensor just written
};

struct ExportOptions {
  /// Directory the files are written into (created if missing).
  std::string outputDir;
  /// Base name: <modelName>.onnx and <modelName>.onnx.data.
  std::string modelName = "model";
  /// Checkpoint directory (or .safetensors / index file). Empty: the module's
  /// `qeff.checkpoint_dir`, resolved relative to `baseDir`.
  std::string checkpointDir;
  /// The checkpoint already opened (the importer's, importHFCheckpoint's
  /// `opened`): used instead of opening checkpointDir again, so each
  /// safetensors header is parsed once per compile.
  std::shared_ptr<const ::qeff::hf::Checkpoint> checkpoint;
  /// Directory a relative `qeff.checkpoint_dir` is resolved against. Empty:
  /// the directory of the file named by the module's location, else the
  /// current directory.
  std::string baseDir;
  ExportWeightsDType weightsDType = ExportWeightsDType::AsIR;
  /// Run onnx::checker (full) and strict shape inference before committing.
  bool validate = true;
  /// Threads converting weights into the data file (0: the hardware's, at
  /// most 8). The output does not depend on it.
  unsigned threads = 0;
  /// Called after every tensor streamed to the data file.
  std::function<void(const ExportProgress &)> progress;
  /// Polled after every tensor streamed; true stops the export with an
  /// error ("cancelled") and leaves no file behind.
  std::function<bool()> cancelled;
};

struct ExportReport {
  /// Files written (final paths) and their sizes in bytes.
  std::vector<std::pair<std::string, uint64_t>> files;
  /// Nodes of the main graph; model-local functions and their nodes.
  size_t numNodes = 0;
  size_t numFunctions = 0;
  size_t numFunctionNodes = 0;
  size_t numInitializers = 0;
  /// Initializers streamed from the checkpoint.
  size_t numWeights = 0;
  /// Tensors in the external data file (weights and large constants).
  size_t numExternalTensors = 0;
  uint64_t externalBytes = 0;
  /// Values clipped to +-65504 by the conversion to fp16.
  uint64_t clippedValues = 0;
  double seconds = 0;
};

/// Exports `module` as described above. Errors are emitted as diagnostics
/// (at the offending op, or at the module for file-system errors) and leave
/// no file behind.
LogicalResult exportONNX(ModuleOp module, const ExportOptions &options,
                         ExportReport *report = nullptr);

/// One line describing a finished export (files, sizes, counts, time).
std::string formatExportReport(const ExportReport &report);

/// Registers `--export-onnx` with mlir-translate (qeff-translate), with the
/// options --onnx-output-dir, --onnx-model-name, --onnx-checkpoint-dir,
/// --onnx-weights-dtype and --onnx-no-check. Prints the one-line report to
/// the output stream.
void registerONNXExportTranslation();

} // namespace mlir::qeff

#endif // QEFF_LOWERING_EXPORT_ONNXEXPORTER_H
