#!/usr/bin/env bash
# The main job, as far as it has landed: set up, build, and run qeff-opt on the
# example model IR (parse, verify, canonicalize, print). Later issues replace
# this by `qeff infer` on the bundled TinyStories model.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${QEFF_BUILD_DIR:-$root/build}"

"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
"$build/bin/qeff-opt" --canonicalize "$root/docs/examples/llama-layer.mlir"
