//===- ReplicateKVHeads.cpp - KV heads for tensor parallelism -------------===//
//
// Part of qeff. qeff-replicate-kv-heads: with `--num-devices N`, the AI 100
// compiler splits every attention by heads across the N devices, so the KV
// heads must divide by N. Where they do not, each KV head is replicated r
// times (repeat_interleave order, so query head h still reads a copy of KV
// head h / (num_heads / num_kv_heads)): the K/V projections produce the
// replicated heads directly, their weights selecting rows of the one
// checkpoint tensor (`qeff.weight {rows}`), and everything between the
// projection and the attention (rotary, cache concat, the cache inputs and
// outputs) carries num_kv_heads * r heads.
//
// Why C++ and not DRR: the rewrite follows a def-use chain from each
// attention back to its projections and retypes every value on it, function
// arguments and results included; DRR patterns match a fixed DAG and cannot
// change a function's signature.
//
//===----------------------------------------------------------------------===//

#include "patterns/Passes.h"

#include "dialects/QEff/QEffOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

#include <numeric>
#include <set>

namespace mlir::qeff {
#define GEN_PASS_DEF_QEFFREPLICATEKVHEADS
#include "patterns/Passes.h.inc"
} // namespace mlir::qeff

using namespace mlir;
using namespace mlir::qeff;

namespace {

RankedTensorType withDim(Type type, int64_t dim, int64_t size) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(tensor.getShape());
  shape[dim] = size;
  return tensor.clone(shape);
}

/// The projection that feeds KV heads: a qeff.linear, and when it is a fused
/// QKV projection, the qeff.split that cuts it and the parts holding K/V.
/// The grouped form (Falcon new_decoder_architecture): the projection's
/// heads are `groups` chunks [q_0 .. q_{g-1}, k, v], cut by split_heads into
/// groups and by split into parts; each group becomes r groups, each with
/// 1/r of the group's query rows and the whole K and V rows.
struct Projection {
  LinearOp linear;
  SplitOp split;               ///< null: the whole output is K or V heads
  SplitHeadsOp groups;         ///< grouped form: split_heads before split
  ClampOp clamp;               ///< clip_qkv between projection and split
  std::set<unsigned> parts;    ///< split results to replicate
};

class Replicator {
public:
  Replicator(int64_t kvHeads, int64_t factor) : kvHeads_(kvHeads), r_(factor) {}

  /// Retypes `value` (a [batch, kv_heads, seq, head_dim] K or V) and what
  /// produces it to kv_heads * r heads.
  LogicalResult retype(Value value, Operation *user);
  /// Rewrites the recorded projections (after every chain is retyped).
  LogicalResult rewriteProjections();

private:
  LogicalResult recordProjection(SplitHeadsOp heads);
  /// Replicates the rows of a per-head LayerNorm's weight and bias.
  LogicalResult replicateNormRows(LayerNormOp norm);
  LogicalResult recordGrouped(SplitOp split, unsigned part);
  LogicalResult addPlan(LinearOp linear, const Projection &plan,
                        unsigned part, int64_t headDim);
  /// The row ranges (start, count) that replicate each `headDim`-row head of
  /// rows [offset, offset + size) r times.
  void replicatedRanges(int64_t offset, int64_t size, int64_t headDim,
                        SmallVectorImpl<int64_t> &ranges) const;
  FailureOr<Value> selectRows(Value weight, ArrayRef<int64_t> ranges,
                              int64_t selected, Operation *user);

  int64_t kvHeads_, r_;
  DenseSet<Value> done_;
  llvm::MapVector<Operation *, Projection> projections_;
  DenseMap<Operation *, int64_t> headDims_;
};

LogicalResult Replicator::retype(Value value, Operation *user) {
  if (done_.contains(value))
    return success();
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || type.getRank() != 4 || type.getDimSize(1) != kvHeads_)
    return user->emitError("qeff-replicate-kv-heads: expected a [batch, ")
           << kvHeads_ << ", seq, head_dim] key/value, got " << value.getType();
  done_.insert(value);
  Type replicated = withDim(type, 1, kvHeads_ * r_);

  if (auto arg = dyn_cast<BlockArgument>(value)) {
    if (!isa<func::FuncOp>(arg.getOwner()->getParentOp()))
      return user->emitError("qeff-replicate-kv-heads: the key/value is a "
                             "block argument outside a function entry");
    arg.setType(replicated);
    return success();
  }
  Operation *def = value.getDefiningOp();
  if (auto concat = dyn_cast<KVConcatOp>(def)) {
    if (concat.getLayout() != KVLayout::bhsd)
      return concat.emitError("qeff-replicate-kv-heads: the cache layout must "
                              "be bhsd (run qeff-normalize-kv-layout first)");
    if (failed(retype(concat.getPast(), def)) ||
        failed(retype(concat.getUpdate(), def)))
      return failure();
  } else if (auto rotary = dyn_cast<RotaryOp>(def)) {
    if (failed(retype(rotary.getInput(), def)))
      return failure();
  } else if (auto norm = dyn_cast<LayerNormOp>(def)) {
    // q/k norms on the heads: a shared [head_dim] weight stays, a per-head
    // [kv_heads, head_dim] one gets its rows replicated like the heads.
    if (failed(retype(norm.getInput(), def)))
      return failure();
    if (norm.isPerHead() && failed(replicateNormRows(norm)))
      return failure();
  } else if (auto rms = dyn_cast<RMSNormOp>(def);
             rms && cast<RankedTensorType>(rms.getWeight().getType())
                            .getRank() == 1) {
    // A per-head RMSNorm over head_dim (Qwen3, Gemma 3): its shared
    // [head_dim] weight serves the replicated heads as it is.
    if (failed(retype(rms.getInput(), def)))
      return failure();
  } else if (auto heads = dyn_cast<SplitHeadsOp>(def)) {
    if (failed(recordProjection(heads)))
      return failure();
    heads.setNumHeads(kvHeads_ * r_);
  } else if (auto split = dyn_cast<SplitOp>(def);
             split && split.getInput().getDefiningOp<SplitHeadsOp>()) {
    if (failed(recordGrouped(split, cast<OpResult>(value).getResultNumber())))
      return failure();
  } else {
    return def->emitError("qeff-replicate-kv-heads: cannot replicate KV heads "
                          "through '")
           << def->getName()
           << "' (supported: qeff.split_heads of a K/V projection, "
              "qeff.rotary, qeff.layer_norm, qeff.rms_norm over head_dim, "
              "qeff.kv_concat, function "
              "arguments)";
  }
  value.setType(replicated);
  return success();
}

LogicalResult Replicator::replicateNormRows(LayerNormOp norm) {
  SmallVector<OpOperand *> operands = {&norm.getWeightMutable()};
  if (norm.getBias())
    operands.push_back(&norm.getBiasMutable()[0]);
  for (OpOperand *operand : operands) {
    Value rows = operand->get();
    if (auto stack = rows.getDefiningOp<StackOp>()) {
      // One tensor per head (StableLM): stack each r times.
      SmallVector<Value> inputs;
      for (Value head : stack.getInputs())
        inputs.append(r_, head);
      OpBuilder builder(stack);
      operand->set(builder.create<StackOp>(
          stack.getLoc(), withDim(stack.getType(), 0, kvHeads_ * r_),
          inputs));
      if (stack->use_empty())
        stack->erase();
      continue;
    }
    // One [kv_heads, head_dim] tensor (Cohere): each row r times.
    SmallVector<int64_t> ranges;
    replicatedRanges(0, kvHeads_, 1, ranges);
    FailureOr<Value> replicated =
        selectRows(rows, ranges, kvHeads_ * r_, norm);
    if (failed(replicated))
      return failure();
    operand->set(*replicated);
  }
  return success();
}

LogicalResult Replicator::recordProjection(SplitHeadsOp heads) {
  auto inType = cast<RankedTensorType>(heads.getInput().getType());
  int64_t width = inType.getShape().back();
  int64_t headDim = width / kvHeads_;
  Value in = heads.getInput();
  if (!in.hasOneUse())
    return heads.emitError("qeff-replicate-kv-heads: the K/V projection "
                           "output has other users than this qeff.split_heads");
  Operation *def = in.getDefiningOp();
  Projection plan;
  unsigned part = 0;
  if (auto split = dyn_cast_or_null<SplitOp>(def)) {
    plan.split = split;
    part = cast<OpResult>(in).getResultNumber();
    def = split.getInput().getDefiningOp();
  }
  // clip_qkv (OLMo, DBRX): an elementwise clamp of the projection's output
  // commutes with selecting its rows; it is retyped with the projection.
  if (auto clamp = dyn_cast_or_null<ClampOp>(def)) {
    if (!clamp.getResult().hasOneUse())
      return clamp.emitError("qeff-replicate-kv-heads: the clamped K/V "
                             "projection has other users");
    plan.clamp = clamp;
    def = clamp.getInput().getDefiningOp();
  }
  auto linear = dyn_cast_or_null<LinearOp>(def);
  if (!linear)
    return heads.emitError("qeff-replicate-kv-heads: the KV heads do not come "
                           "from a qeff.linear projection (")
           << (def ? def->getName().getStringRef() : StringRef("an argument"))
           << ")";
  return addPlan(linear, plan, part, headDim);
}

LogicalResult Replicator::recordGrouped(SplitOp split, unsigned part) {
  auto groups = split.getInput().getDefiningOp<SplitHeadsOp>();
  if (groups.getNumHeads() != kvHeads_)
    return split.emitError("qeff-replicate-kv-heads: a grouped QKV projection "
                           "must have one group per KV head, got ")
           << groups.getNumHeads() << " groups for " << kvHeads_;
  if (!split.getInput().hasOneUse() || !groups.getInput().hasOneUse())
    return split.emitError("qeff-replicate-kv-heads: the grouped K/V "
                           "projection has other users");
  auto linear = groups.getInput().getDefiningOp<LinearOp>();
  if (!linear)
    return split.emitError("qeff-replicate-kv-heads: the grouped KV heads do "
                           "not come from a qeff.linear projection");
  Projection plan;
  plan.split = split;
  plan.groups = groups;
  int64_t headDim = cast<RankedTensorType>(split.getResult(part).getType())
                        .getShape()
                        .back();
  return addPlan(linear, plan, part, headDim);
}

LogicalResult Replicator::addPlan(LinearOp linear, const Projection &plan,
                                  unsigned part, int64_t headDim) {
  if (linear.getWeightLayout() != WeightLayout::out_in)
    return linear.emitError("qeff-replicate-kv-heads: replicating heads of an "
                            "in_out (Conv1D) projection is not implemented: "
                            "its heads are columns of the checkpoint tensor");
  if (!linear.getResult().hasOneUse())
    return linear.emitError("qeff-replicate-kv-heads: the K/V projection has "
                            "other users than its heads");
  auto [it, inserted] = projections_.insert({linear, plan});
  if (!inserted && (it->second.split != plan.split ||
                    it->second.groups != plan.groups ||
                    it->second.clamp != plan.clamp))
    return linear.emitError("qeff-replicate-kv-heads: inconsistent uses of a "
                            "fused projection");
  it->second.parts.insert(part);
  int64_t &known = headDims_[linear];
  if (known && known != headDim)
    return linear.emitError("qeff-replicate-kv-heads: K and V of one fused "
                            "projection have different head sizes");
  known = headDim;
  return success();
}

void Replicator::replicatedRanges(int64_t offset, int64_t size,
                                  int64_t headDim,
                                  SmallVectorImpl<int64_t> &ranges) const {
  for (int64_t head = 0; head < size / headDim; ++head)
    for (int64_t copy = 0; copy < r_; ++copy)
      ranges.append({offset + head * headDim, headDim});
}

FailureOr<Value> Replicator::selectRows(Value weight, ArrayRef<int64_t> ranges,
                                        int64_t selected, Operation *user) {
  auto op = weight.getDefiningOp<WeightOp>();
  if (!op)
    return user->emitError("qeff-replicate-kv-heads: the projection's weight "
                           "and bias must be checkpoint tensors (qeff.weight)");
  if (op.getRows())
    return op.emitError("qeff-replicate-kv-heads: the weight already selects "
                        "rows (replicated twice?)");
  OpBuilder builder(op);
  auto type = cast<RankedTensorType>(op.getType());
  Type newType = withDim(type, op.getTranspose() ? 1 : 0, selected);
  auto copy = builder.create<WeightOp>(op.getLoc(), newType,
                                       op.getTensorNameAttr(),
                                       op.getStorageTypeAttr(),
                                       op.getTransposeAttr(),
                                       builder.getDenseI64ArrayAttr(ranges));
  return copy.getResult();
}

LogicalResult Replicator::rewriteProjections() {
  for (auto &[op, plan] : projections_) {
    auto linear = cast<LinearOp>(op);
    int64_t headDim = headDims_.lookup(op);
    SmallVector<int64_t> ranges;
    SmallVector<int64_t> sizes;
    int64_t width = cast<RankedTensorType>(linear.getType()).getShape().back();
    if (plan.groups) {
      // Each group [q.., k, v] of `chunk` rows becomes r groups, each with
      // its share of the queries and the whole K and V.
      ArrayRef<int64_t> parts = plan.split.getSizes();
      int64_t chunk = std::accumulate(parts.begin(), parts.end(), int64_t(0));
      for (int64_t group = 0; group < kvHeads_; ++group)
        for (int64_t copy = 0; copy < r_; ++copy) {
          int64_t offset = group * chunk;
          for (auto [i, size] : llvm::enumerate(parts)) {
            if (plan.parts.count(i))
              ranges.append({offset, size});
            else
              ranges.append({offset + copy * (size / r_), size / r_});
            offset += size;
          }
        }
      for (auto [i, size] : llvm::enumerate(parts))
        sizes.push_back(plan.parts.count(i) ? size : size / r_);
    } else if (!plan.split) {
      replicatedRanges(0, width, headDim, ranges);
      sizes.push_back(width * r_);
    } else {
      int64_t offset = 0;
      for (auto [i, size] : llvm::enumerate(plan.split.getSizes())) {
        if (plan.parts.count(i)) {
          replicatedRanges(offset, size, headDim, ranges);
          sizes.push_back(size * r_);
        } else {
          ranges.append({offset, size});
          sizes.push_back(size);
        }
        offset += size;
      }
    }
    int64_t total = 0;
    for (size_t i = 1; i < ranges.size(); i += 2)
      total += ranges[i];
    FailureOr<Value> weight = selectRows(linear.getWeight(), ranges, total, op);
    if (failed(weight))
      return failure();
    linear.getWeightMutable().assign(*weight);
    if (Value bias = linear.getBias()) {
      FailureOr<Value> b = selectRows(bias, ranges, total, op);
      if (failed(b))
        return failure();
      linear.getBiasMutable().assign(*b);
    }
    auto linearType = cast<RankedTensorType>(linear.getType());
    linear.getResult().setType(
        withDim(linearType, linearType.getRank() - 1, total));
    if (plan.clamp)
      plan.clamp.getResult().setType(linear.getResult().getType());
    if (plan.groups) {
      int64_t chunk = std::accumulate(sizes.begin(), sizes.end(), int64_t(0));
      plan.groups.setNumHeads(kvHeads_ * r_);
      plan.groups.getResult().setType(withDim(
          withDim(plan.groups.getType(), 1, kvHeads_ * r_), 3, chunk));
    }
    if (plan.split) {
      plan.split.setSizes(sizes);
      for (auto [i, result] : llvm::enumerate(plan.split.getResults())) {
        auto type = cast<RankedTensorType>(result.getType());
        Type updated = withDim(type, type.getRank() - 1, sizes[i]);
        if (plan.groups)
          updated = withDim(updated, 1, kvHeads_ * r_);
        result.setType(updated);
      }
    }
  }
  return success();
}

struct ReplicateKVHeadsPass
    : public mlir::qeff::impl::QEffReplicateKVHeadsBase<ReplicateKVHeadsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t devices = numDevices;
    if (devices < 1) {
      module.emitError("qeff-replicate-kv-heads: num-devices must be at least "
                       "1, got ")
          << devices;
      return signalPassFailure();
    }
    SmallVector<AttentionOp> attentions;
    module.walk([&](AttentionOp op) { attentions.push_back(op); });
    int64_t factor = 1;
    for (AttentionOp attention : attentions) {
      int64_t heads = attention.getNumHeads();
      int64_t kvHeads = attention.getNumKvHeads();
      if (kvHeads % devices == 0)
        continue;
      int64_t r = devices / std::gcd(kvHeads, devices);
      if (kvHeads * r > heads || heads % (kvHeads * r) != 0) {
        attention.emitError("qeff-replicate-kv-heads: cannot split ")
            << kvHeads << " KV heads over " << devices
            << " devices: replicating each " << r << " times gives "
            << kvHeads * r << " KV heads, "
            << (kvHeads * r > heads ? "more than" : "not a divisor of")
            << " the " << heads << " query heads";
        return signalPassFailure();
      }
      Replicator replicator(kvHeads, r);
      if (failed(replicator.retype(attention.getKey(), attention)) ||
          failed(replicator.retype(attention.getValue(), attention)) ||
          failed(replicator.rewriteProjections()))
        return signalPassFailure();
      attention.setNumKvHeads(kvHeads * r);
      factor = std::max(factor, r);
    }
    // Signatures follow the retyped arguments and returned values.
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      Operation *ret = func.getBody().front().getTerminator();
      func.setType(FunctionType::get(&getContext(),
                                     func.getBody().front().getArgumentTypes(),
                                     ret->getOperandTypes()));
    }
    // Unused original weights.
    module.walk([](WeightOp op) {
      if (op->use_empty())
        op->erase();
    });
    if (factor > 1)
      module->setAttr("qeff.kv_head_replication",
                      IntegerAttr::get(IntegerType::get(&getContext(), 64),
                                       factor));
  }
};

} // namespace
