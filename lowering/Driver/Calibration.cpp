//===- Calibration.cpp - fp16 ranges measured on the host device ----------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "lowering/Driver/Calibration.h"

#include "frontend/Tokenizer/Tokenizer.h"
#include "qeff/runtime/Session.h"
#include "runtime/generation/Generator.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include "onnx/onnx_pb.h" // defines ONNX_API, then includes onnx-ml.pb.h

#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <set>

using namespace mlir;
using namespace mlir::qeff;
namespace rt = ::qeff::runtime;

namespace {

/// Everyday text for the sample prompts (the model's own tokenizer encodes it).
constexpr const char *kSampleTexts[] = {
    "Once upon a time, there was a little girl who lived in a village near "
    "the forest.",
    "The capital of France is Paris. It is known for the Eiffel Tower and "
    "its museums.",
    "def fibonacci(n):\n    if n < 2:\n        return n\n    return "
    "fibonacci(n - 1) + fibonacci(n - 2)\n",
    "In 1969, the Apollo 11 mission landed the first humans on the Moon.",
    "Q: What is 12 times 12?\nA: 144.\nQ: What is the square root of 81?\nA:",
    "The quick brown fox jumps over the lazy dog. 0123456789 !?@#$%^&*()",
    "Photosynthesis converts light energy into chemical energy stored in "
    "glucose.",
    "Dear team, please find attached the report for the third quarter.",
};

std::string join(const std::string &dir, llvm::StringRef name) {
  llvm::SmallString<256> p(dir);
  llvm::sys::path::append(p, name);
  return std::string(p.str());
}

/// Node name -> names of the nodes consuming its outputs, from model.onnx.
std::map<std::string, std::vector<std::pair<std::string, std::string>>>
consumersOf(const std::string &modelPath) {
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> out;
  onnx::ModelProto model;
  std::ifstream in(modelPath, std::ios::binary);
  if (!in || !model.ParseFromIstream(&in))
    return out;
  std::map<std::string, std::string> producer; // value -> node
  for (const onnx::NodeProto &node : model.graph().node())
    for (const std::string &o : node.output())
      producer[o] = node.name();
  for (const onnx::NodeProto &node : model.graph().node())
    for (const std::string &i : node.input())
      if (auto it = producer.find(i); it != producer.end())
        out[it->second].push_back({node.name(), node.op_type()});
  return out;
}

} // namespace

LogicalResult mlir::qeff::calibrateFP32Nodes(Location loc,
                                             const std::string &artifactDir,
                                             int numPrompts,
                                             CalibrationReport &report) {
  std::map<std::string, float> maxAbs;
  rt::SessionOptions options;
  options.outputObserver = [&](const std::string &node, const std::string &,
                               const rt::Tensor &output) {
    float &m = maxAbs[node];
    // Values of exactly +-65504 are fp16-saturated on purpose (masked
    // attention scores, clamps), not activations near the limit.
    for (float v : output.toFloatVector())
      if (std::isfinite(v) && std::fabs(v) != 65504.0f)
        m = std::max(m, std::fabs(v));
  };
  auto session = rt::Session::open(artifactDir, rt::DeviceKind::Host, options);
  if (!session)
    return emitError(loc) << "calibration: " << session.error();

  std::optional<::qeff::tokenizer::Tokenizer> tok;
  if (llvm::sys::fs::exists(join(artifactDir, "tokenizer.json")))
    if (auto loaded = ::qeff::tokenizer::Tokenizer::fromDirectory(artifactDir);
        loaded.ok())
      tok = std::move(*loaded);
  auto generator = rt::Generator::create(*session, tok ? &*tok : nullptr);
  if (!generator)
    return emitError(loc) << "calibration: " << generator.error();

  // Sample prompts that fit the context with room for a few decode steps.
  int64_t maxLen = std::max<int64_t>(1, generator->ctxLen() - 9);
  int64_t vocab = 0;
  for (const rt::TensorInfo &info : session->outputInfos())
    if (info.name == "logits" && !info.dims.empty())
      vocab = info.dims.back().value;
  std::vector<std::vector<int64_t>> prompts;
  uint64_t state = 0x5eed;
  for (int i = 0; i < numPrompts; ++i) {
    std::vector<int64_t> ids;
    if (tok) {
      ids = tok->encode(kSampleTexts[i % std::size(kSampleTexts)], true);
    } else {
      int64_t len = std::min<int64_t>(maxLen, 16 + 7 * i);
      for (int64_t t = 0; t < len; ++t) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        ids.push_back(vocab > 3 ? 3 + int64_t((state >> 33) % uint64_t(vocab - 3))
                                : 0);
      }
    }
    if (int64_t(ids.size()) > maxLen)
      ids.resize(maxLen);
    report.tokens += ids.size();
    prompts.push_back(std::move(ids));
  }
  rt::GenerationOptions gen;
  gen.maxNewTokens = 8;
  auto result = generator->generate(prompts, gen);
  if (!result)
    return emitError(loc) << "calibration: " << result.error();
  report.prompts = numPrompts;

  // Nodes near the fp16 limit, and the matrix products they feed.
  auto consumers = consumersOf(join(artifactDir, "model.onnx"));
  std::map<std::string, float> marked;
  for (const auto &[node, m] : maxAbs) {
    if (m < kCalibrationThreshold)
      continue;
    marked[node] = std::max(marked[node], m);
    for (const auto &[consumer, opType] : consumers[node])
      if (opType == "MatMul" || opType == "Gemm")
        marked[consumer] = std::max(marked[consumer], m);
  }
  for (const auto &[node, m] : maxAbs)
    if (!marked.count(node))
      report.maxElsewhere = std::max(report.maxElsewhere, m);
  report.fp32Nodes.assign(marked.begin(), marked.end());
  return success();
}
