//===- Numerics.cpp - `--numerics` values ---------------------------------===//
//
// Part of qeff. The spelling of the host device's numerics modes, shared by
// qeff run, infer, serve and eval (docs/numerics.md).
//
//===----------------------------------------------------------------------===//

#include "qeff/runtime/Session.h"

#include <sstream>

namespace qeff::runtime {

Status parseNumerics(const std::string &text, SessionOptions &options) {
  bool fp32 = false, fp16 = false;
  MxOptions mx = options.mx;
  mx.mxfp6Weights = mx.mxint8KV = mx.mxint8IO = false;
  std::set<std::string> seen;
  std::stringstream parts(text);
  std::string part;
  auto bad = [&](const std::string &why) {
    return makeError("--numerics '" + text + "': " + why +
                     " (modes: fp32, fp16, mxfp6, mxint8-kv, mxint8-io, joined by '+', "
                     "e.g. fp16+mxfp6+mxint8-kv)");
  };
  if (text.empty())
    return bad("empty");
  while (std::getline(parts, part, '+')) {
    if (!seen.insert(part).second)
      return bad("'" + part + "' given twice");
    if (part == "fp32")
      fp32 = true;
    else if (part == "fp16")
      fp16 = true;
    else if (part == "mxfp6")
      mx.mxfp6Weights = true;
    else if (part == "mxint8-kv")
      mx.mxint8KV = true;
    else if (part == "mxint8-io")
      mx.mxint8IO = true;
    else
      return bad(part.empty() ? "an empty mode" : "unknown mode '" + part + "'");
  }
  if (text.back() == '+')
    return bad("an empty mode");
  if (fp32 && fp16)
    return bad("fp32 and fp16 exclude each other");
  options.numerics = fp16 ? Numerics::FP16 : Numerics::FP32;
  options.mx = mx;
  return {};
}

std::string numericsName(const SessionOptions &options) {
  std::string name = options.numerics == Numerics::FP16 ? "fp16" : "fp32";
  if (options.mx.mxfp6Weights)
    name += "+mxfp6";
  if (options.mx.mxint8KV)
    name += "+mxint8-kv";
  if (options.mx.mxint8IO)
    name += "+mxint8-io";
  return name;
}

} // namespace qeff::runtime
