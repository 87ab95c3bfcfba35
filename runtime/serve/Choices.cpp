//===- Choices.cpp - the sequences behind OpenAI's choices ----------------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "runtime/serve/Choices.h"

#include "runtime/structured/JsonConstraint.h"

#include <algorithm>
#include <numeric>

namespace qeff::serve {

void addSequences(std::vector<GenerationJob::Sequence> &sequences,
                  const std::vector<int64_t> &prompt,
                  const runtime::GenerationOptions &options, int64_t count) {
  for (int64_t j = 0; j < count; ++j) {
    GenerationJob::Sequence seq{prompt, options};
    seq.options.seed = options.seed + uint64_t(j);
    sequences.push_back(std::move(seq));
  }
}

double cumulativeLogprob(const GenerationJob::Part &part) {
  double sum = 0;
  for (const runtime::TokenLogprobs &t : part.logprobs)
    sum += t.logprob;
  return sum;
}

std::vector<size_t> bestCandidates(const std::vector<GenerationJob::Part> &parts,
                                   size_t first, size_t count, size_t n) {
  std::vector<size_t> order(count);
  std::iota(order.begin(), order.end(), first);
  std::vector<double> score(parts.size());
  for (size_t i : order)
    score[i] = cumulativeLogprob(parts[i]);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return score[a] > score[b]; });
  order.resize(std::min(n, count));
  return order;
}

std::optional<std::shared_ptr<const runtime::TokenConstraint>>
makeConstraint(const ResponseFormat &format,
               const std::shared_ptr<const structured::Vocabulary> &vocabulary,
               const std::string &unavailable, ApiError &error) {
  if (format.type == ResponseFormat::Type::Text)
    return std::shared_ptr<const runtime::TokenConstraint>();
  if (!vocabulary) {
    error = badRequest(format.param + ": JSON output is not available for this "
                                      "model: " + unavailable,
                       format.param);
    return std::nullopt;
  }
  const bool jsonMode = format.type == ResponseFormat::Type::JsonObject;
  const std::string where = format.param == "guided_json"
                                ? std::string("guided_json")
                                : format.param + ".json_schema.schema";
  std::string why;
  std::shared_ptr<const runtime::TokenConstraint> constraint =
      structured::makeJsonConstraint(vocabulary, jsonMode ? nullptr : &format.schema,
                                     where, why);
  if (!constraint) {
    error = badRequest(why, format.param);
    return std::nullopt;
  }
  return constraint;
}

} // namespace qeff::serve
