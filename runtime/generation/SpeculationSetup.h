//===- SpeculationSetup.h - a proposer from --speculate ----------*- C++ -*-===//
//
// Part of qeff. The one place that turns what a user asked for (`--speculate
// prompt-lookup` or `draft=DIR`, serve's --speculative-config) into a
// Proposer: it opens the draft model, checks that it fits the target (rows,
// context, vocabulary, tokenizer) and owns its session. `qeff run/infer` and
// `qeff serve` both call it, each with its own error prefix.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_GENERATION_SPECULATIONSETUP_H
#define QEFF_RUNTIME_GENERATION_SPECULATIONSETUP_H

#include "qeff/runtime/Session.h"
#include "runtime/generation/Speculative.h"

namespace qeff::tokenizer {
class Tokenizer;
} // namespace qeff::tokenizer

namespace qeff::runtime {

struct GenerationOptions;

/// `--speculate VALUE`: "prompt-lookup" or "draft=DIR" (DIR not empty).
/// The error says what is accepted, without the flag's name.
Result<SpeculationSpec> parseSpeculateFlag(const std::string &value);

/// What a proposer must fit.
struct ProposerTarget {
  /// The target's session: its logits give the vocabulary size.
  const Session *session = nullptr;
  /// Its decode lanes (batch, or cache rows with continuous batching) and
  /// ctx_len.
  int64_t rows = 0, ctxLen = 0;
  /// Its tokenizer (null: it has none).
  const tokenizer::Tokenizer *tokenizer = nullptr;
};

/// The proposer of `spec`. A draft model is opened from
/// `spec.draftArtifactDir` with `device` and `options` (the target's) and
/// owned by the proposer; it proposes with `draftOptions` (greedy when
/// temperature is 0). A draft is refused at set-up when it has fewer rows
/// or a shorter context than the target, a larger vocabulary (it could
/// propose ids the target has not), or a tokenizer that maps some id to
/// another token than the target's (checkDraftVocabulary). Draft errors
/// start with "the draft model DIR: ".
Result<std::shared_ptr<Proposer>>
makeProposer(const SpeculationSpec &spec, DeviceKind device,
             const SessionOptions &options, const ProposerTarget &target,
             const GenerationOptions &draftOptions);

/// The vocabulary size of `session`'s logits (their last dimension, fixed
/// at compile time).
Result<int64_t> logitsVocabulary(const Session &session);

/// Whether a draft of `draftVocab` logits can propose to a target of
/// `targetVocab`: never with a larger vocabulary; with the same or a smaller
/// one when the tokenizers agree on every id (both given and equal), or,
/// with the same vocabulary, when either has no tokenizer to compare (what
/// vLLM and HF assisted generation take as "same tokenizer"). A smaller
/// vocabulary without both tokenizers is refused: nothing says that its ids
/// mean the target's.
Status checkDraftVocabulary(int64_t targetVocab, int64_t draftVocab,
                            const tokenizer::Tokenizer *targetTokenizer,
                            const tokenizer::Tokenizer *draftTokenizer);

} // namespace qeff::runtime

#endif // QEFF_RUNTIME_GENERATION_SPECULATIONSETUP_H
