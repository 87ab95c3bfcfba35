//===- DiagnosticPrinter.cpp - Diagnostics that never open special files --===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "support/DiagnosticPrinter.h"

#include "support/SafeFile.h"

#include "mlir/IR/Location.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

namespace qeff::support {

DiagnosticPrinter::DiagnosticPrinter(llvm::SourceMgr &mgr, MLIRContext *context,
                                     llvm::raw_ostream &os)
    : SourceMgrDiagnosticHandler(mgr, context, os) {
  // Replaces the handler the base class registered: the files are loaded
  // here before the base class looks for them.
  setHandler([this](Diagnostic &diag) {
    print(diag);
    return success();
  });
}

void DiagnosticPrinter::print(Diagnostic &diag) {
  bool all = canShowLines(diag.getLocation());
  for (Diagnostic &note : diag.getNotes())
    all &= canShowLines(note.getLocation());
  if (all)
    return emitDiagnostic(diag);
  // Some file cannot be shown: print each part, with its source line only
  // where its file was loaded (the base class never opens a file then).
  emitDiagnostic(diag.getLocation(), diag.str(), diag.getSeverity(),
                 canShowLines(diag.getLocation()));
  for (Diagnostic &note : diag.getNotes())
    emitDiagnostic(note.getLocation(), note.str(), note.getSeverity(),
                   canShowLines(note.getLocation()));
}

bool DiagnosticPrinter::canShowLines(Location loc) {
  bool all = true;
  loc->walk([&](Location inner) {
    auto file = llvm::dyn_cast<FileLineColLoc>(inner);
    // Line or column 0 is shown without a source line: never opened.
    if (file && file.getLine() != 0 && file.getColumn() != 0)
      all &= loadFile(file.getFilename().getValue());
    return WalkResult::advance();
  });
  return all;
}

bool DiagnosticPrinter::loadFile(llvm::StringRef file) {
  auto [it, inserted] = loaded_.try_emplace(file, false);
  if (!inserted)
    return it->second;
  // A buffer of that name already (qeff-translate's input file).
  for (unsigned id = 1, e = mgr.getNumBuffers(); id <= e; ++id)
    if (mgr.getMemoryBuffer(id)->getBufferIdentifier() == file)
      return it->second = true;
  std::string text, error;
  if (!readRegularFile(file.str(), kConfigFileLimit, text, error))
    return false;
  mgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, file),
                         llvm::SMLoc());
  return it->second = true;
}

} // namespace qeff::support
