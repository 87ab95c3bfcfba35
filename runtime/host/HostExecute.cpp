//===- HostExecute.cpp - Running the host device's plan -------------------===//
//
// Input checks and conversion, one kernel call per plan node, fp16 emulation
// (every float output rounded to fp16 unless the node is on the fp32 list),
// the inf/nan check, and the QEFF_HOST_PROFILE per-op timing.
//
//===----------------------------------------------------------------------===//

#include "runtime/host/HostDeviceImpl.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace qeff::runtime::host {

Tensor roundedToHalf(Context &ctx, Tensor t) {
  Tensor r = t.uniquelyOwned() ? t : ctx.allocate(DType::Float32, t.shape());
  const float *p = t.data<float>();
  float *q = r.data<float>();
  for (int64_t i = 0; i < t.numElements(); ++i)
    q[i] = roundToHalf(p[i]);
  return r;
}

bool anyNonFinite(const Context &ctx, const Tensor &t) {
  if (t.dtype() == DType::Float16) {
    const uint16_t *h = static_cast<const uint16_t *>(t.rawData());
    std::atomic<bool> found{false};
    parallelFor(ctx, t.numElements(), 1 << 18, [&](int64_t b, int64_t e) {
      uint32_t any = 0;
      for (int64_t i = b; i < e; ++i)
        any |= uint32_t((h[i] & 0x7c00u) == 0x7c00u);
      if (any)
        found.store(true, std::memory_order_relaxed);
    });
    return found.load();
  }
  if (!isFloat(t))
    return false;
  const uint32_t *bits = static_cast<const uint32_t *>(t.rawData());
  std::atomic<bool> found{false};
  parallelFor(ctx, t.numElements(), 1 << 18, [&](int64_t b, int64_t e) {
    // All exponent bits set: inf or NaN.
    uint32_t any = 0;
    for (int64_t i = b; i < e; ++i)
      any |= uint32_t((bits[i] & 0x7f800000u) == 0x7f800000u);
    if (any)
      found.store(true, std::memory_order_relaxed);
  });
  return found.load();
}

/// Whether an input of `node` holds inf/nan. Constants are scanned here, the
/// first time it matters (a node reading them produced inf/nan with the
/// check on), and the answer kept: loading scans no weights, and the check
/// still never blames a node whose input was already non-finite, whatever
/// an untrusted artifact's weights hold.
bool HostDevice::anyInputNonFinite(const Context &ctx, const PlanNode &node) {
  // A folded weight counts as an input.
  auto known = [&](int v) { return v >= 0 && nonFinite_[v] == kNonFinite; };
  if (known(node.foldedConst) || std::any_of(node.inputs.begin(), node.inputs.end(), known))
    return true;
  // Only constants are unchecked, and they stay in values_ (kernels may
  // have consumed their own input tensors by now).
  auto scan = [&](int v) {
    if (v < 0 || nonFinite_[v] != kUnchecked)
      return false;
    nonFinite_[v] = anyNonFinite(ctx, values_[v]) ? kNonFinite : kFinite;
    return nonFinite_[v] == kNonFinite;
  };
  return scan(node.foldedConst) || std::any_of(node.inputs.begin(), node.inputs.end(), scan);
}

void HostDevice::printProfile() {
  for (auto &[sig, prof] : profiles_) {
    std::fprintf(stderr, "qeff host profile: %s: %lld runs, %.3f ms/run\n", sig.c_str(),
                 (long long)prof.runs, 1e3 * prof.seconds / std::max<int64_t>(1, prof.runs));
    std::vector<std::pair<std::string, OpTime>> ops(prof.ops.begin(), prof.ops.end());
    std::sort(ops.begin(), ops.end(),
              [](auto &a, auto &b) { return a.second.seconds > b.second.seconds; });
    for (auto &[op, t] : ops)
      std::fprintf(stderr, "  %-28s %9.3f ms/run %5.1f%% %6lld calls/run\n", op.c_str(),
                   1e3 * t.seconds / std::max<int64_t>(1, prof.runs),
                   100 * t.seconds / std::max(prof.seconds, 1e-12),
                   (long long)(t.calls / std::max<int64_t>(1, prof.runs)));
  }
}

void HostDevice::runNode(Context &ctx, PlanNode &node) {
  in_.resize(node.inputs.size());
  for (size_t j = 0; j < node.inputs.size(); ++j) {
    int v = node.inputs[j];
    if (v < 0) {
      in_[j] = Tensor();
      continue;
    }
    if (node.move[j])
      in_[j] = std::move(values_[v]);
    else
      in_[j] = values_[v];
  }
  out_.assign(node.outputs.size(), Tensor());
  // MX emulation: what crosses a tensor-parallel link, and the indices of
  // a retained-state write (held: the kernel may consume its inputs).
  for (size_t j = 0; j < node.mxIOInputs.size(); ++j)
    if (node.mxIOInputs[j] && in_[j].valid() && isFloat(in_[j]))
      in_[j] = quantizeMxIO(ctx, in_[j]);
  Tensor writeIndices = node.mxKVWrite ? in_[1] : Tensor();
  try {
    if (currentProfile_) {
      auto t0 = std::chrono::steady_clock::now();
      node.kernel->run(ctx, in_, out_);
      std::string key = node.opType;
      if (profileShapes_)
        for (const Tensor &o : out_)
          key += o.valid() ? " " + shapeString(o.shape()) : " -";
      OpTime &t = currentProfile_->ops[key];
      t.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      ++t.calls;
    } else {
      node.kernel->run(ctx, in_, out_);
    }
  } catch (const KernelError &e) {
    fail(nodeLabel(node.name, node.opType) + ": " + e.what());
  }
  bool fp16 = opts_.numerics == Numerics::FP16;
  bool checkFinite = fp16 || opts_.checkFinite;
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    int v = node.outputs[k];
    if (v < 0)
      continue;
    Tensor &t = out_[k];
    QEFF_CHECK(t.valid(), nodeLabel(node.name, node.opType) + ": output " + std::to_string(k) +
                         " was not produced");
    if (fp16 && !node.fp32 && isFloat(t))
      t = roundedToHalf(ctx, std::move(t));
    if (node.mxKVWrite && k == 0 && isFloat(t))
      quantizeMxWrites(writeIndices, t);
    bool bad = checkFinite && anyNonFinite(ctx, t);
    if (bad && !anyInputNonFinite(ctx, node))
      fail(nodeLabel(node.name, node.opType) + " produced inf/nan from finite inputs" +
           (fp16 && !node.fp32 ? " (fp16 emulation: the value exceeds the fp16 range; put "
                                 "the node on the fp32 precision list)"
                               : ""));
    nonFinite_[v] = bad ? kNonFinite : kFinite;
    if (opts_.outputObserver && isFloat(t))
      opts_.outputObserver(node.name, node.opType, t);
    values_[v] = std::move(t);
  }
  in_.clear();
  out_.clear();
  for (int v : node.freeAfter)
    values_[v] = Tensor();
}

Status HostDevice::run(std::vector<Tensor> &inputs, std::vector<Tensor> &outputs) {
  Context ctx{arena_.get(), opts_.numThreads};
  auto clear = [&] {
    currentProfile_ = nullptr;
    in_.clear();
    out_.clear();
    for (size_t v = 0; v < values_.size(); ++v)
      if (!isConst_[v])
        values_[v] = Tensor();
  };
  try {
    QEFF_CHECK(inputs.size() == inputIds_.size(),
          "expected " + std::to_string(inputIds_.size()) + " inputs, got " +
              std::to_string(inputs.size()));
    for (size_t i = 0; i < inputs.size(); ++i) {
      const TensorInfo &info = inputs_[i];
      Tensor t = std::move(inputs[i]);
      QEFF_CHECK(t.valid(), "input '" + info.name + "' is missing");
      bool floatDecl = info.dtype == DType::Float32 || info.dtype == DType::Float16;
      bool floatGiven = t.dtype() == DType::Float32 || t.dtype() == DType::Float16;
      QEFF_CHECK(floatDecl ? floatGiven : t.dtype() == info.dtype,
            "input '" + info.name + "' has dtype " + std::string(dtypeName(t.dtype())) +
                ", the model wants " + std::string(dtypeName(info.dtype)));
      QEFF_CHECK(!info.hasShape || t.rank() == static_cast<int64_t>(info.dims.size()),
            "input '" + info.name + "' has shape " + shapeString(t.shape()) +
                ", the model wants " + dimsString(info.dims));
      for (size_t d = 0; d < info.dims.size() && info.hasShape; ++d)
        QEFF_CHECK(info.dims[d].value < 0 || info.dims[d].value == t.shape()[d],
              "input '" + info.name + "' has shape " + shapeString(t.shape()) +
                  ", the model wants " + dimsString(info.dims));
      if (t.dtype() == DType::Float16) {
        Tensor f = ctx.allocate(DType::Float32, t.shape());
        for (int64_t e = 0; e < t.numElements(); ++e)
          f.data<float>()[e] = halfToFloat(t.data<uint16_t>()[e]);
        t = std::move(f);
      } else if (opts_.numerics == Numerics::FP16 && isFloat(t)) {
        t = roundedToHalf(ctx, std::move(t));
      }
      // Only the inf/nan check reads these flags: scanning every input (the
      // whole KV cache) on each run would cost more than a decode step's
      // non-MatMul work.
      nonFinite_[inputIds_[i]] =
          (opts_.numerics == Numerics::FP16 || opts_.checkFinite) && anyNonFinite(ctx, t)
              ? kNonFinite
              : kFinite;
      values_[inputIds_[i]] = std::move(t);
    }
    std::chrono::steady_clock::time_point runStart;
    if (profile_) {
      std::string sig;
      for (size_t i = 0; i < inputIds_.size() && i < 2; ++i)
        sig += (i ? " " : "") + names_[inputIds_[i]] + shapeString(values_[inputIds_[i]].shape());
      currentProfile_ = &profiles_[sig];
      runStart = std::chrono::steady_clock::now();
    }
    for (auto &node : plan_)
      runNode(ctx, node);
    if (currentProfile_) {
      currentProfile_->seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - runStart).count();
      ++currentProfile_->runs;
      currentProfile_ = nullptr;
    }
    outputs.clear();
    for (int v : outputIds_)
      outputs.push_back(values_[v]);
    if (opts_.mx.mxint8KV)
      quantizeMxState(outputs);
    clear();
    return {};
  } catch (const KernelError &e) {
    clear();
    return makeError(e.what());
  } catch (const std::bad_alloc &) {
    clear();
    return makeError("host device: out of memory");
  } catch (const std::exception &e) {
    clear();
    return makeError(std::string("host device: ") + e.what());
  }
}

} // namespace qeff::runtime::host
