//===- Choices.cpp - the sequences behind OpenAI's choices ----------------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "runtime/serve/Choices.h"

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
makeConstraint(const ResponseFormat &format, const tokenizer::Tokenizer *tokenizer,
               int64_t vocabSize, ApiError &error) {
  (void)tokenizer;
  (void)vocabSize;
  if (format.type == ResponseFormat::Type::Text)
    return std::shared_ptr<const runtime::TokenConstraint>();
  const char *what = format.type == ResponseFormat::Type::JsonObject
                         ? "{\"type\": \"json_object\"}"
                         : "{\"type\": \"json_schema\"}";
  error = badRequest(format.param + ": " +
                         (format.param == "response_format"
                              ? std::string(what)
                              : std::string("a JSON schema")) +
                         " is not supported by qeff serve yet (JSON-constrained "
                         "decoding is being built); use {\"type\": \"text\"}",
                     format.param);
  return std::nullopt;
}

} // namespace qeff::serve
