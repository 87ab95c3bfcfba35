//===- Broadcast.h - numpy broadcasting iteration ---------------*- C++ -*-===//
//
// A BroadcastPlan collapses the output shape and the broadcast strides of K
// inputs so that the innermost loop runs over a contiguous run of the output
// with each input's stride 0 (broadcast) or 1.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_HOST_BROADCAST_H
#define QEFF_RUNTIME_HOST_BROADCAST_H

#include "runtime/host/Kernel.h"

namespace qeff::runtime::host {

struct BroadcastPlan {
  Shape dims;                               ///< collapsed output dims
  std::vector<std::vector<int64_t>> strides; ///< per input, per collapsed dim
  int64_t inner = 1;                        ///< innermost run length
  int64_t rows = 1;                         ///< product of the outer dims
  std::vector<int64_t> innerStride;         ///< per input: 0 or 1

  BroadcastPlan(const Shape &out, const std::vector<const Shape *> &inputs) {
    size_t k = inputs.size();
    std::vector<std::vector<int64_t>> full(k);
    for (size_t j = 0; j < k; ++j)
      full[j] = broadcastStrides(*inputs[j], out);
    strides.assign(k, {});
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i] == 1)
        continue;
      bool merge = !dims.empty();
      for (size_t j = 0; j < k && merge; ++j)
        merge = strides[j].back() == full[j][i] * out[i];
      if (merge) {
        dims.back() *= out[i];
        for (size_t j = 0; j < k; ++j)
          strides[j].back() = full[j][i];
      } else {
        dims.push_back(out[i]);
        for (size_t j = 0; j < k; ++j)
          strides[j].push_back(full[j][i]);
      }
    }
    if (dims.empty()) {
      dims.push_back(1);
      for (size_t j = 0; j < k; ++j)
        strides[j].push_back(0);
    }
    inner = dims.back();
    rows = numElements(out) / std::max<int64_t>(inner, 1);
    if (numElements(out) == 0)
      rows = 0;
    innerStride.resize(k);
    for (size_t j = 0; j < k; ++j)
      innerStride[j] = strides[j].back() ? 1 : 0;
  }

  /// fn(outOffset, inputOffsets) for each row in [rowBegin, rowEnd).
  template <typename F>
  void forEachRow(int64_t rowBegin, int64_t rowEnd, F &&fn) const {
    if (rowBegin >= rowEnd)
      return; // also an empty output, whose dims may hold a 0 to divide by
    size_t outer = dims.size() - 1;
    size_t k = strides.size();
    std::vector<int64_t> counter(outer, 0), offs(k, 0);
    int64_t r = rowBegin;
    for (size_t d = outer; d-- > 0;) {
      counter[d] = r % dims[d];
      r /= dims[d];
    }
    for (size_t j = 0; j < k; ++j)
      for (size_t d = 0; d < outer; ++d)
        offs[j] += counter[d] * strides[j][d];
    for (int64_t row = rowBegin; row < rowEnd; ++row) {
      fn(row * inner, offs.data());
      for (size_t d = outer; d-- > 0;) {
        ++counter[d];
        for (size_t j = 0; j < k; ++j)
          offs[j] += strides[j][d];
        if (counter[d] < dims[d])
          break;
        for (size_t j = 0; j < k; ++j)
          offs[j] -= strides[j][d] * dims[d];
        counter[d] = 0;
      }
    }
  }
};

/// A general strided iteration over `shape` calling fn(linearIndex, offsets)
/// for K stride vectors (used by transpose/slice-like gathers).
template <typename F>
void forEachIndex(const Shape &shape, const std::vector<std::vector<int64_t>> &strides,
                  F &&fn) {
  int64_t n = numElements(shape);
  size_t r = shape.size(), k = strides.size();
  std::vector<int64_t> counter(r, 0), offs(k, 0);
  for (int64_t i = 0; i < n; ++i) {
    fn(i, offs.data());
    for (size_t d = r; d-- > 0;) {
      ++counter[d];
      for (size_t j = 0; j < k; ++j)
        offs[j] += strides[j][d];
      if (counter[d] < shape[d])
        break;
      for (size_t j = 0; j < k; ++j)
        offs[j] -= strides[j][d] * shape[d];
      counter[d] = 0;
    }
  }
}

} // namespace qeff::runtime::host

#endif // QEFF_RUNTIME_HOST_BROADCAST_H
