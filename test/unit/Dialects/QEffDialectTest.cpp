//===- QEffDialectTest.cpp - C++ API tests of the qeff dialect ------------===//
//
// Part of qeff. What lit cannot reach: builders, helper methods and the
// numerical helpers ops expose to the lowering.
//
//===----------------------------------------------------------------------===//

#include "dialects/QEff/QEffOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mlir;
using namespace mlir::qeff;

namespace {

class QEffDialectTest : public ::testing::Test {
protected:
  QEffDialectTest() {
    context.loadDialect<QEffDialect, func::FuncDialect>();
  }

  /// Parses one `qeff.rotary` op applied to function arguments and returns
  /// its inverse frequencies.
  SmallVector<double> invFreqOf(StringRef attrs, int64_t headDim) {
    std::string src =
        "func.func @f(%x: tensor<1x1x1x" + std::to_string(headDim) +
        "xf32>, %p: tensor<1x1xi64>) -> tensor<1x1x1x" +
        std::to_string(headDim) + "xf32> {\n  %r = qeff.rotary %x, %p " +
        attrs.str() + " : (tensor<1x1x1x" + std::to_string(headDim) +
        "xf32>, tensor<1x1xi64>) -> tensor<1x1x1x" + std::to_string(headDim) +
        "xf32>\n  return %r : tensor<1x1x1x" + std::to_string(headDim) +
        "xf32>\n}\n";
    module = parseSourceString<ModuleOp>(src, &context);
    EXPECT_TRUE(module) << src;
    if (!module)
      return {};
    RotaryOp op;
    module->walk([&](RotaryOp r) { op = r; });
    return op.computeInvFreq();
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(QEffDialectTest, RotaryInvFreqPlain) {
  SmallVector<double> f = invFreqOf(
      "{style = #qeff<rotary_style half>, rotary_dim = 4 : i64, "
      "theta = 1.0e+04 : f64, max_positions = 8 : i64}",
      4);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_DOUBLE_EQ(f[0], 1.0);
  EXPECT_NEAR(f[1], 0.01, 1e-9);
}

TEST_F(QEffDialectTest, RotaryInvFreqLinearScaling) {
  SmallVector<double> f = invFreqOf(
      "{style = #qeff<rotary_style half>, rotary_dim = 4 : i64, "
      "theta = 1.0e+04 : f64, max_positions = 8 : i64, scaling = "
      "#qeff.rope_scaling<kind = linear, factor = 4.0 : f64>}",
      4);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_DOUBLE_EQ(f[0], 0.25);
  EXPECT_NEAR(f[1], 0.0025, 1e-10);
}

TEST_F(QEffDialectTest, RotaryInvFreqLlama3Scaling) {
  // Llama 3.1: theta 500000, head_dim 128, factor 8, band 1..4, 8192 ctx.
  SmallVector<double> f = invFreqOf(
      "{style = #qeff<rotary_style half>, rotary_dim = 128 : i64, "
      "theta = 5.0e+05 : f64, max_positions = 8 : i64, scaling = "
      "#qeff.rope_scaling<kind = llama3, factor = 8.0 : f64, low_freq_factor = "
      "1.0 : f64, high_freq_factor = 4.0 : f64, original_max_position = 8192>}",
      128);
  ASSERT_EQ(f.size(), 64u);
  // Wavelength 2*pi < 8192/4: high frequency, unchanged.
  EXPECT_DOUBLE_EQ(f[0], 1.0);
  // Lowest frequency: wavelength far above 8192: divided by the factor.
  double lowest = 1.0 / std::pow(5.0e5, 126.0 / 128.0);
  EXPECT_NEAR(f[63], lowest / 8.0, lowest * 1e-6);
  // A frequency inside the band is interpolated strictly between the two.
  for (int i = 0; i < 64; ++i) {
    double plain = 1.0 / std::pow(5.0e5, 2.0 * i / 128.0);
    double wavelen = 2 * M_PI / plain;
    if (wavelen > 2048 && wavelen < 8192) {
      EXPECT_LT(f[i], plain);
      EXPECT_GT(f[i], plain / 8.0);
    }
  }
}

TEST_F(QEffDialectTest, ModelAttrRoundTripsAndIsFoundOnTheModule) {
  const char *src = R"mlir(
    module attributes {qeff.model = #qeff.model<architecture = "LlamaForCausalLM",
        family = "llama", config = {hidden_size = 64 : i64},
        checkpoint = ["model.safetensors"]>} {}
  )mlir";
  module = parseSourceString<ModuleOp>(src, &context);
  ASSERT_TRUE(module);
  auto model = (*module)->getAttrOfType<ModelAttr>(ModelAttr::getAttrName());
  ASSERT_TRUE(model);
  EXPECT_EQ(model.getArchitecture().getValue(), "LlamaForCausalLM");
  EXPECT_EQ(model.getFamily().getValue(), "llama");
  EXPECT_EQ(llvm::cast<IntegerAttr>(model.getConfig().get("hidden_size")).getInt(),
            64);
}

TEST_F(QEffDialectTest, BuilderCreatedOpFailsVerificationWithItsMessage) {
  // An attention op whose heads do not group: the verifier must say so.
  OpBuilder b(&context);
  Location loc = b.getUnknownLoc();
  module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto q = RankedTensorType::get({1, 3, 2, 8}, b.getF32Type());
  auto k = RankedTensorType::get({1, 2, 2, 8}, b.getF32Type());
  auto fn = b.create<func::FuncOp>(loc, "f", b.getFunctionType({q, k, k}, {q}));
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  auto attn = b.create<AttentionOp>(
      loc, q, entry->getArgument(0), entry->getArgument(1),
      entry->getArgument(2), /*mask=*/Value(), /*num_heads=*/3,
      /*num_kv_heads=*/2, /*head_dim=*/8, /*scale=*/llvm::APFloat(0.35),
      /*causal=*/true,
      /*sliding_window=*/0, /*alibi_slopes=*/DenseF64ArrayAttr(),
      /*softcap=*/FloatAttr());
  b.create<func::ReturnOp>(loc, attn.getResult());

  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  EXPECT_TRUE(failed(mlir::verify(*module)));
  EXPECT_NE(message.find("num_heads (3) is not a multiple of num_kv_heads (2)"),
            std::string::npos)
      << message;
}

} // namespace
