//===- HostDevice.cpp - Loading and executing ONNX on the CPU -------------===//

#include "runtime/host/HostDevice.h"

#include "runtime/host/ExternalData.h"
#include "runtime/host/Kernel.h"

#include <cblas.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <queue>
#include <thread>
#include <unordered_map>

namespace qeff::runtime::host {

/// The tensor of a Constant node (value, value_float(s), value_int(s)).
Tensor constantFromNode(const onnx::NodeProto &node) {
  Attrs a(node);
  a.allowOnly({"value", "value_float", "value_floats", "value_int", "value_ints"});
  if (const auto *t = a.getTensor("value"))
    return tensorFromProto(*t);
  for (const auto &attr : node.attribute()) {
    if (attr.name() == "value_float")
      return Tensor::fromFloat({}, {attr.f()});
    if (attr.name() == "value_floats")
      return Tensor::fromFloat({attr.floats_size()}, {attr.floats().begin(), attr.floats().end()});
    if (attr.name() == "value_int")
      return Tensor::fromInt64({}, {attr.i()});
    if (attr.name() == "value_ints")
      return Tensor::fromInt64({attr.ints_size()}, {attr.ints().begin(), attr.ints().end()});
  }
  fail("Constant without a supported value attribute");
}

namespace {

struct PlanNode {
  std::string name;
  std::string opType;
  std::vector<int> inputs;  ///< value ids, -1 for an omitted input
  std::vector<int> outputs; ///< value ids, -1 for an omitted output
  std::vector<bool> move;   ///< input handed over (last use)
  std::vector<int> freeAfter;
  std::unique_ptr<Kernel> kernel;
  bool fp32 = false;
  const onnx::NodeProto *proto = nullptr; ///< valid during load only
};

std::string nodeLabel(const std::string &name, const std::string &opType) {
  return "node '" + name + "' (" + opType + ")";
}

/// Flattens model-local function calls into plain nodes.
class Inliner {
public:
  explicit Inliner(const onnx::ModelProto &model) {
    for (const auto &f : model.functions())
      functions_[f.domain() + "\x1f" + f.name()] = &f;
  }

  void add(const onnx::NodeProto &node, int depth = 0) {
    auto it = functions_.find(node.domain() + "\x1f" + node.op_type());
    if (it == functions_.end()) {
      nodes_.push_back(node);
      return;
    }
    check(depth < 64, nodeLabel(node.name(), node.op_type()) +
                          ": model-local functions nested too deeply (recursion?)");
    const onnx::FunctionProto &fn = *it->second;
    std::string prefix = node.name() + "/";
    std::unordered_map<std::string, std::string> rename;
    for (int i = 0; i < fn.input_size(); ++i)
      rename[fn.input(i)] = i < node.input_size() ? node.input(i) : "";
    for (int i = 0; i < fn.output_size(); ++i)
      rename[fn.output(i)] = i < node.output_size() && !node.output(i).empty()
                                 ? node.output(i)
                                 : prefix + fn.output(i);
    auto mapName = [&](const std::string &n) -> std::string {
      if (n.empty())
        return n;
      auto r = rename.find(n);
      return r != rename.end() ? r->second : prefix + n;
    };
    int index = 0;
    for (const auto &body : fn.node()) {
      onnx::NodeProto copy = body;
      for (int i = 0; i < copy.input_size(); ++i)
        copy.set_input(i, mapName(body.input(i)));
      for (int i = 0; i < copy.output_size(); ++i)
        copy.set_output(i, mapName(body.output(i)));
      copy.set_name(prefix + (body.name().empty()
                                  ? body.op_type() + "_" + std::to_string(index)
                                  : body.name()));
      ++index;
      copy.clear_attribute();
      for (const auto &attr : body.attribute()) {
        if (attr.ref_attr_name().empty()) {
          *copy.add_attribute() = attr;
          continue;
        }
        for (const auto &callerAttr : node.attribute())
          if (callerAttr.name() == attr.ref_attr_name()) {
            auto *a = copy.add_attribute();
            *a = callerAttr;
            a->set_name(attr.name());
          }
      }
      add(copy, depth + 1);
    }
  }

  std::vector<onnx::NodeProto> &nodes() { return nodes_; }

private:
  std::unordered_map<std::string, const onnx::FunctionProto *> functions_;
  std::vector<onnx::NodeProto> nodes_;
};

TensorInfo valueInfo(const onnx::ValueInfoProto &v) {
  TensorInfo info;
  info.name = v.name();
  check(v.type().has_tensor_type(), "graph value '" + v.name() + "' is not a tensor");
  const auto &tt = v.type().tensor_type();
  try {
    info.dtype = dtypeFromOnnx(tt.elem_type());
  } catch (const KernelError &e) {
    fail("graph value '" + v.name() + "': " + e.what());
  }
  info.hasShape = tt.has_shape();
  for (const auto &d : tt.shape().dim()) {
    Dim dim;
    if (d.has_dim_value())
      dim.value = d.dim_value();
    else if (d.has_dim_param())
      dim.symbol = d.dim_param();
    info.dims.push_back(dim);
  }
  return info;
}

bool isFloat(const Tensor &t) { return t.dtype() == DType::Float32; }

/// Rounds a float tensor to fp16 (in place when writable and unshared, else
/// into a copy).
Tensor roundedToHalf(Context &ctx, Tensor t) {
  Tensor r = t.uniquelyOwned() ? t : ctx.allocate(DType::Float32, t.shape());
  const float *p = t.data<float>();
  float *q = r.data<float>();
  for (int64_t i = 0; i < t.numElements(); ++i)
    q[i] = roundToHalf(p[i]);
  return r;
}

bool hasNonFinite(const Tensor &t) {
  if (!isFloat(t))
    return false;
  const float *p = t.data<float>();
  for (int64_t i = 0; i < t.numElements(); ++i)
    if (!std::isfinite(p[i]))
      return true;
  return false;
}

class HostDevice : public Device {
public:
  explicit HostDevice(HostOptions options) : opts_(std::move(options)) {
    const char *prof = std::getenv("QEFF_HOST_PROFILE");
    profile_ = prof != nullptr;
    profileShapes_ = prof && std::string(prof) == "shapes";
  }
  ~HostDevice() override { printProfile(); }

  void load(const std::string &path);

  const std::vector<TensorInfo> &inputs() const override { return inputs_; }
  const std::vector<TensorInfo> &outputs() const override { return outputs_; }
  Status run(std::vector<Tensor> &inputs, std::vector<Tensor> &outputs) override;

private:
  int valueId(const std::string &name) {
    auto [it, inserted] = ids_.try_emplace(name, static_cast<int>(names_.size()));
    if (inserted)
      names_.push_back(name);
    return it->second;
  }
  Tensor loadInitializer(const onnx::TensorProto &t, const std::string &dir);
  void runNode(Context &ctx, PlanNode &node);
  void fusePlan();
  void dropNodes(const std::vector<bool> &drop);

  HostOptions opts_;
  std::shared_ptr<Arena> arena_ = std::make_shared<Arena>();
  std::unique_ptr<ExternalDataFiles> external_;
  std::unordered_map<std::string, int> ids_;
  std::vector<std::string> names_;
  std::vector<TensorInfo> inputs_, outputs_;
  std::vector<int> inputIds_, outputIds_;
  std::vector<Tensor> constants_;
  std::vector<bool> isConst_;
  std::vector<PlanNode> plan_;
  std::vector<Tensor> values_;
  std::vector<uint8_t> nonFinite_;
  std::vector<Tensor> in_, out_;

  // QEFF_HOST_PROFILE=1: wall time per op type, per input-shape signature,
  // printed to stderr when the device is destroyed.
  struct OpTime {
    double seconds = 0;
    int64_t calls = 0;
  };
  struct RunProfile {
    int64_t runs = 0;
    double seconds = 0;
    std::map<std::string, OpTime> ops;
  };
  void printProfile();
  bool profile_ = false, profileShapes_ = false;
  RunProfile *currentProfile_ = nullptr;
  std::map<std::string, RunProfile> profiles_;
};

void HostDevice::printProfile() {
  for (auto &[sig, prof] : profiles_) {
    std::fprintf(stderr, "qeff host profile: %s: %lld runs, %.3f ms/run\n", sig.c_str(),
                 (long long)prof.runs, 1e3 * prof.seconds / std::max<int64_t>(1, prof.runs));
    std::vector<std::pair<std::string, OpTime>> ops(prof.ops.begin(), prof.ops.end());
    std::sort(ops.begin(), ops.end(),
              [](auto &a, auto &b) { return a.second.seconds > b.second.seconds; });
    for (auto &[op, t] : ops)
      std::fprintf(stderr, "  %-28s %9.3f ms/run %5.1f%% %6lld calls/run\n", op.c_str(),
                   1e3 * t.seconds / std::max<int64_t>(1, prof.runs),
                   100 * t.seconds / std::max(prof.seconds, 1e-12),
                   (long long)(t.calls / std::max<int64_t>(1, prof.runs)));
  }
}

Tensor HostDevice::loadInitializer(const onnx::TensorProto &t, const std::string &dir) {
  if (t.data_location() != onnx::TensorProto::EXTERNAL)
    return tensorFromProto(t);
  if (!external_)
    external_ = std::make_unique<ExternalDataFiles>(dir);
  return external_->load(t);
}

void HostDevice::load(const std::string &path) {
  auto file = MappedFile::open(path);
  onnx::ModelProto model;
  check(file->size() < static_cast<size_t>(INT_MAX) &&
            model.ParseFromArray(file->data(), static_cast<int>(file->size())),
        "'" + path + "' is not a valid ONNX model (protobuf parse failed)");
  file.reset();
  std::string dir = std::filesystem::path(path).parent_path().string();
  const onnx::GraphProto &graph = model.graph();

  int threads = opts_.numThreads > 0 ? opts_.numThreads
                                     : std::max(1u, std::thread::hardware_concurrency());
  opts_.numThreads = threads;
  openblas_set_num_threads(threads);

  // Constants: initializers, then Constant nodes.
  auto setConst = [&](int id, Tensor t) {
    if (constants_.size() <= static_cast<size_t>(id)) {
      constants_.resize(id + 1);
      isConst_.resize(id + 1, false);
    }
    if (opts_.numerics == Numerics::FP16 && isFloat(t)) {
      Tensor r = Tensor::empty(DType::Float32, t.shape());
      for (int64_t i = 0; i < t.numElements(); ++i)
        r.data<float>()[i] = roundToHalf(t.data<float>()[i]);
      t = r;
    }
    constants_[id] = Tensor::view(t.dtype(), t.shape(), t.rawData(), t.owner(), true);
    isConst_[id] = true;
  };
  for (const auto &init : graph.initializer()) {
    try {
      setConst(valueId(init.name()), loadInitializer(init, dir));
    } catch (const std::exception &e) { // KernelError, SizeError
      fail(std::string(e.what()).find(init.name()) == std::string::npos
               ? "initializer '" + init.name() + "': " + e.what()
               : e.what());
    }
  }
  for (const auto &in : graph.input()) {
    int id = valueId(in.name());
    if (static_cast<size_t>(id) < isConst_.size() && isConst_[id])
      continue; // an initializer listed as input (old IR): a constant here
    inputs_.push_back(valueInfo(in));
    inputIds_.push_back(id);
  }
  for (const auto &out : graph.output()) {
    outputs_.push_back(valueInfo(out));
    outputIds_.push_back(valueId(out.name()));
  }

  Inliner inliner(model);
  for (const auto &node : graph.node())
    inliner.add(node);
  auto &nodes = inliner.nodes();

  // Kernels, collecting every unsupported node before failing.
  std::vector<std::string> errors;
  const auto &registry = kernelRegistry();
  std::vector<PlanNode> pending;
  for (size_t i = 0; i < nodes.size(); ++i) {
    onnx::NodeProto &n = nodes[i];
    if (n.name().empty())
      n.set_name(n.op_type() + "_" + std::to_string(i));
    try {
      if (n.op_type() == "Constant" && (n.domain().empty() || n.domain() == "ai.onnx")) {
        check(n.output_size() == 1, "Constant needs one output");
        setConst(valueId(n.output(0)), constantFromNode(n));
        continue;
      }
      check(n.domain().empty() || n.domain() == "ai.onnx",
            "unsupported operator domain '" + n.domain() +
                "' (no model-local function of that name either)");
      auto it = registry.find(n.op_type());
      check(it != registry.end(), "unsupported operator " + n.op_type());
      PlanNode p;
      p.name = n.name();
      p.opType = n.op_type();
      p.kernel = it->second(n, Attrs(n));
      p.proto = &n;
      for (const auto &v : n.input())
        p.inputs.push_back(v.empty() ? -1 : valueId(v));
      for (const auto &v : n.output())
        p.outputs.push_back(v.empty() ? -1 : valueId(v));
      std::string base = p.name.substr(p.name.rfind('/') + 1);
      // qaic's -node-precision-info names a node by its first output; node
      // names are accepted too.
      p.fp32 = opts_.fp32Nodes.count(p.name) || opts_.fp32Nodes.count(base) ||
               (n.output_size() > 0 && opts_.fp32Nodes.count(n.output(0)));
      pending.push_back(std::move(p));
    } catch (const KernelError &e) {
      if (errors.size() < 8)
        errors.push_back(nodeLabel(n.name(), n.op_type()) + ": " + e.what());
      else if (errors.size() == 8)
        errors.push_back("...");
    }
  }
  if (!errors.empty()) {
    std::string msg;
    for (auto &e : errors)
      msg += (msg.empty() ? "" : "; ") + e;
    fail(msg);
  }
  size_t numValues = names_.size();
  constants_.resize(numValues);
  isConst_.resize(numValues, false);

  // Topological order (Kahn, stable in file order).
  std::vector<int> producer(numValues, -1);
  for (size_t i = 0; i < pending.size(); ++i)
    for (int v : pending[i].outputs)
      if (v >= 0) {
        check(producer[v] < 0 && !isConst_[v],
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
      check(producer[v] >= 0, nodeLabel(pending[i].name, pending[i].opType) + ": input '" +
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
  check(order.size() == pending.size(), "the graph has a cycle");
  for (int i : order)
    plan_.push_back(std::move(pending[i]));
  for (int v : outputIds_)
    check(isConst_[v] || producer[v] >= 0 ||
              std::find(inputIds_.begin(), inputIds_.end(), v) != inputIds_.end(),
          "graph output '" + names_[v] + "' is never produced");

  fusePlan();
  for (auto &p : plan_)
    p.proto = nullptr; // the inlined NodeProtos die with this function

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
  nonFinite_.assign(numValues, 0);
  for (size_t v = 0; v < numValues; ++v)
    if (isConst_[v])
      nonFinite_[v] = hasNonFinite(constants_[v]);
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
  dropNodes(drop);
}

void HostDevice::dropNodes(const std::vector<bool> &drop) {
  std::vector<PlanNode> kept;
  for (size_t i = 0; i < plan_.size(); ++i)
    if (!drop[i])
      kept.push_back(std::move(plan_[i]));
  plan_ = std::move(kept);
}

void HostDevice::runNode(Context &ctx, PlanNode &node) {
  in_.resize(node.inputs.size());
  bool inputNonFinite = false;
  for (size_t j = 0; j < node.inputs.size(); ++j) {
    int v = node.inputs[j];
    if (v < 0) {
      in_[j] = Tensor();
      continue;
    }
    inputNonFinite |= nonFinite_[v] != 0;
    if (node.move[j])
      in_[j] = std::move(values_[v]);
    else
      in_[j] = values_[v];
  }
  out_.assign(node.outputs.size(), Tensor());
  try {
    if (currentProfile_) {
      auto t0 = std::chrono::steady_clock::now();
      node.kernel->run(ctx, in_, out_);
      std::string key = node.opType;
      if (profileShapes_)
        for (const Tensor &o : out_)
          key += o.valid() ? " " + shapeString(o.shape()) : " -";
      OpTime &t = currentProfile_->ops[key];
      t.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      ++t.calls;
    } else {
      node.kernel->run(ctx, in_, out_);
    }
  } catch (const KernelError &e) {
    fail(nodeLabel(node.name, node.opType) + ": " + e.what());
  }
  bool fp16 = opts_.numerics == Numerics::FP16;
  bool checkFinite = fp16 || opts_.checkFinite;
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    int v = node.outputs[k];
    if (v < 0)
      continue;
    Tensor &t = out_[k];
    check(t.valid(), nodeLabel(node.name, node.opType) + ": output " + std::to_string(k) +
                         " was not produced");
    if (fp16 && !node.fp32 && isFloat(t))
      t = roundedToHalf(ctx, std::move(t));
    bool bad = checkFinite && hasNonFinite(t);
    if (bad && !inputNonFinite)
      fail(nodeLabel(node.name, node.opType) + " produced inf/nan from finite inputs" +
           (fp16 && !node.fp32 ? " (fp16 emulation: the value exceeds the fp16 range; put "
                                 "the node on the fp32 precision list)"
                               : ""));
    nonFinite_[v] = bad;
    if (opts_.outputObserver && isFloat(t))
      opts_.outputObserver(node.name, node.opType, t);
    values_[v] = std::move(t);
  }
  in_.clear();
  out_.clear();
  for (int v : node.freeAfter)
    values_[v] = Tensor();
}

Status HostDevice::run(std::vector<Tensor> &inputs, std::vector<Tensor> &outputs) {
  Context ctx{arena_.get(), opts_.numThreads};
  auto clear = [&] {
    currentProfile_ = nullptr;
    in_.clear();
    out_.clear();
    for (size_t v = 0; v < values_.size(); ++v)
      if (!isConst_[v])
        values_[v] = Tensor();
  };
  try {
    check(inputs.size() == inputIds_.size(),
          "expected " + std::to_string(inputIds_.size()) + " inputs, got " +
              std::to_string(inputs.size()));
    for (size_t i = 0; i < inputs.size(); ++i) {
      const TensorInfo &info = inputs_[i];
      Tensor t = std::move(inputs[i]);
      check(t.valid(), "input '" + info.name + "' is missing");
      bool floatDecl = info.dtype == DType::Float32 || info.dtype == DType::Float16;
      bool floatGiven = t.dtype() == DType::Float32 || t.dtype() == DType::Float16;
      check(floatDecl ? floatGiven : t.dtype() == info.dtype,
            "input '" + info.name + "' has dtype " + std::string(dtypeName(t.dtype())) +
                ", the model wants " + std::string(dtypeName(info.dtype)));
      check(!info.hasShape || t.rank() == static_cast<int64_t>(info.dims.size()),
            "input '" + info.name + "' has shape " + shapeString(t.shape()) +
                ", the model wants " + dimsString(info.dims));
      for (size_t d = 0; d < info.dims.size() && info.hasShape; ++d)
        check(info.dims[d].value < 0 || info.dims[d].value == t.shape()[d],
              "input '" + info.name + "' has shape " + shapeString(t.shape()) +
                  ", the model wants " + dimsString(info.dims));
      if (t.dtype() == DType::Float16) {
        Tensor f = ctx.allocate(DType::Float32, t.shape());
        for (int64_t e = 0; e < t.numElements(); ++e)
          f.data<float>()[e] = halfToFloat(t.data<uint16_t>()[e]);
        t = std::move(f);
      } else if (opts_.numerics == Numerics::FP16 && isFloat(t)) {
        t = roundedToHalf(ctx, std::move(t));
      }
      // Only the inf/nan check reads these flags: scanning every input (the
      // whole KV cache) on each run would cost more than a decode step's
      // non-MatMul work.
      nonFinite_[inputIds_[i]] =
          (opts_.numerics == Numerics::FP16 || opts_.checkFinite) && hasNonFinite(t);
      values_[inputIds_[i]] = std::move(t);
    }
    std::chrono::steady_clock::time_point runStart;
    if (profile_) {
      std::string sig;
      for (size_t i = 0; i < inputIds_.size() && i < 2; ++i)
        sig += (i ? " " : "") + names_[inputIds_[i]] + shapeString(values_[inputIds_[i]].shape());
      currentProfile_ = &profiles_[sig];
      runStart = std::chrono::steady_clock::now();
    }
    for (auto &node : plan_)
      runNode(ctx, node);
    if (currentProfile_) {
      currentProfile_->seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - runStart).count();
      ++currentProfile_->runs;
      currentProfile_ = nullptr;
    }
    outputs.clear();
    for (int v : outputIds_)
      outputs.push_back(values_[v]);
    clear();
    return {};
  } catch (const KernelError &e) {
    clear();
    return makeError(e.what());
  } catch (const std::bad_alloc &) {
    clear();
    return makeError("host device: out of memory");
  } catch (const std::exception &e) {
    clear();
    return makeError(std::string("host device: ") + e.what());
  }
}

} // namespace

Result<std::unique_ptr<Device>> loadHostDevice(const std::string &modelPath,
                                               const HostOptions &options) {
  try {
    auto device = std::make_unique<HostDevice>(options);
    device->load(modelPath);
    return std::unique_ptr<Device>(std::move(device));
  } catch (const KernelError &e) {
    return makeError(modelPath + ": " + e.what());
  } catch (const std::bad_alloc &) {
    return makeError(modelPath + ": out of memory while loading");
  } catch (const std::exception &e) {
    return makeError(modelPath + ": " + e.what());
  }
}

} // namespace qeff::runtime::host
