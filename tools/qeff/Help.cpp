//===- Help.cpp - what `qeff --help` shows ---------------------------------===//
//
// Part of qeff. libLLVM registers its own command-line options (AMDGPU,
// Polly, x86, ...) in every tool that links it; `qeff --help` would list
// hundreds of them. qeff's options belong to its subcommands, so every
// top-level option but the help and version ones is moved behind
// --help-hidden. Each subcommand option's default is appended to its
// description, unless the description already states it.
//
//===----------------------------------------------------------------------===//

#include "tools/qeff/Commands.h"

#include "lowering/Driver/CompileDriver.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <deque>
#include <string>

using namespace llvm;

namespace {

/// Descriptions with their defaults; llvm::cl keeps StringRefs to them.
std::deque<std::string> &descriptions() {
  static std::deque<std::string> texts;
  return texts;
}

void appendDefault(cl::Option &option, StringRef value) {
  if (option.HelpStr.contains("default") || value.empty())
    return;
  descriptions().push_back(
      (option.HelpStr + " (default: " + value + ")").str());
  option.setDescription(descriptions().back());
}

/// A scalar option's default, printed as llvm::cl would parse it back.
template <typename T> bool scalarDefault(cl::Option &option) {
  auto *opt = dynamic_cast<cl::opt<T> *>(&option);
  if (!opt)
    return false;
  if (opt->getDefault().hasValue()) {
    std::string text;
    raw_string_ostream os(text);
    os << opt->getDefault().getValue();
    appendDefault(option, text);
  }
  return true;
}

/// An enum option's default, by its value name.
template <typename E> bool enumDefault(cl::Option &option) {
  auto *opt = dynamic_cast<cl::opt<E> *>(&option);
  if (!opt)
    return false;
  const auto &parser = opt->getParser();
  if (opt->getDefault().hasValue())
    for (unsigned i = 0; i < parser.getNumOptions(); ++i)
      if (parser.getOptionValue(i).compare(opt->getDefault()))
        appendDefault(option, parser.getOption(i));
  return true;
}

} // namespace

/// Hides every top-level option but the generic ones. Most of them are
/// libLLVM's own, and some of their vtables in Debian's libLLVM.so.19.1 carry
/// no RTTI, so UBSan's vptr check cannot tell their type and reports "object
/// has invalid vptr" on the (non-virtual) calls below: only this loop, which
/// touches libLLVM's objects, goes without the vptr check (the inline
/// accessors it calls: cmake/sanitize-ignorelist.txt, which says more).
__attribute__((no_sanitize("vptr"))) static void hideTopLevelOptions() {
  static const StringSet<> generic = {"help", "help-list", "help-hidden",
                                      "help-list-hidden", "version"};
  for (auto &entry :
       cl::getRegisteredOptions(cl::SubCommand::getTopLevel()))
    if (!generic.contains(entry.first()) &&
        entry.second->getOptionHiddenFlag() == cl::NotHidden)
      entry.second->setHiddenFlag(cl::Hidden);
}

void qeff::tool::prepareHelp() {
  hideTopLevelOptions();

  for (cl::SubCommand *sub : cl::getRegisteredSubcommands()) {
    if (sub == &cl::SubCommand::getTopLevel() ||
        sub == &cl::SubCommand::getAll())
      continue;
    for (auto &entry : sub->OptionsMap) {
      cl::Option &option = *entry.second;
      (void)(scalarDefault<int64_t>(option) || scalarDefault<int>(option) ||
             scalarDefault<uint64_t>(option) ||
             scalarDefault<std::string>(option) ||
             enumDefault<mlir::qeff::EmitKind>(option) ||
             enumDefault<mlir::qeff::KVWindow>(option) ||
             enumDefault<mlir::qeff::OutlineLayers>(option));
    }
  }
}
