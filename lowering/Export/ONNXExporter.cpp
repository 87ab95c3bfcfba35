//===- ONNXExporter.cpp - onnx dialect -> model.onnx + external data ------===//
//
// Part of qeff. See ONNXExporter.h for the contract. Built without
// exceptions: only the generated protobuf classes of ONNX are used here; the
// checker, which throws, sits behind ONNXCheck.h in its own library.
//
// This file builds the graph (inputs, outputs, initializers, nodes) and runs
// the export; ExportTypes.cpp maps types and attributes, FunctionExport.cpp
// builds the model-local functions, ExportFiles.cpp streams the external data
// and writes the files.
//
//===----------------------------------------------------------------------===//

#include "lowering/Export/ONNXExporter.h"
#include "lowering/Export/ExporterImpl.h"

#include "dialects/ONNX/ONNXOps.h"
#include "dialects/QEff/QEffDialect.h"
#include "dialects/QEff/QEffOps.h"
#include "frontend/GGUF/ModelWeights.h"
#include "frontend/HF/Checkpoint.h"
#include "lowering/Export/WeightConversion.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"

#include <chrono>
#include <optional>

#ifndef QEFF_VERSION_STRING
#define QEFF_VERSION_STRING "0.0.0"
#endif

using namespace mlir;
namespace hf = ::qeff::hf;
namespace conv = ::qeff::exporter;
namespace pb = ::onnx;
using mlir::qeff::ExportOptions;
using mlir::qeff::ExportReport;
using mlir::qeff::ExportWeightsDType;

namespace mlir::qeff::exportimpl {

constexpr int64_t kIRVersion = 8;
/// Constants larger than this go to the external data file.
constexpr size_t kInlineConstantLimit = 1024;


std::string Exporter::uniqueName(std::string name) {
  if (usedNames_.insert(name).second)
    return name;
  for (unsigned i = 1;; ++i) {
    std::string candidate = name + "_" + std::to_string(i);
    if (usedNames_.insert(candidate).second)
      return candidate;
  }
}

std::string Exporter::nodeName(Location loc, StringRef opType) {
  std::string scope = innermostName(loc).value_or("").str();
  unsigned n = counters_[{scope, opType.str()}]++;
  return uniqueName("/" + scope + (scope.empty() ? "" : "/") + opType.str() +
                    "_" + std::to_string(n));
}

const std::string *Exporter::nameOf(Value value, Operation *user) {
  auto it = names_.find(value);
  if (it != names_.end())
    return &it->second;
  user->emitError("operand has no ONNX value (defined by an op the exporter "
                  "skipped)");
  return nullptr;
}

LogicalResult Exporter::findFunction() {
  SmallVector<func::FuncOp> candidates;
  for (auto func : module_.getOps<func::FuncOp>())
    if (func.isPublic() && !func.isExternal())
      candidates.push_back(func);
  if (candidates.size() > 1)
    llvm::erase_if(candidates,
                   [](func::FuncOp f) { return f.getSymName() != "forward"; });
  if (candidates.size() != 1)
    return module_.emitError("export-onnx: expected one public function with "
                             "a body (normally @forward), found ")
           << candidates.size();
  func_ = candidates.front();
  if (!func_.getBody().hasOneBlock())
    return func_.emitError("export-onnx: the function must have one block");
  return success();
}

LogicalResult Exporter::openCheckpoint() {
  bool needed = false;
  func_.walk([&](mlir::qeff::WeightOp) { needed = true; });
  if (!needed)
    return success();
  if (options_.checkpoint) { // the importer's: its headers are parsed once
    checkpoint_ = options_.checkpoint;
    checkpointPath_ = checkpoint_->sourcePath();
    return success();
  }
  std::string dir = options_.checkpointDir;
  if (dir.empty()) {
    auto attr = module_->getAttrOfType<StringAttr>("qeff.checkpoint_dir");
    if (!attr)
      return module_.emitError(
          "export-onnx: the module references checkpoint tensors but names no "
          "checkpoint: pass a checkpoint directory (--onnx-checkpoint-dir) or "
          "set the module attribute qeff.checkpoint_dir");
    dir = attr.str();
    if (!llvm::sys::path::is_absolute(dir)) {
      std::string base = options_.baseDir;
      if (base.empty())
        if (std::optional<StringRef> file = fileOf(module_.getLoc()))
          base = llvm::sys::path::parent_path(*file).str();
      if (!base.empty()) {
        llvm::SmallString<256> joined(base);
        llvm::sys::path::append(joined, dir);
        dir = std::string(joined.str());
      }
    }
  }
  // Quantized directories and GGUF files decode as the importer saw them.
  absl::StatusOr<std::unique_ptr<hf::Checkpoint>> opened =
      ::qeff::gguf::openModelWeights(dir);
  if (!opened.ok())
    return module_.emitError("export-onnx: cannot open checkpoint '")
           << dir << "': " << std::string(opened.status().message());
  checkpoint_ = std::move(*opened);
  checkpointPath_ = checkpoint_->sourcePath();
  return success();
}

LogicalResult Exporter::addInputsAndOutputs() {
  auto nameAttr = [](DictionaryAttr attrs) {
    return attrs ? attrs.getAs<StringAttr>("qeff.name") : StringAttr();
  };
  for (BlockArgument arg : func_.getArguments()) {
    unsigned i = arg.getArgNumber();
    StringAttr name = nameAttr(func_.getArgAttrDict(i));
    std::string text = name ? name.str() : "input_" + std::to_string(i);
    if (!usedNames_.insert(text).second)
      return func_.emitError("two graph inputs are named '") << text << "'";
    names_[arg] = text;
    if (failed(setValueInfo(graph_->add_input(), text, arg.getType(),
                            func_.getArgAttr(i, "qeff.dims"), arg.getLoc())))
      return failure();
  }
  Operation *ret = func_.getBody().front().getTerminator();
  for (auto [i, value] : llvm::enumerate(ret->getOperands())) {
    StringAttr name = nameAttr(func_.getResultAttrDict(i));
    std::string text = name ? name.str() : "output_" + std::to_string(i);
    if (!usedNames_.insert(text).second)
      return func_.emitError("graph output '")
             << text << "' clashes with another input or output name";
    if (failed(setValueInfo(graph_->add_output(), text, value.getType(),
                            func_.getResultAttr(i, "qeff.dims"),
                            ret->getLoc())))
      return failure();
    outputs_.push_back({value, text});
    // A value computed by a node takes the output's name directly; inputs,
    // initializers and values returned twice go through an Identity.
    Operation *def = value.getDefiningOp();
    if (def && !isa<mlir::qeff::WeightOp, mlir::onnx::ConstantOp>(def) &&
        !names_.count(value))
      names_[value] = text;
  }
  return success();
}

LogicalResult Exporter::addWeight(mlir::qeff::WeightOp op) {
  ++numWeights_;
  std::string tensorName = op.getTensorName().str();
  std::optional<ArrayRef<int64_t>> rows = op.getRows();
  std::string initName = tensorName;
  if (rows) {
    // One initializer per distinct selection of the tensor.
    std::string key;
    for (int64_t v : *rows)
      key += std::to_string(v) + ",";
    initName += ".rows_" + llvm::utohexstr(llvm::xxh3_64bits(key));
  }
  initName += op.getTranspose() ? ".T" : "";
  auto type = cast<RankedTensorType>(op.getResult().getType());
  bool narrow = options_.weightsDType != ExportWeightsDType::AsIR &&
                isa<FloatType>(type.getElementType());

  auto seen = weights_.find(initName);
  if (seen != weights_.end()) {
    if (seen->second != type)
      return op.emitError("checkpoint tensor '")
             << initName << "' is used as " << seen->second << " and as "
             << type;
    auto cast = weightCasts_.find(initName);
    names_[op.getResult()] =
        cast != weightCasts_.end() ? cast->second : initName;
    return success();
  }

  const hf::TensorInfo *info = checkpoint_->find(tensorName);
  if (!info)
    return op.emitError("checkpoint ")
           << checkpointPath_ << " has no tensor '" << tensorName << "'";
  std::optional<hf::DType> storage = dtypeOf(op.getStorageType());
  if (!storage || *storage != info->dtype)
    return op.emitError("checkpoint tensor '")
           << tensorName << "' is stored as " << hf::dtypeName(info->dtype)
           << ", the IR says " << op.getStorageType();
  SmallVector<int64_t> expected(type.getShape());
  if (op.getTranspose())
    std::reverse(expected.begin(), expected.end());
  std::vector<int64_t> sourceRows;
  // The checkpoint tensor as the selection reads it: itself, or for a
  // tensor of one rank more than the value (stacked expert matrices
  // [n, rows, cols]), its leading two dimensions as the rows.
  std::vector<int64_t> view = info->shape;
  if (rows && view.size() == expected.size() + 1 && view.size() >= 2) {
    view[1] *= view[0];
    view.erase(view.begin());
  }
  if (rows && !view.empty()) {
    // The selection reads rows of the checkpoint tensor; its other
    // dimensions are the value's.
    for (size_t i = 0; i + 1 < rows->size(); i += 2) {
      if ((*rows)[i] + (*rows)[i + 1] > view[0])
        return op.emitError("row range #")
               << i / 2 << " (start " << (*rows)[i] << ", count "
               << (*rows)[i + 1] << ") of checkpoint tensor '" << tensorName
               << "' goes past its " << view[0] << " rows";
      for (int64_t r = 0; r < (*rows)[i + 1]; ++r)
        sourceRows.push_back((*rows)[i] + r);
    }
    expected[0] = view[0];
  }
  if (ArrayRef<int64_t>(view) != ArrayRef<int64_t>(expected)) {
    std::string got, want;
    for (int64_t d : info->shape)
      got += (got.empty() ? "" : "x") + std::to_string(d);
    for (int64_t d : expected)
      want += (want.empty() ? "" : "x") + std::to_string(d);
    return op.emitError("checkpoint tensor '")
           << tensorName << "' has shape [" << got << "], the IR expects ["
           << want << "]" << (op.getTranspose() ? " (before transposing)" : "");
  }
  std::optional<hf::DType> irType = dtypeOf(type.getElementType());
  if (!irType)
    return op.emitError("weight element type ")
           << type.getElementType() << " has no ONNX tensor type";
  hf::DType to = !narrow ? *irType
                 : options_.weightsDType == ExportWeightsDType::F16 ? hf::DType::F16
                                                                    : hf::DType::BF16;
  if (!conv::canConvert(info->dtype, to))
    return op.emitError("cannot convert checkpoint tensor '")
           << tensorName << "' from " << hf::dtypeName(info->dtype) << " to "
           << hf::dtypeName(to);
  if (!usedNames_.insert(initName).second)
    return op.emitError("initializer name '")
           << initName << "' clashes with a graph input or output";

  pb::TensorProto *init = graph_->add_initializer();
  init->set_name(initName);
  init->set_data_type(onnxDataType(to));
  for (int64_t d : type.getShape())
    init->add_dims(d);
  ExternalTensor ext{graph_->initializer_size() - 1, op,
                     static_cast<uint64_t>(type.getNumElements()) *
                         hf::dtypeSize(to)};
  ext.info = info;
  ext.to = to;
  ext.transpose = op.getTranspose();
  ext.sourceRows = std::move(sourceRows);
  ext.sourceRowCount = view.empty() ? 0 : view[0];
  external_.push_back(std::move(ext));
  weights_[initName] = type;

  std::string valueName = initName;
  if (to != *irType) {
    // fp16 / bf16 storage of a weight the graph uses in another float type.
    pb::NodeProto *node = graph_->add_node();
    std::string name = nodeName(op.getLoc(), "Cast");
    node->set_name(name);
    node->set_op_type("Cast");
    node->add_input(initName);
    valueName = uniqueName(name + "_output_0");
    node->add_output(valueName);
    pb::AttributeProto *attr = node->add_attribute();
    attr->set_name("to");
    attr->set_type(pb::AttributeProto::INT);
    attr->set_i(onnxDataType(*irType));
    weightCasts_[initName] = valueName;
  }
  names_[op.getResult()] = valueName;
  return success();
}

LogicalResult Exporter::addConstant(mlir::onnx::ConstantOp op) {
  pb::TensorProto *init = graph_->add_initializer();
  std::string name = nodeName(op.getLoc(), "Constant");
  init->set_name(name);
  std::string bytes;
  if (failed(elementsToTensor(op, op.getValue(), *init, bytes)))
    return failure();
  names_[op.getResult()] = name;
  if (bytes.size() <= kInlineConstantLimit) {
    init->set_raw_data(std::move(bytes));
    return success();
  }
  ExternalTensor ext{graph_->initializer_size() - 1, op, bytes.size()};
  ext.data = std::move(bytes);
  external_.push_back(std::move(ext));
  return success();
}

LogicalResult Exporter::addNode(Operation *op) {
  pb::NodeProto node;
  DictionaryAttr attrs;
  std::string opType;
  if (auto generic = dyn_cast<mlir::onnx::GenericOp>(op)) {
    opType = generic.getOpType().str();
    node.set_domain(generic.getDomain().str());
    if (!generic.getDomain().empty())
      domains_.insert(generic.getDomain().str());
    attrs = generic.getOnnxAttributes();
  } else {
    opType = op->getName().stripDialect().str();
    attrs = dyn_cast_or_null<DictionaryAttr>(op->getPropertiesAsAttribute());
  }
  std::string name = nodeName(op->getLoc(), opType);
  node.set_name(name);
  node.set_op_type(opType);

  // Inputs: with operand segments, an empty segment is an omitted optional
  // input and keeps its slot as "".
  auto segments = attrs && !isa<mlir::onnx::GenericOp>(op)
                      ? attrs.getAs<DenseI32ArrayAttr>("operandSegmentSizes")
                      : DenseI32ArrayAttr();
  SmallVector<std::string> inputs;
  auto addInput = [&](Value v) -> LogicalResult {
    const std::string *n = nameOf(v, op);
    if (!n)
      return failure();
    inputs.push_back(*n);
    return success();
  };
  if (segments) {
    unsigned next = 0;
    for (int32_t size : segments.asArrayRef()) {
      if (size == 0)
        inputs.push_back("");
      for (int32_t k = 0; k < size; ++k)
        if (failed(addInput(op->getOperand(next++))))
          return failure();
    }
  } else {
    for (Value v : op->getOperands())
      if (failed(addInput(v)))
        return failure();
  }
  while (!inputs.empty() && inputs.back().empty())
    inputs.pop_back();
  for (std::string &in : inputs)
    node.add_input(in);

  for (OpResult result : op->getResults()) {
    auto it = names_.find(result);
    if (it == names_.end())
      it = names_
               .insert({result,
                        uniqueName(name + "_output_" +
                                   std::to_string(result.getResultNumber()))})
               .first;
    node.add_output(it->second);
  }

  if (attrs) {
    for (NamedAttribute attr : attrs) {
      StringRef attrName = attr.getName().strref();
      if (!isa<mlir::onnx::GenericOp>(op) &&
          (attrName.contains('.') || attrName == "operandSegmentSizes" ||
           attrName == "resultSegmentSizes"))
        continue;
      if (failed(convertAttribute(op, attrName, attr.getValue(),
                                  *node.add_attribute())))
        return failure();
    }
  }
  *nodes_->Add() = std::move(node);
  return success();
}

LogicalResult Exporter::finishOutputs() {
  for (auto &[value, name] : outputs_) {
    const std::string *current =
        nameOf(value, func_.getBody().front().getTerminator());
    if (!current)
      return failure();
    if (*current == name)
      continue;
    pb::NodeProto *node = graph_->add_node();
    std::string nodeNameText = uniqueName("/" + name + "/Identity");
    node->set_name(nodeNameText);
    node->set_op_type("Identity");
    node->add_input(*current);
    node->add_output(name);
  }
  return success();
}

LogicalResult Exporter::buildGraph() {
  model_.set_ir_version(kIRVersion);
  model_.set_producer_name("qeff");
  model_.set_producer_version(QEFF_VERSION_STRING);
  graph_ = model_.mutable_graph();
  nodes_ = graph_->mutable_node();
  graph_->set_name(func_.getSymName().str());
  if (auto info = module_->getAttrOfType<mlir::qeff::ModelAttr>(
          mlir::qeff::ModelAttr::getAttrName())) {
    pb::StringStringEntryProto *arch = model_.add_metadata_props();
    arch->set_key("qeff.architecture");
    arch->set_value(info.getArchitecture().str());
    pb::StringStringEntryProto *family = model_.add_metadata_props();
    family->set_key("qeff.family");
    family->set_value(info.getFamily().str());
  }

  if (failed(addInputsAndOutputs()))
    return failure();
  for (Operation &op : func_.getBody().front()) {
    LogicalResult result = success();
    if (auto weight = dyn_cast<mlir::qeff::WeightOp>(op))
      result = addWeight(weight);
    else if (auto constant = dyn_cast<mlir::onnx::ConstantOp>(op))
      result = addConstant(constant);
    else if (isa<func::ReturnOp>(op))
      continue;
    else if (auto call = dyn_cast<func::CallOp>(op))
      result = addCall(call);
    else if (isa<mlir::onnx::ONNXDialect>(op.getDialect()))
      result = addNode(&op);
    else
      return op.emitError("op '")
             << op.getName() << "' has no ONNX form: run the lowering first";
    if (failed(result))
      return failure();
  }
  if (failed(finishOutputs()) || failed(addFunctions()))
    return failure();
  addOpsetImports(*model_.mutable_opset_import());
  return success();
}

LogicalResult Exporter::run(ExportReport &report) {
  auto start = std::chrono::steady_clock::now();
  if (options_.outputDir.empty())
    return module_.emitError("export-onnx: no output directory given");
  if (options_.modelName.empty() ||
      options_.modelName.find('/') != std::string::npos)
    return module_.emitError("export-onnx: invalid model name '")
           << options_.modelName << "'";
  if (failed(findFunction()) || failed(openCheckpoint()) ||
      failed(buildGraph()) || failed(writeFiles(report)))
    return failure();
  report.numNodes = graph_->node_size();
  report.numFunctions = model_.functions_size();
  for (const pb::FunctionProto &fn : model_.functions())
    report.numFunctionNodes += fn.node_size();
  report.numInitializers = graph_->initializer_size();
  report.numWeights = weights_.size();
  report.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return success();
}

} // namespace mlir::qeff::exportimpl

namespace mlir::qeff {

LogicalResult exportONNX(ModuleOp module, const ExportOptions &options,
                         ExportReport *report) {
  ExportReport local;
  exportimpl::Exporter exporter(module, options);
  return exporter.run(report ? *report : local);
}

std::string formatExportReport(const ExportReport &report) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "export-onnx: wrote";
  for (auto [i, file] : llvm::enumerate(report.files))
    os << (i ? "," : "") << " " << file.first << " (" << file.second
       << " bytes)";
  os << "; " << report.numNodes << " nodes, ";
  if (report.numFunctions > 0)
    os << report.numFunctions << " functions (" << report.numFunctionNodes
       << " nodes), ";
  os << report.numInitializers
     << " initializers (" << report.numWeights << " checkpoint tensors, "
     << report.numExternalTensors << " external, " << report.externalBytes
     << " bytes); " << report.clippedValues << " values clipped to fp16; "
     << llvm::format("%.2f", report.seconds) << " s";
  return text;
}

} // namespace mlir::qeff
