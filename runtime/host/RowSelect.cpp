//===- RowSelect.cpp - Only the kept rows through the last layer's tail ----===//
//
// A causal LM's graph keeps the logits of one token per sequence (or the K+1
// of a speculative target): GatherElements(hidden [B, S, N], Expand(
// Unsqueeze(last [B, k], 2), [1, 1, N]), axis 1) before the LM head. Every
// op between the last layer's attention and that gather works on each row
// (token) alone: the o_proj and MLP weight products, the residual adds,
// the norms, the fp16 clamps. So the rows the gather keeps are taken as the
// values enter that tail, and the tail runs on k rows instead of S: at a
// 128-token prefill of a 22-layer model that is ~4% of the weight products
// (llama.cpp does the same with its `inp_out_ids`). Each kept row is
// computed by the same kernels as before: the same bits (the weight
// products give a row the same sums whatever the rows beside it).
//
// The tail is found backwards from the gather: a node joins it when it is
// row-wise (below) and every reader of its outputs is in it; the
// non-constant inputs of its nodes that come from outside are the values
// whose rows are taken (GatherRowsKernel, checked at run time: [B, S, *]
// with B and S of the gather's index source). Not done with an output
// observer, the inf/nan check or fp16/MX numerics (they see every node's
// full output), nor with QEFF_HOST_UNFUSED_DECODE=1.
//
//===----------------------------------------------------------------------===//

#include "runtime/host/HostDeviceImpl.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

namespace qeff::runtime::host {
namespace {

/// out[b, j, :] = x[b, rows[b, j], :] for x [B, S, *], rows [B, k] int64 (a
/// negative index counts from S's end, as GatherElements' do). `positions`
/// (the gather's index source [B, S]) gives the B and S x has. A value the
/// tail broadcasts along the rows (a size-1 or missing row dim) is the same
/// for every row: passed as it is; a size-1 batch dim serves every batch.
class GatherRowsKernel : public Kernel {
public:
  explicit GatherRowsKernel(std::string value) : value_(std::move(value)) {}
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0) && present(in, 1) && present(in, 2),
               "needs a value, its rows and the positions (internal error)");
    const Tensor &x = in[0], &rows = in[1], &pos = in[2];
    QEFF_CHECK(rows.rank() == 2 && pos.rank() == 2 && rows.dim(0) == pos.dim(0),
               "kept rows " + shapeString(rows.shape()) + " of positions " +
                   shapeString(pos.shape()) + " (internal error)");
    int64_t b = pos.dim(0), s = pos.dim(1), k = rows.dim(1);
    if (x.rank() < 2 || (x.rank() == 2 && x.dim(0) == 1) ||
        (x.rank() == 3 && x.dim(1) == 1 && s != 1)) {
      out[0] = x; // the same for every row
      return;
    }
    QEFF_CHECK(x.rank() == 3 && x.dim(1) == s && (x.dim(0) == b || x.dim(0) == 1),
               "taking the kept rows of '" + value_ + "' before the last layer's tail: it is " +
                   shapeString(x.shape()) + ", not [batch, seq_len, *] of positions " +
                   shapeString(pos.shape()) + " (internal error)");
    auto idx = indexValues(rows, "rows");
    size_t rowBytes = size_t(x.dim(2)) * dtypeSize(x.dtype());
    Tensor r = ctx.allocate(x.dtype(), {b, k, x.dim(2)});
    const char *src = static_cast<const char *>(x.rawData());
    char *dst = static_cast<char *>(const_cast<void *>(r.rawData()));
    for (int64_t i = 0; i < b; ++i)
      for (int64_t j = 0; j < k; ++j) {
        int64_t at = idx[i * k + j], row = at < 0 ? at + s : at;
        QEFF_CHECK(row >= 0 && row < s, "GatherElements index " + std::to_string(at) +
                                            " out of range for a dimension of size " +
                                            std::to_string(s));
        int64_t xb = x.dim(0) == 1 ? 0 : i;
        std::memcpy(dst + (i * k + j) * rowBytes, src + (xb * s + row) * rowBytes, rowBytes);
      }
    out[0] = std::move(r);
  }

private:
  std::string value_;
};

/// Its input, as its output (the gather, once the rows are taken early).
class PassKernel : public Kernel {
public:
  void run(Context &, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0), "needs its input (internal error)");
    out[0] = in[0];
  }
};

} // namespace

void HostDevice::selectRowsEarly() {
  if (opts_.outputObserver || opts_.numerics != Numerics::FP32 || opts_.checkFinite ||
      opts_.mx.mxfp6Weights || opts_.mx.mxint8IO || std::getenv("QEFF_HOST_UNFUSED_DECODE"))
    return;
  size_t numValues = names_.size();
  std::vector<int> producer(numValues, -1);
  std::vector<std::vector<int>> readers(numValues);
  for (size_t i = 0; i < plan_.size(); ++i) {
    for (int v : plan_[i].outputs)
      if (v >= 0)
        producer[v] = static_cast<int>(i);
    for (int v : plan_[i].inputs)
      if (v >= 0)
        readers[v].push_back(static_cast<int>(i));
  }
  std::vector<bool> isOutput(numValues, false);
  for (int v : outputIds_)
    isOutput[v] = true;
  auto node = [&](int v, const char *op) -> PlanNode * {
    int p = v >= 0 ? producer[v] : -1;
    return p >= 0 && plan_[p].opType == op ? &plan_[p] : nullptr;
  };
  auto constant = [&](int v) { return v >= 0 && isConst_[v]; };
  // One gather: GatherElements(X, Expand(Unsqueeze(L, [2]), shape), axis 1)
  // with X read by it alone, L [B, k] from ArgMax(positions) or an
  // arithmetic of it, the positions the ArgMax's input.
  int gi = -1, rowsV = -1, posV = -1;
  for (size_t i = 0; i < plan_.size() && gi < 0; ++i) {
    PlanNode &g = plan_[i];
    if (g.opType != "GatherElements" || g.inputs.size() != 2 || g.outputs.size() != 1 ||
        !g.proto || Attrs(*g.proto).getInt("axis", 0) != 1)
      continue;
    int x = g.inputs[0];
    PlanNode *ex = node(g.inputs[1], "Expand");
    PlanNode *un = ex && ex->inputs.size() == 2 && constant(ex->inputs[1])
                       ? node(ex->inputs[0], "Unsqueeze")
                       : nullptr;
    if (!un || un->inputs.size() != 2 || !constant(un->inputs[1]) || x < 0 || constant(x) ||
        readers[x].size() != 1 || isOutput[x])
      continue;
    const Tensor &axesT = constants_[un->inputs[1]];
    if (axesT.dtype() != DType::Int64 && axesT.dtype() != DType::Int32)
      continue;
    auto axes = indexValues(axesT, "axes");
    if (axes != std::vector<int64_t>{2} && axes != std::vector<int64_t>{-1})
      continue;
    // The ArgMax of the positions the rows come from (through the
    // speculative target's offsets: any nodes of non-constant inputs).
    int argmax = -1;
    std::vector<int> stack{un->inputs[0]};
    std::set<int> seen;
    while (!stack.empty() && argmax < 0) {
      int v = stack.back();
      stack.pop_back();
      if (v < 0 || constant(v) || !seen.insert(v).second || producer[v] < 0)
        continue;
      PlanNode &p = plan_[producer[v]];
      if (p.opType == "ArgMax" && p.inputs.size() == 1 && p.inputs[0] >= 0)
        argmax = producer[v];
      else if (seen.size() < 16)
        stack.insert(stack.end(), p.inputs.begin(), p.inputs.end());
    }
    const onnx::NodeProto *am = argmax < 0 ? nullptr : plan_[argmax].proto;
    if (!am || Attrs(*am).getInt("axis", 0) != 1)
      continue;
    gi = static_cast<int>(i);
    rowsV = un->inputs[0];
    posV = plan_[argmax].inputs[0];
  }
  if (gi < 0)
    return;
  // Row-wise nodes: a weight product (its weight folded in), the fused
  // RMSNorm over the last dim, SiLU, a clamp, and the elementwise
  // arithmetic whose constants vary along the last dim at most.
  auto lastDimOnly = [&](int v) {
    const Tensor &t = constants_[v];
    return t.valid() && (t.rank() == 0 || t.numElements() == t.dim(-1));
  };
  auto rowWise = [&](const PlanNode &p) {
    const std::string &op = p.opType;
    bool product = (op == "MatMul" && p.foldedConst >= 0 && p.inputs.size() == 1) ||
                   (op.rfind("MatMul(", 0) == 0 && op.size() > 9 &&
                    op.compare(op.size() - 9, 9, " weights)") == 0 && p.inputs.size() == 1);
    if (product)
      return true;
    if (op == "Div(Sqrt(Add(ReduceMean(Mul))))")
      return p.inputs.size() == 2 && constant(p.inputs[1]);
    if (op == "Mul(Sigmoid)")
      return p.inputs.size() == 1;
    if (op == "Clip")
      return !p.inputs.empty() &&
             std::all_of(p.inputs.begin() + 1, p.inputs.end(),
                         [&](int v) { return v < 0 || (constant(v) && lastDimOnly(v)); });
    if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div")
      return p.inputs.size() == 2 && std::all_of(p.inputs.begin(), p.inputs.end(), [&](int v) {
               return v >= 0 && (!constant(v) || lastDimOnly(v));
             });
    return false;
  };
  std::vector<bool> inTail(plan_.size(), false);
  inTail[gi] = true;
  for (int i = gi - 1; i >= 0; --i) {
    const PlanNode &p = plan_[i];
    if (!rowWise(p) || p.outputs.empty())
      continue;
    bool ok = true;
    for (int v : p.outputs)
      ok = ok && v >= 0 && !isOutput[v] && !readers[v].empty() &&
           std::all_of(readers[v].begin(), readers[v].end(), [&](int r) { return inTail[r]; });
    inTail[i] = ok;
  }
  int first = 0;
  while (!inTail[first])
    ++first;
  if (first == gi)
    return; // nothing row-wise before the gather
  // The values entering the tail, each made before the tail starts.
  std::vector<int> entering;
  for (int i = first; i < gi; ++i)
    if (inTail[i])
      for (int v : plan_[i].inputs)
        if (v >= 0 && !constant(v) && !(producer[v] >= 0 && inTail[producer[v]]) &&
            std::find(entering.begin(), entering.end(), v) == entering.end()) {
          if (producer[v] >= first)
            return; // made inside the tail's span (not in qeff's graphs)
          entering.push_back(v);
        }
  // The nodes computing the rows and the positions (the ArgMax of a graph
  // input, then arithmetic) that the plan has after the tail's start: moved
  // ahead of it, which their inputs allow (graph inputs, constants, values
  // made before the tail or by each other).
  std::set<int> moved;
  std::vector<int> stack{rowsV, posV};
  while (!stack.empty()) {
    int v = stack.back();
    stack.pop_back();
    int p = v >= 0 && !constant(v) ? producer[v] : -1;
    if (p < first || moved.count(p))
      continue;
    if (inTail[p] || p >= gi)
      return;
    moved.insert(p);
    stack.insert(stack.end(), plan_[p].inputs.begin(), plan_[p].inputs.end());
  }
  for (int v : entering)
    if (ids_.count(names_[v] + "/kept_rows"))
      return; // the name is taken (a graph of its own naming)
  std::vector<PlanNode> takes;
  std::map<int, int> kept; // entering value -> its kept rows
  for (int v : entering) {
    int k = valueId(names_[v] + "/kept_rows");
    isConst_.push_back(false);
    constants_.emplace_back();
    kept[v] = k;
    PlanNode t;
    t.name = names_[v] + "/kept_rows";
    t.opType = "GatherElements(rows taken early)";
    t.inputs = {v, rowsV, posV};
    t.outputs = {k};
    t.kernel = std::make_unique<GatherRowsKernel>(names_[v]);
    takes.push_back(std::move(t));
  }
  for (int i = first; i < gi; ++i)
    if (inTail[i])
      for (int &v : plan_[i].inputs)
        if (kept.count(v))
          v = kept[v];
  PlanNode &g = plan_[gi];
  g.opType = "GatherElements(rows taken early)";
  g.inputs = {g.inputs[0]};
  g.kernel = std::make_unique<PassKernel>();
  // New order: what precedes the tail, the moved nodes, the takings, the
  // rest.
  std::vector<PlanNode> order;
  order.reserve(plan_.size() + takes.size());
  for (int i = 0; i < first; ++i)
    order.push_back(std::move(plan_[i]));
  for (int i : moved)
    order.push_back(std::move(plan_[i]));
  for (auto &t : takes)
    order.push_back(std::move(t));
  for (int i = first; i < static_cast<int>(plan_.size()); ++i)
    if (!moved.count(i))
      order.push_back(std::move(plan_[i]));
  plan_ = std::move(order);
}

} // namespace qeff::runtime::host
