//===- PreTokenizers.cpp - tokenizer.json "pre_tokenizer" -----------------===//
//
// ByteLevel, Split, Metaspace, Digits, Whitespace, WhitespaceSplit,
// Punctuation and Sequence pre-tokenizers, with HF's split-delimiter
// behaviours. Regexes run on PCRE2 in UTF + UCP mode.
//
//===----------------------------------------------------------------------===//

#include "frontend/Tokenizer/Components.h"
#include "frontend/Tokenizer/Unicode.h"

#include <cassert>

namespace qeff::tokenizer::detail {

/// The GPT-2 pre-tokenization regex (ByteLevel with use_regex).
static constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

/// The Llama 3 Split regex of its tokenizer.json.
static constexpr std::string_view kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

static Regex builtinRegex(std::string_view pattern) {
  auto regex = Regex::compile(pattern);
  assert(regex.ok() && "built-in tokenizer regex must compile");
  return regex.ok() ? *std::move(regex) : Regex();
}

void splitPiece(const Piece &piece,
                const std::vector<std::pair<size_t, size_t>> &matches,
                SplitBehavior behavior, bool invert, std::vector<Piece> &out) {
  struct Span {
    size_t begin, end;
    bool isMatch;
  };
  const std::string &text = piece.text;
  std::vector<Span> spans;
  size_t prev = 0;
  for (auto [begin, end] : matches) {
    if (prev != begin)
      spans.push_back({prev, begin, false});
    spans.push_back({begin, end, true});
    prev = end;
  }
  if (prev != text.size())
    spans.push_back({prev, text.size(), false});
  if (invert)
    for (Span &span : spans)
      span.isMatch = !span.isMatch;

  std::vector<Span> merged;
  bool previousMatch = false;
  switch (behavior) {
  case SplitBehavior::Isolated:
    merged = std::move(spans);
    break;
  case SplitBehavior::Removed:
    for (const Span &span : spans)
      if (!span.isMatch)
        merged.push_back(span);
    break;
  case SplitBehavior::Contiguous:
    for (const Span &span : spans) {
      if (span.isMatch == previousMatch && !merged.empty())
        merged.back().end = span.end;
      else
        merged.push_back(span);
      previousMatch = span.isMatch;
    }
    break;
  case SplitBehavior::MergedWithPrevious:
    for (const Span &span : spans) {
      if (span.isMatch && !previousMatch && !merged.empty())
        merged.back().end = span.end;
      else
        merged.push_back(span);
      previousMatch = span.isMatch;
    }
    break;
  case SplitBehavior::MergedWithNext:
    for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
      if (it->isMatch && !previousMatch && !merged.empty())
        merged.back().begin = it->begin;
      else
        merged.push_back(*it);
      previousMatch = it->isMatch;
    }
    std::reverse(merged.begin(), merged.end());
    break;
  }
  for (const Span &span : merged)
    if (span.end > span.begin)
      out.push_back(Piece{text.substr(span.begin, span.end - span.begin),
                          piece.atStart && span.begin == 0});
}

namespace {

/// Splits each piece on a matcher with a fixed behaviour (Split, Digits, ...).
class SplitPreTokenizer : public PreTokenizer {
public:
  SplitPreTokenizer(Matcher matcher, SplitBehavior behavior, bool invert)
      : matcher_(std::move(matcher)), behavior_(behavior), invert_(invert) {}
  void preTokenize(std::vector<Piece> &pieces) const override {
    std::vector<Piece> out;
    for (const Piece &piece : pieces)
      splitPiece(piece, matcher_(piece.text), behavior_, invert_, out);
    pieces = std::move(out);
  }

private:
  Matcher matcher_;
  SplitBehavior behavior_;
  bool invert_;
};

Matcher regexMatcher(Regex regex) {
  return [regex = std::move(regex)](std::string_view text) {
    return regex.findAll(text);
  };
}

class ByteLevelPreTokenizer : public PreTokenizer {
public:
  ByteLevelPreTokenizer(bool addPrefixSpace, bool useRegex)
      : addPrefixSpace_(addPrefixSpace), useRegex_(useRegex),
        regex_(builtinRegex(kGpt2Pattern)) {}
  void preTokenize(std::vector<Piece> &pieces) const override {
    std::vector<Piece> split;
    for (Piece piece : pieces) {
      if (addPrefixSpace_ && (piece.text.empty() || piece.text[0] != ' '))
        piece.text.insert(0, " ");
      if (useRegex_)
        splitPiece(piece, regex_.findAll(piece.text), SplitBehavior::Isolated,
                   false, split);
      else
        split.push_back(std::move(piece));
    }
    for (Piece &piece : split) {
      std::string mapped;
      mapped.reserve(piece.text.size() * 2);
      for (char c : piece.text)
        appendUtf8(mapped, byteToUnicode(static_cast<uint8_t>(c)));
      piece.text = std::move(mapped);
    }
    pieces = std::move(split);
  }

private:
  bool addPrefixSpace_, useRegex_;
  Regex regex_;
};

enum class PrependScheme { Always, First, Never };

class MetaspacePreTokenizer : public PreTokenizer {
public:
  MetaspacePreTokenizer(std::string replacement, PrependScheme scheme,
                        bool split)
      : replacement_(std::move(replacement)), scheme_(scheme), split_(split) {}
  void preTokenize(std::vector<Piece> &pieces) const override {
    std::vector<Piece> out;
    for (Piece piece : pieces) {
      piece.text = replaceAll(piece.text, " ", replacement_);
      bool startsWithReplacement =
          piece.text.compare(0, replacement_.size(), replacement_) == 0;
      if (!startsWithReplacement &&
          (scheme_ == PrependScheme::Always ||
           (scheme_ == PrependScheme::First && piece.atStart)))
        piece.text.insert(0, replacement_);
      if (!split_) {
        if (!piece.text.empty())
          out.push_back(std::move(piece));
        continue;
      }
      std::vector<std::pair<size_t, size_t>> matches;
      for (size_t pos = piece.text.find(replacement_); pos != std::string::npos;
           pos = piece.text.find(replacement_, pos + replacement_.size()))
        matches.emplace_back(pos, pos + replacement_.size());
      splitPiece(piece, matches, SplitBehavior::MergedWithNext, false, out);
    }
    pieces = std::move(out);
  }

private:
  std::string replacement_;
  PrependScheme scheme_;
  bool split_;
};

class SequencePreTokenizer : public PreTokenizer {
public:
  explicit SequencePreTokenizer(
      std::vector<std::unique_ptr<const PreTokenizer>> steps)
      : steps_(std::move(steps)) {}
  void preTokenize(std::vector<Piece> &pieces) const override {
    for (const auto &step : steps_)
      step->preTokenize(pieces);
  }

private:
  std::vector<std::unique_ptr<const PreTokenizer>> steps_;
};

absl::StatusOr<SplitBehavior>
parseBehavior(const Json &json, const JsonPath &path, SplitBehavior fallback) {
  auto name = getOptString(json, path, "behavior");
  if (!name.ok())
    return name.status();
  if (!*name)
    return fallback;
  static const std::pair<std::string_view, SplitBehavior> kNames[] = {
      {"Removed", SplitBehavior::Removed},
      {"Isolated", SplitBehavior::Isolated},
      {"MergedWithPrevious", SplitBehavior::MergedWithPrevious},
      {"MergedWithNext", SplitBehavior::MergedWithNext},
      {"Contiguous", SplitBehavior::Contiguous}};
  for (const auto &[text, behavior] : kNames)
    if (**name == text)
      return behavior;
  return jsonError(path / "behavior",
                   strCat("unknown split behavior '", **name, "'"));
}

} // namespace

std::unique_ptr<const PreTokenizer> makeGpt2PreTokenizer() {
  return std::make_unique<ByteLevelPreTokenizer>(false, true);
}

std::unique_ptr<const PreTokenizer> makeLlama3PreTokenizer() {
  std::vector<std::unique_ptr<const PreTokenizer>> steps;
  steps.push_back(std::make_unique<SplitPreTokenizer>(
      regexMatcher(builtinRegex(kLlama3Pattern)), SplitBehavior::Isolated,
      false));
  steps.push_back(std::make_unique<ByteLevelPreTokenizer>(false, false));
  return std::make_unique<SequencePreTokenizer>(std::move(steps));
}

absl::StatusOr<std::unique_ptr<const PreTokenizer>>
parsePreTokenizer(const Json &json, const JsonPath &path) {
  auto type = getType(json, path);
  if (!type.ok())
    return type.status();

  if (*type == "Sequence") {
    auto steps = parseSequence<PreTokenizer>(json, path, "pretokenizers", parsePreTokenizer);
    if (!steps.ok())
      return steps.status();
    return std::make_unique<SequencePreTokenizer>(*std::move(steps));
  }
  if (*type == "ByteLevel") {
    auto prefix = getBool(json, path, "add_prefix_space", true);
    if (!prefix.ok())
      return prefix.status();
    auto useRegex = getBool(json, path, "use_regex", true);
    if (!useRegex.ok())
      return useRegex.status();
    return std::make_unique<ByteLevelPreTokenizer>(*prefix, *useRegex);
  }
  if (*type == "Split") {
    auto matcher = parsePattern(json, path);
    if (!matcher.ok())
      return matcher.status();
    auto behavior = parseBehavior(json, path, SplitBehavior::Isolated);
    if (!behavior.ok())
      return behavior.status();
    auto invert = getBool(json, path, "invert", false);
    if (!invert.ok())
      return invert.status();
    return std::make_unique<SplitPreTokenizer>(*std::move(matcher), *behavior,
                                               *invert);
  }
  if (*type == "Metaspace") {
    auto replacement = getChar(json, path, "replacement", "\u2581");
    if (!replacement.ok())
      return replacement.status();
    auto legacyPrefix = getBool(json, path, "add_prefix_space", true);
    if (!legacyPrefix.ok())
      return legacyPrefix.status();
    PrependScheme scheme =
        *legacyPrefix ? PrependScheme::Always : PrependScheme::Never;
    auto schemeName = getOptString(json, path, "prepend_scheme");
    if (!schemeName.ok())
      return schemeName.status();
    if (*schemeName) {
      if (**schemeName == "always")
        scheme = PrependScheme::Always;
      else if (**schemeName == "first")
        scheme = PrependScheme::First;
      else if (**schemeName == "never")
        scheme = PrependScheme::Never;
      else
        return jsonError(path / "prepend_scheme",
                         strCat("unknown prepend scheme '", **schemeName,
                                "' (expected always, first or never)"));
    }
    auto split = getBool(json, path, "split", true);
    if (!split.ok())
      return split.status();
    return std::make_unique<MetaspacePreTokenizer>(*std::move(replacement),
                                                   scheme, *split);
  }
  if (*type == "Digits") {
    auto individual = getBool(json, path, "individual_digits", false);
    if (!individual.ok())
      return individual.status();
    return std::make_unique<SplitPreTokenizer>(
        regexMatcher(builtinRegex(R"(\p{N})")),
        *individual ? SplitBehavior::Isolated : SplitBehavior::Contiguous,
        false);
  }
  if (*type == "Whitespace")
    return std::make_unique<SplitPreTokenizer>(
        regexMatcher(builtinRegex(R"(\w+|[^\w\s]+)")), SplitBehavior::Removed,
        true);
  if (*type == "WhitespaceSplit")
    return std::make_unique<SplitPreTokenizer>(
        regexMatcher(builtinRegex(R"(\s)")), SplitBehavior::Removed, false);
  if (*type == "Punctuation") {
    auto behavior = parseBehavior(json, path, SplitBehavior::Isolated);
    if (!behavior.ok())
      return behavior.status();
    return std::make_unique<SplitPreTokenizer>(
        regexMatcher(builtinRegex(R"([\p{P}!-/:-@\[-`{-~])")), *behavior,
        false);
  }
  return unsupported(path / "type", strCat("pre_tokenizer '", *type, "'"));
}

} // namespace qeff::tokenizer::detail
