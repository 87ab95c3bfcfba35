//===- qeff.cpp - the qeff driver -----------------------------------------===//
//
// Part of qeff. `qeff compile`, `run`, `infer`, `eval` and `serve`: the
// user-facing commands (README.md). Exit status 0 on
// success, 1 on a user error with a one-line message on stderr.
//
//===----------------------------------------------------------------------===//

#include "tools/QEffVersion.h"
#include "tools/qeff/Commands.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <new>

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // InitLLVM installs a new-handler that turns every failed allocation into
  // a crash (report_bad_alloc_error -> abort). qeff sizes allocations from
  // untrusted files and flags: let them throw std::bad_alloc, which the
  // runtime, the tokenizer and the checkpoint reader turn into errors.
  std::set_new_handler(nullptr);
  qeff::addVersionPrinter("qeff");
  qeff::tool::registerRunOptions();
  qeff::tool::registerInferOptions();
  qeff::tool::registerEvalOptions();
  qeff::tool::prepareHelp();
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "qeff: Hugging Face causal LMs on the Qualcomm Cloud AI 100\n\n"
      "  qeff compile <hf_dir|model.gguf> -o <out_dir>  build the artifacts\n"
      "  qeff run <artifact_dir> --prompt TEXT          generate on artifacts\n"
      "  qeff infer <hf_dir|model.gguf> --prompt TEXT   compile (cached) + run\n"
      "  qeff serve <hf_dir|model.gguf|artifacts>       HTTP inference server\n"
      "  qeff eval <hf_dir|artifact_dir> --text FILE    perplexity per --numerics\n"
      "  qeff compile --models cards.json -o OUT [-j N] many models at once\n"
      "  qeff models summarize OUT | check cards.json   model-card files\n"
      "  qeff <command> --help                          options of a command\n");
  if (qeff::tool::isCompileCommand())
    return qeff::tool::runCompile();
  if (qeff::tool::isRunCommand())
    return qeff::tool::runRun();
  if (qeff::tool::isInferCommand())
    return qeff::tool::runInfer();
  if (qeff::tool::isEvalCommand())
    return qeff::tool::runEval();
  if (qeff::tool::isServeCommand())
    return qeff::tool::runServe();
  if (qeff::tool::isModelsCommand())
    return qeff::tool::runModels();
  llvm::errs() << "qeff: no command given; try 'qeff compile --help' or "
                  "'qeff --help'\n";
  return 1;
}
