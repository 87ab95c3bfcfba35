//===- DeviceSampler.cpp - generation on an on-device-sampling artifact ---===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "runtime/generation/DeviceSampler.h"

#include "runtime/generation/Generator.h"
#include "runtime/generation/Sequence.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

using namespace qeff::runtime;

namespace {
constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

const TensorInfo *findInfo(const std::vector<TensorInfo> &infos,
                           const std::string &name) {
  for (const TensorInfo &i : infos)
    if (i.name == name)
      return &i;
  return nullptr;
}
} // namespace

bool qeff::runtime::samplesOnDevice(const Session &session) {
  return findInfo(session.outputInfos(), "next_tokens") != nullptr;
}

Result<DeviceSamplerShape>
qeff::runtime::readDeviceSamplerShape(const Session &session) {
  const TensorInfo *buffer =
      findInfo(session.inputInfos(), "past_repetition_penalty_buffer");
  const TensorInfo *uniforms = findInfo(session.inputInfos(), "random_numbers");
  if (!buffer || !uniforms || buffer->dims.size() != 2 ||
      uniforms->dims.size() != 2 || buffer->dims[1].value <= 0 ||
      uniforms->dims[1].value <= 0)
    return Error{"the artifact returns next_tokens but lacks the on-device "
                 "sampler's inputs past_repetition_penalty_buffer [rows, "
                 "vocab] and random_numbers [batch_size, max_top_k_ids] with "
                 "static last dimensions"};
  for (const char *name : {"repetition_penalties", "past_presence_penalty_buffer",
                           "presence_penalties", "temperatures", "top_ks",
                           "top_ps", "min_ps"})
    if (!findInfo(session.inputInfos(), name))
      return Error{std::string("the artifact returns next_tokens but has no ") +
                   name + " input (is it from qeff compile --on-device-sampling?)"};
  return DeviceSamplerShape{buffer->dims[1].value, uniforms->dims[1].value};
}

std::string
qeff::runtime::deviceSamplingRefusedOption(const GenerationOptions &o) {
  if (o.logprobs >= 0)
    return "logprobs";
  if (o.frequencyPenalty != 0.0)
    return "frequency_penalty";
  if (!o.logitBias.empty())
    return "logit_bias";
  if (o.constraint)
    return "constraint";
  if (o.minTokens > 0)
    return "min_tokens";
  return "";
}

std::string
qeff::runtime::checkDeviceSamplingOptions(const GenerationOptions &o,
                                          const DeviceSamplerShape &shape) {
  std::string what = deviceSamplingRefusedOption(o);
  if (what == "constraint")
    what = "constrained decoding (JSON mode / schema)";
  if (!what.empty())
    return what + " is not available with an on-device-sampling artifact "
                  "(qeff compile --on-device-sampling): the device returns "
                  "next_tokens, not logits";
  if (o.topK > shape.maxTopKIds)
    return "top_k " + std::to_string(o.topK) + " is above the " +
           std::to_string(shape.maxTopKIds) +
           " most likely tokens the artifact samples from on the device (its "
           "max_top_k_ids; qeff compile --max-top-k-ids sets it)";
  return "";
}

DeviceSamplingParams
qeff::runtime::deviceSamplingParams(const GenerationOptions &o) {
  DeviceSamplingParams p;
  p.repetitionPenalty = float(o.repetitionPenalty);
  p.presencePenalty = float(o.presencePenalty);
  p.temperature = float(o.temperature);
  p.topK = o.topK;
  p.topP = float(o.topP);
  p.minP = float(o.minP);
  return p;
}

GenerationOptions
qeff::runtime::hostOptionsForDeviceSampling(const GenerationOptions &o) {
  GenerationOptions host = o;
  host.temperature = 0.0;
  host.topK = 0;
  host.topP = 1.0;
  host.minP = 0.0;
  host.repetitionPenalty = 1.0;
  host.presencePenalty = 0.0;
  return host;
}

float qeff::runtime::openUniform(uint64_t &state) {
  return (float(nextRandom(state) >> 40) + 0.5f) * 0x1.0p-24f;
}

Result<Tensor> qeff::runtime::runSampledStep(
    Session &session, const DeviceSamplerShape &shape,
    const std::vector<SamplerLane> &lanes, int64_t seq,
    const std::vector<int64_t> &ids, const std::vector<int64_t> &positions,
    const std::vector<int64_t> *batchIndex) {
  const int64_t batch = int64_t(lanes.size());
  TensorMap inputs;
  inputs["input_ids"] = Tensor::fromInt64({batch, seq}, ids);
  inputs["position_ids"] = Tensor::fromInt64({batch, seq}, positions);
  if (batchIndex)
    inputs["batch_index"] = Tensor::fromInt64({batch, 1}, *batchIndex);
  auto perRow = [&](float DeviceSamplingParams::*field) {
    std::vector<float> v(batch);
    for (int64_t b = 0; b < batch; ++b)
      v[b] = lanes[b].params.*field;
    return Tensor::fromFloat({batch, 1}, v);
  };
  inputs["repetition_penalties"] = perRow(&DeviceSamplingParams::repetitionPenalty);
  inputs["presence_penalties"] = perRow(&DeviceSamplingParams::presencePenalty);
  inputs["temperatures"] = perRow(&DeviceSamplingParams::temperature);
  std::vector<int64_t> topKs(batch);
  for (int64_t b = 0; b < batch; ++b)
    topKs[b] = lanes[b].params.topK;
  inputs["top_ks"] = Tensor::fromInt64({batch, 1}, topKs);
  inputs["top_ps"] = perRow(&DeviceSamplingParams::topP);
  inputs["min_ps"] = perRow(&DeviceSamplingParams::minP);
  std::vector<float> uniforms(batch * shape.maxTopKIds, 0.5f);
  for (int64_t b = 0; b < batch; ++b)
    if (lanes[b].rng)
      for (int64_t j = 0; j < shape.maxTopKIds; ++j)
        uniforms[b * shape.maxTopKIds + j] = openUniform(*lanes[b].rng);
  inputs["random_numbers"] =
      Tensor::fromFloat({batch, shape.maxTopKIds}, uniforms);
  if (Status s = session.run(inputs); !s)
    return Error{s.error()};
  Result<Tensor> next = session.getOutput("next_tokens");
  if (!next)
    return Error{next.error()};
  if (next->rank() != 2 || next->dim(0) != batch || next->dim(1) != 1)
    return Error{"the model's next_tokens are " + shapeString(next->shape()) +
                 ", expected [" + std::to_string(batch) + ", 1]"};
  std::vector<int64_t> tokens = next->toInt64Vector();
  std::vector<float> oneHot(batch * shape.vocab, kMinusInf);
  for (int64_t b = 0; b < batch; ++b) {
    if (tokens[b] < 0 || tokens[b] >= shape.vocab)
      return Error{"the device chose token " + std::to_string(tokens[b]) +
                   " for row " + std::to_string(b) + ", outside the vocabulary (" +
                   std::to_string(shape.vocab) + ")"};
    oneHot[b * shape.vocab + tokens[b]] = 0.0f;
  }
  return Tensor::fromFloat({batch, 1, shape.vocab}, oneHot);
}

int64_t qeff::runtime::referenceDeviceSample(const float *logits, int64_t vocab,
                                             const uint8_t *repetitionMask,
                                             const uint8_t *presenceMask,
                                             const DeviceSamplingParams &p,
                                             int64_t maxTopKIds,
                                             const float *uniforms) {
  std::vector<float> l(logits, logits + vocab);
  for (int64_t v = 0; v < vocab; ++v) {
    if (repetitionMask[v])
      l[v] = l[v] > 0.0f ? l[v] / p.repetitionPenalty : l[v] * p.repetitionPenalty;
    if (presenceMask[v])
      l[v] = l[v] - p.presencePenalty;
  }
  if (p.temperature == 0.0f)
    return std::max_element(l.begin(), l.end()) - l.begin();
  for (float &x : l)
    x = x / p.temperature;
  // TopK: descending, lower index first on ties.
  const int64_t K = maxTopKIds;
  std::vector<int64_t> order(vocab);
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + K, order.end(),
                    [&](int64_t a, int64_t b) {
                      return l[a] != l[b] ? l[a] > l[b] : a < b;
                    });
  int64_t k = p.topK > 0 && p.topK <= K ? p.topK : K;
  std::vector<float> kept(K), probs(K);
  for (int64_t j = 0; j < K; ++j)
    kept[j] = j < k ? l[order[j]] : kMinusInf;
  float mx = kept[0], sum = 0.0f;
  for (int64_t j = 0; j < K; ++j)
    sum += probs[j] = std::exp(kept[j] - mx);
  for (float &q : probs)
    q = q * (1.0f / sum);
  float before = 0.0f, best = kMinusInf;
  int64_t chosen = 0;
  for (int64_t j = 0; j < K; ++j) {
    bool keep = j < k && before < p.topP && probs[j] >= p.minP * probs[0];
    before += probs[j];
    float y = (keep ? l[order[j]] : kMinusInf) - std::log(-std::log(uniforms[j]));
    if (y > best) {
      best = y;
      chosen = j;
    }
  }
  return order[chosen];
}
