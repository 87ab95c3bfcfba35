//===- SpeculationSetup.cpp - a proposer from --speculate -----------------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "runtime/generation/SpeculationSetup.h"

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
  auto opened = Session::open(dir, device, options);
  if (!opened)
    return fail(opened.error());
  auto session = std::make_unique<Session>(std::move(*opened));

  auto proposer = DraftModelProposer::create(std::move(session), "draft=" + dir,
                                             target.rows, target.ctxLen,
                                             draftOptions);
  if (!proposer)
    return fail(proposer.error());
  return std::shared_ptr<Proposer>(std::move(*proposer));
}
