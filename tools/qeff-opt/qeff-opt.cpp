//===- qeff-opt.cpp - the qeff optimizer driver ---------------------------===//
//
// Part of qeff. mlir-opt for qeff: parses, verifies and transforms .mlir files
// using exactly the dialects and passes qeff uses.
//
//===----------------------------------------------------------------------===//

#include "dialects/ONNX/ONNXDialect.h"
#include "dialects/QEff/QEffDialect.h"
#include "lowering/ToONNX/Passes.h"
#include "patterns/Passes.h"
#include "tools/QEffVersion.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

/// The first unbalanced bracket or quote of an option value, described.
/// MLIR 19's pass-option parser does not terminate on a list-option value
/// with an unclosed '{', '(', '[' or quote (its findChar restarts from the
/// beginning), so qeff-opt refuses such values before MLIR sees them.
static std::optional<std::string> unbalanced(llvm::StringRef value) {
  std::string open; // the brackets still open, innermost last
  for (size_t i = 0; i < value.size(); ++i) {
    char c = value[i];
    if (c == '"' || c == '\'') {
      size_t close = value.find(c, i + 1);
      if (close == llvm::StringRef::npos)
        return std::string("unclosed quote ") + c + " at offset " + std::to_string(i);
      i = close;
    } else if (c == '{' || c == '(' || c == '[') {
      open.push_back(c);
    } else if (c == '}' || c == ')' || c == ']') {
      char want = c == '}' ? '{' : c == ')' ? '(' : '[';
      if (open.empty() || open.back() != want)
        return std::string("unmatched '") + c + "' at offset " + std::to_string(i);
      open.pop_back();
    }
  }
  if (!open.empty())
    return std::string("unclosed '") + open.back() + "'";
  return std::nullopt;
}

/// Whether `arg` is an option whose value, given as the next argument, MLIR
/// parses as a pass pipeline (`--pass-pipeline '...'`, `-p '...'`). Other
/// options reach the pass-option parser only in the `--opt=value` form (pass
/// flags take their options after '=', a separate argument is an input
/// file).
static bool takesPipelineArgument(llvm::StringRef arg) {
  arg = arg.ltrim('-');
  return arg == "pass-pipeline" || arg == "p";
}

int main(int argc, char **argv) {
  // Every form in which a value reaches MLIR's pass-option parser:
  // `--opt=value` and `--pass-pipeline value`.
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    if (arg == "--")
      break;
    if (!arg.starts_with("-"))
      continue;
    llvm::StringRef value;
    std::string option = arg.str();
    if (arg.contains('=')) {
      value = arg.split('=').second;
    } else if (takesPipelineArgument(arg) && i + 1 < argc) {
      value = argv[++i];
      option += std::string(" ") + argv[i];
    } else {
      continue;
    }
    if (std::optional<std::string> problem = unbalanced(value)) {
      llvm::errs() << "qeff-opt: option '" << option << "': " << *problem
                   << " (pass options must have balanced brackets and quotes)\n";
      return 1;
    }
  }

  mlir::DialectRegistry registry;
  registry.insert<mlir::func::FuncDialect, mlir::qeff::QEffDialect,
                  mlir::onnx::ONNXDialect>();
  // Generic cleanups a pipeline author expects (canonicalize, cse, ...).
  mlir::registerTransformsPasses();
  mlir::qeff::registerQEffToONNXPasses();
  mlir::qeff::registerQEffPatternsPasses();
  mlir::qeff::registerDevicePipeline();
  qeff::addVersionPrinter("qeff-opt");
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "qeff optimizer driver\n", registry));
}
