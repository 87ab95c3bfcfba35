//===- RunCommand.cpp - `qeff run` ----------------------------------------===//
//
// Part of qeff. Generation on a prebuilt artifact directory.
//
//===----------------------------------------------------------------------===//

#include "tools/qeff/Commands.h"
#include "tools/qeff/Generate.h"

#include "llvm/Support/CommandLine.h"

using namespace llvm;

namespace {
cl::SubCommand runCommand(
    "run", "Generate from a `qeff compile` output directory on the host "
           "device (or an AI 100): greedy or sampled, streamed or --json");
cl::opt<std::string> artifactDir(cl::Positional, cl::desc("<artifact_dir>"),
                                 cl::Required, cl::sub(runCommand));
} // namespace

void qeff::tool::registerRunOptions() { addGenerateOptions(runCommand); }
bool qeff::tool::isRunCommand() { return static_cast<bool>(runCommand); }
int qeff::tool::runRun() {
  return generateOnArtifact(artifactDir, generateFlags(), "run");
}
