//===- Artifacts.cpp - the files a compile writes -------------------------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "lowering/Driver/Artifacts.h"

#include "dialects/QEff/QEffOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/BLAKE3.h"

#include <nlohmann/json.hpp>

#include "support/SafeFile.h"

#include <cctype>
#include <cerrno>
#include <unistd.h>

#include <fstream>
#include <vector>

using namespace mlir;
using namespace mlir::qeff;

namespace {
func::FuncOp publicFunction(ModuleOp module) {
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal() && !func.isPrivate())
      return func;
  return nullptr;
}

std::string hex(ArrayRef<uint8_t> bytes) {
  std::string s;
  llvm::raw_string_ostream os(s);
  for (uint8_t b : bytes)
    os << llvm::format_hex_no_prefix(b, 2);
  return s;
}
} // namespace

std::string mlir::qeff::specializationsJson(ModuleOp module, bool legacy) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  auto specs = module->getAttrOfType<ArrayAttr>("qeff.specializations");
  for (Attribute a : specs ? specs : ArrayAttr::get(module.getContext(), {})) {
    auto spec = llvm::cast<DictionaryAttr>(a);
    nlohmann::ordered_json symbols = nlohmann::ordered_json::object();
    // The order users expect to read: batch, sequence, context.
    for (StringRef key : {"batch_size", "seq_len", "ctx_len"})
      if (auto v = spec.getAs<DictionaryAttr>("symbols").getAs<StringAttr>(key))
        symbols[key.str()] = v.getValue().str();
    for (NamedAttribute sym : spec.getAs<DictionaryAttr>("symbols"))
      if (!symbols.contains(sym.getName().str()))
        symbols[sym.getName().str()] =
            llvm::cast<StringAttr>(sym.getValue()).getValue().str();
    if (legacy) {
      list.push_back(symbols);
    } else {
      nlohmann::ordered_json entry;
      entry["name"] = spec.getAs<StringAttr>("name").getValue().str();
      entry["symbols"] = symbols;
      list.push_back(entry);
    }
  }
  nlohmann::ordered_json root;
  root["specializations"] = list;
  return root.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string mlir::qeff::customIOYaml(ModuleOp module, bool mxint8KV) {
  func::FuncOp func = publicFunction(module);
  std::string out;
  llvm::raw_string_ostream os(out);
  StringRef precision = mxint8KV ? "mxint8" : "float16";
  // Only the KV cache is stored narrower; the on-device sampler's i1
  // penalty buffers keep their type.
  auto emit = [&](StringAttr name, Type type) {
    if (!name || !llvm::isa<FloatType>(getElementTypeOrSelf(type)))
      return;
    StringRef n = name.getValue();
    if (n.starts_with("past_"))
      os << " - IOName: " << n << "\n   Precision: " << precision << "\n\n";
  };
  os << "# Model Inputs\n\n";
  for (unsigned i = 0; func && i < func.getNumArguments(); ++i)
    emit(func.getArgAttrOfType<StringAttr>(i, "qeff.name"),
         func.getArgumentTypes()[i]);
  os << "# Model Outputs\n\n";
  for (unsigned i = 0; func && i < func.getNumResults(); ++i)
    emit(func.getResultAttrOfType<StringAttr>(i, "qeff.name"),
         func.getResultTypes()[i]);
  return out;
}

std::string mlir::qeff::shellQuote(StringRef arg) {
  bool plain = !arg.empty() && llvm::all_of(arg, [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || StringRef("_-=./,:+@%").contains(c);
  });
  if (plain)
    return arg.str();
  std::string quoted = "'";
  for (char c : arg)
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string mlir::qeff::qaicCompileScript(const std::vector<std::string> &args,
                                          const std::string &flatSpecializations) {
  std::string words;
  for (const std::string &arg : args)
    words += " \\\n  " + shellQuote(arg);
  std::string script =
      "#!/bin/sh\n"
      "# Builds the QPC for these artifacts on an AI 100 host. The paths are relative\n"
      "# to this directory: the artifacts can be copied or moved anywhere.\n"
      "# The compiler: $QAIC_COMPILE, else <sdk>/exec/qaic-compile, else\n"
      "# <sdk>/exec/qaic-exec (Apps SDKs that have only that; it compiles with\n"
      "# -compile-only), <sdk> being $QEFF_QAIC_SDK_DIR or /opt/qti-aic.\n"
      "cd \"$(dirname \"$0\")\" || exit 1\n"
      "sdk=\"${QEFF_QAIC_SDK_DIR:-/opt/qti-aic}\"\n"
      "compiler=\"${QAIC_COMPILE:-$sdk/exec/qaic-compile}\"\n"
      "if [ -z \"${QAIC_COMPILE:-}\" ] && [ ! -x \"$compiler\" ] && "
      "[ -x \"$sdk/exec/qaic-exec\" ]; then\n"
      "  compiler=\"$sdk/exec/qaic-exec\"\n"
      "fi\n"
      "set --" + words + "\n"
      "case \"${compiler##*/}\" in qaic-exec) set -- \"$@\" -compile-only ;; esac\n";
  if (flatSpecializations.empty())
    return script + "exec \"$compiler\" \"$@\"\n";
  // Older Apps SDKs take only the flat specializations form: on their exact
  // error, the same specializations again, flat.
  return script +
         "log=\"$(mktemp)\" || exit 1\n"
         "\"$compiler\" \"$@\" 2> \"$log\"\n"
         "status=$?\n"
         "cat \"$log\" >&2\n"
         "if [ \"$status\" -eq 255 ] && grep -qF '" +
         std::string(kNamedSpecializationsRejected) +
         "' \"$log\"; then\n"
         "  echo \"qaic-compile.sh: this Apps SDK takes only the flat specializations "
         "form (quic/efficient-transformers#1129): compiling again with it\" >&2\n"
         "  flat=\"$(mktemp)\" || exit 1\n"
         "  cat > \"$flat\" <<'QEFF_FLAT_SPECIALIZATIONS'\n" +
         flatSpecializations +
         "QEFF_FLAT_SPECIALIZATIONS\n"
         "  for arg do\n"
         "    shift\n"
         "    case \"$arg\" in\n"
         "      -network-specialization-config=*) set -- \"$@\" "
         "\"-network-specialization-config=$flat\" ;;\n"
         "      *) set -- \"$@\" \"$arg\" ;;\n"
         "    esac\n"
         "  done\n"
         "  rm -rf qpc\n"
         "  \"$compiler\" \"$@\"\n"
         "  status=$?\n"
         "  rm -f \"$flat\"\n"
         "fi\n"
         "rm -f \"$log\"\n"
         "exit \"$status\"\n";
}

std::string mlir::qeff::hashFile(const std::string &path) {
  // Streamed in chunks through a buffer: a checkpoint of any size is hashed
  // in constant memory (no mapping that would count toward peak RSS). Only a
  // regular file: a FIFO or device would block or never end.
  uint64_t size = 0;
  std::string error;
  int fd = ::qeff::support::openRegularFile(path, size, error);
  if (fd < 0)
    return "";
  llvm::BLAKE3 hasher;
  std::vector<char> chunk(8 << 20);
  while (true) {
    ssize_t n = ::read(fd, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      ::close(fd);
      return "";
    }
    if (n == 0)
      break;
    hasher.update(ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(chunk.data()),
                                    size_t(n)));
  }
  ::close(fd);
  return hex(hasher.final<16>());
}

std::string mlir::qeff::hashText(StringRef text) {
  return hex(llvm::BLAKE3::hash<16>(
      ArrayRef<uint8_t>(text.bytes_begin(), text.size())));
}

LogicalResult mlir::qeff::writeFileAtomically(Location loc,
                                              const std::string &path,
                                              StringRef contents) {
  llvm::Error error = llvm::writeToOutput(path, [&](llvm::raw_ostream &os) {
    os << contents;
    return llvm::Error::success();
  });
  if (error)
    return emitError(loc) << "cannot write " << path << ": "
                          << llvm::toString(std::move(error));
  return success();
}

std::string mlir::qeff::seqLenDependentRopeJson(ModuleOp module) {
  std::string kind;
  int64_t threshold = 0;
  module.walk([&](RotaryOp op) {
    RopeScalingAttr scaling = op.getScalingAttr();
    if (!scaling || !scaling.isSeqLenDependent())
      return;
    int64_t t = scaling.getOriginalMaxPosition();
    if (kind.empty() || t < threshold) {
      kind = stringifyRopeScalingKind(scaling.getKind()).str();
      threshold = t;
    }
  });
  if (kind.empty())
    return "";
  nlohmann::ordered_json json;
  json["kind"] = kind;
  json["threshold"] = threshold;
  return json.dump();
}
