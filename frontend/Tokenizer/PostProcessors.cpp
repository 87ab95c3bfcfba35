//===- PostProcessors.cpp - tokenizer.json "post_processor" ---------------===//
//
// The special tokens added around a single sequence when encoding with
// addSpecialTokens: TemplateProcessing ("single" template), BertProcessing,
// RobertaProcessing, ByteLevel (ids unchanged) and Sequence.
//
//===----------------------------------------------------------------------===//

#include "frontend/Tokenizer/Components.h"
#include "frontend/Tokenizer/Unicode.h"

#include <climits>

namespace qeff::tokenizer::detail {
namespace {

class AffixProcessor : public PostProcessor {
public:
  AffixProcessor(std::vector<int64_t> prefix, std::vector<int64_t> suffix)
      : prefix_(std::move(prefix)), suffix_(std::move(suffix)) {}
  void process(std::vector<int64_t> &ids) const override {
    ids.insert(ids.begin(), prefix_.begin(), prefix_.end());
    ids.insert(ids.end(), suffix_.begin(), suffix_.end());
  }

private:
  std::vector<int64_t> prefix_, suffix_;
};

class SequenceProcessor : public PostProcessor {
public:
  explicit SequenceProcessor(
      std::vector<std::unique_ptr<const PostProcessor>> steps)
      : steps_(std::move(steps)) {}
  void process(std::vector<int64_t> &ids) const override {
    for (const auto &step : steps_)
      step->process(ids);
  }

private:
  std::vector<std::unique_ptr<const PostProcessor>> steps_;
};

/// A special token's id: an integer in 0..2^31-1 (the ids a vocabulary can
/// hold; Hugging Face reads them as u32). A larger one is refused rather than
/// added to every encoding.
absl::StatusOr<int64_t> specialId(const Json &id, const JsonPath &path) {
  if (!id.is_number_integer())
    return jsonError(path, "expected a non-negative integer id");
  if (id.is_number_unsigned() ? id.get<uint64_t>() > uint64_t(INT32_MAX)
                              : id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX)
    return jsonError(path, strCat("id ", id.dump(), " is out of range (0..", INT32_MAX, ")"));
  return id.get<int64_t>();
}

absl::StatusOr<std::unique_ptr<const PostProcessor>>
parseTemplate(const Json &json, const JsonPath &path) {
  const Json *single = findMember(json, "single");
  if (!single || !single->is_array())
    return jsonError(path / "single", "expected an array of template pieces");
  const Json *specials = findMember(json, "special_tokens");
  if (specials && !specials->is_object())
    return jsonError(path / "special_tokens", "expected an object");

  std::vector<int64_t> prefix, suffix;
  bool seenSequence = false;
  for (size_t i = 0; i < single->size(); ++i) {
    const Json &piece = (*single)[i];
    JsonPath here = (path / "single")[i];
    if (const Json *seq = findMember(piece, "Sequence")) {
      auto id = getString(*seq, here / "Sequence", "id");
      if (!id.ok())
        return id.status();
      if (*id != "A" || seenSequence)
        return jsonError(here, "a single-sequence template must use $A once");
      seenSequence = true;
      continue;
    }
    const Json *special = findMember(piece, "SpecialToken");
    if (!special)
      return jsonError(here, "expected {\"Sequence\": ...} or "
                             "{\"SpecialToken\": ...}");
    auto name = getString(*special, here / "SpecialToken", "id");
    if (!name.ok())
      return name.status();
    const Json *entry = specials ? findMember(*specials, *name) : nullptr;
    JsonPath entryPath = path / "special_tokens" / *name;
    if (!entry)
      return jsonError(entryPath,
                       strCat("special token '", *name,
                              "' used by the template is not defined"));
    const Json *ids = findMember(*entry, "ids");
    if (!ids || !ids->is_array())
      return jsonError(entryPath / "ids", "expected an array of ids");
    for (size_t k = 0; k < ids->size(); ++k) {
      auto id = specialId((*ids)[k], (entryPath / "ids")[k]);
      if (!id.ok())
        return id.status();
      (seenSequence ? suffix : prefix).push_back(*id);
    }
  }
  if (!seenSequence)
    return jsonError(path / "single", "template has no $A sequence");
  return makeAffixProcessor(std::move(prefix), std::move(suffix));
}

/// Bert/Roberta: "cls": [token, id], "sep": [token, id].
absl::StatusOr<int64_t> pairId(const Json &json, const JsonPath &path,
                               std::string_view key) {
  const Json *pair = findMember(json, key);
  if (!pair || !pair->is_array() || pair->size() != 2)
    return jsonError(path / key, "expected [token, id]");
  return specialId((*pair)[1], (path / key)[1]);
}

} // namespace

std::unique_ptr<const PostProcessor>
makeAffixProcessor(std::vector<int64_t> prefix, std::vector<int64_t> suffix) {
  return std::make_unique<AffixProcessor>(std::move(prefix), std::move(suffix));
}

absl::StatusOr<std::unique_ptr<const PostProcessor>>
parsePostProcessor(const Json &json, const JsonPath &path) {
  auto type = getType(json, path);
  if (!type.ok())
    return type.status();
  if (*type == "TemplateProcessing")
    return parseTemplate(json, path);
  if (*type == "ByteLevel")
    return makeAffixProcessor({}, {});
  if (*type == "BertProcessing" || *type == "RobertaProcessing") {
    auto cls = pairId(json, path, "cls");
    if (!cls.ok())
      return cls.status();
    auto sep = pairId(json, path, "sep");
    if (!sep.ok())
      return sep.status();
    return makeAffixProcessor({*cls}, {*sep});
  }
  if (*type == "Sequence") {
    const Json *list = findMember(json, "processors");
    if (!list || !list->is_array())
      return jsonError(path / "processors", "expected an array");
    std::vector<std::unique_ptr<const PostProcessor>> steps;
    for (size_t i = 0; i < list->size(); ++i) {
      auto step = parsePostProcessor((*list)[i], (path / "processors")[i]);
      if (!step.ok())
        return step.status();
      steps.push_back(*std::move(step));
    }
    return std::make_unique<SequenceProcessor>(std::move(steps));
  }
  return unsupported(path / "type", strCat("post_processor '", *type, "'"));
}

} // namespace qeff::tokenizer::detail
