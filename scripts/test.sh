#!/usr/bin/env bash
# The one command that sets everything up and runs every test:
# Debian packages, the ONNX Runtime test oracle, the build, then ctest (lit
# files and GoogleTest cases), ending with ctest's summary line.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${QEFF_BUILD_DIR:-$root/build}"

"$root/scripts/install-deps.sh"
if [ -x "$root/scripts/setup-oracle.sh" ]; then
  "$root/scripts/setup-oracle.sh"
fi
"$root/scripts/build.sh"
cd "$build"
ctest --output-on-failure -j "${QEFF_JOBS:-$(nproc)}"
