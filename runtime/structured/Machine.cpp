//===- Machine.cpp - a byte-level pushdown matcher for a Program ----------===//
//
// Part of qeff. See Machine.h. The JSON text the machine reads is compact by
// design: no whitespace except at most one space after ':' and after ','
// (so a generation cannot run away in whitespace), no whitespace before or
// after the document.
//
//===----------------------------------------------------------------------===//

#include "runtime/structured/Machine.h"
#include "runtime/structured/Lexemes.h"

#include <algorithm>
#include <cstring>

namespace qeff::structured {
namespace {

enum ObjectPhase : uint8_t {
  kObjOpen,       // '{'
  kObjEmpty,      // after '{': '}' (keys are child frames)
  kObjInKey,      // parent of a key frame
  kObjColon,      // ':'
  kObjSpaceValue, // after ':': an optional ' ' (the value is a child frame)
  kObjInValue,    // parent of a value frame
  kObjAfter,      // ',' or '}'
  kObjSpaceKey,   // after ',': an optional ' ' (keys are child frames)
};

enum ArrayPhase : uint8_t {
  kArrOpen,      // '['
  kArrEmpty,     // after '[': ']' (the first item is a child frame)
  kArrInItem,    // parent of an item frame
  kArrAfter,     // ',' or ']'
  kArrSpaceItem, // after ',': an optional ' ' (the item is a child frame)
};

enum StringPhase : uint8_t { kStrOpen, kStrBody };

NumberState loadNumber(const Frame &f) {
  NumberState s;
  s.phase = f.phase;
  s.intDigits = uint8_t(f.aux);
  s.fracDigits = uint8_t(f.aux >> 8);
  s.expDigits = uint8_t(f.aux >> 16);
  s.negative = (f.aux >> 24) & 1;
  s.intPart = f.x;
  s.fracPart = f.y;
  return s;
}

void storeNumber(Frame &f, const NumberState &s) {
  f.phase = s.phase;
  f.aux = int32_t(s.intDigits) | int32_t(s.fracDigits) << 8 |
          int32_t(s.expDigits) << 16 | int32_t(s.negative) << 24;
  f.x = s.intPart;
  f.y = s.fracPart;
}

} // namespace

//===----------------------------------------------------------------------===//
// States
//===----------------------------------------------------------------------===//

void Machine::ready(int32_t index, Out &out) {
  const Frame &f = frames_[index];
  for (size_t i = out.begin; i < tops_.size(); ++i)
    if (std::memcmp(&frames_[tops_[i]], &f, sizeof(Frame)) == 0) {
      if (size_t(index) + 1 == frames_.size())
        frames_.pop_back();
      return;
    }
  // Beyond the bound the stack is dropped: every stack can finish on its
  // own, so the others still lead to valid documents (a restriction, never
  // a dead end).
  if (tops_.size() - out.begin >= kMaxStacks) {
    if (size_t(index) + 1 == frames_.size())
      frames_.pop_back();
    return;
  }
  tops_.push_back(index);
}

Machine::State Machine::start() {
  frames_.clear();
  tops_.clear();
  Out out{0};
  dispatch(-1, 0, p_.root, out);
  return {0, uint32_t(tops_.size()), out.accepting};
}

Machine::State Machine::advance(const State &in, uint8_t byte) {
  Out out{uint32_t(tops_.size())};
  for (uint32_t i = in.begin; i < in.end; ++i)
    stepFrame(tops_[i], byte, out);
  return {out.begin, uint32_t(tops_.size()), out.accepting};
}

Machine::State Machine::compact(const State &s) {
  std::vector<int32_t> remap(frames_.size(), -1);
  for (uint32_t i = s.begin; i < s.end; ++i)
    for (int32_t f = tops_[i]; f >= 0 && remap[f] == -1; f = frames_[f].parent)
      remap[f] = 0;
  // Parents always precede their children, so one pass in order keeps
  // every parent index valid.
  std::vector<Frame> kept;
  for (size_t f = 0; f < frames_.size(); ++f) {
    if (remap[f] == -1)
      continue;
    Frame frame = frames_[f];
    if (frame.parent >= 0)
      frame.parent = remap[frame.parent];
    remap[f] = int32_t(kept.size());
    kept.push_back(frame);
  }
  std::vector<int32_t> tops;
  for (uint32_t i = s.begin; i < s.end; ++i)
    tops.push_back(remap[tops_[i]]);
  frames_ = std::move(kept);
  tops_ = std::move(tops);
  return {0, uint32_t(tops_.size()), s.accepting};
}

void Machine::dispatch(int32_t parent, uint16_t level, int32_t schema,
                       Out &out) {
  for (const Alt &alt : p_.schemas[schema].alts) {
    if (level + alt.minDepth > p_.maxDepth)
      continue;
    Frame f;
    f.parent = parent;
    f.level = level;
    f.index = alt.index;
    switch (alt.kind) {
    case AltKind::Literal:
      f.kind = kLiteral;
      break;
    case AltKind::String:
      f.kind = kString, f.phase = kStrOpen;
      break;
    case AltKind::Number:
      f.kind = kNumber;
      storeNumber(f, NumberState{});
      break;
    case AltKind::Object:
      f.kind = kObject, f.phase = kObjOpen;
      break;
    case AltKind::Array:
      f.kind = kArray, f.phase = kArrOpen;
      break;
    }
    ready(push(f), out);
  }
}

void Machine::finish(int32_t parent, int32_t result, Out &out) {
  if (parent < 0) {
    out.accepting = true;
    return;
  }
  Frame p = frames_[parent];
  if (p.kind == kObject && p.phase == kObjInKey) {
    p.aux = result;
    p.phase = kObjColon;
  } else if (p.kind == kObject) {
    p.count = p.aux >= 0 ? uint32_t(p.aux) + 1
                         : uint32_t(p_.objects[p.index].props.size());
    p.phase = kObjAfter;
  } else {
    ++p.count;
    p.phase = kArrAfter;
  }
  ready(push(p), out);
}

void Machine::stepFrame(int32_t index, uint8_t byte, Out &out) {
  Frame f = frames_[index];
  switch (f.kind) {
  case kLiteral: {
    const Trie &trie = p_.tries[f.index];
    int32_t child = trie.child(int32_t(f.count), byte);
    if (child < 0)
      return;
    if (trie.nodes[child].value >= 0)
      finish(f.parent, -1, out);
    if (!trie.nodes[child].next.empty()) {
      f.count = uint32_t(child);
      ready(push(f), out);
    }
    return;
  }
  case kKey:
    return stepKey(f, byte, out);
  case kString:
    return stepString(f, byte, out);
  case kNumber:
    return stepNumber(f, byte, out);
  case kObject:
    return stepObject(f, byte, out);
  case kArray:
    return stepArray(f, byte, out);
  }
}

//===----------------------------------------------------------------------===//
// Objects
//===----------------------------------------------------------------------===//

bool Machine::fits(uint16_t level, int32_t schema) const {
  return level + p_.schemas[schema].minDepth <= p_.maxDepth;
}

bool Machine::closable(const ObjectShape &shape, uint32_t next) const {
  return shape.nextRequired[next] == shape.props.size();
}

bool Machine::propertyAllowed(const ObjectShape &shape, uint32_t next,
                              int32_t prop, uint16_t level) const {
  return uint32_t(prop) >= next && uint32_t(prop) <= shape.nextRequired[next] &&
         uint32_t(prop) < shape.props.size() &&
         fits(level + 1, shape.props[prop].schema);
}

bool Machine::additionalAllowed(const ObjectShape &shape, uint32_t next,
                                uint16_t level) const {
  return shape.additional >= 0 && closable(shape, next) &&
         fits(level + 1, shape.additional);
}

bool Machine::keyPrefixAllowed(const ObjectShape &shape, int32_t node,
                               uint32_t next, uint16_t level) const {
  const std::vector<int32_t> &below = p_.tries[shape.keys].nodes[node].below;
  for (auto it = std::lower_bound(below.begin(), below.end(), int32_t(next));
       it != below.end() && uint32_t(*it) <= shape.nextRequired[next]; ++it)
    if (propertyAllowed(shape, next, *it, level))
      return true;
  return false;
}

bool Machine::moreMembers(const ObjectShape &shape, uint32_t next,
                          uint16_t level) const {
  if (!closable(shape, next))
    return true; // a required property (it fits: the object did)
  for (uint32_t j = next; j < shape.props.size(); ++j)
    if (fits(level + 1, shape.props[j].schema))
      return true;
  return additionalAllowed(shape, next, level);
}

void Machine::pushKeys(Frame f, Out &out) {
  const ObjectShape &shape = p_.objects[f.index];
  f.phase = kObjInKey;
  int32_t parent = -1;
  if (shape.keys >= 0 && keyPrefixAllowed(shape, 0, f.count, f.level)) {
    parent = push(f);
    Frame key;
    key.parent = parent;
    key.kind = kKey;
    key.level = f.level;
    key.index = f.index;
    ready(push(key), out);
  }
  if (additionalAllowed(shape, f.count, f.level)) {
    if (parent < 0)
      parent = push(f);
    Frame key;
    key.parent = parent;
    key.kind = kString;
    key.phase = kStrOpen;
    key.level = f.level;
    key.index = shape.additionalKey;
    ready(push(key), out);
  }
}

void Machine::pushMemberValue(Frame f, Out &out) {
  const ObjectShape &shape = p_.objects[f.index];
  int32_t schema = f.aux >= 0 ? shape.props[f.aux].schema : shape.additional;
  f.phase = kObjInValue;
  int32_t parent = push(f);
  dispatch(parent, uint16_t(f.level + 1), schema, out);
}

void Machine::stepObject(Frame f, uint8_t byte, Out &out) {
  const ObjectShape &shape = p_.objects[f.index];
  switch (f.phase) {
  case kObjOpen:
    if (byte != '{')
      return;
    f.phase = kObjEmpty;
    if (closable(shape, f.count))
      ready(push(f), out);
    return pushKeys(f, out);
  case kObjEmpty:
    if (byte == '}' && closable(shape, f.count))
      finish(f.parent, -1, out);
    return;
  case kObjColon:
    if (byte != ':')
      return;
    f.phase = kObjSpaceValue;
    ready(push(f), out);
    return pushMemberValue(f, out);
  case kObjSpaceValue:
    if (byte == ' ')
      pushMemberValue(f, out);
    return;
  case kObjAfter:
    if (byte == ',' && moreMembers(shape, f.count, f.level)) {
      f.phase = kObjSpaceKey;
      ready(push(f), out);
      pushKeys(f, out);
    } else if (byte == '}' && closable(shape, f.count)) {
      finish(f.parent, -1, out);
    }
    return;
  case kObjSpaceKey:
    if (byte == ' ')
      pushKeys(f, out);
    return;
  default:
    return;
  }
}

void Machine::stepKey(Frame f, uint8_t byte, Out &out) {
  const ObjectShape &shape = p_.objects[f.index];
  const Trie &trie = p_.tries[shape.keys];
  int32_t child = trie.child(int32_t(f.count), byte);
  if (child < 0)
    return;
  const Frame &object = frames_[f.parent];
  if (!keyPrefixAllowed(shape, child, object.count, object.level))
    return;
  if (trie.nodes[child].value >= 0)
    finish(f.parent, trie.nodes[child].value, out);
  if (!trie.nodes[child].next.empty()) {
    f.count = uint32_t(child);
    ready(push(f), out);
  }
}

//===----------------------------------------------------------------------===//
// Arrays
//===----------------------------------------------------------------------===//

bool Machine::canAddItem(const Frame &f) const {
  const ArrayShape &shape = p_.arrays[f.index];
  int32_t item = shape.itemAt(f.count);
  return f.count < shape.maxItems && item >= 0 && fits(f.level + 1, item);
}

void Machine::pushItem(Frame f, Out &out) {
  int32_t item = p_.arrays[f.index].itemAt(f.count);
  f.phase = kArrInItem;
  int32_t parent = push(f);
  dispatch(parent, uint16_t(f.level + 1), item, out);
}

void Machine::stepArray(Frame f, uint8_t byte, Out &out) {
  const ArrayShape &shape = p_.arrays[f.index];
  switch (f.phase) {
  case kArrOpen:
    if (byte != '[')
      return;
    f.phase = kArrEmpty;
    if (shape.minItems == 0)
      ready(push(f), out);
    if (canAddItem(f))
      pushItem(f, out);
    return;
  case kArrEmpty:
    if (byte == ']' && shape.minItems == 0)
      finish(f.parent, -1, out);
    return;
  case kArrAfter:
    if (byte == ',' && canAddItem(f)) {
      f.phase = kArrSpaceItem;
      ready(push(f), out);
      pushItem(f, out);
    } else if (byte == ']' && f.count >= shape.minItems) {
      finish(f.parent, -1, out);
    }
    return;
  case kArrSpaceItem:
    if (byte == ' ')
      pushItem(f, out);
    return;
  default:
    return;
  }
}

//===----------------------------------------------------------------------===//
// Strings and numbers
//===----------------------------------------------------------------------===//

void Machine::stepString(Frame f, uint8_t byte, Out &out) {
  const StringSpec &spec = p_.strings[f.index];
  if (f.phase == kStrOpen) {
    if (byte != '"')
      return;
    f.phase = kStrBody;
    f.x = StringState{}.pack();
    f.y = spec.exclude >= 0 ? 0 : -1;
    ready(push(f), out);
    return;
  }
  StringState s = StringState::unpack(f.x);
  uint32_t high = uint32_t(f.aux);
  StringStep step = structured::stepString(s, high, byte, p_.guardCleanUp);
  if (step.result == StringResult::Dead)
    return;
  if (step.newChar) {
    if (f.count >= spec.maxLength)
      return;
    ++f.count;
  }
  if (f.y >= 0) {
    const Trie &names = p_.tries[spec.exclude];
    for (uint8_t i = 0; i < step.nfeed && f.y >= 0; ++i)
      f.y = names.child(int32_t(f.y), step.feed[i]);
  }
  if (step.result == StringResult::Closed) {
    if (f.count < spec.minLength)
      return;
    if (f.y >= 0 && p_.tries[spec.exclude].nodes[f.y].value >= 0)
      return; // spells a declared property's name
    return finish(f.parent, -1, out);
  }
  f.x = s.pack();
  f.aux = int32_t(high);
  ready(push(f), out);
}

void Machine::stepNumber(Frame f, uint8_t byte, Out &out) {
  const NumberSpec &spec = p_.numbers[f.index];
  NumberState s = loadNumber(f);
  if (!structured::stepNumber(spec, s, byte))
    return;
  storeNumber(f, s);
  if (numberCanContinue(spec, s))
    ready(push(f), out);
  if (numberCanEnd(spec, s))
    finish(f.parent, -1, out);
}

bool matchesText(const Program &program, std::string_view text) {
  Machine machine(program);
  Machine::State s = machine.start();
  for (size_t i = 0; i < text.size(); ++i) {
    s = machine.advance(s, uint8_t(text[i]));
    if (s.dead())
      return false;
    if (machine.arenaSize() > 4096)
      s = machine.compact(s);
  }
  return s.accepting;
}

} // namespace qeff::structured
