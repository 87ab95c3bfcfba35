//===- IdleLaneTest.cpp - vLLM-qaic idle decode lanes change nothing ------===//
//
// vLLM's qaic plugin (qualcomm/vllm-qaic, QaicCausalLM._run_decode) fills the
// decode lanes it has no sequence for with input_ids = -1, position_ids = -1
// and batch_index = -1. A -1 row wraps onto cache row full_batch_size - 1
// and a -1 position onto slot ctx_len - 1 (ScatterND counts negative
// indices from the end); with a live lane at that very slot, two updates
// would hit one index. The continuous-batching graph redirects idle lanes
// (redirectIdleLanes in lowering/ToONNX/DeviceCachePatterns.cpp). Checked
// here on goldens compiled with --full-batch-size 4, on the host device and
// in ONNX Runtime (the oracle, test/oracle/run-onnx.js): a decode step with
// a live row 3 at position ctx_len - 1, a live row 1 and two idle lanes
// gives exactly (bitwise) the logits and KV rows of the same step whose
// spare lanes follow qeff's own convention (a free row, position -1); a step
// of idle lanes only touches nothing live.
//
//===----------------------------------------------------------------------===//

#include "test/unit/Runtime/ModelBuilder.h"

#include "frontend/HF/SafeTensors.h"
#include "qeff/compile/Compile.h"

#include <gmock/gmock.h>

#include <cctype>
#include <cmath>
#include <cstring>
#include <optional>
#include <fstream>
#include <sstream>

using namespace qeff::runtime;
using namespace qeff::runtime::test;

namespace {

constexpr int64_t kFull = 4, kCtx = 16, kPrefill = 4;

struct Lane {
  int64_t id, pos, row;
};

TensorMap decodeInputs(const std::vector<Lane> &lanes) {
  std::vector<int64_t> ids, pos, rows;
  for (const Lane &l : lanes) {
    ids.push_back(l.id);
    pos.push_back(l.pos);
    rows.push_back(l.row);
  }
  int64_t n = static_cast<int64_t>(lanes.size());
  return {{"input_ids", Tensor::fromInt64({n, 1}, ids)},
          {"position_ids", Tensor::fromInt64({n, 1}, pos)},
          {"batch_index", Tensor::fromInt64({n, 1}, rows)}};
}

/// Bytes of `t` as float32 values (for exact comparison and messages).
std::vector<float> floats(const Tensor &t) { return t.toFloatVector(); }

/// Row `row` of a [F, H, C, D] cache, slots [0, slots) (all: -1; all but
/// the last: -2).
std::vector<float> cacheRow(const Tensor &t, int64_t row, int64_t slots = -1) {
  const Shape &s = t.shape();
  if (slots < 0)
    slots += s[2] + 1;
  std::vector<float> all = floats(t), out;
  int64_t per = s[2] * s[3];
  for (int64_t h = 0; h < s[1]; ++h) {
    int64_t base = (row * s[1] + h) * per;
    out.insert(out.end(), all.begin() + base, all.begin() + base + slots * s[3]);
  }
  return out;
}

qeff::hf::DType stDType(DType d) {
  return d == DType::Int64 ? qeff::hf::DType::I64 : qeff::hf::DType::F32;
}

class IdleLanes : public ::testing::TestWithParam<std::vector<std::string>> {
protected:
  void SetUp() override {
    std::vector<std::string> param = GetParam();
    qeff::compile::Options options;
    options.checkpointDir = std::string(QEFF_TEST_DATA_DIR) + "/golden/" + param[0];
    options.outputDir = dir.file("artifact");
    options.ctxLen = kCtx;
    options.prefillSeqLen = kPrefill;
    options.fullBatchSize = kFull;
    options.rollingKVWindow = param.size() > 1 && param[1] == "rolling";
    options.runQAic = false;
    auto compiled = qeff::compile::compileCheckpoint(options);
    ASSERT_TRUE(compiled) << compiled.message;
    SessionOptions sessionOptions;
    sessionOptions.numThreads = 1;
    auto s = Session::open(options.outputDir, DeviceKind::Host, sessionOptions);
    ASSERT_TRUE(s.ok()) << s.error();
    session.emplace(std::move(*s));
    // Row 3 holds positions 0..14 (the next decode is at ctx_len - 1), row
    // 1 positions 0..4; rows 0 and 2 are free.
    prefill(3, kCtx - 1);
    prefill(1, 5);
    for (const std::string &name : session->stateNames()) {
      auto t = session->readState(name);
      ASSERT_TRUE(t.ok()) << t.error();
      state[name] = *t;
    }
  }

  void prefill(int64_t row, int64_t length) {
    for (int64_t start = 0; start < length; start += kPrefill) {
      std::vector<int64_t> ids, pos;
      for (int64_t j = start; j < start + kPrefill; ++j) {
        ids.push_back(j < length ? 2 + (7 * j + 3 * row) % 40 : 0);
        pos.push_back(j < length ? j : -1);
      }
      Status st = session->run({{"input_ids", Tensor::fromInt64({1, kPrefill}, ids)},
                                {"position_ids", Tensor::fromInt64({1, kPrefill}, pos)},
                                {"batch_index", Tensor::fromInt64({1, 1}, {row})}});
      ASSERT_TRUE(st.ok()) << st.error();
    }
  }

  /// One decode step from the saved state, on the host: the inputs (for
  /// the oracle too), the logits and the updated state.
  struct Step {
    TensorMap inputs;
    Tensor logits;
    TensorMap state;
  };
  Step decode(const std::vector<Lane> &lanes) {
    Step step;
    step.inputs = decodeInputs(lanes);
    for (const auto &[name, t] : state)
      step.inputs[name] = t.clone();
    TensorMap feed = step.inputs;
    for (auto &[name, t] : feed)
      t = t.clone(); // the host may update its inputs in place
    Status st = session->run(feed);
    EXPECT_TRUE(st.ok()) << st.error();
    if (!st.ok())
      return step;
    step.logits = session->getOutput("logits")->clone();
    for (const auto &[name, t] : state)
      step.state[name] = *session->readState(name);
    return step;
  }

  /// The step's logits and state from ONNX Runtime on the same inputs.
  Step oracle(const Step &host) {
    Step step;
#ifndef QEFF_NODE
    ADD_FAILURE() << "node not found at configure time: run scripts/setup-oracle.sh";
#else
    std::vector<qeff::hf::TensorToWrite> tensors;
    for (const auto &[name, t] : host.inputs)
      tensors.push_back({name, stDType(t.dtype()), t.shape(), t.rawData(), t.byteSize()});
    std::string in = dir.file("in.safetensors"), out = dir.file("out.safetensors");
    EXPECT_TRUE(qeff::hf::writeSafeTensors(in, tensors).ok());
    std::string cmd = std::string("'") + QEFF_NODE + "' '" + QEFF_ORACLE_RUN +
                      "' --model '" + dir.file("artifact/model.onnx") + "' --inputs '" + in +
                      "' --outputs '" + out + "' 2> '" + dir.file("err.txt") + "'";
    int rc = std::system(cmd.c_str());
    std::ifstream err(dir.file("err.txt"));
    std::stringstream errText;
    errText << err.rdbuf();
    EXPECT_EQ(rc, 0) << "oracle failed: " << errText.str();
    auto file = qeff::hf::SafeTensorsFile::open(out);
    EXPECT_TRUE(file.ok()) << file.status();
    if (rc != 0 || !file.ok())
      return step;
    auto read = [&](const std::string &name, const Tensor &like) {
      auto view = (*file)->get(name);
      EXPECT_TRUE(view.ok()) << name;
      Tensor t = Tensor::empty(like.dtype(), like.shape());
      if (view.ok() && view->byteSize() == t.byteSize())
        std::memcpy(t.rawData(), view->data, t.byteSize());
      else
        ADD_FAILURE() << name << ": the oracle's output does not match the host's";
      return t;
    };
    step.logits = read("logits", host.logits);
    for (const auto &[name, t] : host.state)
      step.state[name] = read(name + "_RetainedState", t);
#endif
    return step;
  }

  TempDir dir;
  std::optional<Session> session;
  TensorMap state; ///< after the prefills
};

/// Lanes 0 and 2 of `a` and `b` (rows 3 and 1) give the same logits, and
/// the live rows the same cache, bit for bit.
void expectSameLiveLanes(const char *where, const Tensor &la, const Tensor &lb,
                         const TensorMap &sa, const TensorMap &sb, int64_t vocab) {
  std::vector<float> a = floats(la), b = floats(lb);
  for (int64_t lane : {0, 2})
    EXPECT_TRUE(std::memcmp(a.data() + lane * vocab, b.data() + lane * vocab,
                            vocab * sizeof(float)) == 0)
        << where << ": lane " << lane << " logits differ (logit 0: " << a[lane * vocab]
        << " vs " << b[lane * vocab] << ")";
  for (const auto &[name, t] : sa)
    for (int64_t row : {3, 1})
      EXPECT_EQ(cacheRow(t, row), cacheRow(sb.at(name), row))
          << where << ": " << name << " row " << row;
}

TEST_P(IdleLanes, ChangeNoLiveLogitOrSlot) {
  ASSERT_TRUE(session);
  int64_t vocab = 0;
  for (const TensorInfo &info : session->outputInfos())
    if (info.name == "logits")
      vocab = info.dims.back().value;
  ASSERT_GT(vocab, 0);
  // qeff's convention: free rows 0 and 2 at position -1. vLLM's: -1, -1, -1,
  // an idle lane right after the live lane of row 3 (whose write ScatterND
  // would otherwise apply first).
  Step own = decode({{11, kCtx - 1, 3}, {0, -1, 0}, {12, 5, 1}, {0, -1, 2}});
  Step vllm = decode({{11, kCtx - 1, 3}, {-1, -1, -1}, {12, 5, 1}, {-1, -1, -1}});
  ASSERT_TRUE(own.logits.valid() && vllm.logits.valid());
  expectSameLiveLanes("host", own.logits, vllm.logits, own.state, vllm.state, vocab);
  // The idle lanes wrote no row of their own: rows 0 and 2 are as before.
  for (const auto &[name, t] : vllm.state)
    for (int64_t row : {0, 2})
      EXPECT_EQ(cacheRow(t, row), cacheRow(state.at(name), row)) << name;

  Step ortOwn = oracle(own), ortVllm = oracle(vllm);
  ASSERT_TRUE(ortOwn.logits.valid() && ortVllm.logits.valid());
  expectSameLiveLanes("ONNX Runtime", ortOwn.logits, ortVllm.logits, ortOwn.state,
                      ortVllm.state, vocab);
  // And the host agrees with ONNX Runtime on the step.
  std::vector<float> h = floats(vllm.logits), o = floats(ortVllm.logits);
  for (int64_t lane : {0, 2})
    for (int64_t j = 0; j < vocab; ++j) {
      float a = h[lane * vocab + j], b = o[lane * vocab + j];
      ASSERT_LE(std::fabs(a - b), 1e-4f * (1.f + std::fabs(b)))
          << "lane " << lane << " logit " << j << ": host " << a << ", ORT " << b;
    }
}

TEST_P(IdleLanes, AStepOfIdleLanesTouchesNothingLive) {
  ASSERT_TRUE(session);
  Step idle = decode({{-1, -1, -1}, {-1, -1, -1}, {-1, -1, -1}, {-1, -1, -1}});
  ASSERT_TRUE(idle.logits.valid());
  for (const auto &[name, t] : idle.state) {
    for (int64_t row : {0, 1, 2})
      EXPECT_EQ(cacheRow(t, row), cacheRow(state.at(name), row)) << name;
    // Row 3 only in its padding slot (the last), which no query sees before
    // it writes it itself.
    EXPECT_EQ(cacheRow(t, 3, -2), cacheRow(state.at(name), 3, -2)) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Goldens, IdleLanes,
    ::testing::Values(std::vector<std::string>{"LlamaForCausalLM"},
                      std::vector<std::string>{"MistralForCausalLM"},
                      std::vector<std::string>{"GPTBigCodeForCausalLM"},
                      std::vector<std::string>{"MistralForCausalLM-small_window", "rolling"}),
    [](const auto &info) {
      std::string name = info.param[0];
      for (char &c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)))
          c = '_';
      return name + (info.param.size() > 1 ? "_" + info.param[1] : "");
    });

} // namespace
