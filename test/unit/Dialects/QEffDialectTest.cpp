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

#include <algorithm>
#include <cmath>
#include <vector>

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
  SmallVector<double> invFreqOf(StringRef attrs, int64_t headDim,
                                int64_t seqLen = 0) {
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
    return op.computeInvFreq(seqLen);
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

/// theta^(-2i/d) in doubles.
double plainInvFreq(double theta, int64_t i, int64_t dim) {
  return 1.0 / std::pow(theta, 2.0 * double(i) / double(dim));
}

TEST_F(QEffDialectTest, RotaryInvFreqYarnScaling) {
  // The yarn golden: head_dim 16, base 1e4, original context 32, factor 4,
  // betas 32/1: correction range low 0, high 2, so the ramp is
  // (0, 0.5, 1, 1, ...): dimension 0 keeps its frequency, dimension 1 is the
  // mean of both, the rest are divided by the factor.
  SmallVector<double> f = invFreqOf(
      "{style = #qeff<rotary_style half>, rotary_dim = 16 : i64, "
      "theta = 1.0e+04 : f64, max_positions = 128 : i64, scaling = "
      "#qeff.rope_scaling<kind = yarn, factor = 4.0 : f64, "
      "original_max_position = 32, attention_factor = 1.1386 : f64>}",
      16);
  ASSERT_EQ(f.size(), 8u);
  EXPECT_NEAR(f[0], 1.0, 1e-7);
  double p1 = plainInvFreq(1e4, 1, 16);
  EXPECT_NEAR(f[1], 0.5 * p1 + 0.5 * p1 / 4, p1 * 1e-6);
  for (int64_t i = 2; i < 8; ++i)
    EXPECT_NEAR(f[i], plainInvFreq(1e4, i, 16) / 4, f[i] * 1e-6) << i;
}

/// transformers 4.55 `_compute_yarn_parameters`, restated: the correction
/// range in Python floats (find_correction_dim, floor/ceil only when
/// `truncate`, clipped to [0, dim - 1]), the ramp and the mix per frequency.
std::vector<double> hfYarnInvFreq(double base, int64_t dim, double factor,
                                  double original, double betaFast,
                                  double betaSlow, bool truncate) {
  auto correctionDim = [&](double rotations) {
    return double(dim) * std::log(original / (rotations * 2 * M_PI)) /
           (2 * std::log(base));
  };
  double low = correctionDim(betaFast), high = correctionDim(betaSlow);
  if (truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, double(dim - 1));
  if (low == high)
    high += 0.001;
  std::vector<double> out;
  for (int64_t i = 0; i < dim / 2; ++i) {
    double posFreq = std::pow(base, double(2 * i) / double(dim));
    double ramp = std::clamp((double(i) - low) / (high - low), 0.0, 1.0);
    double extrapolationFactor = 1 - ramp;
    out.push_back(1 / (factor * posFreq) * (1 - extrapolationFactor) +
                  1 / posFreq * extrapolationFactor);
  }
  return out;
}

TEST_F(QEffDialectTest, RotaryInvFreqYarnGptOssTruncate) {
  // Released GPT-OSS: head_dim 64, theta 150000, factor 32, original 4096,
  // betas 32/1. The correction range is (8.09, 17.40): truncate rounds it to
  // (8, 18), which changes every frequency from 9 to 17.
  for (bool truncate : {true, false}) {
    std::string attr =
        "{style = #qeff<rotary_style half>, rotary_dim = 64 : i64, "
        "theta = 1.5e+05 : f64, max_positions = 64 : i64, scaling = "
        "#qeff.rope_scaling<kind = yarn, factor = 32.0 : f64, "
        "original_max_position = 4096, beta_fast = 32.0 : f64, beta_slow = "
        "1.0 : f64, attention_factor = 1.3465735902799727 : f64" +
        std::string(truncate ? "" : ", truncate = false") + ">}";
    SmallVector<double> f = invFreqOf(attr, 64);
    std::vector<double> want =
        hfYarnInvFreq(1.5e5, 64, 32.0, 4096, 32, 1, truncate);
    ASSERT_EQ(f.size(), want.size());
    for (size_t i = 0; i < f.size(); ++i)
      EXPECT_NEAR(f[i], want[i], want[i] * 2e-6) << i << " truncate " << truncate;
    // The two readings differ inside the ramp only.
    std::vector<double> other =
        hfYarnInvFreq(1.5e5, 64, 32.0, 4096, 32, 1, !truncate);
    EXPECT_DOUBLE_EQ(want[0], other[0]);
    EXPECT_DOUBLE_EQ(want[31], other[31]);
    for (int i = 9; i <= 17; ++i)
      EXPECT_GT(std::abs(want[i] - other[i]), want[i] * 1e-4) << i;
  }
}

TEST_F(QEffDialectTest, RotaryInvFreqDynamicScaling) {
  // Dynamic NTK, threshold 16, factor 2: unscaled up to L = 16; for L = 17
  // the base is 1e4 * (2 * 17 / 16 - 1)^(16 / 14).
  std::string attrs =
      "{style = #qeff<rotary_style half>, rotary_dim = 16 : i64, "
      "theta = 1.0e+04 : f64, max_positions = 32 : i64, scaling = "
      "#qeff.rope_scaling<kind = dynamic, factor = 2.0 : f64, "
      "original_max_position = 16>}";
  SmallVector<double> below = invFreqOf(attrs, 16, 16);
  SmallVector<double> above = invFreqOf(attrs, 16, 17);
  ASSERT_EQ(below.size(), 8u);
  ASSERT_EQ(above.size(), 8u);
  double base = 1e4 * std::pow(2.0 * 17 / 16 - 1, 16.0 / 14.0);
  for (int64_t i = 0; i < 8; ++i) {
    EXPECT_NEAR(below[i], plainInvFreq(1e4, i, 16), below[i] * 1e-6) << i;
    EXPECT_NEAR(above[i], plainInvFreq(base, i, 16), above[i] * 1e-6) << i;
  }
  EXPECT_LT(above[7], below[7]);
}

TEST_F(QEffDialectTest, RotaryInvFreqLongRopeScaling) {
  // Phi-3: short factors up to L = threshold (16), long ones past it.
  std::string attrs =
      "{style = #qeff<rotary_style half>, rotary_dim = 4 : i64, "
      "theta = 1.0e+04 : f64, max_positions = 64 : i64, scaling = "
      "#qeff.rope_scaling<kind = longrope, factor = 4.0 : f64, "
      "original_max_position = 16, attention_factor = 1.2247 : f64, "
      "short_factor = [1.0, 2.0], long_factor = [4.0, "
      "8.0]>}";
  SmallVector<double> shortF = invFreqOf(attrs, 4, 16);
  SmallVector<double> longF = invFreqOf(attrs, 4, 17);
  ASSERT_EQ(shortF.size(), 2u);
  EXPECT_NEAR(shortF[0], 1.0, 1e-7);
  EXPECT_NEAR(shortF[1], 0.01 / 2, 1e-9);
  EXPECT_NEAR(longF[0], 0.25, 1e-7);
  EXPECT_NEAR(longF[1], 0.01 / 8, 1e-9);
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
      entry->getArgument(2), /*mask=*/Value(), /*sinks=*/Value(),
      /*num_heads=*/3,
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
