//===- Commands.h - the qeff subcommands ------------------------*- C++ -*-===//
//
// Part of qeff. Each subcommand lives in its own file and registers its
// options with llvm::cl; qeff.cpp dispatches.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_TOOLS_QEFF_COMMANDS_H
#define QEFF_TOOLS_QEFF_COMMANDS_H

namespace qeff::tool {
bool isCompileCommand();
int runCompile();

void registerRunOptions();
bool isRunCommand();
int runRun();

void registerInferOptions();
bool isInferCommand();
int runInfer();

void registerEvalOptions();
bool isEvalCommand();
int runEval();

bool isServeCommand();
int runServe();

bool isModelsCommand(); // Cards.h
int runModels();

/// Hides libLLVM's options behind --help-hidden and appends each command
/// option's default to its description (Help.cpp).
void prepareHelp();
} // namespace qeff::tool

#endif // QEFF_TOOLS_QEFF_COMMANDS_H
