#!/usr/bin/env bash
# A golden (test/data/golden) as a GGUF file: hf-to-gguf.py writes it as
# llama.cpp's converter would (F32), then run-golden.sh compiles the .gguf and
# checks it against the golden from the real Hugging Face code.
#   run-gguf-golden.sh <qeff> <node> <python3> <golden_dir> <work_dir> <form> [qeff compile options]
set -euo pipefail
qeff="$1" node="$2" python="$3" golden="$4" work="$5" form="$6"
shift 6
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rm -rf "$work"
mkdir -p "$work/fixture"
cp "$golden/golden.json" "$golden/golden.safetensors" "$work/fixture/"
"$python" "$here/../tools/hf-to-gguf.py" "$golden" "$work/fixture/model.gguf"
exec "$here/run-golden.sh" "$qeff" "$node" "$work/fixture" "$work/out" "$form" "$@"
