//===- HostPlan.cpp - The host device's static plan -----------------------===//
//
// Topological order of the loaded nodes, load-time fusions, and liveness
// (the last reader of each value frees it or takes it over).
//
//===----------------------------------------------------------------------===//

#include "runtime/host/HostDeviceImpl.h"

#include "runtime/host/Gemm.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <functional>
#include <map>
#include <queue>

namespace qeff::runtime::host {

void HostDevice::buildPlan(std::vector<PlanNode> pending) {
  size_t numValues = names_.size();
  // Topological order (Kahn, stable in file order).
  std::vector<int> producer(numValues, -1);
  for (size_t i = 0; i < pending.size(); ++i)
    for (int v : pending[i].outputs)
      if (v >= 0) {
        QEFF_CHECK(producer[v] < 0 && !isConst_[v],
              nodeLabel(pending[i].name, pending[i].opType) + ": value '" + names_[v] +
                  "' is defined twice");
        producer[v] = static_cast<int>(i);
      }
  std::vector<bool> available(numValues, false);
  for (size_t v = 0; v < numValues; ++v)
    available[v] = isConst_[v];
  for (int v : inputIds_)
    available[v] = true;
  std::vector<int> missing(pending.size(), 0);
  std::vector<std::vector<int>> users(numValues);
  for (size_t i = 0; i < pending.size(); ++i)
    for (int v : pending[i].inputs) {
      if (v < 0 || available[v])
        continue;
      QEFF_CHECK(producer[v] >= 0, nodeLabel(pending[i].name, pending[i].opType) + ": input '" +
                                  names_[v] + "' is not produced by any node, input or initializer");
      ++missing[i];
      users[v].push_back(static_cast<int>(i));
    }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (size_t i = 0; i < pending.size(); ++i)
    if (!missing[i])
      ready.push(static_cast<int>(i));
  std::vector<int> order;
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int v : pending[i].outputs)
      if (v >= 0)
        for (int u : users[v])
          if (--missing[u] == 0)
            ready.push(u);
  }
  QEFF_CHECK(order.size() == pending.size(), "the graph has a cycle");
  for (int i : order)
    plan_.push_back(std::move(pending[i]));
  for (int v : outputIds_)
    QEFF_CHECK(isConst_[v] || producer[v] >= 0 ||
              std::find(inputIds_.begin(), inputIds_.end(), v) != inputIds_.end(),
          "graph output '" + names_[v] + "' is never produced");

  fusePlan();
  markMxNodes();
  packWeights();
  selectRowsEarly();
  for (auto &p : plan_)
    p.proto = nullptr; // the inlined NodeProtos die with this function
  numValues = names_.size(); // selectRowsEarly adds values

  // Liveness: the last node reading each value.
  std::vector<int> lastUse(numValues, -1);
  for (size_t i = 0; i < plan_.size(); ++i)
    for (int v : plan_[i].inputs)
      if (v >= 0)
        lastUse[v] = static_cast<int>(i);
  for (int v : outputIds_)
    lastUse[v] = INT_MAX;
  for (size_t i = 0; i < plan_.size(); ++i) {
    PlanNode &p = plan_[i];
    p.move.assign(p.inputs.size(), false);
    for (size_t j = 0; j < p.inputs.size(); ++j) {
      int v = p.inputs[j];
      if (v < 0 || isConst_[v] || lastUse[v] != static_cast<int>(i))
        continue;
      bool once = std::count(p.inputs.begin(), p.inputs.end(), v) == 1;
      p.move[j] = once;
      if (std::find(p.freeAfter.begin(), p.freeAfter.end(), v) == p.freeAfter.end())
        p.freeAfter.push_back(v);
    }
    for (int v : p.outputs)
      if (v >= 0 && lastUse[v] < 0)
        p.freeAfter.push_back(v); // never read
  }
  values_ = constants_;
  // No pass over the weights at load: a constant is scanned for inf/nan only
  // when the check is on and a node reading it has produced inf/nan
  // (HostDevice::anyInputNonFinite).
  nonFinite_.assign(numValues, kFinite);
  for (size_t v = 0; v < numValues; ++v)
    if (isConst_[v])
      nonFinite_[v] = kUnchecked;
  // MXFP6 weights were scanned when quantized (their pages may be gone).
  for (auto [v, bad] : mxNonFinite_)
    nonFinite_[v] = bad ? kNonFinite : kFinite;
}

/// Load-time fusions of the plan.
///
/// A Transpose swapping the last two dims whose only reader is a MatMul's B
/// becomes a transposed-B read in that MatMul (sgemm reads B^T in place): the
/// attention's K^T would otherwise copy the whole KV cache every step. Pure
/// data movement, so fp16 emulation is unaffected; not done when an output
/// observer wants to see every node.
void HostDevice::fusePlan() {
  if (opts_.outputObserver)
    return;
  std::vector<int> readers(names_.size(), 0);
  for (const auto &p : plan_)
    for (int v : p.inputs)
      if (v >= 0)
        ++readers[v];
  for (int v : outputIds_)
    ++readers[v];
  std::vector<int> producer(names_.size(), -1);
  for (size_t i = 0; i < plan_.size(); ++i)
    for (int v : plan_[i].outputs)
      if (v >= 0)
        producer[v] = static_cast<int>(i);
  std::vector<bool> drop(plan_.size(), false);
  for (auto &m : plan_) {
    if (m.opType != "MatMul" || m.inputs.size() != 2 || m.inputs[1] < 0 ||
        m.inputs[0] == m.inputs[1])
      continue;
    int b = m.inputs[1];
    int t = producer[b];
    if (t < 0 || drop[t] || readers[b] != 1)
      continue;
    PlanNode &tp = plan_[t];
    if (tp.opType != "Transpose" || tp.inputs.size() != 1 || tp.inputs[0] < 0 ||
        tp.outputs.size() != 1 || !tp.proto)
      continue;
    std::vector<int64_t> perm;
    for (const auto &a : tp.proto->attribute())
      if (a.name() == "perm")
        perm.assign(a.ints().begin(), a.ints().end());
    size_t r = perm.size();
    bool swapLast = r >= 2 && perm[r - 1] == int64_t(r) - 2 && perm[r - 2] == int64_t(r) - 1;
    for (size_t d = 0; d + 2 < r && swapLast; ++d)
      swapLast = perm[d] == int64_t(d);
    if (!swapLast)
      continue;
    m.inputs[1] = tp.inputs[0];
    m.kernel = makeMatMulKernel(/*transB=*/true);
    m.transB = true;
    drop[t] = true;
  }
  // The fusions below skip intermediate values: fp32 only (fp16 emulation
  // rounds every node's output) and not when inf/nan must be traced to the
  // node producing it.
  if (opts_.numerics != Numerics::FP32 || opts_.checkFinite) {
    dropNodes(drop);
    return;
  }
  auto scalarConst = [&](int v) {
    return v >= 0 && isConst_[v] && constants_[v].numElements() == 1 &&
           constants_[v].dtype() == DType::Float32;
  };
  // The attention's Softmax(Where(mask, S * scale, fill)): one pass over the
  // scores instead of three.
  for (size_t i = 0; i < plan_.size(); ++i) {
    PlanNode &sm = plan_[i];
    if (drop[i] || (sm.opType != "Softmax" && sm.opType != "LogSoftmax") ||
        sm.inputs.size() != 1 ||
        sm.inputs[0] < 0 || !sm.proto)
      continue;
    int wv = sm.inputs[0];
    int wi = producer[wv];
    if (wi < 0 || drop[wi] || readers[wv] != 1)
      continue;
    PlanNode &wh = plan_[wi];
    if (wh.opType != "Where" || wh.inputs.size() != 3 || wh.inputs[0] < 0 ||
        !scalarConst(wh.inputs[2]))
      continue;
    int mv = wh.inputs[1];
    int mi = mv >= 0 ? producer[mv] : -1;
    if (mi < 0 || drop[mi] || readers[mv] != 1 || wh.inputs[0] == mv)
      continue;
    PlanNode &mu = plan_[mi];
    if (mu.opType != "Mul" || mu.inputs.size() != 2 || mu.inputs[0] < 0 || mu.inputs[1] < 0)
      continue;
    int sv = scalarConst(mu.inputs[1]) ? mu.inputs[0]
             : scalarConst(mu.inputs[0]) ? mu.inputs[1] : -1;
    if (sv < 0 || sv == wh.inputs[0])
      continue;
    int kv = sv == mu.inputs[0] ? mu.inputs[1] : mu.inputs[0];
    int64_t axis = -1;
    for (const auto &a : sm.proto->attribute())
      if (a.name() == "axis")
        axis = a.i();
    sm.kernel = makeMaskedSoftmaxKernel(axis, sm.opType == "LogSoftmax");
    sm.inputs = {sv, kv, wh.inputs[0], wh.inputs[2]};
    sm.opType += "(Where(Mul))";
    drop[wi] = drop[mi] = true;
  }
  // Grouped-query attention: MatMul(A, Reshape(Expand(X))) reads each key /
  // value head of X for its group of query heads (GroupedMatMul.cpp) instead
  // of a copy of the cache per query head.
  for (size_t i = 0; i < plan_.size(); ++i) {
    PlanNode &m = plan_[i];
    if (drop[i] || m.opType != "MatMul" || m.inputs.size() != 2 || m.inputs[0] < 0 ||
        m.inputs[1] < 0 || m.outputs.size() != 1)
      continue;
    int rv = m.inputs[1], ri = producer[rv];
    if (ri < 0 || drop[ri] || readers[rv] != 1 || m.inputs[0] == rv)
      continue;
    PlanNode &rp = plan_[ri];
    if (rp.opType != "Reshape" || rp.inputs.size() != 2 || rp.inputs[0] < 0 ||
        rp.inputs[1] < 0 || !rp.proto)
      continue;
    bool allowZero = false;
    for (const auto &a : rp.proto->attribute())
      allowZero |= a.name() == "allowzero" && a.i() != 0;
    int ev = rp.inputs[0], ei = producer[ev];
    if (allowZero || ei < 0 || drop[ei] || readers[ev] != 1)
      continue;
    PlanNode &ep = plan_[ei];
    if (ep.opType != "Expand" || ep.inputs.size() != 2 || ep.inputs[0] < 0 || ep.inputs[1] < 0)
      continue;
    m.inputs = {m.inputs[0], ep.inputs[0], ep.inputs[1], rp.inputs[1]};
    m.kernel = makeGroupedMatMulKernel(m.transB, std::move(ep.kernel), std::move(rp.kernel));
    m.opType = "MatMul(Reshape(Expand))";
    drop[ri] = drop[ei] = true;
  }
  // Attention: the scores, the masked softmax and the values product in one
  // kernel (Attention.cpp), which a decode step runs over only the key
  // positions the mask keeps.
  // QEFF_HOST_UNFUSED_DECODE=1 keeps this and the weight products' fusion
  // (packWeights) off: the kernels as before, for comparison and tests.
  bool stepFusions = !std::getenv("QEFF_HOST_UNFUSED_DECODE");
  auto product = [&](const PlanNode &p) {
    return p.outputs.size() == 1 && !p.inputs.empty() && p.inputs[0] >= 0 &&
           ((p.opType == "MatMul" && p.inputs.size() == 2 && p.inputs[1] >= 0 &&
             !isConst_[p.inputs[1]]) ||
            (p.opType == "MatMul(Reshape(Expand))" && p.inputs.size() == 4));
  };
  for (size_t i = 0; i < plan_.size(); ++i) {
    PlanNode &pv = plan_[i];
    if (!stepFusions || drop[i] || !product(pv) || pv.transB)
      continue;
    int pvv = pv.inputs[0], si = producer[pvv];
    if (si < 0 || drop[si] || readers[pvv] != 1)
      continue;
    PlanNode &sm = plan_[si];
    if (sm.opType != "Softmax(Where(Mul))" || sm.inputs.size() != 4 || sm.inputs[0] < 0)
      continue;
    int sv = sm.inputs[0], qi = producer[sv];
    if (qi < 0 || drop[qi] || readers[sv] != 1)
      continue;
    PlanNode &qk = plan_[qi];
    if (!product(qk) || !qk.transB)
      continue;
    std::vector<int> inputs = qk.inputs;
    inputs.insert(inputs.end(), sm.inputs.begin() + 1, sm.inputs.end());
    inputs.insert(inputs.end(), pv.inputs.begin() + 1, pv.inputs.end());
    pv.kernel = makeAttentionKernel(std::move(qk.kernel), qk.inputs.size() - 1,
                                    std::move(sm.kernel), std::move(pv.kernel),
                                    pv.inputs.size() - 1, /*transK=*/true);
    pv.inputs = std::move(inputs);
    pv.opType = "Attention(" + qk.opType + ", " + sm.opType + ", " + pv.opType + ")";
    drop[qi] = drop[si] = true;
  }
  // RMSNorm: Div(x, Sqrt(Add(ReduceMean(Mul(x, x), axes = [-1]), eps))) in
  // one pass over x (five nodes, four intermediate values, per norm).
  auto single = [&](int v, const char *op, size_t inputs) -> PlanNode * {
    int t = v >= 0 ? producer[v] : -1;
    if (t < 0 || drop[t] || readers[v] != 1 || plan_[t].opType != op ||
        plan_[t].inputs.size() != inputs || plan_[t].outputs.size() != 1)
      return nullptr;
    return &plan_[t];
  };
  for (size_t i = 0; i < plan_.size() && stepFusions; ++i) {
    PlanNode &dv = plan_[i];
    if (drop[i] || dv.opType != "Div" || dv.inputs.size() != 2 || dv.inputs[0] < 0)
      continue;
    int xv = dv.inputs[0];
    PlanNode *sq = single(dv.inputs[1], "Sqrt", 1);
    PlanNode *ad = sq ? single(sq->inputs[0], "Add", 2) : nullptr;
    if (!ad || ad->inputs[0] < 0 || ad->inputs[1] < 0)
      continue;
    int ev = scalarConst(ad->inputs[1]) ? ad->inputs[1]
             : scalarConst(ad->inputs[0]) ? ad->inputs[0] : -1;
    PlanNode *rm = ev >= 0 ? single(ad->inputs[ev == ad->inputs[1] ? 0 : 1], "ReduceMean", 1)
                           : nullptr;
    PlanNode *mu = rm ? single(rm->inputs[0], "Mul", 2) : nullptr;
    if (!mu || mu->inputs[0] != xv || mu->inputs[1] != xv || !rm->proto)
      continue;
    bool lastAxis = false, keep = true;
    for (const auto &a : rm->proto->attribute()) {
      if (a.name() == "axes")
        lastAxis = a.ints_size() == 1 && a.ints(0) == -1;
      else if (a.name() == "keepdims")
        keep = a.i() != 0;
      else
        keep = false; // noop_with_empty_axes or anything else: as written
    }
    if (!lastAxis || !keep)
      continue;
    dv.inputs = {xv, ev};
    dv.kernel = makeRmsNormKernel();
    dv.opType = "Div(Sqrt(Add(ReduceMean(Mul))))";
    for (PlanNode *p : {sq, ad, rm, mu})
      drop[p - plan_.data()] = true;
  }
  // SiLU: Mul(x, Sigmoid(x)) in one pass.
  for (size_t i = 0; i < plan_.size(); ++i) {
    PlanNode &m = plan_[i];
    if (drop[i] || m.opType != "Mul" || m.inputs.size() != 2 ||
        m.outputs.size() != 1 || m.inputs[0] < 0 || m.inputs[1] < 0)
      continue;
    for (int side = 0; side < 2; ++side) {
      int sv = m.inputs[side], xv = m.inputs[1 - side];
      int t = producer[sv];
      if (t < 0 || drop[t] || readers[sv] != 1 || xv == sv)
        continue;
      PlanNode &sp = plan_[t];
      if (sp.opType != "Sigmoid" || sp.inputs.size() != 1 || sp.inputs[0] != xv ||
          sp.fp32 != m.fp32)
        continue;
      m.inputs = {xv};
      m.kernel = makeSiluKernel();
      m.opType = "Mul(Sigmoid)";
      drop[t] = true;
      break;
    }
  }
  fuseRotateHalf(drop, producer, readers, single);
  dropNodes(drop);
}

/// The rotary embedding: Add(Mul(x, cos), Mul(Concat(Neg(x2), x1), sin)),
/// (x1, x2) = Split(x) into equal halves along the last axis, in one pass
/// (six nodes and five intermediate values per q and k of each layer).
void HostDevice::fuseRotateHalf(std::vector<bool> &drop, const std::vector<int> &producer,
                                const std::vector<int> &readers, const SingleReader &one) {
  if (std::getenv("QEFF_HOST_UNFUSED_DECODE"))
    return;
  auto attr = [](const PlanNode &p, const char *name, int64_t dflt) {
    return p.proto ? Attrs(*p.proto).getInt(name, dflt) : dflt;
  };
  for (size_t i = 0; i < plan_.size(); ++i) {
    PlanNode &ad = plan_[i];
    if (drop[i] || ad.opType != "Add" || ad.inputs.size() != 2 || ad.outputs.size() != 1)
      continue;
    for (int side = 0; side < 2; ++side) {
      PlanNode *m0 = one(ad.inputs[side], "Mul", 2), *m1 = one(ad.inputs[1 - side], "Mul", 2);
      if (!m0 || !m1 || m0 == m1)
        continue;
      PlanNode *cc = nullptr;
      int sinV = -1;
      for (int k = 0; k < 2 && !cc; ++k)
        if ((cc = one(m1->inputs[k], "Concat", 2)))
          sinV = m1->inputs[1 - k];
      PlanNode *ng = cc ? one(cc->inputs[0], "Neg", 1) : nullptr;
      int s0 = cc ? cc->inputs[1] : -1, s1 = ng ? ng->inputs[0] : -1;
      int st = s0 >= 0 ? producer[s0] : -1;
      if (!ng || st < 0 || drop[st] || s1 < 0 || producer[s1] != st || readers[s0] != 1 ||
          readers[s1] != 1 || !cc->proto)
        continue;
      PlanNode &sp = plan_[st];
      // The same axis for both (as written: -1 and rank - 1 are not told
      // apart before the rank is known).
      int64_t axis = attr(sp, "axis", 0);
      if (sp.opType != "Split" || sp.outputs.size() != 2 || sp.outputs[0] != s0 ||
          sp.outputs[1] != s1 || sp.inputs.empty() || sp.inputs[0] < 0 || !sp.proto ||
          attr(*cc, "axis", INT64_MIN) != axis)
        continue;
      // Equal halves: a constant split of two equal sizes, or none.
      int64_t half = -1;
      if (sp.inputs.size() == 2 && sp.inputs[1] >= 0) {
        const Tensor &t = constants_[sp.inputs[1]];
        if (!isConst_[sp.inputs[1]] || (t.dtype() != DType::Int64 && t.dtype() != DType::Int32))
          continue;
        auto sizes = indexValues(t, "split");
        if (sizes.size() != 2 || sizes[0] != sizes[1] || sizes[0] < 0)
          continue;
        half = sizes[0];
      } else if (sp.inputs.size() > 2 || attr(sp, "num_outputs", 2) != 2) {
        continue;
      }
      int xv = sp.inputs[0], cosV = -1;
      for (int k = 0; k < 2; ++k)
        if (m0->inputs[k] == xv)
          cosV = m0->inputs[1 - k];
      if (cosV < 0 || sinV < 0 || cosV == xv || sinV == xv)
        continue;
      bool sameNumerics = true;
      for (const PlanNode *p : {m0, m1, cc, ng, &sp})
        sameNumerics = sameNumerics && p->fp32 == ad.fp32;
      if (!sameNumerics)
        continue;
      ad.inputs = {xv, cosV, sinV};
      ad.kernel = makeRotateHalfKernel(half, axis);
      ad.opType = "Add(Mul, Mul(Concat(Neg(Split))))";
      for (const PlanNode *p : {m0, m1, cc, ng, &sp})
        drop[p - plan_.data()] = true;
      break;
    }
  }
}

void HostDevice::dropNodes(const std::vector<bool> &drop) {
  std::vector<PlanNode> kept;
  for (size_t i = 0; i < plan_.size(); ++i)
    if (!drop[i])
      kept.push_back(std::move(plan_[i]));
  plan_ = std::move(kept);
}

/// Weight products (Gemm.h, PackedMatMul.cpp). A MatMul whose B is a
/// constant matrix gets a weight kernel: f32 weights when the vector
/// microkernels are in use (else OpenBLAS as before), f16 and bf16 weights
/// always (they stay 2 bytes: the kernels widen them). Nothing is done to
/// the weights here unless opts_.prepackWeights (no start-up pass): a
/// weight's first product reads it in place, the second lays it out once.
/// The other 2-byte constants are widened to f32 here, except those only
/// Gather reads (it widens the rows it copies).
/// QEFF_HOST_NO_PACK=1 keeps the OpenBLAS path and widens every 2-byte
/// weight, for comparison.
void HostDevice::packWeights() {
  Context ctx{arena_.get(), opts_.numThreads};
  bool noPack = std::getenv("QEFF_HOST_NO_PACK") != nullptr;
  // Cast(to = FLOAT) of an f16 / bf16 constant (how `--weights-dtype=f16`
  // and `bf16` artifacts keep the graph's types): its readers take the
  // constant itself, which is then packed, gathered from or widened below.
  // Not with an output observer (it sees every node).
  if (!noPack && !opts_.outputObserver) {
    std::vector<int> alias(names_.size(), -1);
    std::vector<bool> isOutput(names_.size(), false), drop(plan_.size(), false);
    for (int v : outputIds_)
      isOutput[v] = true;
    for (size_t i = 0; i < plan_.size(); ++i) {
      const PlanNode &p = plan_[i];
      if (p.opType != "Cast" || p.inputs.size() != 1 || p.outputs.size() != 1 ||
          p.inputs[0] < 0 || p.outputs[0] < 0 || !isConst_[p.inputs[0]] ||
          !isTwoByteFloat(constants_[p.inputs[0]].dtype()) || isOutput[p.outputs[0]] ||
          !p.proto)
        continue;
      bool toFloat = false;
      for (const auto &a : p.proto->attribute())
        toFloat |= a.name() == "to" && a.i() == onnx::TensorProto::FLOAT;
      if (!toFloat)
        continue;
      alias[p.outputs[0]] = p.inputs[0];
      drop[i] = true;
    }
    for (auto &p : plan_)
      for (int &v : p.inputs)
        if (v >= 0 && alias[v] >= 0)
          v = alias[v];
    dropNodes(drop);
  }
  // MXFP6: the weights the compiler compresses, once, before their layout.
  if (opts_.mx.mxfp6Weights)
    quantizeMxWeights();
  std::map<std::pair<int, bool>, std::shared_ptr<WeightB>> weights;
  ExternalDataFiles *external = external_.get();
  // A Gather's constant table (the token embedding) is read a few rows at a
  // time: a row not in the page cache is a disk read at its first use (the
  // first 1.1B prefill's Gather took 87 ms instead of 11 with the file out
  // of the cache). With prepackWeights, whose point is to do such work at
  // load, the table is read into the page cache now and unmapped again, so
  // the process keeps only the rows it gathers; done before the weights are
  // laid out, so the peak resident size does not see it.
  if (opts_.prepackWeights && external)
    for (const auto &p : plan_)
      if (p.opType == "Gather" && !p.inputs.empty() && p.inputs[0] >= 0 &&
          isConst_[p.inputs[0]] && constants_[p.inputs[0]].valid()) {
        const Tensor &t = constants_[p.inputs[0]];
        external->populate(t.rawData(), t.byteSize());
        external->release(t.rawData(), t.byteSize());
      }
  auto release = [this, external](const void *p, size_t bytes) {
    if (external)
      external->release(p, bytes);
    releaseMxWeight(p, bytes); // an MXFP6 copy, once laid out
  };
  // The constant a MatMul reads through a weight kernel, or -1.
  auto packedWeight = [&](const PlanNode &p) {
    if (noPack || p.opType != "MatMul" || p.inputs.size() != 2 || p.inputs[0] < 0 ||
        p.inputs[1] < 0 || p.inputs[0] == p.inputs[1] || !isConst_[p.inputs[1]])
      return -1;
    const Tensor &t = constants_[p.inputs[1]];
    bool half = isTwoByteFloat(t.dtype());
    if (t.rank() != 2 || !(half || (t.dtype() == DType::Float32 && gemm::fastKernels())))
      return -1;
    return p.inputs[1];
  };
  if (!mxBuffers_.empty())
    markReleasableMxWeights(packedWeight);
  std::vector<std::shared_ptr<WeightB>> nodeWeight(plan_.size());
  for (size_t pi = 0; pi < plan_.size(); ++pi) {
    PlanNode &p = plan_[pi];
    int b = packedWeight(p);
    if (b < 0)
      continue;
    const Tensor &t = constants_[b];
    auto &w = weights[{b, p.transB}];
    if (!w) {
      w = std::make_shared<WeightB>(t, p.transB, names_[b], release);
      // Read whole by its first product (or the layout): mapped in one call
      // rather than fault by fault inside the GEMM.
      if (external)
        external->populate(t.rawData(), t.byteSize());
    }
    p.kernel = makeWeightMatMulKernel(w);
    if (opts_.prepackWeights)
      w->layOut(ctx);
    // The weight leaves the node's inputs; the inf/nan check still sees it.
    p.foldedConst = b;
    p.inputs = {p.inputs[0]}; // opType stays MatMul: errors name the ONNX op
    nodeWeight[pi] = w;
  }
  // The weight products of one A (q/k/v, gate/up) as one node: one hand-off
  // to the pool for all their panels. At the first one's place (they read
  // only A); fp32 only, and not when every node is observed or its inf/nan
  // traced to it.
  if (!opts_.outputObserver && opts_.numerics == Numerics::FP32 && !opts_.checkFinite &&
      !std::getenv("QEFF_HOST_UNFUSED_DECODE")) {
    std::map<int, std::vector<size_t>> byA;
    for (size_t pi = 0; pi < plan_.size(); ++pi)
      if (nodeWeight[pi] && plan_[pi].outputs.size() == 1 && plan_[pi].outputs[0] >= 0)
        byA[plan_[pi].inputs[0]].push_back(pi);
    std::vector<bool> drop(plan_.size(), false);
    for (auto &[a, members] : byA) {
      if (members.size() < 2)
        continue;
      PlanNode &head = plan_[members[0]];
      std::vector<std::shared_ptr<WeightB>> ws;
      std::vector<int> outputs;
      std::string names;
      for (size_t pi : members) {
        ws.push_back(nodeWeight[pi]);
        outputs.push_back(plan_[pi].outputs[0]);
        names += (names.empty() ? "" : ", ") + plan_[pi].name;
        drop[pi] = pi != members[0];
      }
      head.opType = "MatMul(" + std::to_string(ws.size()) + " weights)";
      head.kernel = makeWeightsMatMulKernel(std::move(ws));
      head.outputs = std::move(outputs);
      head.name = names;
    }
    dropNodes(drop);
  }
  std::vector<int> readers(names_.size(), 0), gatherData(names_.size(), 0);
  for (const auto &p : plan_)
    for (size_t j = 0; j < p.inputs.size(); ++j)
      if (p.inputs[j] >= 0) {
        ++readers[p.inputs[j]];
        gatherData[p.inputs[j]] += j == 0 && p.opType == "Gather";
      }
  for (int v : outputIds_)
    ++readers[v];
  for (size_t v = 0; v < constants_.size(); ++v)
    if (isConst_[v] && constants_[v].valid() && isTwoByteFloat(constants_[v].dtype()) &&
        readers[v] > gatherData[v]) {
      Tensor wide = widenHalf(ctx, constants_[v]);
      constants_[v] = Tensor::view(wide.dtype(), wide.shape(), wide.rawData(), wide.owner(), true);
    }
}

} // namespace qeff::runtime::host
