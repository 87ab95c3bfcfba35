//===- MxReport.cpp - what -mxfp6-matmul will compress --------------------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "lowering/Driver/MxReport.h"

#include "runtime/host/numerics/MxFormat.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "onnx/onnx_pb.h" // defines ONNX_API, then includes onnx-ml.pb.h

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <unordered_map>

using namespace mlir;
using namespace mlir::qeff;

namespace {

/// A reader of a value: the node (its op, name, attributes) and the input.
struct Use {
  const ::onnx::NodeProto *node;
  int input;
  std::vector<std::string> outputs; ///< the node's outputs, renamed
};

/// Every node of the graph with model-local function calls inlined, its
/// inputs and outputs renamed into the caller's names.
class Uses {
public:
  explicit Uses(const ::onnx::ModelProto &model) {
    for (const auto &f : model.functions())
      functions_[f.domain() + "\x1f" + f.name()] = &f;
    for (const auto &n : model.graph().node())
      add(n, {}, "", 0);
  }
  const std::vector<Use> &of(const std::string &value) const {
    static const std::vector<Use> none;
    auto it = uses_.find(value);
    return it == uses_.end() ? none : it->second;
  }

private:
  void add(const ::onnx::NodeProto &n, const std::unordered_map<std::string, std::string> &rename,
           const std::string &prefix, int depth) {
    auto map = [&](const std::string &v) {
      if (v.empty())
        return v;
      auto it = rename.find(v);
      return it != rename.end() ? it->second : prefix + v;
    };
    std::vector<std::string> ins, outs;
    for (const auto &i : n.input())
      ins.push_back(map(i));
    for (const auto &o : n.output())
      outs.push_back(map(o));
    auto fn = functions_.find(n.domain() + "\x1f" + n.op_type());
    if (fn != functions_.end() && depth < 64) {
      std::unordered_map<std::string, std::string> inner;
      const ::onnx::FunctionProto &f = *fn->second;
      for (int i = 0; i < f.input_size(); ++i)
        inner[f.input(i)] = i < int(ins.size()) ? ins[i] : "";
      for (int i = 0; i < f.output_size(); ++i)
        inner[f.output(i)] = i < int(outs.size()) ? outs[i] : "";
      std::string innerPrefix = prefix + n.name() + "/";
      for (const auto &body : f.node())
        add(body, inner, innerPrefix, depth + 1);
      return;
    }
    for (size_t i = 0; i < ins.size(); ++i)
      if (!ins[i].empty())
        uses_[ins[i]].push_back({&n, int(i), outs});
  }

  std::unordered_map<std::string, const ::onnx::FunctionProto *> functions_;
  std::unordered_map<std::string, std::vector<Use>> uses_;
};

bool isFloatType(int t) {
  return t == ::onnx::TensorProto::FLOAT || t == ::onnx::TensorProto::FLOAT16 ||
         t == ::onnx::TensorProto::BFLOAT16 || t == ::onnx::TensorProto::DOUBLE;
}

int64_t attrInt(const ::onnx::NodeProto &n, const char *name, int64_t fallback) {
  for (const auto &a : n.attribute())
    if (a.name() == name)
      return a.i();
  return fallback;
}

/// Whether every reader of `value` takes it as a MatMul/Gemm weight (second
/// operand) along one K axis, following Cast and last-two-dims Transpose;
/// `transposed` flips for each Transpose, `orientations` collects 1 (as
/// stored) and 2 (transposed). Otherwise `reason` says why not.
bool weightOnly(const Uses &uses, const std::string &value, size_t rank, bool transposed,
                int depth, int &orientations, std::string &reason) {
  const auto &list = uses.of(value);
  if (list.empty() && depth == 0) {
    reason = "not read by any node";
    return false;
  }
  for (const Use &u : list) {
    const std::string &op = u.node->op_type();
    if ((op == "MatMul" || op == "Gemm") && u.input == 1) {
      bool t = transposed ^ (op == "Gemm" && attrInt(*u.node, "transB", 0) != 0);
      orientations |= t ? 2 : 1;
      if (orientations == 3) {
        reason = "read as a MatMul weight along two different axes";
        return false;
      }
      continue;
    }
    if ((op == "Cast" || op == "Transpose") && depth < 8 && !u.outputs.empty()) {
      bool swap = false;
      if (op == "Transpose") {
        std::vector<int64_t> perm;
        for (const auto &a : u.node->attribute())
          if (a.name() == "perm")
            perm.assign(a.ints().begin(), a.ints().end());
        if (perm.empty() && rank == 2)
          perm = {1, 0}; // ONNX's default: the dims reversed
        size_t r = perm.size();
        swap = r >= 2 && perm[r - 1] == int64_t(r) - 2 && perm[r - 2] == int64_t(r) - 1;
        for (size_t d = 0; d + 2 < r && swap; ++d)
          swap = perm[d] == int64_t(d);
        if (!swap) {
          reason = "read by Transpose '" + u.node->name() + "'";
          return false;
        }
      }
      if (!weightOnly(uses, u.outputs[0], rank, transposed ^ swap, depth + 1, orientations,
                      reason))
        return false;
      continue;
    }
    if (op == "MatMul" || op == "Gemm")
      reason = "first operand of " + op + " '" + u.node->name() + "' (a weight-first product)";
    else
      reason = "read by " + op + " '" + u.node->name() + "'";
    return false;
  }
  return true;
}

std::string externalValue(const ::onnx::TensorProto &t, const char *key) {
  for (const auto &e : t.external_data())
    if (e.key() == key)
      return e.value();
  return "";
}

/// The float values of an initializer (inline or external), or empty.
std::vector<float> floatValues(const ::onnx::TensorProto &t, const std::string &dir,
                               std::map<std::string, std::unique_ptr<llvm::MemoryBuffer>> &files) {
  int64_t n = 1;
  for (int64_t d : t.dims())
    n *= d;
  std::string_view bytes;
  if (t.data_location() == ::onnx::TensorProto::EXTERNAL) {
    std::string location = externalValue(t, "location");
    if (location.empty() || location.find("..") != std::string::npos)
      return {};
    auto &file = files[location];
    if (!file) {
      auto buffer = llvm::MemoryBuffer::getFile(dir + "/" + location, false, false);
      if (!buffer)
        return {};
      file = std::move(*buffer);
    }
    uint64_t offset = std::strtoull(externalValue(t, "offset").c_str(), nullptr, 10);
    uint64_t length = std::strtoull(externalValue(t, "length").c_str(), nullptr, 10);
    if (offset > file->getBufferSize() || length > file->getBufferSize() - offset)
      return {};
    bytes = std::string_view(file->getBufferStart() + offset, length);
  } else if (t.has_raw_data()) {
    bytes = t.raw_data();
  } else if (t.data_type() == ::onnx::TensorProto::FLOAT && t.float_data_size() == n) {
    return {t.float_data().begin(), t.float_data().end()};
  }
  std::vector<float> out;
  if (t.data_type() == ::onnx::TensorProto::FLOAT && bytes.size() == size_t(n) * 4) {
    out.resize(n);
    std::memcpy(out.data(), bytes.data(), bytes.size());
  } else if (t.data_type() == ::onnx::TensorProto::FLOAT16 && bytes.size() == size_t(n) * 2) {
    out.resize(n);
    for (int64_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, bytes.data() + 2 * i, 2);
      out[i] = ::qeff::runtime::halfToFloat(h);
    }
  }
  return out;
}

uint64_t elementBytes(int type) {
  switch (type) {
  case ::onnx::TensorProto::DOUBLE:
  case ::onnx::TensorProto::INT64:
    return 8;
  case ::onnx::TensorProto::INT32:
  case ::onnx::TensorProto::FLOAT:
    return 4; // float32 becomes fp16 below
  case ::onnx::TensorProto::FLOAT16:
  case ::onnx::TensorProto::BFLOAT16:
    return 2;
  default:
    return 1;
  }
}

std::string humanMiB(uint64_t bytes) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format("%.2f MiB", bytes / 1048576.0);
  return s;
}

} // namespace

LogicalResult mlir::qeff::mxCompressionReport(Location loc, const std::string &model,
                                              bool measureErrors, MxReport &report) {
  auto buffer = llvm::MemoryBuffer::getFile(model, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return emitError(loc) << "cannot read " << model << ": " << buffer.getError().message();
  ::onnx::ModelProto proto;
  if ((*buffer)->getBufferSize() > size_t(INT_MAX) ||
      !proto.ParseFromArray((*buffer)->getBufferStart(), int((*buffer)->getBufferSize())))
    return emitError(loc) << model << " is not an ONNX model";
  Uses uses(proto);
  std::string dir = llvm::sys::path::parent_path(model).str();
  std::map<std::string, std::unique_ptr<llvm::MemoryBuffer>> files;
  report = MxReport();
  for (const ::onnx::TensorProto &t : proto.graph().initializer()) {
    MxTensorReport r;
    r.name = t.name();
    uint64_t elements = 1;
    for (int64_t d : t.dims()) {
      r.shape.push_back(d);
      elements *= uint64_t(std::max<int64_t>(d, 0));
    }
    bool floatType = isFloatType(t.data_type());
    r.fp16Bytes = elements * (floatType ? 2 : elementBytes(t.data_type()));
    int orientations = 0;
    if (!floatType || r.shape.size() < 2)
      r.reason = "not a float matrix";
    else
      r.compressed =
          weightOnly(uses, t.name(), r.shape.size(), false, 0, orientations, r.reason);
    bool anyTransposed = orientations == 2;
    if (r.compressed) {
      // Blocks of 32 along K: [.., K, N], or [.., N, K] when read transposed.
      size_t rank = r.shape.size();
      uint64_t k = uint64_t(r.shape[rank - (anyTransposed ? 1 : 2)]);
      uint64_t lines = k ? elements / k : 0;
      r.deviceBytes = lines * ((k + 31) / 32) * 25;
      report.compressedBytes += r.deviceBytes;
      ++report.compressedTensors;
      if (measureErrors) {
        std::vector<float> w = floatValues(t, dir, files);
        if (w.size() == elements && elements > 0) {
          std::vector<float> q = w;
          int64_t inner = anyTransposed ? 1 : r.shape[rank - 1];
          int64_t outer = int64_t(elements) / (int64_t(k) * inner);
          ::qeff::runtime::mx::fakeQuantize(q.data(), outer, int64_t(k), inner, 32,
                                            ::qeff::runtime::mx::Element::FP6_E2M3,
                                            ::qeff::runtime::MxRounding::Even, 2);
          double num = 0, den = 0;
          for (size_t i = 0; i < w.size(); ++i) {
            double d = double(q[i]) - double(w[i]);
            num += d * d;
            den += double(w[i]) * double(w[i]);
          }
          r.error = den > 0 ? std::sqrt(num / den) : 0;
        }
      }
    } else {
      r.deviceBytes = r.fp16Bytes;
      report.uncompressedBytes += r.deviceBytes;
      if (floatType && r.fp16Bytes >= kMxWarnBytes &&
          r.reason.rfind("first operand of", 0) == 0)
        report.warnings.push_back("'" + r.name + "' (" + humanMiB(r.fp16Bytes) +
                                  ") stays fp16 under -mxfp6-matmul: it is the " + r.reason +
                                  "; make the weight the second operand to compress it");
    }
    report.fp16Bytes += r.fp16Bytes;
    report.tensors.push_back(std::move(r));
  }
  return success();
}

nlohmann::ordered_json mlir::qeff::mxReportJson(const MxReport &report) {
  nlohmann::ordered_json tensors = nlohmann::ordered_json::array();
  for (const MxTensorReport &t : report.tensors) {
    nlohmann::ordered_json j;
    j["name"] = t.name;
    j["shape"] = t.shape;
    j["compressed"] = t.compressed;
    if (!t.compressed)
      j["reason"] = t.reason;
    j["device_bytes"] = t.deviceBytes;
    if (t.error >= 0)
      j["mxfp6_rel_error"] = t.error;
    tensors.push_back(j);
  }
  nlohmann::ordered_json j;
  j["compressed_tensors"] = report.compressedTensors;
  j["compressed_bytes"] = report.compressedBytes;
  j["uncompressed_bytes"] = report.uncompressedBytes;
  j["fp16_bytes"] = report.fp16Bytes;
  j["warnings"] = report.warnings;
  j["tensors"] = tensors;
  return j;
}

void mlir::qeff::printMxReport(const MxReport &report, bool compiledWithMxfp6,
                               llvm::raw_ostream &os) {
  uint64_t total = report.compressedBytes + report.uncompressedBytes;
  os << "MX report (-mxfp6-matmul" << (compiledWithMxfp6 ? "" : ", not in this compile")
     << "): " << report.compressedTensors << " of " << report.tensors.size()
     << " constants compressed to MXFP6; on the device " << humanMiB(total) << " ("
     << humanMiB(report.compressedBytes) << " MXFP6 + " << humanMiB(report.uncompressedBytes)
     << " uncompressed) instead of " << humanMiB(report.fp16Bytes) << " in fp16\n";
  for (const std::string &w : report.warnings)
    os << "warning: " << w << "\n";
  for (const MxTensorReport &t : report.tensors) {
    os << llvm::format("  %-6s %10llu B  ", t.compressed ? "mxfp6" : "fp16",
                       (unsigned long long)t.deviceBytes)
       << t.name;
    if (!t.compressed)
      os << "  (" << t.reason << ")";
    if (t.error >= 0)
      os << llvm::format("  rel. error %.4f", t.error);
    os << "\n";
  }
  std::vector<const MxTensorReport *> ranked;
  for (const MxTensorReport &t : report.tensors)
    if (t.error >= 0)
      ranked.push_back(&t);
  if (ranked.empty())
    return;
  std::sort(ranked.begin(), ranked.end(),
            [](auto *a, auto *b) { return a->error > b->error; });
  os << "largest MXFP6 errors (relative RMS; candidates to keep out of MXFP6):\n";
  for (size_t i = 0; i < ranked.size() && i < 10; ++i)
    os << llvm::format("  %.4f  ", ranked[i]->error) << ranked[i]->name << "\n";
}
