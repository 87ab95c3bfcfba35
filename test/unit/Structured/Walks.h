//===- Walks.h - random constrained generations for the tests ---*- C++ -*-===//
//
// Part of qeff's tests. A "walk" stands in for a model under a constraint:
// at each step it picks a uniformly random allowed token (seeded), and stops
// at mustEnd or, once the text may end, on a coin flip. After kWanderSteps it
// prefers tokens that close what is open, so every walk ends. On the way it
// checks what the engine relies on: an allowed token is accepted, a refused
// one is not, and a state that cannot end always allows something. The
// byte walk does the same on a compiled Program, byte by byte.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_TEST_UNIT_STRUCTURED_WALKS_H
#define QEFF_TEST_UNIT_STRUCTURED_WALKS_H

#include "TestTokenizers.h"
#include "runtime/structured/Program.h"

#include <string>
#include <vector>

namespace qeff::test {

constexpr int kWanderSteps = 300;
constexpr int kMaxSteps = 3000;

struct Walk {
  std::vector<int64_t> ids;
  std::string text; // the tokens' bytes, concatenated
  bool ended = false;
};

/// The bytes that bring the JSON text `text` closer to its end: close the
/// open string, else close the open container or pick a short value.
std::vector<std::string> closers(const std::string &text);

/// A walk of `c` over `v`'s tokens.
Walk randomWalk(const runtime::TokenConstraint &c, const TestVocab &v,
                unsigned seed);

/// A walk of `program` over bytes (every byte the matcher takes is a
/// candidate); `ids` stays empty.
Walk byteWalk(const structured::Program &program, unsigned seed);

} // namespace qeff::test

#endif // QEFF_TEST_UNIT_STRUCTURED_WALKS_H
