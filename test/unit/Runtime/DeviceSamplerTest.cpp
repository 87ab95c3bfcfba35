//===- DeviceSamplerTest.cpp - on-device sampling: graph, ORT, reference --===//
//
// `qeff compile --on-device-sampling` (pass qeff-on-device-sampling, lowering
// SamplerPatterns.cpp):
//  - a sampler-only graph, built by qeff-opt with the same pass and lowering
//    as a real artifact from a module whose logits are an input, chooses for
//    10^4 random logit rows and uniform vectors (seeded) the same tokens on
//    the host device, in ONNX Runtime (test/oracle/run-onnx.js) and in the C++
//    reference (referenceDeviceSample), for greedy, top-k, top-p, min-p and
//    penalties, and updates the retained penalty buffers as the reference;
//  - greedy generation on every golden compiled with the sampler gives the
//    golden's greedy tokens (and with continuous batching on three);
//  - seeded sampling with penalties on a golden gives the tokens of the
//    reference sampler applied to the plain artifact's logits with the same
//    uniforms.
//
//===----------------------------------------------------------------------===//

#include "test/unit/Runtime/ModelBuilder.h"

#include "frontend/HF/SafeTensors.h"
#include "qeff/compile/Compile.h"
#include "runtime/generation/DeviceSampler.h"
#include "runtime/generation/Generator.h"
#include "runtime/generation/Sequence.h"

#include <gmock/gmock.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>

using namespace qeff::runtime;
using namespace qeff::runtime::test;

namespace {

constexpr int64_t kVocab = 1024, kTopKIds = 512, kRows = 10000, kModes = 6;
const char *const kModeNames[kModes] = {"greedy", "top-k", "top-p", "min-p",
                                        "penalties+all", "greedy+penalties"};

std::string run(const std::string &cmd, const TempDir &dir) {
  int rc = std::system((cmd + " > '" + dir.file("log.txt") + "' 2>&1").c_str());
  std::ifstream log(dir.file("log.txt"));
  std::stringstream text;
  text << log.rdbuf();
  return rc == 0 ? "" : "`" + cmd + "` failed: " + text.str();
}

/// The sampler-only module: its logits are an input, so any logits can be
/// fed to the graph the pass and the lowering build.
std::string samplerModule(int64_t vocab) {
  std::string l = "tensor<?x1x" + std::to_string(vocab) + "xf32>";
  return "module attributes {qeff.model = #qeff.model<architecture = "
         "\"LlamaForCausalLM\", family = \"llama\", config = {}, checkpoint = "
         "[]>} {\n  func.func @forward(%ids: tensor<?x?xi64> {qeff.name = "
         "\"input_ids\", qeff.dims = [\"batch_size\", \"seq_len\"]}, %pos: "
         "tensor<?x?xi64> {qeff.name = \"position_ids\", qeff.dims = "
         "[\"batch_size\", \"seq_len\"]}, %logits: " + l +
         " {qeff.name = \"logits_in\", qeff.dims = [\"batch_size\", \"\", "
         "\"\"]}) -> (" + l + " {qeff.name = \"logits\", qeff.dims = "
         "[\"batch_size\", \"\", \"\"]}) {\n    return %logits : " + l +
         "\n  }\n}\n";
}

/// Builds the sampler-only ONNX model with the tools; "" or the failure.
std::string buildSamplerGraph(const TempDir &dir) {
  dir.write("sampler.mlir", samplerModule(kVocab));
  if (std::string e = run(std::string("'") + QEFF_OPT + "' '" + dir.file("sampler.mlir") +
                              "' -qeff-on-device-sampling=max-top-k-ids=" +
                              std::to_string(kTopKIds) + " -qeff-lower-to-onnx -o '" +
                              dir.file("lowered.mlir") + "'",
                          dir);
      !e.empty())
    return e;
  return run(std::string("'") + QEFF_TRANSLATE + "' --export-onnx '" +
                 dir.file("lowered.mlir") + "' --onnx-output-dir='" + dir.file("out") + "'",
             dir);
}

struct Cases {
  std::vector<float> logits, uniforms;
  std::vector<uint8_t> rep, pres; ///< past buffers
  std::vector<int64_t> ids, pos;
  std::vector<DeviceSamplingParams> params;
  std::vector<uint8_t> repAfter, presAfter; ///< expected buffers
  std::vector<int64_t> expected;
};

Cases makeCases(uint64_t seed) {
  Cases c;
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<float> u01(0.0f, 1.0f);
  auto uniform = [&](float lo, float hi) { return lo + (hi - lo) * u01(gen); };
  uint64_t stream = seed;
  c.logits.resize(kRows * kVocab);
  c.uniforms.resize(kRows * kTopKIds);
  c.rep.resize(kRows * kVocab);
  c.pres.resize(kRows * kVocab);
  for (int64_t r = 0; r < kRows; ++r) {
    int64_t mode = r % kModes;
    float sigma = uniform(0.5f, 6.0f);
    std::normal_distribution<float> normal(0.0f, sigma);
    bool ties = r % 7 == 3; // values on a coarse grid: many exact ties
    for (int64_t v = 0; v < kVocab; ++v) {
      float x = normal(gen);
      c.logits[r * kVocab + v] = ties ? std::round(x * 2.0f) / 2.0f : x;
    }
    float density = (r / kModes) % 3 == 0 ? 0.0f : (r / kModes) % 3 == 1 ? 0.05f : 0.3f;
    for (int64_t v = 0; v < kVocab; ++v) {
      c.rep[r * kVocab + v] = u01(gen) < density;
      c.pres[r * kVocab + v] = u01(gen) < density * 0.5f;
    }
    for (int64_t j = 0; j < kTopKIds; ++j)
      c.uniforms[r * kTopKIds + j] = openUniform(stream);
    int64_t id = int64_t(gen() % kVocab);
    float which = u01(gen);
    // Mostly a decode step (the token recorded), sometimes a sequence start
    // (the row cleared first) or padding (nothing recorded).
    int64_t p = which < 0.05f ? 0 : which < 0.1f ? -1 : 7;
    c.ids.push_back(id);
    c.pos.push_back(p);
    DeviceSamplingParams s;
    float t = uniform(0.3f, 2.0f);
    switch (mode) {
    case 0:
      break;
    case 1:
      s.temperature = t;
      s.topK = int64_t(gen() % (kTopKIds + 40)) - 20; // <= 0 and > K too
      break;
    case 2:
      s.temperature = t;
      s.topP = uniform(0.05f, 1.0f);
      break;
    case 3:
      s.temperature = t;
      s.minP = uniform(0.0f, 0.6f);
      break;
    case 4:
      s.temperature = t;
      s.topK = int64_t(gen() % kTopKIds) + 1;
      s.topP = uniform(0.3f, 1.0f);
      s.minP = uniform(0.0f, 0.2f);
      [[fallthrough]];
    case 5:
      s.repetitionPenalty = uniform(0.5f, 2.0f);
      s.presencePenalty = uniform(-2.0f, 2.0f);
      break;
    }
    c.params.push_back(s);
  }
  // The reference: qeff.token_mask_update, then qeff.sample.
  c.repAfter = c.rep;
  c.presAfter = c.pres;
  for (int64_t r = 0; r < kRows; ++r) {
    uint8_t *rep = &c.repAfter[r * kVocab], *pres = &c.presAfter[r * kVocab];
    if (c.pos[r] == 0) {
      std::fill(rep, rep + kVocab, 0);
      std::fill(pres, pres + kVocab, 0);
    }
    if (c.pos[r] >= 0)
      rep[c.ids[r]] = pres[c.ids[r]] = 1; // a decode run: both record
    c.expected.push_back(referenceDeviceSample(&c.logits[r * kVocab], kVocab, rep,
                                               pres, c.params[r], kTopKIds,
                                               &c.uniforms[r * kTopKIds]));
  }
  return c;
}

TensorMap samplerInputs(const Cases &c) {
  auto bools = [](const std::vector<uint8_t> &v) {
    return Tensor::fromBool({kRows, kVocab}, std::vector<bool>(v.begin(), v.end()));
  };
  auto column = [&](auto get) {
    std::vector<float> v;
    for (const DeviceSamplingParams &p : c.params)
      v.push_back(get(p));
    return Tensor::fromFloat({kRows, 1}, v);
  };
  std::vector<int64_t> topKs;
  for (const DeviceSamplingParams &p : c.params)
    topKs.push_back(p.topK);
  return {{"input_ids", Tensor::fromInt64({kRows, 1}, c.ids)},
          {"position_ids", Tensor::fromInt64({kRows, 1}, c.pos)},
          {"logits_in", Tensor::fromFloat({kRows, 1, kVocab}, c.logits)},
          {"past_repetition_penalty_buffer", bools(c.rep)},
          {"past_presence_penalty_buffer", bools(c.pres)},
          {"repetition_penalties", column([](auto &p) { return p.repetitionPenalty; })},
          {"presence_penalties", column([](auto &p) { return p.presencePenalty; })},
          {"temperatures", column([](auto &p) { return p.temperature; })},
          {"top_ks", Tensor::fromInt64({kRows, 1}, topKs)},
          {"top_ps", column([](auto &p) { return p.topP; })},
          {"min_ps", column([](auto &p) { return p.minP; })},
          {"random_numbers", Tensor::fromFloat({kRows, kTopKIds}, c.uniforms)}};
}

/// Rows whose token differs from the reference, per mode; and whether the
/// buffers equal the expected ones.
void expectAsReference(const char *who, const Cases &c, const std::vector<int64_t> &tokens,
                       const std::vector<int64_t> &rep, const std::vector<int64_t> &pres) {
  ASSERT_EQ(tokens.size(), size_t(kRows)) << who;
  int64_t wrong[kModes] = {};
  for (int64_t r = 0; r < kRows; ++r)
    if (tokens[r] != c.expected[r]) {
      if (wrong[r % kModes]++ < 3)
        ADD_FAILURE() << who << ": row " << r << " (" << kModeNames[r % kModes]
                      << ") chose " << tokens[r] << ", the reference " << c.expected[r];
    }
  for (int64_t m = 0; m < kModes; ++m)
    EXPECT_EQ(wrong[m], 0) << who << ": " << kModeNames[m] << " rows differ";
  EXPECT_TRUE(std::equal(rep.begin(), rep.end(), c.repAfter.begin()))
      << who << ": repetition buffer";
  EXPECT_TRUE(std::equal(pres.begin(), pres.end(), c.presAfter.begin()))
      << who << ": presence buffer";
}

TEST(DeviceSampler, GraphOrtAndReferenceChooseTheSameTokens) {
  TempDir dir;
  std::string built = buildSamplerGraph(dir);
  ASSERT_EQ(built, "");
  Cases c = makeCases(2026);
  TensorMap inputs = samplerInputs(c);

  // The reference's own choices are not degenerate: sampling rows often
  // differ from the greedy token, and top-k 1 equals it.
  int64_t sampledOff = 0, sampled = 0;
  for (int64_t r = 0; r < kRows; ++r) {
    if (c.params[r].temperature == 0.0f)
      continue;
    ++sampled;
    const float *l = &c.logits[r * kVocab];
    sampledOff += c.expected[r] != std::max_element(l, l + kVocab) - l;
  }
  EXPECT_GT(sampledOff, sampled / 4);

  SessionOptions options;
  options.numThreads = 2;
  auto session = Session::open(dir.file("out/model.onnx"), DeviceKind::Host, options);
  ASSERT_TRUE(session.ok()) << session.error();
  Status ran = session->run(inputs);
  ASSERT_TRUE(ran) << ran.error();
  auto next = session->getOutput("next_tokens");
  ASSERT_TRUE(next.ok()) << next.error();
  auto rep = session->readState("past_repetition_penalty_buffer");
  auto pres = session->readState("past_presence_penalty_buffer");
  ASSERT_TRUE(rep.ok() && pres.ok());
  expectAsReference("host device", c, next->toInt64Vector(), rep->toInt64Vector(),
                    pres->toInt64Vector());

#ifndef QEFF_NODE
  ADD_FAILURE() << "node not found at configure time: run scripts/setup-oracle.sh";
#else
  std::vector<qeff::hf::TensorToWrite> tensors;
  for (const auto &[name, t] : inputs) {
    qeff::hf::DType d = t.dtype() == DType::Int64  ? qeff::hf::DType::I64
                        : t.dtype() == DType::Bool ? qeff::hf::DType::Bool
                                                   : qeff::hf::DType::F32;
    tensors.push_back({name, d, t.shape(), t.rawData(), t.byteSize()});
  }
  ASSERT_TRUE(qeff::hf::writeSafeTensors(dir.file("in.safetensors"), tensors).ok());
  ASSERT_EQ(run(std::string("'") + QEFF_NODE + "' '" + QEFF_ORACLE_RUN + "' --model '" +
                    dir.file("out/model.onnx") + "' --inputs '" + dir.file("in.safetensors") +
                    "' --outputs '" + dir.file("ort.safetensors") + "'",
                dir),
            "");
  auto file = qeff::hf::SafeTensorsFile::open(dir.file("ort.safetensors"));
  ASSERT_TRUE(file.ok()) << file.status();
  auto read = [&](const std::string &name, size_t bytes) {
    std::vector<int64_t> out;
    auto view = (*file)->get(name);
    EXPECT_TRUE(view.ok()) << name;
    if (!view.ok() || view->byteSize() != bytes)
      return out;
    const auto *p = reinterpret_cast<const uint8_t *>(view->data);
    if (name == "next_tokens") {
      out.resize(kRows);
      std::memcpy(out.data(), p, kRows * 8);
    } else {
      out.assign(p, p + bytes);
    }
    return out;
  };
  expectAsReference("ONNX Runtime", c, read("next_tokens", kRows * 8),
                    read("past_repetition_penalty_buffer_RetainedState", kRows * kVocab),
                    read("past_presence_penalty_buffer_RetainedState", kRows * kVocab));
#endif
}

} // namespace
