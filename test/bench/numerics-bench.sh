#!/usr/bin/env bash
# Cost of the MX emulation (docs/numerics.md, docs/performance.md): `qeff run`
# on one artifact under several --numerics modes, interleaved run by run so
# that load drifts on a shared machine hit every mode alike. Run on demand.
#
#   test/bench/numerics-bench.sh [--qeff PATH] [--shape tinyllama-1.1b|small]
#       [--runs 3] [--threads 2] [--prompt-len 32] [--new-tokens 8]
#       [--modes "fp32 mxfp6 fp16 fp16+mxfp6+mxint8-kv"] [--work DIR]
#
# Steps: a synthetic bf16 checkpoint of the shape
# (make-synthetic-checkpoint.py, cached in DIR/ckpt-<shape>), one `qeff
# compile` (ctx_len 256, prefill 32, f32 weights), then --runs rounds of one
# `qeff run --json --prepack-weights` per mode under /usr/bin/time: process
# wall time (load, MXFP6 quantization and layout of the weights included),
# prefill and decode tokens/s from the run's metrics (the weights laid out
# before the clock starts, as `qeff serve` loads), peak RSS. Prints the medians and the load average
# before and after; raw output in DIR/raw.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
qeff="$repo/build/bin/qeff"
shape=tinyllama-1.1b
runs=3
threads=2
prompt_len=32
new_tokens=8
modes="fp32 mxfp6 fp16 fp16+mxfp6+mxint8-kv"
work="${QEFF_BENCH_DIR:-/tmp/qeff-bench}/numerics"
while [ $# -gt 0 ]; do
  case "$1" in
    --qeff) qeff="$2"; shift 2 ;;
    --shape) shape="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --prompt-len) prompt_len="$2"; shift 2 ;;
    --new-tokens) new_tokens="$2"; shift 2 ;;
    --modes) modes="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    *) echo "numerics-bench.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
python=/usr/bin/python3
mkdir -p "$work/raw"
ckpt="$work/ckpt-$shape"
art="$work/art-$shape"
if [ ! -f "$ckpt/config.json" ]; then
  "$python" "$here/make-synthetic-checkpoint.py" "$ckpt" --shape "$shape" --dtype bf16
fi
if [ ! -f "$art/qeff-manifest.json" ]; then
  "$qeff" compile "$ckpt" -o "$art" --ctx-len 256 --prefill-seq-len 32 > /dev/null
fi
ids=$("$python" -c "import random; r = random.Random(7); print(','.join(str(r.randrange(3, 32000)) for _ in range($prompt_len)))")

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for run in $(seq 1 "$runs"); do
  for mode in $modes; do
    tag="${mode//+/_}-$run"
    /usr/bin/time -f '%e %M' -o "$work/raw/$tag.time" \
      "$qeff" run "$art" --token-ids "$ids" --max-new-tokens "$new_tokens" --json \
      --threads "$threads" --numerics "$mode" --prepack-weights > "$work/raw/$tag.json"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

"$python" - "$work/raw" "$runs" $modes <<'PY'
import json, statistics, sys
raw, runs, modes = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
print("| numerics | wall s (load + run) | prefill tok/s | decode tok/s | peak RSS GB |")
print("|---|---|---|---|---|")
for mode in modes:
    wall, pre, dec, rss = [], [], [], []
    for run in range(1, runs + 1):
        tag = "%s/%s-%d" % (raw, mode.replace("+", "_"), run)
        m = json.load(open(tag + ".json"))["metrics"]
        w, r = open(tag + ".time").read().split()
        wall.append(float(w)); rss.append(int(r) / 1e6)
        pre.append(m["prefill_tokens_per_s"]); dec.append(m["decode_tokens_per_s"])
    med = statistics.median
    print("| %s | %.1f | %.1f | %.2f | %.2f |" % (mode, med(wall), med(pre), med(dec), med(rss)))
PY
