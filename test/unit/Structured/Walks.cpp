//===- Walks.cpp - random constrained generations for the tests -----------===//
//
// Part of qeff's tests. See Walks.h.
//
//===----------------------------------------------------------------------===//

#include "Walks.h"
#include "runtime/structured/Machine.h"

#include <algorithm>
#include <random>

namespace qeff::test {

std::vector<std::string> closers(const std::string &text) {
  bool inString = false, escaped = false;
  std::string stack;
  char last = 0;
  for (char c : text) {
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '{' || c == '[') {
      stack += c == '{' ? '}' : ']';
    } else if ((c == '}' || c == ']') && !stack.empty()) {
      stack.pop_back();
    }
    if (c != ' ')
      last = c;
  }
  if (inString)
    return {"\""};
  std::string close = stack.empty() ? "" : std::string(1, stack.back());
  if (last == ':' || last == ',' || last == '[' || last == '{')
    return {close, "0", "\"", "n", "t", "f", "[", "{"};
  return {close, ","};
}

Walk randomWalk(const runtime::TokenConstraint &c, const test::TestVocab &v,
                unsigned seed) {
  std::mt19937 rng(seed);
  const size_t n = v.tokenizer.vocabSize();
  auto m = c.start();
  Walk walk;
  for (int step = 0; step < kMaxSteps; ++step) {
    if (m->mustEnd() || (m->canEnd() && rng() % 4 == 0)) {
      walk.ended = true;
      return walk;
    }
    std::vector<uint8_t> mask(n, 0);
    m->allowedTokens(mask);
    std::vector<int64_t> allowed;
    for (size_t t = 0; t < n; ++t)
      if (mask[t])
        allowed.push_back(int64_t(t));
    if (allowed.empty()) {
      walk.ended = m->canEnd();
      EXPECT_TRUE(walk.ended)
          << v.name << " seed " << seed << ": dead end after " << walk.text;
      return walk;
    }
    int64_t pick = allowed[rng() % allowed.size()];
    // After wandering long enough, head for the end (a single-byte token
    // of the most closing kind that is allowed).
    if (step >= kWanderSteps)
      for (const std::string &closer : closers(walk.text)) {
        auto it = std::find_if(allowed.begin(), allowed.end(), [&](int64_t t) {
          const std::string *b = v.vocab->bytes(t, walk.ids.empty());
          return b && *b == closer;
        });
        if (it != allowed.end()) {
          pick = *it;
          break;
        }
      }
    // A token outside the mask is refused and leaves the state alone.
    int64_t other = int64_t(rng() % n);
    if (!mask[other])
      EXPECT_FALSE(m->accept(other)) << v.name << " token " << other;
    const std::string *bytes = v.vocab->bytes(pick, walk.ids.empty());
    EXPECT_TRUE(bytes);
    EXPECT_TRUE(m->accept(pick)) << v.name << " token " << pick;
    walk.text += *bytes;
    walk.ids.push_back(pick);
  }
  ADD_FAILURE() << v.name << " seed " << seed << ": no end after " << kMaxSteps
                << " tokens: " << walk.text.substr(0, 2000);
  return walk;
}

Walk byteWalk(const structured::Program &program, unsigned seed) {
  std::mt19937 rng(seed);
  structured::Machine m(program);
  structured::Machine::State s = m.start();
  Walk walk;
  for (int step = 0; step < kMaxSteps; ++step) {
    if (s.finished() || (s.accepting && rng() % 4 == 0)) {
      walk.ended = s.accepting;
      return walk;
    }
    std::vector<uint8_t> next;
    for (int byte = 0; byte < 256; ++byte) {
      structured::Machine::Mark mark = m.mark();
      if (!m.advance(s, uint8_t(byte)).dead())
        next.push_back(uint8_t(byte));
      m.rewind(mark);
    }
    if (next.empty()) {
      ADD_FAILURE() << "seed " << seed << ": dead end after " << walk.text;
      return walk;
    }
    uint8_t pick = next[rng() % next.size()];
    if (step >= kWanderSteps)
      for (const std::string &closer : closers(walk.text))
        if (closer.size() == 1 && std::find(next.begin(), next.end(),
                                            uint8_t(closer[0])) != next.end()) {
          pick = uint8_t(closer[0]);
          break;
        }
    walk.text += char(pick);
    s = m.advance(s, pick);
    if (m.arenaSize() > 4096)
      s = m.compact(s);
  }
  ADD_FAILURE() << "seed " << seed << ": no end after " << kMaxSteps
                << " bytes: " << walk.text.substr(0, 2000);
  return walk;
}

} // namespace qeff::test
