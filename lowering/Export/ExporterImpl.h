//===- ExporterImpl.h - the ONNX exporter's state -----------------*- C++ -*-===//
//
// Part of qeff. Internal to QEffONNXExport: the Exporter class that
// exportONNX (ONNXExporter.h) runs, shared by the files that implement it
// (ONNXExporter.cpp: graph, weights, constants; ExportTypes.cpp: types,
// value infos, tensors, attributes; FunctionExport.cpp: model-local functions;
// ExportFiles.cpp: external data streaming and the file write). Not a public
// API.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_LOWERING_EXPORT_EXPORTERIMPL_H
#define QEFF_LOWERING_EXPORT_EXPORTERIMPL_H

#include "lowering/Export/ONNXExporter.h"

#include "frontend/HF/Checkpoint.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"

#include "onnx/onnx_pb.h" // defines ONNX_API, then includes onnx-ml.pb.h

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace mlir::qeff {
class WeightOp;
} // namespace mlir::qeff
namespace mlir::onnx {
class ConstantOp;
} // namespace mlir::onnx

namespace mlir::qeff::exportimpl {

namespace hf = ::qeff::hf;
namespace pb = ::onnx;

inline constexpr int64_t kOpsetVersion = 17;
/// The domain of the model-local functions (decoder layers).
inline constexpr const char *kFunctionDomain = "qeff.layers";

/// The checkpoint dtype of an MLIR element type, if it has one.
std::optional<hf::DType> dtypeOf(Type type);
/// The ONNX TensorProto data type of a checkpoint dtype.
pb::TensorProto_DataType onnxDataType(hf::DType dtype);
/// The ONNX TensorProto data type of an MLIR element type, if it has one.
std::optional<int> onnxDataType(Type type);
/// The innermost NameLoc's name in `loc` (through fused and call-site
/// locations), if any.
std::optional<StringRef> innermostName(Location loc);
/// The file named by `loc`, if it is (or wraps) a file location.
std::optional<StringRef> fileOf(Location loc);

/// A tensor whose bytes go to the external data file.
struct ExternalTensor {
  int initializer; ///< index into the graph's initializers
  Operation *op;   ///< the qeff.weight or onnx.Constant
  uint64_t bytes;  ///< size in the data file
  // Weights:
  const hf::TensorInfo *info = nullptr;
  hf::DType to = hf::DType::F32;
  bool transpose = false;
  /// qeff.weight `rows`: the source row of each selected row, of the
  /// `sourceRowCount` rows the checkpoint tensor is read as.
  std::vector<int64_t> sourceRows;
  int64_t sourceRowCount = 0;
  // Constants:
  std::string data;
};

class Exporter {
public:
  Exporter(ModuleOp module, const ExportOptions &options)
      : module_(module), options_(options) {}

  LogicalResult run(ExportReport &report);

private:
  LogicalResult findFunction();
  LogicalResult openCheckpoint();
  LogicalResult buildGraph();
  LogicalResult addInputsAndOutputs();
  LogicalResult addWeight(mlir::qeff::WeightOp op);
  LogicalResult addConstant(mlir::onnx::ConstantOp op);
  LogicalResult addNode(Operation *op);
  // Model-local functions (FunctionExport.cpp).
  LogicalResult addCall(func::CallOp call);
  LogicalResult addFunctions();
  LogicalResult buildFunction(func::FuncOp callee, pb::FunctionProto &fn);
  /// The default opset and every custom domain used, at version 1.
  void addOpsetImports(
      google::protobuf::RepeatedPtrField<pb::OperatorSetIdProto> &imports);
  LogicalResult finishOutputs();
  LogicalResult writeFiles(ExportReport &report);
  LogicalResult streamTensors(const std::string &dataPath,
                              ExportReport &report);

  std::string nodeName(Location loc, StringRef opType);
  std::string uniqueName(std::string name);
  LogicalResult setValueInfo(pb::ValueInfoProto *info, StringRef name,
                             Type type, Attribute dims, Location loc);
  LogicalResult convertAttribute(Operation *op, StringRef name, Attribute attr,
                                 pb::AttributeProto &out);
  LogicalResult elementsToTensor(Operation *op, ElementsAttr attr,
                                 pb::TensorProto &tensor, std::string &bytes);
  const std::string *nameOf(Value value, Operation *user);

  ModuleOp module_;
  const ExportOptions &options_;
  func::FuncOp func_;
  std::shared_ptr<const hf::Checkpoint> checkpoint_;
  std::string checkpointPath_;
  pb::ModelProto model_;
  pb::GraphProto *graph_ = nullptr;
  /// Where addNode puts nodes: the graph's, or a function's being built.
  google::protobuf::RepeatedPtrField<pb::NodeProto> *nodes_ = nullptr;

  llvm::DenseMap<Value, std::string> names_;
  std::set<std::string> usedNames_;
  std::map<std::pair<std::string, std::string>, unsigned> counters_;
  std::set<std::string> domains_;
  /// Weight initializer name -> the value type it was first used with.
  std::map<std::string, Type> weights_;
  /// Cast outputs of f16-stored weights, by initializer name.
  std::map<std::string, std::string> weightCasts_;
  std::vector<ExternalTensor> external_;
  /// Graph outputs the function returns: (value, name), in order.
  std::vector<std::pair<Value, std::string>> outputs_;
  size_t numWeights_ = 0;
};

} // namespace mlir::qeff::exportimpl

#endif // QEFF_LOWERING_EXPORT_EXPORTERIMPL_H
