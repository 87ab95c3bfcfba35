//===- Choices.h - the sequences behind OpenAI's choices --------*- C++ -*-===//
//
// Part of qeff. How one OpenAI request becomes the sequences of a
// GenerationJob and their results its choices: n choices per prompt (choice
// j seeded with seed + j), best_of candidates ranked by cumulative logprob
// (vLLM's best_of), the constraint of response_format.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_SERVE_CHOICES_H
#define QEFF_RUNTIME_SERVE_CHOICES_H

#include "runtime/generation/TokenConstraint.h"
#include "runtime/serve/Protocol.h"
#include "runtime/structured/Vocabulary.h"
#include "runtime/serve/Scheduler.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace qeff::tokenizer {
class Tokenizer;
} // namespace qeff::tokenizer

namespace qeff::serve {

/// Appends `count` sequences of `prompt`: sequence j has `options` with
/// seed options.seed + j (mod 2^64), so the choices of a seeded request
/// with n = 4 are the outputs of four single requests seeded seed .. seed+3.
void addSequences(std::vector<GenerationJob::Sequence> &sequences,
                  const std::vector<int64_t> &prompt,
                  const runtime::GenerationOptions &options, int64_t count);

/// The sum of a sequence's token logprobs (vLLM's cumulative_logprob).
double cumulativeLogprob(const GenerationJob::Part &part);

/// best_of: of parts[first, first + count), the `n` with the highest
/// cumulative logprob, best first (the earlier on ties). Their logprobs
/// must have been computed (GenerationOptions::logprobs >= 0).
std::vector<size_t> bestCandidates(const std::vector<GenerationJob::Part> &parts,
                                   size_t first, size_t count, size_t n);

/// The constraint that makes the output follow `format` (null for text),
/// on a model whose tokenizer's `vocabulary` is given (null: JSON output
/// is refused, `unavailable` saying why). A schema that uses something
/// unsupported is a 400 naming the field down to the schema path.
std::optional<std::shared_ptr<const runtime::TokenConstraint>>
makeConstraint(const ResponseFormat &format,
               const std::shared_ptr<const structured::Vocabulary> &vocabulary,
               const std::string &unavailable, ApiError &error);

} // namespace qeff::serve

#endif // QEFF_RUNTIME_SERVE_CHOICES_H
