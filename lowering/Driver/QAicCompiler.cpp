//===- QAicCompiler.cpp - Running qaic-compile on the artifacts -----------===//
//
// Part of qeff. The compilers of the Apps SDK generations: qaic-compile;
// qaic-exec on SDKs that have only that (it runs the network on a card after
// compiling unless given -compile-only); and qaic-compile builds that reject
// the named specializations.json (quic/efficient-transformers#1129), which
// are given the flat form of the same specializations.
//
//===----------------------------------------------------------------------===//

#include "lowering/Driver/Artifacts.h"
#include "lowering/Driver/CompileDriver.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <optional>

using namespace mlir;
using namespace mlir::qeff;

bool mlir::qeff::isQAicExec(const std::string &compiler) {
  return llvm::sys::path::filename(compiler) == "qaic-exec";
}

std::string mlir::qeff::checkQAicArguments(const CompileOptions &o) {
  bool token = !o.aicHwVersion.empty() && llvm::all_of(o.aicHwVersion, [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || StringRef("._-").contains(c);
  });
  if (!token)
    return "--aic-hw-version '" + o.aicHwVersion +
           "' is not a hardware version name (letters, digits, '.', '_', '-'; "
           "e.g. ai100)";
  // What qeff sets itself, and how to change it instead.
  static const std::pair<StringRef, StringRef> owned[] = {
      {"-m", "the artifacts' model.onnx"},
      {"-aic-hw", "always"},
      {"-aic-hw-version", "use --aic-hw-version"},
      {"-retained-state", "always"},
      {"-convert-to-fp16", "always"},
      {"-aic-num-cores", "use --num-cores"},
      {"-mxfp6-matmul", "use --mxfp6"},
      {"-network-specialization-config", "specializations.json"},
      {"-custom-IO-list-file", "custom_io.yaml"},
      {"-node-precision-info", "use --fp32-scopes or --calibrate"},
      {"-mdp-load-partition-config", "use --num-devices"},
      {"-sub-functions", "use --outline-layers"},
      {"-aic-binary-dir", "the artifacts' qpc/"},
      {"-compile-only", "added for qaic-exec"}};
  for (const std::string &arg : o.qaicArgs) {
    if (arg.size() < 2 || arg[0] != '-')
      return "--qaic-arg '" + arg + "' is not a qaic-compile option (it starts with '-')";
    if (llvm::any_of(arg, [](char c) {
          return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
        }))
      return "--qaic-arg '" + arg + "' contains a control character";
    StringRef name = StringRef(arg).split('=').first;
    for (const auto &[flag, how] : owned)
      if (name == flag)
        return "--qaic-arg '" + arg + "': qeff sets " + flag.str() + " itself (" +
               how.str() + ")";
  }
  return "";
}

namespace {

struct Outcome {
  int exitCode = 0;
  std::string message; ///< why the process could not run, if it could not
  std::string errors;  ///< what it wrote to stderr
};

/// Runs `compiler` once; its stderr is captured (to look for the rejection
/// of the named specializations) and then passed on to ours.
Outcome runOnce(const std::string &compiler, const std::vector<std::string> &args) {
  Outcome outcome;
  llvm::SmallString<128> errPath;
  std::optional<StringRef> redirects[3] = {std::nullopt, std::nullopt, std::nullopt};
  bool captured =
      !llvm::sys::fs::createTemporaryFile("qeff-qaic-compile", "stderr", errPath);
  if (captured)
    redirects[2] = StringRef(errPath);
  SmallVector<StringRef> argv = {compiler};
  for (const std::string &arg : args)
    argv.push_back(arg);
  outcome.exitCode = llvm::sys::ExecuteAndWait(compiler, argv, /*Env=*/std::nullopt,
                                               redirects, /*SecondsToWait=*/0,
                                               /*MemoryLimit=*/0, &outcome.message);
  if (captured) {
    if (auto text = llvm::MemoryBuffer::getFile(errPath)) {
      outcome.errors = (*text)->getBuffer().str();
      llvm::errs() << outcome.errors;
    }
    llvm::sys::fs::remove(errPath);
  }
  return outcome;
}

} // namespace

LogicalResult mlir::qeff::runQAicCompile(Location loc, const std::string &compiler,
                                         const std::vector<std::string> &args,
                                         const CompileOptions &o,
                                         const std::string &flatSpecializations,
                                         CompileReport &report) {
  report.qaicCompiler = compiler;
  std::vector<std::string> run = args;
  if (isQAicExec(compiler))
    run.push_back("-compile-only");
  Outcome outcome = runOnce(compiler, run);
  if (outcome.exitCode == 255 && !flatSpecializations.empty() &&
      StringRef(outcome.errors).contains(kNamedSpecializationsRejected)) {
    // The same specializations in the flat form, from a temporary file: the
    // artifact's specializations.json stays named (qeff and the manifest
    // read the names).
    llvm::SmallString<128> flatPath;
    int fd = -1;
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
            "qeff-specializations-flat", "json", fd, flatPath))
      return emitError(loc) << "cannot create a temporary file: " << ec.message();
    {
      llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
      os << flatSpecializations;
    }
    for (std::string &arg : run)
      if (StringRef(arg).starts_with("-network-specialization-config="))
        arg = "-network-specialization-config=" + flatPath.str().str();
    llvm::errs() << "qeff compile: " << compiler
                 << " takes only the flat specializations form (an Apps SDK without "
                    "the fix of quic/efficient-transformers#1129): compiling again "
                    "with it\n";
    llvm::SmallString<256> qpc(o.outputDir);
    llvm::sys::path::append(qpc, "qpc");
    llvm::sys::fs::remove_directories(qpc);
    report.flatSpecializationsRetry = true;
    outcome = runOnce(compiler, run);
    llvm::sys::fs::remove(flatPath);
  }
  report.qaicExitCode = outcome.exitCode;
  report.qpcBuilt = outcome.exitCode == 0;
  if (!report.qpcBuilt)
    return emitError(loc) << (isQAicExec(compiler) ? "qaic-exec" : "qaic-compile")
                          << " failed (exit code "
                          << outcome.exitCode << ")"
                          << (outcome.message.empty() ? "" : ": " + outcome.message)
                          << "; the ONNX artifacts are in " << o.outputDir;
  return success();
}
