//===- DeviceSampler.h - generation on an on-device-sampling artifact -*- C++ -*-===//
//
// Part of qeff. An artifact compiled with `qeff compile --on-device-sampling`
// returns `next_tokens` [batch, 1] instead of logits and takes QEfficient's
// sampler inputs (repetition_penalties, presence_penalties, temperatures,
// top_ks, top_ps, min_ps, random_numbers; docs/device.md, "On-device
// sampling"). This feeds them from GenerationOptions and the request's
// seeded random stream, and holds the C++ reference of the graph's sampler
// (the same math on the same uniforms) that the tests compare it with.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_GENERATION_DEVICESAMPLER_H
#define QEFF_RUNTIME_GENERATION_DEVICESAMPLER_H

#include "qeff/runtime/Session.h"

#include <cstdint>
#include <string>
#include <vector>

namespace qeff::runtime {

struct GenerationOptions;

/// Whether the artifact samples on the device: an output named next_tokens.
bool samplesOnDevice(const Session &session);

/// The sampler's sizes, from the artifact's declared inputs.
struct DeviceSamplerShape {
  int64_t vocab = 0;      ///< past_repetition_penalty_buffer [rows, vocab]
  int64_t maxTopKIds = 0; ///< random_numbers [batch_size, max_top_k_ids]
};
Result<DeviceSamplerShape> readDeviceSamplerShape(const Session &session);

/// One row's sampling parameters, as the graph takes them.
struct DeviceSamplingParams {
  float repetitionPenalty = 1.0f, presencePenalty = 0.0f, temperature = 0.0f;
  int64_t topK = 0; ///< <= 0 or > max_top_k_ids: all max_top_k_ids
  float topP = 1.0f, minP = 0.0f;
};

/// "" when `options` can be sampled on the device, else which option the
/// on-device sampler does not implement, or a top_k above the artifact's
/// max_top_k_ids (the graph would sample among all of them instead).
std::string checkDeviceSamplingOptions(const GenerationOptions &options,
                                       const DeviceSamplerShape &shape);
/// "" when `options` can be sampled on the device, else the name of the
/// first option that needs logits on the host (logprobs,
/// frequency_penalty, logit_bias, constraint, min_tokens).
std::string deviceSamplingRefusedOption(const GenerationOptions &options);
DeviceSamplingParams deviceSamplingParams(const GenerationOptions &options);
/// The options the host applies to the device's choice: the choice itself
/// (greedy over a one-hot row), with the stop rules of `options`.
GenerationOptions hostOptionsForDeviceSampling(const GenerationOptions &options);

/// A uniform number in the open interval (0, 1): 24 random bits plus one
/// half, so that -log(-log(u)) is always finite.
float openUniform(uint64_t &state);

/// One lane of a sampled run: its sampling parameters and the stream its
/// `maxTopKIds` uniforms come from. A null stream marks a padding lane (no
/// sequence): it is fed fixed uniforms and draws nothing, so a sequence's
/// uniforms depend only on its own stream and the runs it takes part in,
/// not on which or how many other lanes are busy.
struct SamplerLane {
  DeviceSamplingParams params;
  uint64_t *rng = nullptr;
};

/// One run of `lanes.size()` rows of `seq` tokens with the sampler inputs
/// (each lane's parameters, `maxTopKIds` uniforms per lane drawn in lane
/// order); the device's choice as logits [batch, 1, vocab] that are 0 at
/// the chosen token and -inf elsewhere, so the generation loop's greedy
/// choice and stop rules apply to it unchanged.
Result<Tensor> runSampledStep(Session &session, const DeviceSamplerShape &shape,
                              const std::vector<SamplerLane> &lanes, int64_t seq,
                              const std::vector<int64_t> &ids,
                              const std::vector<int64_t> &positions,
                              const std::vector<int64_t> *batchIndex);

/// The C++ reference of qeff.sample for one row (QEffSamplerOps.td): the
/// penalties where the masks are set, greedy for temperature 0, else the
/// Gumbel-max choice among the `maxTopKIds` largest scaled logits kept by
/// top-k, top-p and min-p, with `uniforms` (maxTopKIds of them). Float
/// arithmetic in the graph's order.
int64_t referenceDeviceSample(const float *logits, int64_t vocab,
                              const uint8_t *repetitionMask,
                              const uint8_t *presenceMask,
                              const DeviceSamplingParams &params,
                              int64_t maxTopKIds, const float *uniforms);

} // namespace qeff::runtime

#endif // QEFF_RUNTIME_GENERATION_DEVICESAMPLER_H
