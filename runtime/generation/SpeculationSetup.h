//===- SpeculationSetup.h - a proposer from --speculate ----------*- C++ -*-===//
//
// Part of qeff. The one place that turns what a user asked for (`--speculate
// prompt-lookup` or `draft=DIR`, serve's --speculative-config) into a
// Proposer: it opens the draft model, checks that it fits the target (rows,
// context) and owns its session. `qeff run/infer` and
// `qeff serve` both call it, each with its own error prefix.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_GENERATION_SPECULATIONSETUP_H
#define QEFF_RUNTIME_GENERATION_SPECULATIONSETUP_H

#include "qeff/runtime/Session.h"
#include "runtime/generation/Speculative.h"

namespace qeff::runtime {

struct GenerationOptions;

/// `--speculate VALUE`: "prompt-lookup" or "draft=DIR" (DIR not empty).
/// The error says what is accepted, without the flag's name.
Result<SpeculationSpec> parseSpeculateFlag(const std::string &value);

/// What a proposer must fit.
struct ProposerTarget {
  /// The target's decode lanes (batch, or cache rows with continuous
  /// batching) and ctx_len.
  int64_t rows = 0, ctxLen = 0;
};

/// The proposer of `spec`. A draft model is opened from
/// `spec.draftArtifactDir` with `device` and `options` (the target's) and
/// owned by the proposer; it proposes with `draftOptions` (greedy when
/// temperature is 0). A draft is refused at set-up when it is not a
/// compiled artifact or has fewer rows or a shorter context than the
/// target. Draft errors start with "the draft model DIR: ".
Result<std::shared_ptr<Proposer>>
makeProposer(const SpeculationSpec &spec, DeviceKind device,
             const SessionOptions &options, const ProposerTarget &target,
             const GenerationOptions &draftOptions);

} // namespace qeff::runtime

#endif // QEFF_RUNTIME_GENERATION_SPECULATIONSETUP_H
