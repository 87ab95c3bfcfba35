//===- PrecisionList.cpp - reading node_precision.yaml --------------------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "lowering/Driver/PrecisionList.h"

#include "support/SafeFile.h"

#include "llvm/Support/Path.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"

#include <optional>

using namespace llvm;
using ::qeff::runtime::MxRounding;
using ::qeff::runtime::MxWeightAxis;
using ::qeff::runtime::Numerics;
using ::qeff::runtime::parseNumerics;
using ::qeff::runtime::Result;
using ::qeff::runtime::SessionOptions;
using ::qeff::runtime::Status;
namespace runtime = ::qeff::runtime;

namespace {

/// One YAML scalar of a node-precision list: plain, 'single' ('' escapes a
/// quote) or "double" quoted, then at most a comment.
std::optional<std::string> precisionScalar(StringRef text, std::string &error) {
  std::string value;
  StringRef rest;
  if (text.consume_front("'")) {
    for (size_t i = 0;; ++i) {
      if (i >= text.size()) {
        error = "unterminated 'quoted' name";
        return std::nullopt;
      }
      if (text[i] != '\'')
        value += text[i];
      else if (i + 1 < text.size() && text[i + 1] == '\'')
        value += text[i++];
      else {
        rest = text.drop_front(i + 1);
        break;
      }
    }
  } else if (text.consume_front("\"")) {
    for (size_t i = 0;; ++i) {
      if (i >= text.size()) {
        error = "unterminated \"quoted\" name";
        return std::nullopt;
      }
      if (text[i] == '"') {
        rest = text.drop_front(i + 1);
        break;
      }
      if (text[i] != '\\') {
        value += text[i];
        continue;
      }
      char next = i + 1 < text.size() ? text[++i] : '\0';
      if (next != '"' && next != '\\' && next != '/') {
        error = "unsupported escape in a \"quoted\" name";
        return std::nullopt;
      }
      value += next;
    }
  } else {
    size_t comment = text.find(" #");
    value = text.take_front(comment).trim().str();
    if (value.empty() || StringRef("[]{}&*!|>%@`#-?:,").contains(value[0])) {
      error = "'" + value.substr(0, 64) + "' is not a node name (a plain YAML scalar)";
      return std::nullopt;
    }
  }
  rest = rest.trim();
  if (!rest.empty() && !rest.starts_with("#")) {
    error = "text after the name: '" + rest.take_front(64).str() + "'";
    return std::nullopt;
  }
  if (value.empty())
    error = "an empty node name";
  return value.empty() ? std::nullopt : std::optional<std::string>(value);
}

} // namespace

/// The node names of a qaic node-precision file, in the form qeff compile
/// writes it (`FP32NodeInstanceNames:` then `- <name>` lines, or `[]`).
/// Anything else is an error naming the line: a list qeff half understands
/// would leave the nodes it skipped in fp16 without a word.
Result<std::set<std::string>> mlir::qeff::readPrecisionList(const std::string &path) {
  std::set<std::string> names;
  if (!sys::fs::exists(path))
    return names;
  std::string text, error;
  if (!::qeff::support::readRegularFile(path, ::qeff::support::kConfigFileLimit,
                                       text, error))
    return runtime::Error{error};
  SmallVector<StringRef> lines;
  StringRef(text).split(lines, '\n');
  enum { Start, List, Closed } state = Start;
  for (auto [index, line] : llvm::enumerate(lines)) {
    std::string where = path + ": line " + std::to_string(index + 1) + ": ";
    StringRef body = line.rtrim();
    if (body.ltrim().empty() || body.ltrim().starts_with("#"))
      continue;
    if (body.ltrim().starts_with("- ") || body.ltrim() == "-") {
      if (state != List)
        return runtime::Error{where + "a list item outside FP32NodeInstanceNames"};
      auto name = precisionScalar(body.ltrim().drop_front(1).trim(), error);
      if (!name)
        return runtime::Error{where + error};
      names.insert(*name);
      continue;
    }
    if (body.starts_with(" ") || body.starts_with("\t"))
      return runtime::Error{where + "expected '- <node name>'"};
    auto [key, value] = body.split(':');
    if (key != "FP32NodeInstanceNames")
      return runtime::Error{where + "unknown key '" + key.take_front(64).str() +
                            "' (a node-precision list holds FP32NodeInstanceNames only)"};
    if (state != Start)
      return runtime::Error{where + "FP32NodeInstanceNames given twice"};
    value = value.trim();
    if (!value.empty() && !value.starts_with("#") && value != "[]")
      return runtime::Error{where + "expected 'FP32NodeInstanceNames:' followed by "
                                    "'- <node name>' lines, or 'FP32NodeInstanceNames: []'"};
    state = value == "[]" ? Closed : List;
  }
  if (state == Start)
    return runtime::Error{path + ": no FP32NodeInstanceNames list"};
  return names;
}

::qeff::runtime::Status mlir::qeff::applyNumerics(const std::string &artifactDir, const std::string &device,
                     const std::string &numerics, const std::string &mxRounding,
                     const std::string &mxWeightAxis, SessionOptions &options) {
  if (Status s = parseNumerics(numerics, options); !s)
    return s;
  if (device == "qaic" && (options.numerics != Numerics::FP32 || options.mx.any()))
    return ::qeff::runtime::Error{"--numerics is a host-device option: the AI 100 computes as "
                          "qaic-compile built the QPC"};
  if (mxRounding != "even" && mxRounding != "nearest")
    return ::qeff::runtime::Error{"--mx-rounding must be even or nearest, got '" + mxRounding + "'"};
  if (mxWeightAxis != "k" && mxWeightAxis != "n")
    return ::qeff::runtime::Error{"--mx-weight-axis must be k or n, got '" + mxWeightAxis + "'"};
  options.mx.rounding = mxRounding == "even" ? MxRounding::Even : MxRounding::Nearest;
  options.mx.weightAxis =
      mxWeightAxis == "k" ? MxWeightAxis::Reduction : MxWeightAxis::Output;
  options.fp32Nodes.clear();
  if (options.numerics == Numerics::FP16) {
    auto nodes = mlir::qeff::readPrecisionList([&] {
      SmallString<256> p(artifactDir);
      sys::path::append(p, "node_precision.yaml");
      return std::string(p.str());
    }());
    if (!nodes)
      return ::qeff::runtime::Error{nodes.error()};
    options.fp32Nodes = std::move(*nodes);
  }
  return {};
}
