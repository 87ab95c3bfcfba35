#!/usr/bin/env bash
# The one command that sets everything up and runs every test:
# Debian packages, the ONNX Runtime test oracle, the build, then ctest (lit
# files and GoogleTest cases), ending with ctest's summary line.
#
#   scripts/test.sh              Release build in ./build
#   scripts/test.sh --sanitize   ASan + UBSan build (halt on the first error,
#                                LeakSanitizer on) in ./build-sanitize; the
#                                Debian MLIR/LLVM libraries stay uninstrumented
#
# Fuzz step (not with --sanitize; QEFF_SKIP_FUZZ=1 skips it): after the main
# suite, builds the libFuzzer targets in ./build-fuzz ($QEFF_FUZZ_BUILD_DIR)
# and runs `ctest -L fuzz` there: each target replays its seed corpus and
# test/fuzz/regressions/<target> (deterministic), then fuzzes for
# QEFF_FUZZ_SMOKE_SECONDS (10) on it. docs/hostile-input.md has its cost.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${QEFF_BUILD_DIR:-$root/build}"
sanitize=0
if [ "${1:-}" = "--sanitize" ]; then
  sanitize=1
  build="${QEFF_BUILD_DIR:-$root/build-sanitize}"
fi

"$root/scripts/install-deps.sh"
if [ -x "$root/scripts/setup-oracle.sh" ]; then
  "$root/scripts/setup-oracle.sh"
fi
if [ "$sanitize" = 1 ]; then
  if [ ! -f "$build/build.ninja" ]; then
    cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 -DQEFF_SANITIZE=ON
  fi
  QEFF_BUILD_DIR="$build" "$root/scripts/build.sh"
  # abort_on_error=1: a sanitizer report ends the process with SIGABRT, not
  # exit status 1, which tests expecting qeff to fail (lit's `not`, the
  # hostile cases) would take for the refusal they wait for. The runtime
  # turns core dumps off itself (disable_coredump=1 on 64-bit).
  # allow_user_poisoning=0: llvm::BumpPtrAllocator (llvm/Support/Allocator.h)
  # poisons each new slab and unpoisons each allocation only where it is
  # compiled with ASan. The MLIRContext's allocators are shared by qeff's
  # inlined (instrumented) copies and the uninstrumented libMLIR.so.19.1, so
  # memory that libMLIR allocates stays poisoned: `qeff-translate --import-hf`
  # on CodeGenForCausalLM stopped with use-after-poison in libMLIR's own
  # mlir::StringAttr::get. qeff itself never poisons memory by hand.
  export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:detect_stack_use_after_return=0:allow_user_poisoning=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
  export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
  export LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
else
  "$root/scripts/build.sh"
fi
cd "$build"
if [ "$sanitize" = 1 ] || [ -n "${QEFF_SKIP_FUZZ:-}" ]; then
  exec ctest --output-on-failure -j "${QEFF_JOBS:-$(nproc)}"
fi
main=0
ctest --output-on-failure -j "${QEFF_JOBS:-$(nproc)}" || main=$?

echo "test.sh: fuzz step (scripts/fuzz.sh build, ctest -L fuzz; QEFF_SKIP_FUZZ=1 skips)"
fuzz_build="${QEFF_FUZZ_BUILD_DIR:-$root/build-fuzz}"
if [ ! -f "$fuzz_build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$fuzz_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DQEFF_FUZZ=ON -DQEFF_BUILD_TESTS=OFF -DQEFF_PCH=OFF \
    -DQEFF_FUZZ_SMOKE_SECONDS="${QEFF_FUZZ_SMOKE_SECONDS:-10}"
fi
fuzz=0
ninja -C "$fuzz_build" -j "${QEFF_JOBS:-$(nproc)}" qeff-fuzzers || fuzz=$?
if [ "$fuzz" = 0 ]; then
  (cd "$fuzz_build" && ctest --output-on-failure -L fuzz -j "${QEFF_JOBS:-$(nproc)}") || fuzz=$?
fi
echo "test.sh: main suite exit $main, fuzz step exit $fuzz"
[ "$main" = 0 ] && [ "$fuzz" = 0 ]
