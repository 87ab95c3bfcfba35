#!/usr/bin/env bash
# Compiles a golden checkpoint with qeff and checks it against the golden
# (golden-ort.js). Used by ctest.
#   run-golden.sh <qeff> <node> <golden_dir> <work_dir> <form> [qeff compile options]
# form: hf      the imported form in ONNX Runtime
#       device  the device form in ONNX Runtime
#       device-cb  the device form compiled with --full-batch-size (continuous
#               batching) in ONNX Runtime
#       host    the device form on qeff's host device (qeff run), checked
#               against the golden and against ONNX Runtime
#       host-fp16  the same with fp16 emulation, against the golden's fp16
#               tolerance
#       host-bf16  host, compiled with bf16 weights (pass --weights-dtype=bf16):
#               against 8x the golden's fp16 tolerance (tokens exact), against
#               ONNX Runtime on the same artifact within the fp32 tolerance
#       host-fp16-bf16  host-bf16 in fp16 emulation (the bf16 weights rounded to
#               fp16 too), against 8x the golden's fp16 tolerance
set -euo pipefail
qeff="$1" node="$2" golden="$3" work="$4" form="$5"
shift 5
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rm -rf "$work"
# A GGUF fixture (test/data/quant) is its model.gguf; the golden is beside it.
src="$golden"
[ -f "$golden/model.gguf" ] && src="$golden/model.gguf"
case "$form" in
  hf) "$qeff" compile "$src" -o "$work" --emit=onnx "$@" > /dev/null ;;
  *) "$qeff" compile "$src" -o "$work" "$@" > /dev/null ;;
esac
case "$form" in
  host) exec "$node" "$here/golden-ort.js" --golden "$golden" --model "$work/model.onnx" \
          --form host --qeff "$qeff" --numerics fp32 ;;
  host-fp16) exec "$node" "$here/golden-ort.js" --golden "$golden" --model "$work/model.onnx" \
          --form host --qeff "$qeff" --numerics fp16 ;;
  host-bf16) exec "$node" "$here/golden-ort.js" --golden "$golden" --model "$work/model.onnx" \
          --form host --qeff "$qeff" --numerics fp32 --weights bf16 ;;
  host-fp16-bf16) exec "$node" "$here/golden-ort.js" --golden "$golden" --model "$work/model.onnx" \
          --form host --qeff "$qeff" --numerics fp16 --weights bf16 ;;
  *) exec "$node" "$here/golden-ort.js" --golden "$golden" --model "$work/model.onnx" --form "$form" ;;
esac
