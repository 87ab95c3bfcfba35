//===- Program.h - a JSON schema compiled for decoding ----------*- C++ -*-===//
//
// Part of qeff. The form SchemaCompiler gives a JSON schema and Matcher runs:
// a flat table of schemas, each a list of alternatives that each produce one
// kind of JSON text (a literal from a byte trie, a string, a number, an
// object, an array). Unions ($ref, anyOf, oneOf, allOf of one) are already
// flattened, so choosing a value is one pass over a list. Every alternative
// carries the least nesting depth its shortest value needs, which is how the
// matcher keeps within the depth bound without ever reaching a state that
// cannot finish. No MLIR types.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_STRUCTURED_PROGRAM_H
#define QEFF_RUNTIME_STRUCTURED_PROGRAM_H

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace qeff::structured {

using Int128 = __int128;

/// No upper bound (lengths, item counts).
constexpr uint32_t kUnbounded = UINT32_MAX;
/// The depth of a schema that no finite value satisfies.
constexpr uint32_t kNoValue = UINT32_MAX / 2;

/// A byte trie over literal texts (enum values, property keys, excluded
/// names). `value` >= 0 marks the end of an inserted text.
struct Trie {
  struct Node {
    std::vector<std::pair<uint8_t, int32_t>> next; // sorted by byte
    int32_t value = -1;
    /// Key tries: the sorted values of every text ending at or below here.
    std::vector<int32_t> below;
  };
  std::vector<Node> nodes{Node{}};

  /// Adds `text` with `value`; false when the text was already there.
  bool insert(std::string_view text, int32_t value);
  /// The child of `node` on `byte`, or -1.
  int32_t child(int32_t node, uint8_t byte) const {
    for (const auto &[b, to] : nodes[node].next)
      if (b == byte)
        return to;
    return -1;
  }
  /// Fills Node::below.
  void collectBelow();
};

/// Numbers: at most kMaxDigits digits before the exponent (integer and
/// fraction digits together), so every number read as a double is the
/// decimal written (15 < DBL_DIG + 1) and bounds compare exactly.
constexpr int kMaxDigits = 15;
/// Exponent digits of unbounded numbers (|exponent| <= 99: no overflow).
constexpr int kMaxExponentDigits = 2;
/// Numbers are compared as integers in units of 10^-kScaleDigits.
constexpr int kScaleDigits = 15;

struct NumberSpec {
  bool integer = false;
  /// Bounds in units of 10^-kScaleDigits (integers: in units of 1); only
  /// read when `bounded`.
  bool bounded = false;
  Int128 lo = 0, hi = 0;
};

struct StringSpec {
  uint32_t minLength = 0, maxLength = kUnbounded; // code points
  /// A trie of names the string may not spell (an additional property's
  /// key must not be a declared property), or -1.
  int32_t exclude = -1;
};

enum class AltKind : uint8_t { Literal, String, Number, Object, Array };

/// One way a schema can be satisfied; `index` is into the table of its kind
/// (Program::tries for literals).
struct Alt {
  AltKind kind;
  int32_t index;
  uint32_t minDepth = 0;
};

struct Property {
  std::string name;
  int32_t schema;
  bool required;
};

/// Declared properties in schema order, each emitted at most once, a
/// required one never skipped; then, when `additional` >= 0, other keys.
struct ObjectShape {
  std::vector<Property> props;
  int32_t additional = -1;            // schema of other properties, -1: none
  int32_t keys = -1;                  // trie of "\"name\"" -> property index
  int32_t additionalKey = -1;         // StringSpec of other keys
  std::vector<uint32_t> nextRequired; // [i]: first required index >= i
};

struct ArrayShape {
  std::vector<int32_t> prefix; // prefixItems
  int32_t items = -1;          // schema of later items, -1: none
  uint32_t minItems = 0, maxItems = kUnbounded;
  int32_t itemAt(uint32_t i) const {
    return i < prefix.size() ? prefix[i] : items;
  }
};

struct Schema {
  std::vector<Alt> alts;
  uint32_t minDepth = kNoValue;
};

struct Program {
  std::vector<Schema> schemas;
  std::vector<Trie> tries;
  std::vector<StringSpec> strings;
  std::vector<NumberSpec> numbers;
  std::vector<ObjectShape> objects;
  std::vector<ArrayShape> arrays;
  int32_t root = -1;
  /// Containers (objects, arrays) nested at most this deep.
  uint32_t maxDepth = 0;
  /// The tokenizer's decode() applies clean_up_tokenization_spaces: strings
  /// never hold a space before . ? ! , ' nor " n'" (decode would drop it).
  bool guardCleanUp = false;
};

} // namespace qeff::structured

#endif // QEFF_RUNTIME_STRUCTURED_PROGRAM_H
