//===- FunctionExport.cpp - ONNX model-local functions --------------------===//
//
// Part of qeff. qeff-outline-layers' private functions become FunctionProtos
// of the domain kFunctionDomain, their func.call ops nodes of them.
//
//===----------------------------------------------------------------------===//

#include "lowering/Export/ExporterImpl.h"

#include "dialects/ONNX/ONNXOps.h"
#include "llvm/ADT/ScopeExit.h"

namespace mlir::qeff::exportimpl {

LogicalResult Exporter::addCall(func::CallOp call) {
  pb::NodeProto node;
  node.set_name(nodeName(call.getLoc(), call.getCallee()));
  node.set_op_type(call.getCallee().str());
  node.set_domain(kFunctionDomain);
  domains_.insert(kFunctionDomain);
  for (Value v : call.getOperands()) {
    const std::string *n = nameOf(v, call);
    if (!n)
      return failure();
    node.add_input(*n);
  }
  for (OpResult result : call.getResults()) {
    auto it = names_.find(result);
    if (it == names_.end())
      it = names_
               .insert({result, uniqueName(node.name() + "_output_" +
                                           std::to_string(
                                               result.getResultNumber()))})
               .first;
    node.add_output(it->second);
  }
  *nodes_->Add() = std::move(node);
  return success();
}

LogicalResult Exporter::buildFunction(func::FuncOp callee,
                                      pb::FunctionProto &fn) {
  fn.set_name(callee.getSymName().str());
  fn.set_domain(kFunctionDomain);
  google::protobuf::RepeatedPtrField<pb::NodeProto> *caller = nodes_;
  nodes_ = fn.mutable_node();
  auto restore = llvm::make_scope_exit([&] { nodes_ = caller; });
  std::set<std::string> inputs;
  for (BlockArgument arg : callee.getArguments()) {
    std::string name = uniqueName(callee.getSymName().str() + "_input_" +
                                  std::to_string(arg.getArgNumber()));
    names_[arg] = name;
    inputs.insert(name);
    fn.add_input(name);
  }
  for (Operation &op : callee.getBody().front()) {
    LogicalResult result = success();
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      std::set<std::string> outputs;
      for (Value v : ret.getOperands()) {
        const std::string *n = nameOf(v, ret);
        if (!n)
          return failure();
        std::string name = *n;
        // An input or a value returned twice leaves through an Identity.
        if (inputs.count(name) || !outputs.insert(name).second) {
          pb::NodeProto *identity = nodes_->Add();
          identity->set_name(uniqueName("/" + fn.name() + "/Identity"));
          identity->set_op_type("Identity");
          identity->add_input(name);
          name = uniqueName(identity->name() + "_output_0");
          identity->add_output(name);
          outputs.insert(name);
        }
        fn.add_output(name);
      }
    } else if (auto constant = dyn_cast<mlir::onnx::ConstantOp>(op)) {
      // No initializers in a function: a Constant node.
      pb::NodeProto *node = nodes_->Add();
      node->set_name(nodeName(op.getLoc(), "Constant"));
      node->set_op_type("Constant");
      std::string name = uniqueName(node->name() + "_output_0");
      node->add_output(name);
      names_[constant.getResult()] = name;
      pb::AttributeProto *value = node->add_attribute();
      value->set_name("value");
      value->set_type(pb::AttributeProto::TENSOR);
      std::string bytes;
      if (failed(elementsToTensor(constant, constant.getValue(),
                                  *value->mutable_t(), bytes)))
        return failure();
      value->mutable_t()->set_raw_data(std::move(bytes));
    } else if (auto call = dyn_cast<func::CallOp>(op)) {
      result = addCall(call);
    } else if (isa<mlir::onnx::ONNXDialect>(op.getDialect())) {
      result = addNode(&op);
    } else {
      return op.emitError("op '")
             << op.getName()
             << "' cannot be exported inside a model-local function (weights "
                "must be function inputs)";
    }
    if (failed(result))
      return failure();
  }
  return success();
}

LogicalResult Exporter::addFunctions() {
  // Every private function with a body, in module order; the calls name
  // them, and the opset imports of the model apply to them too.
  for (auto callee : module_.getOps<func::FuncOp>()) {
    if (callee == func_ || callee.isExternal())
      continue;
    if (!callee.getBody().hasOneBlock())
      return callee.emitError("export-onnx: a function must have one block");
    pb::FunctionProto *fn = model_.add_functions();
    if (failed(buildFunction(callee, *fn)))
      return failure();
  }
  for (pb::FunctionProto &fn : *model_.mutable_functions())
    addOpsetImports(*fn.mutable_opset_import());
  return success();
}

void Exporter::addOpsetImports(
    google::protobuf::RepeatedPtrField<pb::OperatorSetIdProto> &imports) {
  pb::OperatorSetIdProto *opset = imports.Add();
  opset->set_domain("");
  opset->set_version(kOpsetVersion);
  for (const std::string &domain : domains_) {
    pb::OperatorSetIdProto *custom = imports.Add();
    custom->set_domain(domain);
    custom->set_version(1);
  }
}

} // namespace mlir::qeff::exportimpl
