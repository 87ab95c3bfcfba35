//===- Machine.h - a byte-level pushdown matcher for a Program --*- C++ -*-===//
//
// Part of qeff. Runs a compiled schema (Program.h) over bytes. A parse is a
// stack of frames (an object being read, the string inside it, ...) kept as
// a persistent linked list in an arena: a step copies the top frame and
// points at the unchanged rest, so a state is just its top frames, and
// trying a byte then forgetting it is a rewind of the arena. A state holds
// several stacks when the text so far fits several alternatives (anyOf, a
// declared key versus another key, a number that may end or go on); equal
// stacks are merged, and a state keeps at most kMaxStacks of them (the
// first ones; the compiler merges literal alternatives, so ordinary schemas
// stay far below that).
//
// Every state the machine enters can still finish: a container only offers
// what fits in the depth left (Alt::minDepth), a number only prefixes that
// can end inside its bounds, a key only names that are still allowed.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_STRUCTURED_MACHINE_H
#define QEFF_RUNTIME_STRUCTURED_MACHINE_H

#include "runtime/structured/Program.h"

#include <cstdint>
#include <string_view>
#include <vector>

namespace qeff::structured {

/// Stacks a state may hold (ambiguity bound).
constexpr size_t kMaxStacks = 256;

/// One level of a parse stack; 40 bytes, compared bytewise (no padding).
struct Frame {
  int32_t parent = -1; // frame index, -1: the document
  uint8_t kind = 0;    // FrameKind
  uint8_t phase = 0;
  uint16_t level = 0; // containers around the value
  int32_t index = 0;  // into the Program table of the kind
  uint32_t count = 0; // trie node, code points, next property, items
  int32_t aux = 0;    // chosen property, high surrogate, number digits
  int32_t spare = 0;
  int64_t x = 0, y = 0; // string state and excluded-name node; number parts
};
static_assert(sizeof(Frame) == 40, "Frame must have no padding");

enum FrameKind : uint8_t { kLiteral, kKey, kString, kNumber, kObject, kArray };

class Machine {
public:
  /// A state: tops [begin, end) of the pool, waiting for a byte, and whether
  /// the document may end here.
  struct State {
    uint32_t begin = 0, end = 0;
    bool accepting = false;
    bool dead() const { return begin == end && !accepting; }
    bool finished() const { return begin == end; }
    size_t size() const { return end - begin; }
  };
  /// Sizes of the arena and pool, for rewinding.
  struct Mark {
    size_t frames, tops;
  };

  explicit Machine(const Program &program) : p_(program) {}

  /// Clears everything and returns the state before the first byte.
  State start();
  /// The state after `byte` from `in` (appended to the pool: `in` stays
  /// valid). Dead when the byte is refused.
  State advance(const State &in, uint8_t byte);

  Mark mark() const { return {frames_.size(), tops_.size()}; }
  void rewind(const Mark &m) {
    frames_.resize(m.frames);
    tops_.resize(m.tops);
  }
  /// Keeps only `s` (and what its stacks reach): the pool then holds s's
  /// tops at [0, n) and the arena only their frames. Returns the new s.
  State compact(const State &s);
  size_t arenaSize() const { return frames_.size(); }

  const Frame &frame(int32_t i) const { return frames_[i]; }
  int32_t top(uint32_t i) const { return tops_[i]; }
  const Program &program() const { return p_; }

private:
  /// The state being built by advance/start.
  struct Out {
    uint32_t begin;
    bool accepting = false;
  };

  int32_t push(const Frame &f) {
    frames_.push_back(f);
    return int32_t(frames_.size() - 1);
  }
  void ready(int32_t frame, Out &out);
  /// Opens every alternative of `schema` that fits at `level`.
  void dispatch(int32_t parent, uint16_t level, int32_t schema, Out &out);
  /// A frame finished: resume its parent with `result` (the property a key
  /// chose, -1 otherwise), or accept the document.
  void finish(int32_t parent, int32_t result, Out &out);

  void stepFrame(int32_t index, uint8_t byte, Out &out);
  void stepObject(Frame f, uint8_t byte, Out &out);
  void stepArray(Frame f, uint8_t byte, Out &out);
  void stepKey(Frame f, uint8_t byte, Out &out);
  void stepString(Frame f, uint8_t byte, Out &out);
  void stepNumber(Frame f, uint8_t byte, Out &out);

  // Objects and arrays.
  bool fits(uint16_t level, int32_t schema) const;
  bool closable(const ObjectShape &shape, uint32_t next) const;
  bool propertyAllowed(const ObjectShape &shape, uint32_t next, int32_t prop,
                       uint16_t level) const;
  bool additionalAllowed(const ObjectShape &shape, uint32_t next,
                         uint16_t level) const;
  bool keyPrefixAllowed(const ObjectShape &shape, int32_t node, uint32_t next,
                        uint16_t level) const;
  bool moreMembers(const ObjectShape &shape, uint32_t next,
                   uint16_t level) const;
  /// Opens the keys that may come next in object frame `f`.
  void pushKeys(Frame f, Out &out);
  void pushMemberValue(Frame f, Out &out);
  bool canAddItem(const Frame &f) const;
  void pushItem(Frame f, Out &out);

  const Program &p_;
  std::vector<Frame> frames_;
  std::vector<int32_t> tops_;
};

/// Whether `text` is, byte for byte, a document `program` accepts (tests
/// and tools; the constraint uses Machine directly).
bool matchesText(const Program &program, std::string_view text);

} // namespace qeff::structured

#endif // QEFF_RUNTIME_STRUCTURED_MACHINE_H
