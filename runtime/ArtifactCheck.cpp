//===- ArtifactCheck.cpp - Artifact files checked against model.onnx ------===//

#include "runtime/ArtifactCheck.h"

#include "support/CheckedMath.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace qeff::runtime {

Status checkSpecializations(const std::vector<Specialization> &specs,
                            const std::vector<TensorInfo> &inputs,
                            const std::vector<std::string> &stateNames,
                            const std::string &specFile, const std::string &modelFile) {
  // A symbol that is no input dim is allowed (a rolling KV window keeps
  // ctx_len for qaic-compile with fixed-size caches) but bounded all the same.
  for (const Specialization &spec : specs) {
    for (const auto &[symbol, value] : spec.symbols) {
      if (value < 1 || value > kMaxSymbolValue)
        return makeError(specFile + ": " + spec.name + ": symbol '" + symbol + "' is " +
                         std::to_string(value) + ", outside 1.." +
                         std::to_string(kMaxSymbolValue));
    }
    for (const TensorInfo &info : inputs) {
      if (std::find(stateNames.begin(), stateNames.end(), info.name) == stateNames.end())
        continue;
      int64_t bytes = static_cast<int64_t>(dtypeSize(info.dtype));
      bool bounded = true;
      for (const Dim &dim : info.dims) {
        int64_t d = dim.value;
        if (!dim.symbol.empty()) {
          auto it = spec.symbols.find(dim.symbol);
          if (it == spec.symbols.end()) {
            bounded = false;
            break;
          }
          d = it->second;
        }
        if (d < 0 || !support::checkedMul(bytes, d, bytes) || bytes > kMaxStateBytes)
          return makeError(specFile + ": " + spec.name + " makes the retained-state input '" +
                           info.name + "' " + dimsString(info.dims) + " of " + modelFile +
                           " larger than " + std::to_string(kMaxStateBytes >> 30) + " GiB");
      }
      (void)bounded;
    }
  }
  return {};
}

namespace {

using Json = nlohmann::json;

Status checkIoList(const Json &manifest, const char *key,
                   const std::vector<TensorInfo> &infos, const std::string &manifestFile,
                   const std::string &modelFile) {
  auto it = manifest.find(key);
  if (it == manifest.end())
    return {}; // an older manifest without the list
  if (!it->is_array())
    return makeError(manifestFile + ": field '" + key + "' must be a list");
  if (it->size() != infos.size())
    return makeError(manifestFile + ": field '" + key + "' lists " +
                     std::to_string(it->size()) + " tensors, " + modelFile + " has " +
                     std::to_string(infos.size()));
  for (size_t i = 0; i < infos.size(); ++i) {
    const Json &entry = (*it)[i];
    const TensorInfo &info = infos[i];
    std::string where = manifestFile + ": " + key + "[" + std::to_string(i) + "]";
    if (!entry.is_object())
      return makeError(where + " must be an object");
    auto name = entry.find("name");
    if (name == entry.end() || !name->is_string() || name->get<std::string>() != info.name)
      return makeError(where + ": field 'name' is " +
                       (name == entry.end() ? std::string("missing")
                                            : name->dump(-1, ' ', false,
                                                         Json::error_handler_t::replace)) +
                       ", " + modelFile + " has '" + info.name + "'");
    auto dtype = entry.find("dtype");
    if (dtype != entry.end() &&
        (!dtype->is_string() || dtype->get<std::string>() != dtypeName(info.dtype)))
      return makeError(where + " ('" + info.name + "'): field 'dtype' disagrees with " +
                       modelFile + " (" + std::string(dtypeName(info.dtype)) + ")");
    auto shape = entry.find("shape");
    if (shape == entry.end())
      continue;
    bool same = shape->is_array() && shape->size() == info.dims.size();
    for (size_t d = 0; same && d < info.dims.size(); ++d) {
      const Json &s = (*shape)[d];
      const Dim &dim = info.dims[d];
      same = dim.symbol.empty()
                 ? s.is_number_integer() && s.get<int64_t>() == dim.value
                 : s.is_string() && s.get<std::string>() == dim.symbol;
    }
    if (!same)
      return makeError(where + " ('" + info.name + "'): field 'shape' disagrees with " +
                       modelFile + " " + dimsString(info.dims));
  }
  return {};
}

} // namespace

Status checkManifest(const std::string &text, const std::vector<TensorInfo> &inputs,
                     const std::vector<TensorInfo> &outputs,
                     const std::vector<Specialization> &specs,
                     const std::string &manifestFile, const std::string &modelFile,
                     const std::string &specFile) {
  try {
    Json manifest = Json::parse(text);
    if (!manifest.is_object())
      return makeError(manifestFile + ": expected a JSON object");
    if (Status s = checkIoList(manifest, "inputs", inputs, manifestFile, modelFile); !s)
      return s;
    if (Status s = checkIoList(manifest, "outputs", outputs, manifestFile, modelFile); !s)
      return s;
    auto list = manifest.find("specializations");
    if (list != manifest.end()) {
      Json wrapped = Json::object();
      wrapped["specializations"] = *list;
      auto parsed = parseSpecializations(wrapped.dump(), manifestFile);
      if (!parsed)
        return makeError(parsed.error());
      bool same = parsed->size() == specs.size();
      for (size_t i = 0; same && i < specs.size(); ++i)
        same = (*parsed)[i].symbols == specs[i].symbols;
      if (!same)
        return makeError(manifestFile + ": field 'specializations' disagrees with " +
                         specFile);
    }
    return {};
  } catch (const Json::exception &e) {
    return makeError(manifestFile + ": invalid JSON: " + e.what());
  }
}

} // namespace qeff::runtime
