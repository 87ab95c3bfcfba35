//===- SpeculationSetup.cpp - a proposer from --speculate -----------------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "runtime/generation/SpeculationSetup.h"

#include "frontend/Tokenizer/Tokenizer.h"
#include "runtime/generation/Generator.h"

#include <filesystem>

using namespace qeff::runtime;
namespace fs = std::filesystem;

Result<SpeculationSpec>
qeff::runtime::parseSpeculateFlag(const std::string &value) {
  SpeculationSpec spec;
  const std::string draft = "draft=";
  if (value == "prompt-lookup") {
    spec.method = "prompt-lookup";
  } else if (value.compare(0, draft.size(), draft) == 0 &&
             value.size() > draft.size()) {
    spec.method = "draft";
    spec.draftArtifactDir = value.substr(draft.size());
  } else {
    return Error{"must be prompt-lookup or draft=DIR, got '" + value + "'"};
  }
  return spec;
}

Result<int64_t> qeff::runtime::logitsVocabulary(const Session &session) {
  for (const TensorInfo &info : session.outputInfos())
    if (info.name == "logits") {
      if (!info.hasShape || info.dims.empty() || info.dims.back().value <= 0)
        return Error{"its logits output has no fixed vocabulary dimension (" +
                     dimsString(info.dims) + ")"};
      return info.dims.back().value;
    }
  return Error{"it has no logits output (an artifact compiled with "
               "--on-device-sampling returns next_tokens and cannot propose "
               "or verify)"};
}

namespace {

/// The first id the two tokenizers read differently ("" when none).
std::string tokenizerDifference(const qeff::tokenizer::Tokenizer &target,
                                const qeff::tokenizer::Tokenizer &draft) {
  if (target.vocabSize() != draft.vocabSize())
    return "its tokenizer has " + std::to_string(draft.vocabSize()) +
           " ids, the target's " + std::to_string(target.vocabSize());
  // A string compare per id: ~10 ms for a 150k vocabulary, once at start.
  for (size_t id = 0; id < target.vocabSize(); ++id) {
    auto t = target.idToToken(int64_t(id)), d = draft.idToToken(int64_t(id));
    if (t != d || target.isSpecial(int64_t(id)) != draft.isSpecial(int64_t(id)))
      return "its tokenizer reads id " + std::to_string(id) + " as " +
             (d ? "'" + *d + "'" : std::string("nothing")) +
             (draft.isSpecial(int64_t(id)) ? " (special)" : "") +
             ", the target's as " + (t ? "'" + *t + "'" : std::string("nothing")) +
             (target.isSpecial(int64_t(id)) ? " (special)" : "");
  }
  return "";
}

} // namespace

Status qeff::runtime::checkDraftVocabulary(
    int64_t targetVocab, int64_t draftVocab,
    const tokenizer::Tokenizer *targetTokenizer,
    const tokenizer::Tokenizer *draftTokenizer) {
  const std::string sizes = "its vocabulary has " + std::to_string(draftVocab) +
                            " ids, the target's " + std::to_string(targetVocab);
  if (draftVocab > targetVocab)
    return Error{sizes + ": it could propose ids the target does not have "
                         "(a draft needs the target's tokenizer)"};
  if (targetTokenizer && draftTokenizer) {
    std::string difference = tokenizerDifference(*targetTokenizer, *draftTokenizer);
    if (!difference.empty())
      return Error{difference + ": a draft needs the target's tokenizer"};
    return Status();
  }
  if (draftVocab < targetVocab)
    return Error{sizes + ", and without a tokenizer.json in both artifacts "
                         "nothing shows that its ids mean the target's"};
  return Status();
}

Result<std::shared_ptr<Proposer>>
qeff::runtime::makeProposer(const SpeculationSpec &spec, DeviceKind device,
                            const SessionOptions &options,
                            const ProposerTarget &target,
                            const GenerationOptions &draftOptions) {
  if (spec.method == "prompt-lookup") {
    if (spec.promptLookupMax < 1)
      return Error{"prompt lookup needs prompt_lookup_max >= 1, got " +
                   std::to_string(spec.promptLookupMax)};
    return std::shared_ptr<Proposer>(
        std::make_shared<PromptLookupProposer>(spec.promptLookupMax));
  }
  if (spec.method != "draft")
    return Error{"unknown speculation method '" + spec.method +
                 "' (prompt-lookup or draft)"};

  const std::string &dir = spec.draftArtifactDir;
  auto fail = [&](const std::string &why) {
    return Error{"the draft model " + dir + ": " + why};
  };
  std::error_code ec;
  if (dir.empty() || !fs::is_directory(dir, ec))
    return fail("not a directory");
  if (!fs::exists(fs::path(dir) / "qeff-manifest.json", ec))
    return fail("not a compiled artifact (no qeff-manifest.json); compile the "
                "draft checkpoint with the target's --ctx-len and --batch-size "
                "or --full-batch-size (qeff infer and qeff serve do this "
                "themselves for a checkpoint)");
  if (!target.session)
    return fail("no target session to check it against");
  Result<int64_t> targetVocab = logitsVocabulary(*target.session);
  if (!targetVocab)
    return Error{"the target: " + targetVocab.error()};

  auto opened = Session::open(dir, device, options);
  if (!opened)
    return fail(opened.error());
  auto session = std::make_unique<Session>(std::move(*opened));
  Result<int64_t> draftVocab = logitsVocabulary(*session);
  if (!draftVocab)
    return fail(draftVocab.error());
  std::optional<tokenizer::Tokenizer> draftTokenizer;
  if (fs::exists(fs::path(dir) / "tokenizer.json", ec)) {
    auto loaded = tokenizer::Tokenizer::fromDirectory(dir);
    if (!loaded.ok())
      return fail("its tokenizer: " + std::string(loaded.status().message()));
    draftTokenizer = std::move(*loaded);
  }
  if (Status s = checkDraftVocabulary(*targetVocab, *draftVocab, target.tokenizer,
                                      draftTokenizer ? &*draftTokenizer : nullptr);
      !s)
    return fail(s.error());

  auto proposer = DraftModelProposer::create(std::move(session), "draft=" + dir,
                                             target.rows, target.ctxLen,
                                             draftOptions, *targetVocab);
  if (!proposer)
    return fail(proposer.error());
  return std::shared_ptr<Proposer>(std::move(*proposer));
}
