//===- TokenConstraint.h - constrained decoding -----------------*- C++ -*-===//
//
// Part of qeff. A constraint on what a sequence may generate (JSON, a JSON
// schema, ...), applied token by token: before each token is chosen the
// engine asks the sequence's matcher which ids may come next and masks the
// others out; after it, the matcher advances by the chosen id. The engine
// lets an EOS id through only when the output is complete, and ends the
// sequence when nothing but its end may follow.
//
// A constraint is shared (immutable, thread-safe); each sequence has its
// own matcher. No MLIR types.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_GENERATION_TOKENCONSTRAINT_H
#define QEFF_RUNTIME_GENERATION_TOKENCONSTRAINT_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace qeff::runtime {

/// The state of one constrained sequence.
class ConstraintMatcher {
public:
  virtual ~ConstraintMatcher() = default;
  /// Sets allowed[id] = 1 for every token id that may come next. `allowed`
  /// has one entry per logit (the model's vocabulary, which may be larger
  /// than the tokenizer's) and is all 0 on entry. EOS ids are the engine's
  /// business (canEnd), not the matcher's.
  virtual void allowedTokens(std::vector<uint8_t> &allowed) = 0;
  /// Advances by `token`. False when it was not allowed (the state is then
  /// unchanged).
  virtual bool accept(int64_t token) = 0;
  /// The output so far is complete: the sequence may end here.
  virtual bool canEnd() const = 0;
  /// Nothing but the end may follow.
  virtual bool mustEnd() const = 0;
};

/// What a sequence must generate.
class TokenConstraint {
public:
  virtual ~TokenConstraint() = default;
  /// A matcher at the start of a sequence.
  virtual std::unique_ptr<ConstraintMatcher> start() const = 0;
  /// For messages and logs, e.g. "JSON object" or "JSON schema".
  virtual std::string describe() const = 0;
};

} // namespace qeff::runtime

#endif // QEFF_RUNTIME_GENERATION_TOKENCONSTRAINT_H
