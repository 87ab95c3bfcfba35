#!/usr/bin/env bash
# Compiles a golden checkpoint with qeff and checks the ONNX in ONNX Runtime
# against the golden (golden-ort.js). Used by ctest.
#   run-golden.sh <qeff> <node> <golden_dir> <work_dir> <hf|device> [qeff compile options]
set -euo pipefail
qeff="$1" node="$2" golden="$3" work="$4" form="$5"
shift 5
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rm -rf "$work"
if [ "$form" = hf ]; then
  "$qeff" compile "$golden" -o "$work" --emit=onnx "$@" > /dev/null
else
  "$qeff" compile "$golden" -o "$work" "$@" > /dev/null
fi
exec "$node" "$here/golden-ort.js" --golden "$golden" --model "$work/model.onnx" --form "$form"
