#!/usr/bin/env bash
# The one command that sets everything up and runs every test:
# Debian packages, the ONNX Runtime test oracle, the build, then ctest (lit
# files and GoogleTest cases), ending with ctest's summary line.
#
#   scripts/test.sh              Release build in ./build
#   scripts/test.sh --sanitize   ASan + UBSan build (halt on the first error,
#                                LeakSanitizer on) in ./build-sanitize; the
#                                Debian MLIR/LLVM libraries stay uninstrumented
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
  export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
  export LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
else
  "$root/scripts/build.sh"
fi
cd "$build"
ctest --output-on-failure -j "${QEFF_JOBS:-$(nproc)}"
