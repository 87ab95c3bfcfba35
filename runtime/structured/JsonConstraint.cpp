//===- JsonConstraint.cpp - JSON output by constrained decoding -----------===//
//
// Part of qeff. See JsonConstraint.h. A mask walks the vocabulary trie in
// depth-first order with the machine: each trie node is one byte stepped
// from its parent's state, a refused byte skips the node's whole subtree,
// and backtracking is a rewind of the machine's arena. Inside a string (the
// one place where most of the vocabulary is allowed) the tokens that stay
// in the string come from a table (Vocabulary::StringTable) and only those
// that close it are walked.
//
//===----------------------------------------------------------------------===//

#include "runtime/structured/JsonConstraint.h"
#include "runtime/structured/Lexemes.h"
#include "runtime/structured/Machine.h"
#include "runtime/structured/SchemaCompiler.h"

#include <algorithm>

namespace qeff::structured {
namespace {

class JsonMatcher final : public runtime::ConstraintMatcher {
public:
  JsonMatcher(std::shared_ptr<const Program> program,
              std::shared_ptr<const Vocabulary> vocab)
      : program_(std::move(program)), vocab_(std::move(vocab)),
        machine_(*program_) {
    state_ = machine_.start();
  }

  void allowedTokens(std::vector<uint8_t> &allowed) override {
    if (state_.finished())
      return;
    if (!atStart_ && insideString(allowed))
      return;
    walk(vocab_->trie(atStart_), allowed);
  }

  bool accept(int64_t token) override {
    const std::string *bytes = vocab_->bytes(token, atStart_);
    if (!bytes)
      return false;
    Machine::Mark before = machine_.mark();
    Machine::State s = state_;
    for (char c : *bytes) {
      s = machine_.advance(s, uint8_t(c));
      if (s.dead()) {
        machine_.rewind(before);
        return false;
      }
    }
    state_ = s;
    atStart_ = false;
    // The arena keeps every step's frames: drop the unreachable ones once
    // it has grown well past what the state holds.
    if (machine_.arenaSize() > compactAt_ ||
        machine_.mark().tops > compactAt_) {
      state_ = machine_.compact(state_);
      compactAt_ = std::max<size_t>(4096, 4 * machine_.arenaSize());
    }
    return true;
  }

  bool canEnd() const override { return state_.accepting; }
  bool mustEnd() const override {
    return state_.accepting && state_.finished();
  }

private:
  /// Every token the machine reads whole from state_.
  void walk(const TokenTrie &trie, std::vector<uint8_t> &allowed) {
    const Machine::Mark base = machine_.mark();
    levels_.resize(size_t(trie.maxDepth) + 1);
    marks_.resize(size_t(trie.maxDepth) + 1);
    levels_[0] = state_;
    marks_[0] = base;
    for (uint32_t i = 1; i < trie.nodes.size();) {
      const TokenTrie::Node &node = trie.nodes[i];
      const uint16_t d = node.depth;
      machine_.rewind(marks_[d - 1]);
      Machine::State s = machine_.advance(levels_[d - 1], node.byte);
      if (s.dead()) {
        i = node.end;
        continue;
      }
      for (uint32_t k = node.idsBegin; k < node.idsEnd; ++k)
        if (size_t(trie.ids[k]) < allowed.size())
          allowed[trie.ids[k]] = 1;
      if (s.finished()) {
        i = node.end;
        continue;
      }
      levels_[d] = s;
      marks_[d] = machine_.mark();
      ++i;
    }
    machine_.rewind(base);
  }

  /// The mask from inside a string body, from the vocabulary's tables;
  /// false when the state is not one they cover (the caller walks).
  bool insideString(std::vector<uint8_t> &allowed) {
    if (state_.size() != 1)
      return false;
    const Frame &f = machine_.frame(machine_.top(state_.begin));
    // f.y >= 0: the string may still spell an excluded name.
    if (f.kind != kString || f.phase != 1 || f.y >= 0)
      return false;
    const Vocabulary::StringTable *table =
        vocab_->stringTable(StringState::unpack(f.x));
    if (!table)
      return false;
    const StringSpec &spec = program_->strings[f.index];
    const uint32_t room =
        spec.maxLength == kUnbounded ? kUnbounded : spec.maxLength - f.count;
    for (const auto &[chars, id] : table->stay) {
      if (chars > room)
        break;
      if (size_t(id) < allowed.size())
        allowed[id] = 1;
    }
    walk(table->quotes, allowed);
    return true;
  }

  std::shared_ptr<const Program> program_;
  std::shared_ptr<const Vocabulary> vocab_;
  Machine machine_;
  Machine::State state_;
  bool atStart_ = true;
  size_t compactAt_ = 4096;
  std::vector<Machine::State> levels_;
  std::vector<Machine::Mark> marks_;
};

class JsonConstraint final : public runtime::TokenConstraint {
public:
  JsonConstraint(std::shared_ptr<const Program> program,
                 std::shared_ptr<const Vocabulary> vocab, bool jsonMode)
      : program_(std::move(program)), vocab_(std::move(vocab)),
        jsonMode_(jsonMode) {}

  std::unique_ptr<runtime::ConstraintMatcher> start() const override {
    return std::make_unique<JsonMatcher>(program_, vocab_);
  }
  std::string describe() const override {
    return jsonMode_ ? "JSON object" : "JSON schema";
  }

private:
  std::shared_ptr<const Program> program_;
  std::shared_ptr<const Vocabulary> vocab_;
  bool jsonMode_;
};

} // namespace

std::shared_ptr<const Vocabulary>
makeVocabulary(const tokenizer::Tokenizer &tokenizer, std::string &error) {
  try {
    return Vocabulary::fromTokenizer(tokenizer, error);
  } catch (const std::exception &e) {
    error = std::string("cannot read the tokenizer's vocabulary: ") + e.what();
    return nullptr;
  }
}

std::shared_ptr<const runtime::TokenConstraint>
makeJsonConstraint(std::shared_ptr<const Vocabulary> vocabulary,
                   const nlohmann::ordered_json *schema, std::string_view where,
                   std::string &error) {
  if (!vocabulary) {
    error = "no vocabulary";
    return nullptr;
  }
  CompileOptions options;
  options.guardCleanUp = vocabulary->guardCleanUp();
  options.allBytes = vocabulary->allBytes();
  auto program = compileJsonSchema(schema, where, options, error);
  if (!program)
    return nullptr;
  return std::make_shared<JsonConstraint>(std::move(program),
                                          std::move(vocabulary), !schema);
}

std::shared_ptr<const runtime::TokenConstraint>
makeResponseFormatConstraint(std::shared_ptr<const Vocabulary> vocabulary,
                             const nlohmann::ordered_json &format,
                             std::string_view where, std::string &error) {
  using Json = nlohmann::ordered_json;
  const std::string at(where);
  error.clear();
  auto refuse = [&](const std::string &field, const std::string &reason) {
    error = at + field + ": " + reason;
    return nullptr;
  };
  // A field this does not know could change the output: refuse it.
  auto unknown = [&](const Json &object, const std::string &prefix,
                     std::initializer_list<const char *> known) -> bool {
    for (auto it = object.begin(); it != object.end(); ++it) {
      const std::string &key = it.key();
      if (std::none_of(known.begin(), known.end(),
                       [&](const char *k) { return key == k; })) {
        refuse(prefix + "." + key, "not supported");
        return true;
      }
    }
    return false;
  };
  if (!format.is_object())
    return refuse("", "expected an object");
  auto type = format.find("type");
  if (type == format.end() || !type->is_string())
    return refuse(".type", "expected \"text\", \"json_object\" or "
                           "\"json_schema\"");
  const std::string kind = type->get<std::string>();
  if (kind == "text" || kind == "json_object") {
    if (unknown(format, "", {"type"}))
      return nullptr;
    if (kind == "text")
      return nullptr;
    return makeJsonConstraint(std::move(vocabulary), nullptr, at, error);
  }
  if (kind != "json_schema")
    return refuse(".type", "'" + kind +
                               "' is not one of text, json_object, "
                               "json_schema");
  if (unknown(format, "", {"type", "json_schema"}))
    return nullptr;
  auto spec = format.find("json_schema");
  if (spec == format.end() || !spec->is_object())
    return refuse(".json_schema", "expected an object with name and schema");
  if (unknown(*spec, ".json_schema",
              {"name", "schema", "strict", "description"}))
    return nullptr;
  auto name = spec->find("name");
  if (name == spec->end() || !name->is_string())
    return refuse(".json_schema.name", "expected a string");
  const std::string text = name->get<std::string>();
  if (text.empty() || text.size() > 64 ||
      text.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
          "0123456789_-") != std::string::npos)
    return refuse(".json_schema.name",
                  "expected 1 to 64 letters, digits, '_' or '-'");
  if (auto strict = spec->find("strict");
      strict != spec->end() && !strict->is_boolean() && !strict->is_null())
    return refuse(".json_schema.strict", "expected a boolean");
  if (auto description = spec->find("description");
      description != spec->end() && !description->is_string())
    return refuse(".json_schema.description", "expected a string");
  auto schema = spec->find("schema");
  if (schema == spec->end())
    return refuse(".json_schema.schema", "is required");
  return makeJsonConstraint(std::move(vocabulary), &*schema,
                            at + ".json_schema.schema", error);
}

} // namespace qeff::structured
