//===- HostDevice.cpp - Loading an ONNX model for the CPU -----------------===//
//
// Parses model.onnx, loads initializers (external data mapped, see
// ExternalData.h) and Constant nodes, inlines model-local functions and
// creates one kernel per node, collecting every unsupported node before
// failing. The plan is built in HostPlan.cpp, run in HostExecute.cpp.
//
//===----------------------------------------------------------------------===//

#include "runtime/host/HostDeviceImpl.h"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

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

Tensor widenHalf(const Context &ctx, const Tensor &t) {
  Tensor r = Tensor::empty(DType::Float32, t.shape());
  const uint16_t *p = t.data<uint16_t>();
  float *q = r.data<float>();
  bool bf16 = t.dtype() == DType::BFloat16;
  parallelFor(ctx, t.numElements(), 1 << 18, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      q[i] = bf16 ? bfloat16ToFloat(p[i]) : halfToFloat(p[i]);
  });
  return r;
}

namespace {

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
    QEFF_CHECK(depth < 64, nodeLabel(node.name(), node.op_type()) +
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
  QEFF_CHECK(v.type().has_tensor_type(), "graph value '" + v.name() + "' is not a tensor");
  const auto &tt = v.type().tensor_type();
  try {
    info.dtype = dtypeFromOnnx(tt.elem_type());
  } catch (const KernelError &e) {
    fail("graph value '" + v.name() + "': " + e.what());
  }
  QEFF_CHECK(info.dtype != DType::BFloat16,
             "graph value '" + v.name() +
                 "' is BFLOAT16: the host device takes bfloat16 only as initializers (weights)");
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

} // namespace

/// The inputs every node of an op type must have (ONNX: the op's required
/// inputs, which the kernels read without checking), and at least one
/// output; checked before the node's kernel exists. Ops not listed take one.
static void checkArity(const onnx::NodeProto &n) {
  static const std::map<std::string, int, std::less<>> required = {
      {"Add", 2},           {"Sub", 2},       {"Mul", 2},
      {"Div", 2},           {"Pow", 2},       {"Mod", 2},
      {"Equal", 2},         {"Less", 2},      {"Greater", 2},
      {"LessOrEqual", 2},   {"GreaterOrEqual", 2},
      {"And", 2},           {"Or", 2},        {"Xor", 2},
      {"CumSum", 2},        {"Expand", 2},    {"Gather", 2},
      {"GatherElements", 2}, {"GatherND", 2}, {"Gemm", 2},
      {"LayerNormalization", 2}, {"MatMul", 2}, {"Reshape", 2},
      {"TopK", 2},          {"Where", 3},     {"Range", 3},
      {"ScatterElements", 3}, {"ScatterND", 3}, {"Slice", 3}};
  auto it = required.find(n.op_type());
  int need = it == required.end() ? 1 : it->second;
  QEFF_CHECK(n.input_size() >= need, std::to_string(n.input_size()) + " input(s); " + n.op_type() +
                                    " takes at least " + std::to_string(need));
  for (int i = 0; i < need; ++i)
    QEFF_CHECK(!n.input(i).empty(), "input " + std::to_string(i) + " of " + n.op_type() +
                                   " is required but has no name");
  QEFF_CHECK(n.output_size() >= 1, "no output");
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
  QEFF_CHECK(file->size() < static_cast<size_t>(INT_MAX) &&
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
    // Big f16 / bf16 weights stay 2 bytes until the plan knows their
    // readers (packWeights); small ones are widened now, so that scalar
    // constants look as they always did to the fusions. In fp16 emulation
    // bf16 ones are widened, to be rounded to fp16 below as f32 ones are.
    bool fp16 = opts_.numerics == Numerics::FP16;
    if ((t.dtype() == DType::BFloat16 && fp16) ||
        (isTwoByteFloat(t.dtype()) && t.numElements() < (int64_t(1) << 16)))
      t = widenHalf(Context{arena_.get(), 1}, t);
    if (constants_.size() <= static_cast<size_t>(id)) {
      constants_.resize(id + 1);
      isConst_.resize(id + 1, false);
    }
    if (fp16 && isFloat(t)) {
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
  // The fp32 node list names nodes: a name that matches none would leave the
  // node it meant in fp16 without a word.
  std::set<std::string> unmatched = opts_.fp32Nodes;
  for (size_t i = 0; i < nodes.size(); ++i) {
    onnx::NodeProto &n = nodes[i];
    if (n.name().empty())
      n.set_name(n.op_type() + "_" + std::to_string(i));
    if (!unmatched.empty()) {
      unmatched.erase(n.name());
      unmatched.erase(n.name().substr(n.name().rfind('/') + 1));
      if (n.output_size() > 0)
        unmatched.erase(n.output(0));
    }
    try {
      if (n.op_type() == "Constant" && (n.domain().empty() || n.domain() == "ai.onnx")) {
        QEFF_CHECK(n.output_size() == 1, "Constant needs one output");
        setConst(valueId(n.output(0)), constantFromNode(n));
        continue;
      }
      QEFF_CHECK(n.domain().empty() || n.domain() == "ai.onnx",
            "unsupported operator domain '" + n.domain() +
                "' (no model-local function of that name either)");
      auto it = registry.find(n.op_type());
      QEFF_CHECK(it != registry.end(), "unsupported operator " + n.op_type());
      checkArity(n);
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
  if (!unmatched.empty()) {
    std::string names;
    size_t shown = 0;
    for (const std::string &name : unmatched)
      if (shown++ < 8)
        names += (names.empty() ? "'" : ", '") + name.substr(0, 200) + "'";
    if (unmatched.size() > 8)
      names += ", ... (" + std::to_string(unmatched.size()) + " in all)";
    fail("the fp32 node list (node_precision.yaml) names " + names +
         ", which " + (unmatched.size() == 1 ? "is" : "are") +
         " neither a node nor a node's first output of the model");
  }
  size_t numValues = names_.size();
  constants_.resize(numValues);
  isConst_.resize(numValues, false);
  // Node values from here on (constant folding in the plan, then runs); the
  // initializers above are sized by the file they come from.
  arena_->setMaxBytes(opts_.maxTensorBytes);
  buildPlan(std::move(pending));
}

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
