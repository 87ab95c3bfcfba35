//===- OutlineLayers.cpp - decoder layers as functions --------------------===//
//
// Part of qeff. qeff-outline-layers: the ops of each decoder layer (found by
// their scope, `<prefix>.<index>.<...>`) become one call of a private
// function shared by every structurally identical layer, so the exported
// model holds each distinct layer once (an ONNX model-local function) and
// qaic-compile compiles it once (`-sub-functions`).
//
// Why C++: the rewrite groups ops by location scope, compares whole groups
// for structural equality and builds functions and calls; none of that is a
// DAG match that DRR can state.
//
//===----------------------------------------------------------------------===//

#include "patterns/Passes.h"
#include "patterns/PatternUtils.h"

#include "dialects/QEff/QEffOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::qeff {
#define GEN_PASS_DEF_QEFFOUTLINELAYERS
#include "patterns/Passes.h.inc"
} // namespace mlir::qeff

using namespace mlir;
using namespace mlir::qeff;

namespace {

/// `model.layers.3.mlp.down_proj` -> ("model.layers", 3): the path before the
/// first numeric component and that component.
std::optional<std::pair<StringRef, int64_t>> layerOf(Location loc) {
  std::optional<StringRef> scope = scopeOf(loc);
  if (!scope)
    return std::nullopt;
  SmallVector<StringRef> parts;
  scope->split(parts, '.');
  size_t offset = 0;
  for (StringRef part : parts) {
    int64_t index;
    if (offset > 0 && !part.getAsInteger(10, index) && index >= 0)
      return std::make_pair(scope->take_front(offset - 1), index);
    offset += part.size() + 1;
  }
  return std::nullopt;
}

/// Values a layer uses from outside that are not cloned into its function:
/// weights and other non-constant values.
bool isFree(Operation *op) {
  return op && !isa<WeightOp>(op) && op->getNumOperands() == 0 &&
         op->hasTrait<OpTrait::ConstantLike>();
}

/// One layer's ops and interface.
struct Layer {
  int64_t index = 0;
  SmallVector<Operation *> ops;
  SmallVector<Value> inputs;  ///< in order of first use
  SmallVector<Value> outputs; ///< results used outside, in op order
  DenseMap<Operation *, unsigned> position;
};

class Outliner {
public:
  Outliner(func::FuncOp func, bool strict) : func_(func), strict_(strict) {}
  /// Outlines the layers of `func_`; the number of functions created (0:
  /// nothing to outline, or, when not strict, not outlinable).
  FailureOr<unsigned> run();

private:
  LogicalResult refuse(const Twine &why);
  void collect();
  void computeInterface(Layer &layer);
  bool equivalent(Layer &a, Layer &b);
  func::FuncOp createFunction(Layer &layer, StringRef name);
  void replace(Layer &layer, func::FuncOp callee);

  func::FuncOp func_;
  bool strict_;
  /// Owned: collect() counts the prefixes in a map that it frees.
  std::string prefix_;
  std::map<int64_t, Layer> layers_;
  /// Outputs of replaced layers -> the call results standing for them.
  DenseMap<Value, Value> replaced_;
};

LogicalResult Outliner::refuse(const Twine &why) {
  if (strict_)
    return func_.emitError("qeff-outline-layers: ") << why;
  return success();
}

void Outliner::collect() {
  Block &body = func_.getBody().front();
  // The most common layer prefix names the functions.
  llvm::StringMap<unsigned> prefixes;
  for (Operation &op : body)
    if (auto layer = layerOf(op.getLoc()))
      ++prefixes[layer->first];
  unsigned best = 0;
  for (auto &entry : prefixes)
    if (entry.second > best ||
        (entry.second == best && entry.first() < StringRef(prefix_)))
      best = entry.second, prefix_ = entry.first().str();
  if (prefixes.empty())
    return;

  // Layer-invariant values (from positions, constants, batch_index, ...)
  // depend on no weight and no cache input; CSE shares them between layers,
  // so they stay in the caller whatever their scope.
  DenseSet<Value> dataDependent;
  for (BlockArgument arg : func_.getArguments()) {
    auto name = func_.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "qeff.name");
    if (name && name.getValue().starts_with("past_"))
      dataDependent.insert(arg);
  }
  for (Operation &op : body) {
    bool data = isa<WeightOp>(op) ||
                llvm::any_of(op.getOperands(), [&](Value v) {
                  return dataDependent.contains(v);
                });
    if (data)
      for (Value result : op.getResults())
        dataDependent.insert(result);
    if (!data || isFree(&op) || isa<WeightOp>(op) ||
        op.hasTrait<OpTrait::IsTerminator>())
      continue;
    // By index alone: importers scope some ops by the HF module path and
    // others by a family-neutral one (`model.layers.<i>.self_attn`).
    auto layer = layerOf(op.getLoc());
    if (!layer)
      continue;
    Layer &l = layers_[layer->second];
    l.index = layer->second;
    l.position[&op] = l.ops.size();
    l.ops.push_back(&op);
  }
}

void Outliner::computeInterface(Layer &layer) {
  DenseSet<Value> seen;
  for (Operation *op : layer.ops) {
    for (Value v : op->getOperands()) {
      Operation *def = v.getDefiningOp();
      if ((def && layer.position.count(def)) || isFree(def) || !seen.insert(v).second)
        continue;
      layer.inputs.push_back(v);
    }
  }
  for (Operation *op : layer.ops)
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            return !layer.position.count(user);
          }))
        layer.outputs.push_back(result);
}

bool Outliner::equivalent(Layer &a, Layer &b) {
  if (a.ops.size() != b.ops.size() || a.inputs.size() != b.inputs.size() ||
      a.outputs.size() != b.outputs.size())
    return false;
  auto inputIndex = [](Layer &l, Value v) -> int64_t {
    auto it = llvm::find(l.inputs, v);
    return it == l.inputs.end() ? -1 : it - l.inputs.begin();
  };
  for (size_t i = 0; i < a.inputs.size(); ++i)
    if (a.inputs[i].getType() != b.inputs[i].getType())
      return false;
  for (size_t i = 0; i < a.outputs.size(); ++i) {
    auto ra = cast<OpResult>(a.outputs[i]), rb = cast<OpResult>(b.outputs[i]);
    if (a.position[ra.getOwner()] != b.position[rb.getOwner()] ||
        ra.getResultNumber() != rb.getResultNumber())
      return false;
  }
  for (size_t i = 0; i < a.ops.size(); ++i) {
    auto sameOperand = [&](Value va, Value vb) -> LogicalResult {
      Operation *da = va.getDefiningOp(), *db = vb.getDefiningOp();
      if (da && db && a.position.count(da) && b.position.count(db))
        return success(a.position[da] == b.position[db] &&
                       cast<OpResult>(va).getResultNumber() ==
                           cast<OpResult>(vb).getResultNumber());
      if (isFree(da) || isFree(db))
        return success(isFree(da) && isFree(db) &&
                       OperationEquivalence::isEquivalentTo(
                           da, db, OperationEquivalence::IgnoreLocations));
      int64_t ia = inputIndex(a, va), ib = inputIndex(b, vb);
      return success(ia >= 0 && ia == ib);
    };
    if (!OperationEquivalence::isEquivalentTo(
            a.ops[i], b.ops[i], sameOperand,
            /*markEquivalent=*/nullptr, OperationEquivalence::IgnoreLocations))
      return false;
  }
  return true;
}

func::FuncOp Outliner::createFunction(Layer &layer, StringRef name) {
  auto module = func_->getParentOfType<ModuleOp>();
  OpBuilder builder(module.getContext());
  builder.setInsertionPoint(func_);
  SmallVector<Type> inputs, outputs;
  for (Value v : layer.inputs)
    inputs.push_back(v.getType());
  for (Value v : layer.outputs)
    outputs.push_back(v.getType());
  Location loc = NameLoc::get(builder.getStringAttr(Twine(prefix_) + "." +
                                                   Twine(layer.index)));
  auto callee = builder.create<func::FuncOp>(
      loc, name, builder.getFunctionType(inputs, outputs));
  callee.setPrivate();
  SymbolTable(module).insert(callee);
  Block *entry = callee.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  IRMapping mapping;
  for (auto [v, arg] : llvm::zip(layer.inputs, entry->getArguments()))
    mapping.map(v, arg);
  for (Operation *op : layer.ops) {
    for (Value v : op->getOperands())
      if (!mapping.contains(v) && isFree(v.getDefiningOp()))
        mapping.map(v, builder.clone(*v.getDefiningOp())->getResult(
                           cast<OpResult>(v).getResultNumber()));
    builder.clone(*op, mapping);
  }
  SmallVector<Value> results;
  for (Value v : layer.outputs)
    results.push_back(mapping.lookup(v));
  builder.create<func::ReturnOp>(loc, results);
  return callee;
}

void Outliner::replace(Layer &layer, func::FuncOp callee) {
  Operation *last = layer.ops.back();
  OpBuilder builder(last);
  Location loc = NameLoc::get(
      builder.getStringAttr(Twine(prefix_) + "." + Twine(layer.index)));
  SmallVector<Value> inputs;
  for (Value v : layer.inputs)
    inputs.push_back(replaced_.lookup(v) ? replaced_.lookup(v) : v);
  auto call = builder.create<func::CallOp>(loc, callee, inputs);
  for (auto [v, result] : llvm::zip(layer.outputs, call.getResults())) {
    v.replaceUsesWithIf(result, [&](OpOperand &use) {
      return !layer.position.count(use.getOwner());
    });
    replaced_[v] = result;
  }
  for (Operation *op : llvm::reverse(layer.ops))
    op->erase();
}

FailureOr<unsigned> Outliner::run() {
  collect();
  if (layers_.empty()) {
    if (failed(refuse("no decoder layers found (no op scope of the form "
                      "<prefix>.<index>.<...>)")))
      return failure();
    return 0u;
  }
  for (auto &[index, layer] : layers_)
    computeInterface(layer);
  // Kinds: the first layer of each structure.
  SmallVector<Layer *> kinds;
  std::map<int64_t, unsigned> kindOf;
  for (auto &[index, layer] : layers_) {
    unsigned k = 0;
    while (k < kinds.size() && !equivalent(*kinds[k], layer))
      ++k;
    if (k == kinds.size())
      kinds.push_back(&layer);
    kindOf[index] = k;
  }
  // Check before rewriting: a refusal leaves the function unchanged.
  for (auto &[index, layer] : layers_)
    for (Value v : layer.outputs)
      for (Operation *user : v.getUsers())
        if (!layer.position.count(user) &&
            user->isBeforeInBlock(layer.ops.back())) {
          if (!strict_)
            return 0u;
          InFlightDiagnostic diag =
              func_.emitError("qeff-outline-layers: layer ")
              << index << " is interleaved with the ops that use its outputs";
          diag.attachNote(user->getLoc())
              << "'" << user->getName() << "' uses an output of layer "
              << index << " before the layer ends";
          return failure();
        }
  std::string base = prefix_.empty() ? std::string("layer") : prefix_;
  std::replace(base.begin(), base.end(), '.', '_');
  SmallVector<func::FuncOp> functions;
  for (auto [k, layer] : llvm::enumerate(kinds))
    functions.push_back(
        createFunction(*layer, base + "_kind" + std::to_string(k)));
  for (auto &[index, layer] : layers_)
    replace(layer, functions[kindOf[index]]);
  // Constants only the layers used are in the functions now.
  for (Operation &op : llvm::make_early_inc_range(func_.getBody().front()))
    if (isFree(&op) && op.use_empty())
      op.erase();
  return static_cast<unsigned>(functions.size());
}

struct OutlineLayersPass
    : public mlir::qeff::impl::QEffOutlineLayersBase<OutlineLayersPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> roots;
    for (auto func : module.getOps<func::FuncOp>())
      if (func.isPublic() && !func.isExternal())
        roots.push_back(func);
    unsigned total = 0;
    for (func::FuncOp func : roots) {
      if (!func.getBody().hasOneBlock()) {
        func.emitError("qeff-outline-layers: the function must have one block");
        return signalPassFailure();
      }
      Outliner outliner(func, strict);
      FailureOr<unsigned> made = outliner.run();
      if (failed(made))
        return signalPassFailure();
      total += *made;
    }
    if (total > 0)
      module->setAttr("qeff.outlined_layers",
                      IntegerAttr::get(IntegerType::get(&getContext(), 64),
                                       total));
  }
};

} // namespace
