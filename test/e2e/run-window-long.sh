#!/usr/bin/env bash
# Compiles a sliding-window golden twice, the imported form (the reference in ONNX
# Runtime) and the device form with the given options, and runs window-long.js: the
# golden's prompt plus <steps> generated tokens, past the golden's 12. Used by ctest.
#   run-window-long.sh <qeff> <node> <golden_dir> <work_dir> <steps> [qeff compile options]
set -euo pipefail
qeff="$1" node="$2" golden="$3" work="$4" steps="$5"
shift 5
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rm -rf "$work"
"$qeff" compile "$golden" -o "$work/hf" --emit=onnx > /dev/null
"$qeff" compile "$golden" -o "$work/device" "$@" > /dev/null
exec "$node" "$here/window-long.js" --golden "$golden" --hf "$work/hf/model.onnx" \
  --device "$work/device/model.onnx" --steps "$steps" --qeff "$qeff"
