//===- MxNumerics.cpp - MX emulation on the host device -------------------===//
//
// Part of qeff. Where the host device applies the OCP MX formats
// (SessionOptions::mx, docs/numerics.md):
//  - MXFP6 E2M3 weights: every constant that only MatMul/Gemm read as their
//    second operand (what qaic-compile's -mxfp6-matmul compresses), blocks
//    of 32 along the reduction axis K by default, quantized once at load;
//  - MXINT8 KV: the slices a retained-state ScatterND writes, blocks of 32
//    along the last axis (head_dim), right after the write, so that the
//    attention of the same step already reads the stored values;
//  - MXINT8 IO: in a tensor-parallel artifact, the attention/MLP output
//    entering each decoder layer's residual add (the partial sums the
//    devices exchange), blocks along the hidden axis.
// Nothing here runs unless an MX option is on: the default path is as
// before, bit for bit.
//
//===----------------------------------------------------------------------===//

#include "runtime/host/HostDeviceImpl.h"
#include "runtime/host/numerics/MxFormat.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace qeff::runtime::host {

namespace {

/// The HF module scope of a node name `.../<scope>/<OpType>_<n>`, or "".
std::string scopeOf(const std::string &name) {
  size_t last = name.rfind('/');
  if (last == std::string::npos || last == 0)
    return "";
  size_t before = name.rfind('/', last - 1);
  return before == std::string::npos ? "" : name.substr(before + 1, last - before - 1);
}

/// A decoder layer's scope: `model.layers.3`, `transformer.h.0`, ...
bool isLayerScope(const std::string &scope) {
  size_t dot = scope.rfind('.');
  return dot != std::string::npos && dot + 1 < scope.size() &&
         std::all_of(scope.begin() + dot + 1, scope.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

constexpr const char *kRetainedSuffix = "_RetainedState";

bool endsWith(const std::string &s, const char *suffix) {
  std::string t(suffix);
  return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

/// Quantizes `t` (float32) in rows of its last dimension.
void quantizeRows(Tensor &t, MxRounding rounding) {
  int64_t last = t.rank() ? t.shape().back() : 1;
  if (last <= 0 || t.numElements() == 0)
    return;
  float *p = t.data<float>();
  for (int64_t r = 0, rows = t.numElements() / last; r < rows; ++r)
    mx::fakeQuantizeRow(p + r * last, last, mx::kBlockSize, mx::Element::INT8, rounding);
}

} // namespace

void HostDevice::markMxNodes() {
  const MxOptions &mx = opts_.mx;
  if (!mx.mxint8KV && !mx.mxint8IO)
    return;
  std::vector<int> producer(names_.size(), -1);
  for (size_t i = 0; i < plan_.size(); ++i)
    for (int v : plan_[i].outputs)
      if (v >= 0)
        producer[v] = static_cast<int>(i);
  if (mx.mxint8KV) {
    // Each retained-state output: quantized where a ScatterND writes it,
    // else (any other producer) whole after the run.
    for (size_t o = 0; o < outputIds_.size(); ++o) {
      if (!endsWith(outputs_[o].name, kRetainedSuffix))
        continue;
      int p = producer[outputIds_[o]];
      if (p >= 0 && plan_[p].opType == "ScatterND" && plan_[p].inputs.size() == 3 &&
          plan_[p].outputs.size() == 1)
        plan_[p].mxKVWrite = true;
      else
        mxWholeStateOutputs_.push_back(o);
    }
  }
  if (mx.mxint8IO) {
    for (PlanNode &n : plan_) {
      if (n.opType != "Add")
        continue;
      std::string scope = scopeOf(n.name);
      if (!isLayerScope(scope))
        continue;
      n.mxIOInputs.assign(n.inputs.size(), false);
      for (size_t j = 0; j < n.inputs.size(); ++j) {
        int v = n.inputs[j];
        int p = v >= 0 ? producer[v] : -1;
        if (p < 0)
          continue;
        // A value made inside the layer's attention or MLP (a sub-scope)
        // joining the residual stream: the all-reduced partial sums.
        std::string from = scopeOf(plan_[p].name);
        n.mxIOInputs[j] = from.size() > scope.size() + 1 &&
                          from.compare(0, scope.size() + 1, scope + ".") == 0;
      }
    }
  }
}

void HostDevice::quantizeMxWeights() {
  // value -> (K axis from the end: 2 = rows of [K, N], 1 = last); -1 when a
  // reader is not a weight operand (the compiler leaves it uncompressed).
  std::map<int, int> axisOf;
  std::vector<int> castOf(names_.size(), -1); // Cast(constant) output -> constant
  for (const PlanNode &p : plan_)
    if (p.opType == "Cast" && p.inputs.size() == 1 && p.inputs[0] >= 0 &&
        isConst_[p.inputs[0]] && p.outputs.size() == 1 && p.outputs[0] >= 0)
      castOf[p.outputs[0]] = p.inputs[0];
  auto constantOf = [&](int v) { return v < 0 ? -1 : isConst_[v] ? v : castOf[v]; };
  bool reduction = opts_.mx.weightAxis == MxWeightAxis::Reduction;
  for (const PlanNode &p : plan_) {
    for (size_t j = 0; j < p.inputs.size(); ++j) {
      int c = constantOf(p.inputs[j]);
      if (c < 0)
        continue;
      bool isCast = p.opType == "Cast" && p.outputs.size() == 1 && p.outputs[0] >= 0 &&
                    castOf[p.outputs[0]] == c;
      if (isCast)
        continue; // judged by the Cast's readers
      int axis = -1;
      if (j == 1 && p.opType == "MatMul") {
        axis = p.transB ? 1 : 2; // [.., K, N], or B^T [.., N, K]
      } else if (j == 1 && p.opType == "Gemm" && p.proto) {
        bool transB = false;
        for (const auto &a : p.proto->attribute())
          transB |= a.name() == "transB" && a.i() != 0;
        axis = transB ? 1 : 2;
      }
      if (axis > 0 && !reduction)
        axis = 3 - axis;
      auto [it, inserted] = axisOf.try_emplace(c, axis);
      if (!inserted && it->second != axis)
        it->second = -1;
    }
  }
  // QEFF_HOST_MX_LOG=1: each quantized constant on stderr, so that tests can
  // hold the host to `qeff compile --report-mx` (test/e2e/eval-golden.py).
  bool log = std::getenv("QEFF_HOST_MX_LOG") != nullptr;
  for (auto [v, axisFromEnd] : axisOf) {
    const Tensor &t = constants_[v];
    if (axisFromEnd < 0 || t.rank() < 2 ||
        !(t.dtype() == DType::Float32 || isTwoByteFloat(t.dtype())))
      continue;
    const Shape &s = t.shape();
    int64_t axis = t.rank() - axisFromEnd;
    if (log)
      std::fprintf(stderr, "qeff host: mxfp6 '%s' blocks along axis %lld\n", names_[v].c_str(),
                   static_cast<long long>(axis));
    int64_t outer = prod(s, 0, axis), len = s[axis], inner = prod(s, axis + 1, s.size());
    Tensor q = Tensor::empty(DType::Float32, s);
    bool isHalf = isTwoByteFloat(t.dtype()), isBF16 = t.dtype() == DType::BFloat16;
    if (isHalf) {
      const uint16_t *h = t.data<uint16_t>();
      for (int64_t i = 0; i < t.numElements(); ++i)
        q.data<float>()[i] = isBF16 ? bfloat16ToFloat(h[i]) : halfToFloat(h[i]);
    } else {
      std::copy(t.data<float>(), t.data<float>() + t.numElements(), q.data<float>());
    }
    mx::fakeQuantize(q.data<float>(), outer, len, inner, mx::kBlockSize,
                     mx::Element::FP6_E2M3, opts_.mx.rounding, opts_.numThreads);
    mxNonFinite_[v] = anyNonFinite(Context{arena_.get(), opts_.numThreads}, q);
    // The copy lives in an anonymous mapping of its own, so that its pages
    // can go back once the kernels have laid it out (releaseMxWeight): the
    // weights are held once, as without MX.
    size_t bytes = size_t(t.numElements()) * (isHalf ? 2 : 4);
    void *mem = ::mmap(nullptr, std::max<size_t>(bytes, 1), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    QEFF_CHECK(mem != MAP_FAILED, "out of memory for the MXFP6 copy of '" + names_[v] + "'");
    std::shared_ptr<void> owner(mem, [bytes](void *m) { ::munmap(m, std::max<size_t>(bytes, 1)); });
    if (isHalf) {
      // Exact: an MXFP6 value of an fp16 (bf16) value is an fp16 (bf16)
      // value (4 significant bits, a power-of-two scale within the range).
      auto *h = static_cast<uint16_t *>(mem);
      for (int64_t i = 0; i < t.numElements(); ++i)
        h[i] = isBF16 ? floatToBFloat16(q.data<float>()[i]) : floatToHalf(q.data<float>()[i]);
    } else {
      std::copy(q.data<float>(), q.data<float>() + t.numElements(), static_cast<float *>(mem));
    }
    mxBuffers_.push_back({static_cast<const char *>(mem), bytes, v});
    q = Tensor::view(isHalf ? t.dtype() : DType::Float32, s, mem, owner, true);
    // The mapped original is not read again: its pages can go.
    if (external_)
      external_->release(t.rawData(), t.byteSize());
    constants_[v] = Tensor::view(q.dtype(), q.shape(), q.rawData(), q.owner(), true);
  }
}

void HostDevice::markReleasableMxWeights(
    const std::function<int(const PlanNode &)> &packedWeight) {
  // Releasable: every reader is a weight kernel of one layout (a second
  // layout, or a plain reader, would read the released pages as zeros).
  std::map<int, std::pair<int, int>> layouts; // value -> (transB seen mask, other readers)
  for (const PlanNode &p : plan_)
    for (size_t j = 0; j < p.inputs.size(); ++j) {
      int v = p.inputs[j];
      if (v < 0)
        continue;
      auto &[mask, others] = layouts[v];
      if (j == 1 && packedWeight(p) == v)
        mask |= p.transB ? 2 : 1;
      else
        ++others;
    }
  for (MxBuffer &b : mxBuffers_) {
    auto it = layouts.find(b.value);
    b.releasable = it != layouts.end() && it->second.second == 0 &&
                   (it->second.first == 1 || it->second.first == 2);
  }
}

void HostDevice::releaseMxWeight(const void *p, size_t bytes) {
  const char *b = static_cast<const char *>(p);
  for (const MxBuffer &buffer : mxBuffers_) {
    if (!buffer.releasable || b < buffer.base || b + bytes > buffer.base + buffer.size)
      continue;
    uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    uintptr_t first = (reinterpret_cast<uintptr_t>(b) + page - 1) / page * page;
    uintptr_t last = (reinterpret_cast<uintptr_t>(b) + bytes) / page * page;
    if (last > first) // anonymous pages read back as zeros: nothing reads them again
      ::madvise(reinterpret_cast<void *>(first), last - first, MADV_DONTNEED);
    return;
  }
}

void HostDevice::quantizeMxWrites(const Tensor &indices, Tensor &out) {
  const Shape &ds = out.shape();
  const Shape &is = indices.shape();
  if (is.empty() || out.rank() == 0)
    return;
  int64_t m = is.back(), r = out.rank();
  auto idx = indexValues(indices, "indices");
  auto strides = stridesOf(ds);
  int64_t slice = prod(ds, m, r), last = ds.back();
  int64_t rowLen = m < r ? last : 1;
  float *p = out.data<float>();
  for (int64_t t = 0, tuples = prod(is, 0, is.size() - 1); t < tuples; ++t) {
    int64_t off = 0;
    for (int64_t k = 0; k < m; ++k) {
      int64_t i = idx[t * m + k];
      off += (i < 0 ? i + ds[k] : i) * strides[k]; // validated by the kernel
    }
    for (int64_t row = 0; row < slice; row += rowLen)
      mx::fakeQuantizeRow(p + off + row, rowLen, mx::kBlockSize, mx::Element::INT8,
                          opts_.mx.rounding);
  }
}

void HostDevice::quantizeMxState(std::vector<Tensor> &outputs) {
  for (size_t o : mxWholeStateOutputs_) {
    Tensor &t = outputs[o];
    if (!t.valid() || !isFloat(t))
      continue;
    if (t.readOnly()) {
      Tensor copy = Tensor::empty(DType::Float32, t.shape());
      std::copy(t.data<float>(), t.data<float>() + t.numElements(), copy.data<float>());
      t = std::move(copy);
    }
    quantizeRows(t, opts_.mx.rounding);
  }
}

Tensor HostDevice::quantizeMxIO(Context &ctx, const Tensor &t) {
  Tensor q = ctx.allocate(DType::Float32, t.shape());
  std::copy(t.data<float>(), t.data<float>() + t.numElements(), q.data<float>());
  quantizeRows(q, opts_.mx.rounding);
  return q;
}

} // namespace qeff::runtime::host
