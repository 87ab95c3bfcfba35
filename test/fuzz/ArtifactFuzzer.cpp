//===- ArtifactFuzzer.cpp - model.onnx (+ specializations) into the host ---===//
//
// Input: model.onnx bytes, optionally "\n----\n" and a specializations.json.
// The artifact is opened on the host device (parse, initializers, kernels,
// plan, specializations checked against the model); a model that opens runs
// on zeros of every declared input that is not retained state: once per
// specialization (at most two, symbols up to 64), or once with every
// unknown dim 1 when it has none. Two runs in a row also carry retained
// state from one to the next, as prefill then decode do.
//
// Seeds: test/fuzz/corpus/ArtifactFuzzer (tiny-llama-* are whole qeff
// artifacts, see make-artifact-seed.py). Byte mutations of a serialized
// model rarely leave one that parses, so a custom mutator (below) edits half
// of the inputs whose model parses as a ModelProto: a field of an
// initializer, node, graph input or the specializations, then serializes
// again (libprotobuf-mutator would do this generically; Debian 12 does not
// package it). With QEFF_FUZZ_STATS set, prints at
// exit how many inputs opened and ran (replay a corpus with `-runs=0` to see
// how deep it reaches).

#include "qeff/runtime/Session.h"
#include "test/fuzz/FuzzUtil.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

namespace {
struct Reach {
  size_t inputs = 0, opened = 0, ran = 0;
  ~Reach() {
    if (std::getenv("QEFF_FUZZ_STATS"))
      std::fprintf(stderr, "ArtifactFuzzer reach: %zu inputs, %zu opened, %zu ran\n",
                   inputs, opened, ran);
  }
} reach;

constexpr int64_t kMaxSymbol = 64;

/// Values at the edges of what sizes and indices accept.
int64_t interesting(std::mt19937_64 &rng) {
  static const int64_t values[] = {0,          1,         -1,         2,
                                   3,          4,         7,         16,
                                   64,         255,       65535,     1LL << 31,
                                   (1LL << 31) - 1,       1LL << 32, 1LL << 62,
                                   INT64_MAX,  INT64_MIN, -2};
  return rng() % 4 == 0 ? static_cast<int64_t>(rng() % 1024) - 512
                        : values[rng() % std::size(values)];
}

const char *const kOps[] = {
    "Add", "And", "Cast", "Clip", "Concat", "Constant", "ConstantOfShape",
    "CumSum", "Div", "Equal", "Expand", "Flatten", "Gather", "GatherElements",
    "GatherND", "Gemm", "Greater", "LayerNormalization", "Less", "LogSoftmax",
    "MatMul", "Max", "Min", "Mod", "Mul", "Pow", "Range", "ReduceMax",
    "ReduceMean", "ReduceSum", "Reshape", "ScatterElements", "ScatterND",
    "Shape", "Slice", "Softmax", "Split", "Squeeze", "Sub", "TopK",
    "Transpose", "Trilu", "Unsqueeze", "Where", "Relu", "Sigmoid", "Tanh",
    "Sqrt", "Exp", "Neg", "Erf", "Not", "Identity", "Reciprocal", "Sin", "Cos"};

/// Every value name of the graph (inputs, initializers, node outputs).
std::vector<std::string> valueNames(const onnx::GraphProto &g) {
  std::vector<std::string> names;
  for (const auto &v : g.input())
    names.push_back(v.name());
  for (const auto &t : g.initializer())
    names.push_back(t.name());
  for (const auto &n : g.node())
    for (const auto &o : n.output())
      names.push_back(o);
  return names;
}

/// One structural edit of `model` (false: nothing to edit).
bool mutateModel(onnx::ModelProto &model, std::mt19937_64 &rng) {
  onnx::GraphProto &g = *model.mutable_graph();
  switch (rng() % 6) {
  case 0: { // an initializer's dims, type or data
    if (g.initializer_size() == 0)
      return false;
    onnx::TensorProto &t = *g.mutable_initializer(rng() % g.initializer_size());
    switch (rng() % 4) {
    case 0:
      if (t.dims_size() == 0)
        t.add_dims(interesting(rng));
      else
        t.set_dims(rng() % t.dims_size(), interesting(rng));
      break;
    case 1:
      t.set_data_type(static_cast<int32_t>(rng() % 17));
      break;
    case 2:
      t.mutable_raw_data()->resize(rng() % (t.raw_data().size() + 9));
      break;
    default: { // external data with hostile fields
      static const char *const keys[] = {"location", "offset", "length", "checksum"};
      static const char *const values[] = {
          "model.onnx.data", "../x", "/etc/passwd", "model.onnx", "",
          "0", "8", "-1", "18446744073709551615", "9223372036854775807", "1e3"};
      t.set_data_location(onnx::TensorProto::EXTERNAL);
      auto *e = t.add_external_data();
      e->set_key(keys[rng() % std::size(keys)]);
      e->set_value(values[rng() % std::size(values)]);
      break;
    }
    }
    return true;
  }
  case 1:
  case 2: { // a node's type, an attribute or an input
    if (g.node_size() == 0)
      return false;
    onnx::NodeProto &n = *g.mutable_node(rng() % g.node_size());
    switch (rng() % 4) {
    case 0:
      n.set_op_type(kOps[rng() % std::size(kOps)]);
      break;
    case 1: {
      if (n.attribute_size() == 0)
        return false;
      onnx::AttributeProto &a = *n.mutable_attribute(rng() % n.attribute_size());
      if (a.ints_size())
        a.set_ints(rng() % a.ints_size(), interesting(rng));
      else if (a.has_t())
        a.mutable_t()->mutable_raw_data()->resize(rng() % 17);
      else if (a.type() == onnx::AttributeProto::FLOAT) {
        uint32_t bits = static_cast<uint32_t>(rng());
        float f;
        std::memcpy(&f, &bits, sizeof f);
        a.set_f(f);
      }
      else
        a.set_i(interesting(rng));
      break;
    }
    case 2: {
      std::vector<std::string> names = valueNames(g);
      if (n.input_size() == 0 || names.empty())
        return false;
      n.set_input(rng() % n.input_size(), names[rng() % names.size()]);
      break;
    }
    default:
      if (n.input_size() == 0)
        return false;
      n.mutable_input()->RemoveLast();
      break;
    }
    return true;
  }
  case 3: { // a graph input's dim
    if (g.input_size() == 0)
      return false;
    auto *shape = g.mutable_input(rng() % g.input_size())
                      ->mutable_type()
                      ->mutable_tensor_type()
                      ->mutable_shape();
    auto *d = shape->dim_size() ? shape->mutable_dim(rng() % shape->dim_size())
                                : shape->add_dim();
    if (rng() % 2)
      d->set_dim_value(interesting(rng));
    else
      d->set_dim_param(rng() % 2 ? "seq_len" : "ctx_len");
    return true;
  }
  case 4: { // a node removed or duplicated
    if (g.node_size() == 0)
      return false;
    int i = rng() % g.node_size();
    if (rng() % 2) {
      g.mutable_node()->SwapElements(i, g.node_size() - 1);
      g.mutable_node()->RemoveLast();
    } else {
      *g.add_node() = g.node(i);
    }
    return true;
  }
  default: { // a value made a graph output
    std::vector<std::string> names = valueNames(g);
    if (names.empty())
      return false;
    g.add_output()->set_name(names[rng() % names.size()]);
    return true;
  }
  }
}
} // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned seed) {
  std::mt19937_64 rng(seed);
  auto [model, specs] = qeff::fuzz::splitTwo(data, size);
  onnx::ModelProto proto;
  if (rng() % 2 == 0 || model.size() >= INT_MAX ||
      !proto.ParseFromArray(model.data(), static_cast<int>(model.size())))
    return LLVMFuzzerMutate(data, size, maxSize);
  std::string out;
  if (!specs.empty() && rng() % 3 == 0) {
    // The specializations only, the model kept.
    std::string s(specs);
    s.resize(specs.size() + 64);
    s.resize(LLVMFuzzerMutate(reinterpret_cast<uint8_t *>(s.data()), specs.size(),
                              s.size()));
    out = std::string(model) + "\n----\n" + s;
  } else {
    if (!mutateModel(proto, rng))
      return LLVMFuzzerMutate(data, size, maxSize);
    out = proto.SerializeAsString();
    if (!specs.empty())
      out += "\n----\n" + std::string(specs);
  }
  if (out.size() > maxSize)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace qeff::runtime;
  ++reach.inputs;
  auto [model, specs] = qeff::fuzz::splitTwo(data, size);
  std::string dir = qeff::fuzz::scratchDir() + "/artifact";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  qeff::fuzz::writeScratch("artifact/model.onnx", model);
  if (!specs.empty())
    qeff::fuzz::writeScratch("artifact/specializations.json", specs);
  SessionOptions options;
  options.numThreads = 1;
  // A model may ask for any size; 64 MiB per tensor keeps the target inside
  // -malloc_limit_mb / -rss_limit_mb, so that a finding is a real one.
  options.maxTensorBytes = uint64_t(64) << 20;
  auto session = Session::open(dir, DeviceKind::Host, options);
  if (!session)
    return 0;
  ++reach.opened;

  std::vector<const Specialization *> runs(session->specializations().size());
  std::transform(session->specializations().begin(),
                 session->specializations().end(), runs.begin(),
                 [](const Specialization &s) { return &s; });
  if (runs.empty())
    runs.push_back(nullptr);
  runs.resize(std::min<size_t>(runs.size(), 2));
  const auto &state = session->stateNames();
  bool ranOne = false;
  for (const Specialization *spec : runs) {
    TensorMap inputs;
    bool small = true; // every symbol <= kMaxSymbol, every input <= 1 Mi elements
    for (const TensorInfo &info : session->inputInfos()) {
      if (std::find(state.begin(), state.end(), info.name) != state.end())
        continue;
      Shape shape;
      int64_t elements = 1;
      for (const Dim &d : info.dims) {
        int64_t v = d.value;
        if (v < 0 && spec && !d.symbol.empty()) {
          auto it = spec->symbols.find(d.symbol);
          v = it == spec->symbols.end() ? -1 : it->second;
        }
        if (v < 0)
          v = 1;
        small &= v <= kMaxSymbol && (v == 0 || elements <= (int64_t(1) << 20) / v);
        if (!small)
          break;
        elements *= v;
        shape.push_back(v);
      }
      if (!small)
        break;
      inputs[info.name] = Tensor::zeros(info.dtype, shape);
    }
    if (small && session->run(inputs).ok())
      ranOne = true;
  }
  reach.ran += ranOne;
  return 0;
}
