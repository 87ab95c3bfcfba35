//===- ModelBuilder.h - Tiny ONNX model builder for runtime tests -*- C++ -*-===//

#ifndef QEFF_TEST_UNIT_RUNTIME_MODELBUILDER_H
#define QEFF_TEST_UNIT_RUNTIME_MODELBUILDER_H

#include "qeff/runtime/Session.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace qeff::runtime::test {

/// A fresh temporary directory, removed at destruction.
class TempDir {
public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "qeff-rt-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string &path() const { return path_; }
  std::string file(const std::string &name) const { return path_ + "/" + name; }
  void write(const std::string &name, const std::string &text) const {
    std::ofstream(file(name), std::ios::binary) << text;
  }

private:
  std::string path_;
};

constexpr int F32 = onnx::TensorProto::FLOAT;
constexpr int F16 = onnx::TensorProto::FLOAT16;
constexpr int I64 = onnx::TensorProto::INT64;
constexpr int I32 = onnx::TensorProto::INT32;
constexpr int BOOL = onnx::TensorProto::BOOL;

/// Builds a model graph node by node. Dims are strings: digits for a fixed
/// dim, anything else a symbol.
class ModelBuilder {
public:
  explicit ModelBuilder(int opset = 17) {
    model.set_ir_version(8);
    model.set_producer_name("qeff-runtime-test");
    auto *op = model.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    graph()->set_name("test");
  }
  onnx::GraphProto *graph() { return model.mutable_graph(); }

  static void setType(onnx::ValueInfoProto *v, const std::string &name, int type,
                      const std::vector<std::string> &dims) {
    v->set_name(name);
    auto *tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    auto *shape = tt->mutable_shape();
    for (const auto &d : dims) {
      auto *dim = shape->add_dim();
      if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0])))
        dim->set_dim_value(std::stoll(d));
      else
        dim->set_dim_param(d);
    }
  }
  ModelBuilder &input(const std::string &name, int type, const std::vector<std::string> &dims) {
    setType(graph()->add_input(), name, type, dims);
    return *this;
  }
  ModelBuilder &output(const std::string &name, int type, const std::vector<std::string> &dims) {
    setType(graph()->add_output(), name, type, dims);
    return *this;
  }
  onnx::NodeProto &node(const std::string &op, const std::vector<std::string> &inputs,
                        const std::vector<std::string> &outputs, const std::string &name = "") {
    auto *n = graph()->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? op + "_" + std::to_string(graph()->node_size()) : name);
    for (const auto &i : inputs)
      n->add_input(i);
    for (const auto &o : outputs)
      n->add_output(o);
    return *n;
  }
  static onnx::TensorProto tensorF32(const std::string &name, const std::vector<int64_t> &dims,
                                     const std::vector<float> &values) {
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(F32);
    for (auto d : dims)
      t.add_dims(d);
    for (float v : values)
      t.add_float_data(v);
    return t;
  }
  static onnx::TensorProto tensorI64(const std::string &name, const std::vector<int64_t> &dims,
                                     const std::vector<int64_t> &values) {
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(I64);
    for (auto d : dims)
      t.add_dims(d);
    for (auto v : values)
      t.add_int64_data(v);
    return t;
  }
  ModelBuilder &initF32(const std::string &name, const std::vector<int64_t> &dims,
                        const std::vector<float> &values) {
    *graph()->add_initializer() = tensorF32(name, dims, values);
    return *this;
  }
  ModelBuilder &initI64(const std::string &name, const std::vector<int64_t> &dims,
                        const std::vector<int64_t> &values) {
    *graph()->add_initializer() = tensorI64(name, dims, values);
    return *this;
  }
  std::string save(const TempDir &dir, const std::string &name = "model.onnx") const {
    std::string path = dir.file(name);
    std::ofstream f(path, std::ios::binary);
    model.SerializeToOstream(&f);
    return path;
  }

  onnx::ModelProto model;
};

inline void attr(onnx::NodeProto &n, const std::string &name, int64_t v) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
inline void attrF(onnx::NodeProto &n, const std::string &name, float v) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}
inline void attrs(onnx::NodeProto &n, const std::string &name, const std::vector<int64_t> &v) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (auto x : v)
    a->add_ints(x);
}
inline void attrS(onnx::NodeProto &n, const std::string &name, const std::string &v) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}
inline void attrT(onnx::NodeProto &n, const std::string &name, const onnx::TensorProto &t) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = t;
}

/// Runs a model once and returns its outputs (empty on failure, which is
/// reported as a test failure).
inline TensorMap runModel(const ModelBuilder &b, const TensorMap &inputs,
                          const SessionOptions &options = {}) {
  TempDir dir;
  auto s = Session::open(b.save(dir), DeviceKind::Host, options);
  if (!s.ok()) {
    ADD_FAILURE() << s.error();
    return {};
  }
  Status st = s->run(inputs);
  EXPECT_TRUE(st.ok()) << st.error();
  return s->outputs();
}

inline std::vector<float> floats(const Tensor &t) { return t.toFloatVector(); }

/// n floats uniform in [-1, 1), the same for the same seed.
inline std::vector<float> randomFloats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (auto &x : v)
    x = d(rng);
  return v;
}
inline std::vector<int64_t> ints(const Tensor &t) { return t.toInt64Vector(); }

} // namespace qeff::runtime::test

#endif // QEFF_TEST_UNIT_RUNTIME_MODELBUILDER_H
