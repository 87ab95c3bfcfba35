#!/usr/bin/env bash
# Configures and builds qeff in ./build (or $QEFF_BUILD_DIR) with clang-19, Ninja,
# lld and ccache. Run scripts/install-deps.sh first (scripts/test.sh does both).
# Arguments are Ninja targets (default: everything), e.g. scripts/build.sh qeff.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${QEFF_BUILD_DIR:-$root/build}"
jobs="${QEFF_JOBS:-$(nproc)}"

if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19
fi
ninja -C "$build" -j "$jobs" "$@"
