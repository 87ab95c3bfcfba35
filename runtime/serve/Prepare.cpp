//===- Prepare.cpp - a request's sampling into generation options ---------===//
//
// Part of qeff. Server::Impl::prepare: the checks that need the model (token
// ids against its vocabulary, token counts against its context, with
// overflow-checked arithmetic) and the GenerationOptions of one prompt.
//
//===----------------------------------------------------------------------===//

#include "runtime/serve/ServerImpl.h"

#include "support/CheckedMath.h"

#include <limits>
#include <random>

using namespace qeff::serve;

namespace {

/// The ids the logits have, for checking request token ids (0: unknown).
int64_t vocabularyOf(const ServedModel &model) {
  if (model.spec.vocabSize > 0)
    return model.spec.vocabSize;
  return model.spec.tokenizer ? int64_t(model.spec.tokenizer->vocabSize()) : 0;
}

/// An error naming `param` when an id is outside the vocabulary.
bool checkIds(const std::vector<int64_t> &ids, int64_t vocab, const std::string &param,
              ApiError &error) {
  if (vocab <= 0)
    return true;
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] >= vocab) {
      error = badRequest(param + "[" + std::to_string(i) + "]: token id " +
                             std::to_string(ids[i]) +
                             " is outside the vocabulary (0.." +
                             std::to_string(vocab - 1) + ")",
                         param);
      return false;
    }
  return true;
}

} // namespace

bool Server::Impl::checkDeviceSampling(const ServedModel &model,
                                       const SamplingParams &sampling,
                                       std::optional<int64_t> bestOf, int64_t n,
                                       ApiError &error) {
  if (!model.scheduler->samplesOnDevice())
    return true;
  const std::string why =
      " is not available with model '" + model.spec.name +
      "': its artifact samples on the device (qeff compile "
      "--on-device-sampling) and returns next tokens, not logits";
  std::string field;
  if (sampling.logprobs)
    field = "logprobs";
  else if (sampling.frequencyPenalty != 0.0)
    field = "frequency_penalty";
  else if (!sampling.logitBias.empty())
    field = "logit_bias";
  else if (sampling.minTokens > 0)
    field = "min_tokens";
  else if (sampling.responseFormat.type != ResponseFormat::Type::Text)
    field = sampling.responseFormat.param;
  else if (bestOf && *bestOf > n)
    field = "best_of"; // ranks its candidates by cumulative logprob
  if (!field.empty()) {
    error = badRequest(field + why, field);
    return false;
  }
  const int64_t limit = model.scheduler->maxTopKIds();
  if (sampling.topK > limit) {
    error = badRequest("top_k " + std::to_string(sampling.topK) +
                           " is above the " + std::to_string(limit) +
                           " most likely tokens model '" + model.spec.name +
                           "' samples from on the device (its max_top_k_ids)",
                       "top_k");
    return false;
  }
  return true;
}

std::optional<Server::Impl::Prepared>
Server::Impl::prepare(ServedModel &model, std::vector<int64_t> prompt,
                      const std::string &promptParam,
                      const SamplingParams &sampling, int64_t defaultMaxTokens,
                      ApiError &error) {
  const int64_t ctx = model.scheduler->ctxLen();
  const int64_t n = prompt.size();
  const int64_t vocab = vocabularyOf(model);
  if (!checkDeviceSampling(model, sampling, std::nullopt, 1, error))
    return std::nullopt;
  if (prompt.empty()) {
    error = badRequest(promptParam + " is empty: it encodes to no token (give "
                                     "at least one)",
                       promptParam);
    return std::nullopt;
  }
  if (!checkIds(prompt, vocab, promptParam, error) ||
      !checkIds(sampling.stopTokenIds, vocab, "stop_token_ids", error))
    return std::nullopt;
  for (const auto &[id, bias] : sampling.logitBias)
    if (vocab > 0 && id >= vocab) {
      error = badRequest("logit_bias: token id " + std::to_string(id) +
                             " is outside the vocabulary (0.." +
                             std::to_string(vocab - 1) + ")",
                         "logit_bias");
      return std::nullopt;
    }
  if (n >= ctx) {
    error = badRequest("This model's maximum context length is " +
                           std::to_string(ctx) + " tokens, but the " +
                           promptParam + " has " + std::to_string(n) +
                           " tokens, which leaves no room to generate (at "
                           "most " +
                           std::to_string(ctx - 1) + " prompt tokens)",
                       promptParam);
    error.code = "context_length_exceeded";
    return std::nullopt;
  }
  Prepared p;
  runtime::GenerationOptions &o = p.options;
  if (sampling.maxTokens) {
    // Saturating: max_tokens may be anything up to 2^63 - 1.
    int64_t requested = 0;
    if (!support::checkedAdd(n, *sampling.maxTokens, requested))
      requested = std::numeric_limits<int64_t>::max();
    if (requested > ctx) {
      error = badRequest(
          "This model's maximum context length is " + std::to_string(ctx) +
              " tokens, but you requested " +
              (requested == std::numeric_limits<int64_t>::max()
                   ? "more than 2^63 - 1"
                   : std::to_string(requested)) +
              " tokens (" + std::to_string(n) + " in the " + promptParam + ", " +
              std::to_string(*sampling.maxTokens) +
              " in max_tokens): reduce the prompt or max_tokens",
          "max_tokens");
      error.code = "context_length_exceeded";
      return std::nullopt;
    }
    o.maxNewTokens = *sampling.maxTokens;
  } else {
    o.maxNewTokens = defaultMaxTokens < 0 ? ctx - n
                                          : std::min(defaultMaxTokens, ctx - n);
  }
  if (sampling.minTokens > o.maxNewTokens) {
    error = badRequest("min_tokens (" + std::to_string(sampling.minTokens) +
                           ") must not exceed max_tokens (" +
                           std::to_string(o.maxNewTokens) +
                           (sampling.maxTokens ? "" : ", the default here") + ")",
                       "min_tokens");
    return std::nullopt;
  }
  if (!model.spec.tokenizer) {
    // Without a tokenizer there is no text: refuse what needs one.
    const char *needs = !sampling.stop.empty()          ? "stop"
                        : !sampling.skipSpecialTokens   ? "skip_special_tokens"
                                                        : nullptr;
    if (needs) {
      error = badRequest(std::string(needs) + " needs a tokenizer, and model '" +
                             model.spec.name + "' has none",
                         needs);
      return std::nullopt;
    }
  }
  o.temperature = sampling.temperature;
  o.topK = sampling.topK;
  o.topP = sampling.topP;
  o.minP = sampling.minP;
  o.repetitionPenalty = sampling.repetitionPenalty;
  o.presencePenalty = sampling.presencePenalty;
  o.frequencyPenalty = sampling.frequencyPenalty;
  o.logitBias = sampling.logitBias;
  o.seed = sampling.seed ? *sampling.seed : std::random_device{}();
  o.stopStrings = sampling.stop;
  o.stopTokenIds = sampling.stopTokenIds;
  o.minTokens = sampling.minTokens;
  o.includeStopInOutput = sampling.includeStopStrInOutput;
  o.skipSpecialTokens = sampling.skipSpecialTokens;
  // Completion text continues the prompt's (" upon a time" after "Once"),
  // as OpenAI's and vLLM's do.
  o.decodeAfterPrompt = true;
  o.logprobs = sampling.logprobs.value_or(-1);
  if (!sampling.ignoreEos)
    o.eosIds = model.spec.eosIds;
  p.prompt = std::move(prompt);
  return p;
}
