//===- MxReportTest.cpp - what -mxfp6-matmul will compress ----------------===//
//
// lowering/Driver/MxReport on synthetic models: weights read as the second
// operand of MatMul/Gemm (directly, through Cast, inside a model-local
// function) are compressed with 25 bytes per block of 32 along K; a
// weight-first MatMul, an embedding, a tensor shared with a Gather and one
// read along two K axes stay fp16, the large weight-first one with a warning; measured errors.
//
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

#include "lowering/Driver/MxReport.h"
#include "runtime/host/numerics/MxFormat.h"

#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"

#include <cmath>

using namespace qeff::runtime::test;
using mlir::qeff::MxReport;
using mlir::qeff::MxTensorReport;

namespace {

onnx::TensorProto rawF32(const std::string &name, const std::vector<int64_t> &dims,
                         unsigned seed) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  std::vector<float> v = randomFloats(size_t(n), seed);
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(F32);
  for (int64_t d : dims)
    t.add_dims(d);
  t.set_raw_data(std::string(reinterpret_cast<const char *>(v.data()), v.size() * 4));
  return t;
}

const MxTensorReport &find(const MxReport &r, const std::string &name) {
  for (const auto &t : r.tensors)
    if (t.name == name)
      return t;
  static MxTensorReport none;
  ADD_FAILURE() << "no tensor " << name;
  return none;
}

} // namespace

TEST(MxReport, WhatTheCompilerCompresses) {
  ModelBuilder b;
  b.input("x", F32, {"4", "256"}).input("xt", F32, {"512", "4"}).input("ids", I64, {"4"});
  b.output("a", F32, {"4", "64"}).output("c", F32, {"4", "64"}).output("f", F32, {"1024", "4"});
  b.output("e", F32, {"4", "16"}).output("g", F32, {"4", "16"}).output("h", F32, {"4", "64"});
  auto *g = b.graph();
  *g->add_initializer() = rawF32("w_second", {256, 64}, 1);
  *g->add_initializer() = rawF32("w_gemm_t", {64, 256}, 2);
  *g->add_initializer() = rawF32("w_first", {1024, 512}, 3);
  *g->add_initializer() = rawF32("embed", {100, 16}, 4);
  *g->add_initializer() = rawF32("shared", {16, 16}, 5);
  *g->add_initializer() = rawF32("w_fn", {256, 64}, 6);
  *g->add_initializer() = rawF32("w_two", {16, 16}, 7);
  onnx::TensorProto half;
  half.set_name("w_half");
  half.set_data_type(F16);
  half.add_dims(256);
  half.add_dims(64);
  half.set_raw_data(std::string(256 * 64 * 2, '\0'));
  *g->add_initializer() = half;
  b.node("MatMul", {"x", "w_second"}, {"a"});
  attr(b.node("Gemm", {"x", "w_gemm_t"}, {"c"}), "transB", 1);
  b.node("MatMul", {"w_first", "xt"}, {"f"}, "/model.layers.0.experts/MatMul_0");
  b.node("Gather", {"embed", "ids"}, {"e"});
  b.node("Gather", {"shared", "ids"}, {"g0"});
  b.node("MatMul", {"g0", "shared"}, {"g"});
  // Read along both axes: as stored and through a Transpose.
  b.node("MatMul", {"g0", "w_two"}, {"t0"});
  attrs(b.node("Transpose", {"w_two"}, {"w_two_t"}), "perm", {1, 0});
  b.node("MatMul", {"g0", "w_two_t"}, {"t1"});
  attr(b.node("Cast", {"w_half"}, {"w_half32"}), "to", F32);
  b.node("MatMul", {"x", "w_half32"}, {"h0"});
  // A model-local function whose body multiplies by its second input.
  auto *fn = b.model.add_functions();
  fn->set_name("layer");
  fn->set_domain("qeff.layers");
  fn->add_input("in");
  fn->add_input("weight");
  fn->add_output("out");
  auto *body = fn->add_node();
  body->set_op_type("MatMul");
  body->add_input("in");
  body->add_input("weight");
  body->add_output("out");
  auto *opset = b.model.add_opset_import();
  opset->set_domain("qeff.layers");
  opset->set_version(1);
  auto &call = b.node("layer", {"x", "w_fn"}, {"h1"});
  call.set_domain("qeff.layers");
  b.node("Add", {"h0", "h1"}, {"h"});

  TempDir dir;
  std::string path = b.save(dir);
  mlir::MLIRContext context;
  MxReport r;
  ASSERT_TRUE(mlir::succeeded(mlir::qeff::mxCompressionReport(
      mlir::UnknownLoc::get(&context), path, /*measureErrors=*/true, r)));

  // 64 columns x 8 blocks of 32 along K = 256, 25 bytes each.
  for (const char *name : {"w_second", "w_gemm_t", "w_fn", "w_half"}) {
    const MxTensorReport &t = find(r, name);
    EXPECT_TRUE(t.compressed) << name << ": " << t.reason;
    EXPECT_EQ(t.deviceBytes, 64u * 8 * 25) << name;
    EXPECT_EQ(t.fp16Bytes, 256u * 64 * 2) << name;
  }
  const MxTensorReport &first = find(r, "w_first");
  EXPECT_FALSE(first.compressed);
  EXPECT_EQ(first.deviceBytes, 1024u * 512 * 2); // 1 MiB stays fp16
  EXPECT_NE(first.reason.find("first operand of MatMul"), std::string::npos) << first.reason;
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("'w_first' (1.00 MiB) stays fp16"), std::string::npos)
      << r.warnings[0];
  EXPECT_NE(find(r, "embed").reason.find("read by Gather"), std::string::npos);
  EXPECT_FALSE(find(r, "shared").compressed);
  EXPECT_EQ(find(r, "w_two").reason, "read as a MatMul weight along two different axes");
  EXPECT_EQ(r.compressedTensors, 4);
  EXPECT_EQ(r.compressedBytes, 4u * 64 * 8 * 25);
  EXPECT_EQ(r.uncompressedBytes, 1024u * 512 * 2 + 100 * 16 * 2 + 2 * 16 * 16 * 2);
  EXPECT_EQ(r.fp16Bytes, r.uncompressedBytes + 4u * 256 * 64 * 2);

  // Measured errors: what fake quantization along K does to the weight.
  const MxTensorReport &second = find(r, "w_second");
  std::vector<float> w = randomFloats(256 * 64, 1), q = w;
  qeff::runtime::mx::fakeQuantize(q.data(), 1, 256, 64, 32,
                                  qeff::runtime::mx::Element::FP6_E2M3,
                                  qeff::runtime::MxRounding::Even);
  double num = 0, den = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    num += (double(q[i]) - w[i]) * (double(q[i]) - w[i]);
    den += double(w[i]) * w[i];
  }
  EXPECT_DOUBLE_EQ(second.error, std::sqrt(num / den));
  EXPECT_GT(second.error, 0.005);
  EXPECT_LT(second.error, 0.1);
  EXPECT_EQ(find(r, "w_half").error, 0.0); // all zeros
  EXPECT_LT(first.error, 0); // not compressed: not measured

  // As --report-mx prints it: the warning, and the weight-first tensor's
  // uncompressed bytes with the reason.
  std::string printed;
  llvm::raw_string_ostream os(printed);
  mlir::qeff::printMxReport(r, /*compiledWithMxfp6=*/true, os);
  EXPECT_NE(printed.find("warning: 'w_first' (1.00 MiB) stays fp16"), std::string::npos)
      << printed;
  EXPECT_NE(printed.find("fp16      1048576 B  w_first  (first operand of MatMul"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("largest MXFP6 errors"), std::string::npos) << printed;

  nlohmann::ordered_json j = mlir::qeff::mxReportJson(r);
  EXPECT_EQ(j["compressed_tensors"], 4);
  EXPECT_EQ(j["uncompressed_bytes"], r.uncompressedBytes);
  EXPECT_EQ(j["tensors"].size(), r.tensors.size());
}
