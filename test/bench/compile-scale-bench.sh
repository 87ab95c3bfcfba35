#!/usr/bin/env bash
# Compile-time scaling benchmark (run on demand, not in CI): `qeff compile` of
# the same narrow Llama-shaped model at several layer counts, to show that the
# cost per layer stays flat (import, device passes, lowering, export, checker).
#
#   test/bench/compile-scale-bench.sh [--qeff PATH] [--layers "80 160 320 640 1000"]
#                                     [--runs 3] [--work DIR]
#
# Each checkpoint (test/tools/make-checkpoint.py, f32, hidden 64, 4 heads, 2 KV
# heads, intermediate 128, vocab 256; cached in DIR/ckpt-l<N>) is compiled with
# the default device pipeline (ctx_len 64, prefill 8, batch 1) into a fresh
# directory, --runs times, the layer counts interleaved so that load drifts hit
# every size alike. Reported per size: the median wall time and CPU time (user
# + system) of the whole process, both per layer, the per-layer CPU time as a
# multiple of the smallest size's, peak RSS, and the load average before the
# run. The narrow width keeps the weights small, so the figures are the
# per-layer costs of the compiler itself rather than of moving bytes
# (test/bench/export-bench.sh measures that).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
qeff=""
sizes="80 160 320 640 1000"
runs=3
work="${QEFF_BENCH_DIR:-${TMPDIR:-/tmp}/qeff-compile-scale-bench}"
while [ $# -gt 0 ]; do
  case "$1" in
    --qeff) qeff="$2"; shift 2 ;;
    --layers) sizes="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "compile-scale-bench: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
if [ -z "$qeff" ]; then
  qeff="$repo/build/bin/qeff"
fi
[ -x "$qeff" ] || { echo "compile-scale-bench: no qeff at $qeff (build it or pass --qeff)" >&2; exit 2; }
mkdir -p "$work/raw"

for n in $sizes; do
  ckpt="$work/ckpt-l$n"
  if [ ! -f "$ckpt/config.json" ]; then
    python3 "$here/../tools/make-checkpoint.py" "$ckpt" --fill tiled --dtype f32 \
      --max-positions 256 --layers "$n" --hidden 64 --heads 4 --kv-heads 2 \
      --intermediate 128 --vocab 256 >/dev/null
  fi
done

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$runs"); do
  for n in $sizes; do
    out="$work/out-l$n"
    rm -rf "$out"
    /usr/bin/time -f "%e %U %S %M" -o "$work/raw/l$n-r$r.time" \
      "$qeff" compile "$work/ckpt-l$n" -o "$out" --ctx-len 64 --prefill-seq-len 8 \
      --batch-size 1 >/dev/null 2>"$work/raw/l$n-r$r.log" ||
      { cat "$work/raw/l$n-r$r.log" >&2; exit 1; }
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$work" "$runs" $sizes <<'EOF'
import statistics, sys
work, runs, sizes = sys.argv[1], int(sys.argv[2]), [int(s) for s in sys.argv[3:]]
rows = []
for n in sizes:
    wall, cpu, rss = [], [], []
    for r in range(1, runs + 1):
        e, u, s, m = open(f"{work}/raw/l{n}-r{r}.time").read().split()[-4:]
        wall.append(float(e)); cpu.append(float(u) + float(s)); rss.append(int(m))
    rows.append((n, statistics.median(wall), statistics.median(cpu), max(rss)))
base = rows[0][2] / rows[0][0]
print("| layers | wall s | CPU s | wall ms/layer | CPU ms/layer | CPU/layer vs %d | peak RSS MB |" % rows[0][0])
print("|---:|---:|---:|---:|---:|---:|---:|")
for n, w, c, m in rows:
    print(f"| {n} | {w:.2f} | {c:.2f} | {1000*w/n:.2f} | {1000*c/n:.2f} | {c/n/base:.2f}x | {m/1024:.0f} |")
EOF
