//===- VerifyDevice.cpp - the qeff-verify-device pass ---------------------===//
//
// Part of qeff. The device contract (docs/device.md) checked on the IR before
// `qeff compile` writes anything.
//
//===----------------------------------------------------------------------===//

#include "patterns/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>
#include <set>

namespace mlir::qeff {
#define GEN_PASS_DEF_QEFFVERIFYDEVICE
#include "patterns/Passes.h.inc"
} // namespace mlir::qeff

using namespace mlir;
using namespace mlir::qeff;

namespace {

constexpr StringLiteral kRetained = "_RetainedState";

struct IO {
  std::string name;
  Type type;
  ArrayAttr dims;
  Location loc;
};

struct QEffVerifyDevicePass
    : mlir::qeff::impl::QEffVerifyDeviceBase<QEffVerifyDevicePass> {
  using Base::Base;

  LogicalResult verifyRetainedState(ArrayRef<IO> inputs, ArrayRef<IO> outputs) {
    std::map<std::string, const IO *> byOutput;
    for (const IO &out : outputs)
      byOutput[out.name] = &out;
    std::set<std::string> inputNames;
    for (const IO &in : inputs) {
      inputNames.insert(in.name);
      if (!StringRef(in.name).starts_with("past_"))
        continue;
      auto it = byOutput.find(in.name + kRetained.str());
      if (it == byOutput.end())
        return emitError(in.loc)
               << "retained-state input '" << in.name << "' has no output '"
               << in.name << kRetained << "'";
      if (it->second->type != in.type)
        return emitError(in.loc)
               << "retained-state input '" << in.name << "' is " << in.type
               << " but its output '" << it->first << "' is "
               << it->second->type;
    }
    for (const IO &out : outputs) {
      StringRef name(out.name);
      if (!name.ends_with(kRetained))
        continue;
      std::string input = name.drop_back(kRetained.size()).str();
      if (!inputNames.count(input))
        return emitError(out.loc) << "output '" << out.name
                                  << "' has no retained-state input '"
                                  << input << "'";
    }
    return success();
  }

  LogicalResult verifySpecializations(ModuleOp module, ArrayRef<IO> inputs,
                                      ArrayRef<IO> outputs) {
    auto specs = module->getAttrOfType<ArrayAttr>("qeff.specializations");
    if (!specs || specs.empty())
      return emitError(module.getLoc())
             << "the module has no qeff.specializations (run qeff-fixed-shapes)";
    std::set<std::string> used;
    for (ArrayRef<IO> ios : {inputs, outputs})
      for (const IO &io : ios)
        if (io.dims)
          for (Attribute d : io.dims)
            if (auto s = llvm::dyn_cast<StringAttr>(d); s && !s.getValue().empty())
              used.insert(s.getValue().str());
    std::map<std::string, std::string> seenBy; // input-shape key -> spec name
    for (Attribute a : specs) {
      auto spec = llvm::dyn_cast<DictionaryAttr>(a);
      auto name = spec ? spec.getAs<StringAttr>("name") : StringAttr();
      auto symbols = spec ? spec.getAs<DictionaryAttr>("symbols") : DictionaryAttr();
      if (!name || !symbols)
        return emitError(module.getLoc())
               << "a specialization must have a name and symbols";
      std::map<std::string, int64_t> values;
      for (NamedAttribute sym : symbols) {
        auto value = llvm::dyn_cast<StringAttr>(sym.getValue());
        int64_t v = 0;
        if (!value || StringRef(value.getValue()).getAsInteger(10, v) || v <= 0)
          return emitError(module.getLoc())
                 << "specialization '" << name.getValue() << "' binds '"
                 << sym.getName().getValue()
                 << "' to something other than a positive integer";
        values[sym.getName().str()] = v;
      }
      for (const std::string &symbol : used)
        if (!values.count(symbol))
          return emitError(module.getLoc())
                 << "specialization '" << name.getValue()
                 << "' does not bind symbol '" << symbol << "'";
      if (values.count("seq_len") && values.count("ctx_len") &&
          values["seq_len"] > values["ctx_len"])
        return emitError(module.getLoc())
               << "specialization '" << name.getValue() << "' has seq_len "
               << values["seq_len"] << " > ctx_len " << values["ctx_len"];
      // What the runtime sees: the concrete shape of every input.
      std::string key;
      for (const IO &in : inputs) {
        auto type = llvm::cast<RankedTensorType>(in.type);
        key += in.name + "[";
        for (int64_t i = 0; i < type.getRank(); ++i) {
          StringRef symbol =
              in.dims && i < int64_t(in.dims.size())
                  ? llvm::cast<StringAttr>(in.dims[i]).getValue()
                  : "";
          key += std::to_string(symbol.empty() ? type.getDimSize(i)
                                               : values[symbol.str()]) +
                 ",";
        }
        key += "]";
      }
      auto [it, inserted] = seenBy.emplace(key, name.getValue().str());
      if (!inserted)
        return emitError(module.getLoc())
               << "specializations '" << it->second << "' and '"
               << name.getValue()
               << "' give every input the same shape; the runtime could not "
                  "tell them apart";
    }
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || func.isPrivate())
        continue;
      SmallVector<IO> inputs, outputs;
      for (unsigned i = 0; i < func.getNumArguments(); ++i) {
        auto name = func.getArgAttrOfType<StringAttr>(i, "qeff.name");
        inputs.push_back({name ? name.str() : "#" + std::to_string(i),
                          func.getArgument(i).getType(),
                          func.getArgAttrOfType<ArrayAttr>(i, "qeff.dims"),
                          func.getArgument(i).getLoc()});
      }
      for (unsigned i = 0; i < func.getNumResults(); ++i) {
        auto name = func.getResultAttrOfType<StringAttr>(i, "qeff.name");
        outputs.push_back({name ? name.str() : "#" + std::to_string(i),
                           func.getResultTypes()[i],
                           func.getResultAttrOfType<ArrayAttr>(i, "qeff.dims"),
                           func.getLoc()});
      }
      if (failed(verifyRetainedState(inputs, outputs)) ||
          failed(verifySpecializations(module, inputs, outputs)))
        return signalPassFailure();
      WalkResult shapeOps = func.walk([](Operation *op) {
        if (op->getName().getStringRef() == "onnx.Shape") {
          op->emitError("the device graph computes a shape at run time; "
                        "every shape must be fixed by the specializations");
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      });
      if (shapeOps.wasInterrupted())
        return signalPassFailure();
    }
  }
};

} // namespace
