//===- DiagnosticPrinter.h - Diagnostics that never open special files -*- C++ -*-===//
//
// Part of qeff. mlir::SourceMgrDiagnosticHandler shows the source line of a
// file location by opening the file itself (llvm::MemoryBuffer::getFile,
// unbounded, blocking): a config.json that is a FIFO or a symlink to
// /dev/zero, refused by the checkpoint reader, would then hang the printer or
// grow its memory without end. This printer reads each file a location
// names through support::readRegularFile first (a regular file of at most
// kConfigFileLimit bytes) and hands the printer that buffer; a location in any
// other file is printed without its source line. Every qeff tool prints its
// diagnostics through it.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_SUPPORT_DIAGNOSTICPRINTER_H
#define QEFF_SUPPORT_DIAGNOSTICPRINTER_H

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

namespace qeff::support {

class DiagnosticPrinter : public mlir::SourceMgrDiagnosticHandler {
public:
  DiagnosticPrinter(llvm::SourceMgr &mgr, mlir::MLIRContext *context,
                    llvm::raw_ostream &os = llvm::errs());

private:
  void print(mlir::Diagnostic &diag);
  /// True when the source lines of every file location inside `loc` may be
  /// shown: each file is then a buffer of the SourceMgr.
  bool canShowLines(mlir::Location loc);
  /// Registers `file` with the SourceMgr when it is a bounded regular file.
  bool loadFile(llvm::StringRef file);

  llvm::StringMap<bool> loaded_;
};

} // namespace qeff::support

#endif // QEFF_SUPPORT_DIAGNOSTICPRINTER_H
