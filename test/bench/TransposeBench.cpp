//===- TransposeBench.cpp - the exporter's transposition kernels ----------===//
//
// Part of qeff. Run on demand (not a test): times transposeConvertRows over
// whole Linear weights of the TinyLlama-1.1B shape, bf16 -> f32, with the
// vector kernel and with the scalar code, and prints ns per element (best of
// --reps, default 5).
//
//   ninja -C build qeff-transpose-bench && build/bin/qeff-transpose-bench
//
//===----------------------------------------------------------------------===//

#include "lowering/Export/WeightConversion.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace qeff::exporter;

int main(int argc, char **argv) {
  int reps = 5;
  if (argc == 3 && std::strcmp(argv[1], "--reps") == 0)
    reps = std::max(1, std::atoi(argv[2]));
  struct Shape {
    const char *name;
    int64_t rows, cols;
  } shapes[] = {{"q_proj   [2048, 2048]", 2048, 2048},
                {"gate_proj [5632, 2048]", 5632, 2048},
                {"down_proj [2048, 5632]", 2048, 5632},
                {"lm_head  [32000, 2048]", 32000, 2048}};
  bool vectorAvailable = vectorTransposeEnabled();
  std::printf("vector kernel available: %s\n", vectorAvailable ? "yes" : "no");
  for (const Shape &s : shapes) {
    std::vector<std::byte> src(s.rows * s.cols * 2), dst(s.rows * s.cols * 4);
    for (size_t i = 0; i < src.size(); ++i)
      src[i] = static_cast<std::byte>(i * 7919 >> 3);
    for (bool vector : {false, true}) {
      if (vector && !vectorAvailable)
        continue;
      vectorTransposeEnabled() = vector;
      double best = 1e30;
      for (int r = 0; r < reps; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        transposeConvertRows(src.data(), DType::BF16, s.rows, s.cols, 0, s.cols,
                             dst.data(), DType::F32);
        best = std::min(best, std::chrono::duration<double>(
                                  std::chrono::steady_clock::now() - t0)
                                  .count());
      }
      std::printf("%s %-6s %.3f ns/element\n", s.name, vector ? "vector" : "scalar",
                  best / double(s.rows * s.cols) * 1e9);
    }
  }
  return 0;
}
