//===- SchemaAnalysis.cpp - passes over a compiled schema table -----------===//
//
// Part of qeff. The parts of schema compilation that look at more than one
// keyword: union flattening ($ref/anyOf chains, refusing cycles that would
// read nothing), one trie for all literals of a schema, the least nesting
// depth of every schema (which also finds
// the schemas no finite value satisfies), exact decimal bounds of numbers,
// and JSON Schema's equality for enum/const. Plus the literal trie.
//
//===----------------------------------------------------------------------===//

#include "runtime/structured/Lexemes.h"
#include "runtime/structured/SchemaCompilerImpl.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_set>

namespace qeff::structured {

//===----------------------------------------------------------------------===//
// Trie
//===----------------------------------------------------------------------===//

bool Trie::insert(std::string_view text, int32_t value) {
  int32_t node = 0;
  for (char c : text) {
    uint8_t byte = uint8_t(c);
    int32_t next = child(node, byte);
    if (next < 0) {
      next = int32_t(nodes.size());
      nodes.emplace_back();
      auto &edges = nodes[node].next;
      auto at = std::lower_bound(edges.begin(), edges.end(), byte,
                                 [](const std::pair<uint8_t, int32_t> &e,
                                    uint8_t b) { return e.first < b; });
      edges.insert(at, {byte, next});
    }
    node = next;
  }
  if (nodes[node].value >= 0)
    return false;
  nodes[node].value = value;
  return true;
}

void Trie::collectBelow() {
  // Children are created after their parent: a reverse sweep sees every
  // child before its parent.
  for (size_t n = nodes.size(); n-- > 0;) {
    Node &node = nodes[n];
    node.below.clear();
    if (node.value >= 0)
      node.below.push_back(node.value);
    for (const auto &[byte, to] : node.next)
      node.below.insert(node.below.end(), nodes[to].below.begin(),
                        nodes[to].below.end());
    std::sort(node.below.begin(), node.below.end());
  }
}

namespace detail {

//===----------------------------------------------------------------------===//
// JSON values
//===----------------------------------------------------------------------===//

bool equalJson(const Json &a, const Json &b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_number_integer() && b.is_number_integer()) {
      if (a.is_number_unsigned() != b.is_number_unsigned() &&
          (a.get<int64_t>() < 0 || b.get<int64_t>() < 0))
        return false;
      return a.get<uint64_t>() == b.get<uint64_t>();
    }
    return a.get<double>() == b.get<double>();
  }
  if (a.type() != b.type())
    return false;
  if (a.is_object()) {
    if (a.size() != b.size())
      return false;
    for (const auto &[key, value] : a.items()) {
      auto it = b.find(key);
      if (it == b.end() || !equalJson(value, *it))
        return false;
    }
    return true;
  }
  if (a.is_array()) {
    if (a.size() != b.size())
      return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!equalJson(a[i], b[i]))
        return false;
    return true;
  }
  return a == b;
}

bool hasType(const Json &value, uint8_t types) {
  switch (value.type()) {
  case Json::value_t::null:
    return types & kNull;
  case Json::value_t::boolean:
    return types & kBoolean;
  case Json::value_t::string:
    return types & kString;
  case Json::value_t::number_integer:
  case Json::value_t::number_unsigned:
    return types & (kInteger | kNumber);
  case Json::value_t::number_float: {
    double d = value.get<double>();
    return (types & kNumber) ||
           ((types & kInteger) && std::isfinite(d) && d == std::floor(d));
  }
  case Json::value_t::object:
    return types & kObject;
  case Json::value_t::array:
    return types & kArray;
  default:
    return false;
  }
}

//===----------------------------------------------------------------------===//
// Numeric bounds
//===----------------------------------------------------------------------===//

namespace {

/// Beyond every number the grammar writes (15 digits, in units of 1e-15).
const Int128 kHuge = pow10i(34);

/// `value` in units of 10^-scale, rounded toward the inside of the bound:
/// the least unit >= value (lower bounds) or the greatest <= value (upper),
/// and strictly beyond it when `exclusive`. False when not a finite number.
bool boundOf(const Json &value, int scale, bool lower, bool exclusive,
             Int128 &out) {
  std::string text =
      value.is_number_float() ? value.dump() : value.dump(); // exact ints
  // text: -?digits(.digits)?([eE][+-]?digits)? (nlohmann's shortest form)
  size_t pos = 0;
  bool negative = pos < text.size() && text[pos] == '-';
  if (negative)
    ++pos;
  std::string digits;
  int exp10 = 0;
  bool any = false;
  for (; pos < text.size() && std::isdigit(uint8_t(text[pos])); ++pos)
    digits += text[pos], any = true;
  if (pos < text.size() && text[pos] == '.')
    for (++pos; pos < text.size() && std::isdigit(uint8_t(text[pos])); ++pos)
      digits += text[pos], --exp10, any = true;
  if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
    size_t used = 0;
    try {
      exp10 += std::stoi(text.substr(pos + 1), &used);
    } catch (...) {
      return false;
    }
    pos += 1 + used;
  }
  if (!any || pos != text.size())
    return false; // "null" for an infinity, or not a number at all
  digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size()));
  int e = exp10 + scale;
  Int128 x = 0;
  bool exact = true;
  if (digits.empty()) {
    x = 0;
  } else if (int(digits.size()) + e > 34) {
    x = kHuge, exact = false; // far beyond anything written
  } else {
    Int128 mantissa = 0;
    // At most 34 significant digits matter below kHuge.
    size_t keep = std::min<size_t>(digits.size(), 36);
    for (size_t i = 0; i < keep; ++i)
      mantissa = mantissa * 10 + (digits[i] - '0');
    e += int(digits.size() - keep);
    if (digits.find_first_not_of('0', keep) != std::string::npos)
      exact = false;
    if (e >= 0) {
      x = mantissa * pow10i(e);
    } else if (-e > 36) {
      exact = exact && mantissa == 0;
      x = 0;
    } else {
      Int128 unit = pow10i(-e);
      exact = exact && mantissa % unit == 0;
      x = mantissa / unit; // floor of the magnitude
    }
  }
  // x is the magnitude's floor; `exact` whether it is the magnitude.
  Int128 floor = negative ? -(x + (exact ? 0 : 1)) : x;
  Int128 ceil = negative ? -x : x + (exact ? 0 : 1);
  if (lower)
    out = exclusive && exact ? ceil + 1 : ceil;
  else
    out = exclusive && exact ? floor - 1 : floor;
  return true;
}

} // namespace

bool Compiler::readBounds(const Json &s, const std::string &path, bool integer,
                          NumberSpec &spec) {
  spec.integer = integer;
  spec.lo = -kHuge;
  spec.hi = kHuge;
  const int scale = integer ? 0 : kScaleDigits;
  // Draft 4: exclusiveMinimum/exclusiveMaximum are booleans on minimum and
  // maximum; later drafts: numbers of their own.
  auto flag = [&](const char *key, bool &out) {
    if (s.contains(key) && s[key].is_boolean()) {
      out = s[key].get<bool>();
      return true;
    }
    return false;
  };
  bool exclusiveMin = false, exclusiveMax = false;
  bool minFlag = flag("exclusiveMinimum", exclusiveMin);
  bool maxFlag = flag("exclusiveMaximum", exclusiveMax);
  struct Bound {
    const char *key;
    bool lower, exclusive;
  };
  const Bound bounds[] = {{"minimum", true, exclusiveMin},
                          {"maximum", false, exclusiveMax},
                          {"exclusiveMinimum", true, true},
                          {"exclusiveMaximum", false, true}};
  for (const Bound &b : bounds) {
    if (!s.contains(b.key) ||
        (b.key == std::string("exclusiveMinimum") && minFlag) ||
        (b.key == std::string("exclusiveMaximum") && maxFlag))
      continue;
    const Json &v = s[b.key];
    Int128 bound;
    if (!v.is_number() || !boundOf(v, scale, b.lower, b.exclusive, bound))
      return fail(keyPath(path, b.key), "expected a finite number");
    spec.bounded = true;
    if (b.lower)
      spec.lo = std::max(spec.lo, bound);
    else
      spec.hi = std::min(spec.hi, bound);
  }
  if ((minFlag && exclusiveMin && !s.contains("minimum")) ||
      (maxFlag && exclusiveMax && !s.contains("maximum")))
    return fail(keyPath(path, minFlag && exclusiveMin && !s.contains("minimum")
                                  ? "exclusiveMinimum"
                                  : "exclusiveMaximum"),
                "true needs the bound it makes exclusive");
  return true;
}

//===----------------------------------------------------------------------===//
// Unions and depths
//===----------------------------------------------------------------------===//

bool Compiler::flattenUnions() {
  const size_t n = p_.schemas.size();
  enum : uint8_t { kNew, kOpen, kDone };
  std::vector<uint8_t> state(n, kNew);
  size_t total = 0;
  // Depth-first, without recursion: a chain of 10,000 references must not
  // exhaust the C++ stack.
  for (size_t start = 0; start < n; ++start) {
    if (state[start] != kNew)
      continue;
    std::vector<std::pair<int32_t, size_t>> stack{{int32_t(start), 0}};
    state[start] = kOpen;
    while (!stack.empty()) {
      auto &[id, next] = stack.back();
      if (next < unions_[id].size()) {
        int32_t member = unions_[id][next++];
        if (state[member] == kOpen)
          return fail(paths_[member],
                      "$ref/anyOf cycle that reads nothing (the schema is "
                      "its own alternative)");
        if (state[member] == kNew) {
          state[member] = kOpen;
          stack.push_back({member, 0});
        }
        continue;
      }
      std::vector<Alt> &alts = p_.schemas[id].alts;
      std::unordered_set<uint64_t> seen;
      auto key = [](const Alt &a) {
        return uint64_t(a.kind) << 32 | uint32_t(a.index);
      };
      for (const Alt &alt : alts)
        seen.insert(key(alt));
      for (int32_t member : unions_[id])
        for (const Alt &alt : p_.schemas[member].alts)
          if (seen.insert(key(alt)).second)
            alts.push_back(alt);
      total += alts.size();
      if (total > kMaxAlternatives)
        return fail(paths_[id], "schema too large: more than " +
                                    std::to_string(kMaxAlternatives) +
                                    " alternatives once $ref and anyOf "
                                    "are expanded");
      state[id] = kDone;
      stack.pop_back();
    }
  }
  return true;
}

/// Inserts every text of `from` into `to`; returns the bytes inserted.
static size_t copyTexts(const Trie &from, Trie &to) {
  size_t bytes = 0;
  std::string path;
  // (node, next edge) pairs: a depth-first walk without recursion.
  std::vector<std::pair<int32_t, size_t>> stack{{0, 0}};
  if (from.nodes[0].value >= 0)
    to.insert("", 0);
  while (!stack.empty()) {
    auto &[node, edge] = stack.back();
    if (edge == from.nodes[node].next.size()) {
      stack.pop_back();
      if (!path.empty())
        path.pop_back();
      continue;
    }
    auto [byte, child] = from.nodes[node].next[edge++];
    path.push_back(char(byte));
    if (from.nodes[child].value >= 0 && to.insert(path, 0))
      bytes += path.size();
    stack.push_back({child, 0});
  }
  return bytes;
}

bool Compiler::mergeLiterals() {
  // One trie per schema for all its literals (an anyOf of many consts is one
  // stack, not one per const); identical sets share their trie.
  std::map<std::vector<int32_t>, int32_t> merged;
  size_t bytes = 0;
  for (Schema &schema : p_.schemas) {
    std::vector<int32_t> tries;
    for (const Alt &alt : schema.alts)
      if (alt.kind == AltKind::Literal)
        tries.push_back(alt.index);
    if (tries.size() < 2)
      continue;
    std::sort(tries.begin(), tries.end());
    auto it = merged.find(tries);
    if (it == merged.end()) {
      Trie trie;
      size_t added = 0;
      for (int32_t t : tries)
        added += copyTexts(p_.tries[t], trie);
      if (bytes + added > kMaxLiteralBytes)
        continue; // left as separate stacks
      bytes += added;
      p_.tries.push_back(std::move(trie));
      it = merged.emplace(tries, int32_t(p_.tries.size() - 1)).first;
    }
    std::vector<Alt> alts{{AltKind::Literal, it->second}};
    for (const Alt &alt : schema.alts)
      if (alt.kind != AltKind::Literal)
        alts.push_back(alt);
    schema.alts = std::move(alts);
  }
  return true;
}

bool Compiler::computeDepths() {
  // Least fixpoint from "no value": a depth past maxDepth is as good as no
  // value (it can never be opened), so values stay below maxDepth + 2 and
  // the iteration ends within maxDepth + 3 sweeps.
  auto cap = [&](uint64_t d) {
    return d > p_.maxDepth ? kNoValue : uint32_t(d);
  };
  auto depthOf = [&](const Alt &alt) -> uint32_t {
    uint64_t deepest = 0;
    switch (alt.kind) {
    case AltKind::Literal:
    case AltKind::String:
    case AltKind::Number:
      return 0;
    case AltKind::Object:
      for (const Property &prop : p_.objects[alt.index].props)
        if (prop.required)
          deepest =
              std::max<uint64_t>(deepest, p_.schemas[prop.schema].minDepth);
      break;
    case AltKind::Array: {
      const ArrayShape &shape = p_.arrays[alt.index];
      size_t prefix = std::min<size_t>(shape.minItems, shape.prefix.size());
      for (size_t i = 0; i < prefix; ++i)
        deepest =
            std::max<uint64_t>(deepest, p_.schemas[shape.prefix[i]].minDepth);
      if (shape.minItems > shape.prefix.size())
        deepest = std::max<uint64_t>(deepest, p_.schemas[shape.items].minDepth);
      break;
    }
    }
    return deepest >= kNoValue ? kNoValue : cap(deepest + 1);
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (Schema &schema : p_.schemas) {
      uint32_t best = kNoValue;
      for (Alt &alt : schema.alts) {
        alt.minDepth = depthOf(alt);
        best = std::min(best, alt.minDepth);
      }
      if (best != schema.minDepth) {
        schema.minDepth = best;
        changed = true;
      }
    }
  }
  if (p_.schemas[p_.root].minDepth == kNoValue)
    return fail(where_,
                "no JSON value satisfies the schema within the supported "
                "bounds (at most " +
                    std::to_string(p_.maxDepth) +
                    " nested objects and arrays, numbers of at most " +
                    std::to_string(kMaxDigits) + " digits)");
  return true;
}

} // namespace detail
} // namespace qeff::structured
