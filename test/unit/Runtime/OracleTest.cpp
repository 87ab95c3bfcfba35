//===- OracleTest.cpp - Host device vs ONNX Runtime on the same models -----===//
//
// Builds models exercising most kernels together (an attention block with a
// causal mask from positions, RMSNorm and LayerNorm, a KV write-back, index
// ops), runs them on the host device and in ONNX Runtime through the oracle
// (test/oracle/run-onnx.js) on the same inputs, and compares every output.
// Fails (never skips) when node or onnxruntime-node is missing: the
// oracle is part of the test setup (scripts/setup-oracle.sh).
//
//===----------------------------------------------------------------------===//

#include "test/unit/Runtime/ModelBuilder.h"

#include "frontend/HF/SafeTensors.h"

#include <gmock/gmock.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

using namespace qeff::runtime;
using namespace qeff::runtime::test;

namespace {

#ifdef QEFF_NODE
bool oracleAvailable() {
  std::string dir = std::filesystem::path(QEFF_ORACLE_RUN).parent_path().string();
  return std::filesystem::exists(dir + "/node_modules/onnxruntime-node");
}
#endif

std::vector<float> randomFloats(size_t n, uint32_t seed, float scale = 1.f) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 1;
  for (auto &x : v) {
    s = s * 1664525u + 1013904223u;
    x = scale * ((s >> 8) / float(1 << 24) * 2.f - 1.f);
  }
  return v;
}

qeff::hf::DType stDType(DType d) {
  switch (d) {
  case DType::Float32: return qeff::hf::DType::F32;
  case DType::Float16: return qeff::hf::DType::F16;
  case DType::Int64: return qeff::hf::DType::I64;
  case DType::Int32: return qeff::hf::DType::I32;
  case DType::Bool: return qeff::hf::DType::Bool;
  }
  return qeff::hf::DType::F32;
}

/// Runs `model` in ORT and on the host with `inputs`, comparing all outputs.
void compareWithOracle(const ModelBuilder &model, const TensorMap &inputs, float tol = 1e-4f) {
#ifndef QEFF_NODE
  FAIL() << "node not found at configure time: run scripts/setup-oracle.sh";
#else
  ASSERT_TRUE(oracleAvailable())
      << "onnxruntime-node not installed: run scripts/setup-oracle.sh";
  TempDir dir;
  std::string modelPath = model.save(dir);
  std::vector<qeff::hf::TensorToWrite> tensors;
  for (const auto &[name, t] : inputs)
    tensors.push_back({name, stDType(t.dtype()), t.shape(), t.rawData(), t.byteSize()});
  ASSERT_TRUE(qeff::hf::writeSafeTensors(dir.file("in.safetensors"), tensors).ok());
  std::string cmd = std::string("'") + QEFF_NODE + "' '" + QEFF_ORACLE_RUN + "' --model '" +
                    modelPath + "' --inputs '" + dir.file("in.safetensors") + "' --outputs '" +
                    dir.file("out.safetensors") + "' 2> '" + dir.file("err.txt") + "'";
  int rc = std::system(cmd.c_str());
  std::ifstream err(dir.file("err.txt"));
  std::stringstream errText;
  errText << err.rdbuf();
  ASSERT_EQ(rc, 0) << "oracle failed: " << errText.str();
  auto ort = qeff::hf::SafeTensorsFile::open(dir.file("out.safetensors"));
  ASSERT_TRUE(ort.ok()) << ort.status();

  auto s = Session::open(modelPath, DeviceKind::Host);
  ASSERT_TRUE(s.ok()) << s.error();
  Status st = s->run(inputs);
  ASSERT_TRUE(st.ok()) << st.error();
  for (const auto &info : s->outputInfos()) {
    auto view = (*ort)->get(info.name);
    ASSERT_TRUE(view.ok()) << view.status();
    auto host = s->getOutput(info.name);
    ASSERT_TRUE(host.ok()) << host.error();
    EXPECT_EQ(host->shape(), Shape(view->shape().begin(), view->shape().end())) << info.name;
    // Decode the oracle's bytes through a runtime tensor of the same dtype.
    Tensor ref = Tensor::empty(host->dtype(), host->shape());
    ASSERT_EQ(ref.byteSize(), view->byteSize()) << info.name;
    std::memcpy(ref.rawData(), view->data, view->byteSize());
    auto a = host->toFloatVector(), b = ref.toFloatVector();
    size_t bad = 0;
    for (size_t i = 0; i < a.size(); ++i)
      if (!(std::fabs(a[i] - b[i]) <= tol * (1.f + std::fabs(b[i]))) && bad++ < 5)
        ADD_FAILURE() << info.name << "[" << i << "]: host " << a[i] << ", ORT " << b[i];
    EXPECT_EQ(bad, 0u) << info.name;
  }
#endif
}

TEST(Oracle, AttentionBlockMatchesOnnxRuntime) {
  // x [1, S, 8] -> RMSNorm -> q, k, v (2 heads of 4) -> causal attention with
  // a mask computed from position_ids -> o-proj -> LayerNorm -> gelu(erf).
  const int S = 5, H = 8;
  ModelBuilder b;
  b.input("x", F32, {"1", "seq_len", "8"});
  b.input("position_ids", I64, {"1", "seq_len"});
  b.output("y", F32, {"1", "seq_len", "8"});
  b.output("probs", F32, {"1", "2", "seq_len", "seq_len"});
  for (auto [name, seed] : {std::pair<const char *, int>{"Wq", 1}, {"Wk", 2}, {"Wv", 3}, {"Wo", 4}})
    b.initF32(name, {H, H}, randomFloats(H * H, seed, 0.5f));
  b.initF32("g", {H}, randomFloats(H, 5));
  b.initF32("two", {}, {2.f});
  b.initF32("eps", {}, {1e-6f});
  b.initF32("scale", {}, {2.f}); // sqrt(head_dim)
  b.initF32("neg", {}, {-3.4028e38f});
  b.initF32("half", {}, {0.5f});
  b.initF32("one", {}, {1.f});
  b.initF32("rsqrt2", {}, {0.70710678f});
  b.initI64("heads", {4}, {0, 0, 2, 4});
  b.initI64("back", {3}, {0, 0, 8});
  b.initI64("ax1", {1}, {1});
  b.initI64("ax2", {1}, {2});
  b.node("Pow", {"x", "two"}, {"x2"});
  attrs(b.node("ReduceMean", {"x2"}, {"ms"}), "axes", {-1});
  b.node("Add", {"ms", "eps"}, {"mse"});
  b.node("Sqrt", {"mse"}, {"rms"});
  b.node("Reciprocal", {"rms"}, {"irms"});
  b.node("Mul", {"x", "irms"}, {"xn0"});
  b.node("Mul", {"xn0", "g"}, {"xn"});
  for (const char *p : {"q", "k", "v"}) {
    std::string w = std::string("W") + p;
    b.node("MatMul", {"xn", w}, {std::string(p) + "0"});
    b.node("Reshape", {std::string(p) + "0", "heads"}, {std::string(p) + "1"});
    attrs(b.node("Transpose", {std::string(p) + "1"}, {std::string(p) + "h"}), "perm", {0, 2, 1, 3});
  }
  attrs(b.node("Transpose", {"kh"}, {"kt"}), "perm", {0, 1, 3, 2});
  b.node("MatMul", {"qh", "kt"}, {"s0"});
  b.node("Div", {"s0", "scale"}, {"s"});
  // mask[i][j] = pos[j] <= pos[i]
  b.node("Unsqueeze", {"position_ids", "ax2"}, {"pq"}); // [1, S, 1]
  b.node("Unsqueeze", {"position_ids", "ax1"}, {"pk"}); // [1, 1, S]
  b.node("LessOrEqual", {"pk", "pq"}, {"vis"});           // [1, S, S]
  b.node("Unsqueeze", {"vis", "ax1"}, {"vis4"});
  b.node("Where", {"vis4", "s", "neg"}, {"sm"});
  attr(b.node("Softmax", {"sm"}, {"probs"}), "axis", -1);
  b.node("MatMul", {"probs", "vh"}, {"a0"});
  attrs(b.node("Transpose", {"a0"}, {"a1"}), "perm", {0, 2, 1, 3});
  b.node("Reshape", {"a1", "back"}, {"a2"});
  b.node("MatMul", {"a2", "Wo"}, {"o"});
  b.node("Add", {"o", "x"}, {"r"});
  attrF(b.node("LayerNormalization", {"r", "g"}, {"ln"}), "epsilon", 1e-5f);
  b.node("Mul", {"ln", "rsqrt2"}, {"e0"});
  b.node("Erf", {"e0"}, {"e1"});
  b.node("Add", {"e1", "one"}, {"e2"});
  b.node("Mul", {"ln", "e2"}, {"e3"});
  b.node("Mul", {"e3", "half"}, {"y"});
  compareWithOracle(b, {{"x", Tensor::fromFloat({1, S, H}, randomFloats(S * H, 7))},
                        {"position_ids", Tensor::fromInt64({1, S}, {0, 1, 2, 3, 4})}});
}

TEST(Oracle, IndexAndShapeOpsMatchOnnxRuntime) {
  ModelBuilder b;
  b.input("cache", F32, {"1", "2", "6", "3"});
  b.input("upd", F32, {"1", "2", "2", "3"});
  b.input("pos", I64, {"1", "2"});
  b.input("ids", I64, {"2", "3"});
  b.output("cache_out", F32, {"1", "2", "6", "3"});
  b.output("gathered", F32, {"2", "3", "3"});
  b.output("top_vals", F32, {"2", "2"});
  b.output("top_idx", I64, {"2", "2"});
  b.output("amax", I64, {"2"});
  b.output("csum", F32, {"2", "3"});
  b.output("sliced", F32, {"1", "2", "3", "3"});
  b.output("expanded", F32, {"2", "2", "3"});
  b.output("ge", F32, {"2", "3"});
  b.output("tri", F32, {"6", "3"});
  b.output("cast", I32, {"2", "3"});
  b.initF32("E", {7, 3}, randomFloats(21, 11));
  b.initI64("zero", {}, {0});
  b.initI64("ax13", {2}, {1, 3});
  b.initI64("k2", {1}, {2});
  b.initI64("axm1", {}, {-1});
  b.initI64("s0", {1}, {-1});
  b.initI64("e0", {1}, {-7});
  b.initI64("a0", {1}, {2});
  b.initI64("st", {1}, {-2});
  b.initI64("eshape", {3}, {2, 1, 3});
  b.initI64("flat", {2}, {-1, 3});
  // KV write-back: idx[b, h, s] = (0, h, pos[s]) built from Range/Expand.
  b.node("Unsqueeze", {"pos", "ax13"}, {"p4"}); // [1, 1, 2, 1]
  b.initI64("h01", {1, 2, 1, 1}, {0, 1});
  b.initI64("ishape", {4}, {1, 2, 2, 1});
  b.node("Expand", {"p4", "ishape"}, {"pe"});
  b.node("Expand", {"h01", "ishape"}, {"he"});
  b.node("Mul", {"pe", "zero"}, {"ze"});
  attr(b.node("Concat", {"ze", "he", "pe"}, {"idx"}), "axis", -1);
  b.node("ScatterND", {"cache", "idx", "upd"}, {"cache_out"});
  b.node("Gather", {"E", "ids"}, {"gathered"});
  b.initI64("axm1v", {1}, {-1});
  b.node("ReduceSum", {"gathered", "axm1v"}, {"rs"});
  b.node("Reshape", {"rs", "flat"}, {"rs2"});
  b.node("TopK", {"rs2", "k2"}, {"top_vals", "top_idx"});
  {
    auto &am = b.node("ArgMax", {"rs2"}, {"amax"});
    attr(am, "keepdims", 0);
    attr(am, "axis", -1);
  }
  b.node("CumSum", {"rs2", "axm1"}, {"csum"});
  b.node("Slice", {"cache_out", "s0", "e0", "a0", "st"}, {"sliced"});
  b.node("Slice", {"rs2", "zero1", "one1", "zero1"}, {"row"});
  b.initI64("zero1", {1}, {0});
  b.initI64("one1", {1}, {1});
  b.node("Expand", {"row", "eshape"}, {"expanded"});
  b.node("Abs", {"rs2"}, {"absv"});
  b.node("Cast", {"ids", }, {"idsf"});
  attr(*b.graph()->mutable_node(b.graph()->node_size() - 1), "to", F32);
  attr(b.node("GatherElements", {"rs2", "ids_mod"}, {"ge"}), "axis", 1);
  b.initI64("three", {}, {3});
  b.node("Mod", {"ids", "three"}, {"ids_mod"});
  b.node("Reshape", {"cache_out", "flat"}, {"cflat0"});
  b.node("Slice", {"cflat0", "zero1", "six1", "zero1"}, {"cflat"});
  b.initI64("six1", {1}, {6});
  b.node("Trilu", {"cflat"}, {"tri"});
  b.node("Mul", {"idsf", "absv"}, {"prodv"});
  b.node("Cast", {"prodv"}, {"cast"});
  attr(*b.graph()->mutable_node(b.graph()->node_size() - 1), "to", I32);
  // ONNX wants nodes topologically sorted; ours sorts itself, ORT does not.
  onnx::GraphProto sorted = *b.graph();
  sorted.clear_node();
  std::set<std::string> avail;
  for (auto &i : b.graph()->input()) avail.insert(i.name());
  for (auto &i : b.graph()->initializer()) avail.insert(i.name());
  std::vector<bool> done(b.graph()->node_size(), false);
  for (bool progress = true; progress;) {
    progress = false;
    for (int i = 0; i < b.graph()->node_size(); ++i) {
      if (done[i]) continue;
      bool ready = true;
      for (auto &in : b.graph()->node(i).input()) ready &= in.empty() || avail.count(in);
      if (!ready) continue;
      *sorted.add_node() = b.graph()->node(i);
      for (auto &o : b.graph()->node(i).output()) avail.insert(o);
      done[i] = progress = true;
    }
  }
  *b.graph() = sorted;
  compareWithOracle(b, {{"cache", Tensor::fromFloat({1, 2, 6, 3}, randomFloats(36, 21))},
                        {"upd", Tensor::fromFloat({1, 2, 2, 3}, randomFloats(12, 22))},
                        {"pos", Tensor::fromInt64({1, 2}, {4, -1})},
                        {"ids", Tensor::fromInt64({2, 3}, {1, 6, 3, 0, 2, 5})}});
}

} // namespace
