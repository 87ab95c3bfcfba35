#!/usr/bin/env bash
# Import + export benchmark of pre-quantized checkpoints (run on demand, not in
# CI): `qeff compile` of a synthetic Llama shape stored as bf16 (the
# reference), AWQ GEMM, GPTQ and a Q4_K_M-mixed GGUF file, each decoded while
# it streams into model.onnx.data (f32).
#
#   test/bench/quant-bench.sh [--shape tinyllama-1.1b|small] [--reps N]
#                             [--formats "bf16 awq gptq gguf"] [--qeff PATH] [--work DIR]
#
# The checkpoints are written once (make-synthetic-checkpoint.py,
# make-synthetic-quantized.py; group size 128) and kept in DIR. Each rep runs
# every format once, interleaved (bf16, awq, gptq, gguf, bf16, ...), so that a
# machine shared with other work loads them alike; every run writes a fresh
# output directory (removed after it) and is timed with /usr/bin/time -v (wall,
# user, sys, peak RSS). The load average is printed before and after each run.
# The summary gives per format the median wall time, its ratio to bf16's, and
# the largest peak RSS. The checkpoints are warm in the page cache (written just
# before, or read by the previous rep).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
shape=tinyllama-1.1b
reps=3
formats="bf16 awq gptq gguf"
qeff="$repo/build/bin/qeff"
work="${QEFF_BENCH_DIR:-${TMPDIR:-/tmp}/qeff-quant-bench}"
while [ $# -gt 0 ]; do
  case "$1" in
    --shape) shape="$2"; shift 2 ;;
    --reps) reps="$2"; shift 2 ;;
    --formats) formats="$2"; shift 2 ;;
    --qeff) qeff="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "quant-bench: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$qeff" ] || { echo "quant-bench: no qeff binary at $qeff (build it or pass --qeff)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "quant-bench: /usr/bin/time missing (apt-get install time)" >&2; exit 2; }
python=/usr/bin/python3
mkdir -p "$work"

source_of() {
  case "$1" in
    bf16) echo "$work/$shape-bf16" ;;
    gguf) echo "$work/$shape-q4km.gguf" ;;
    *) echo "$work/$shape-$1" ;;
  esac
}
for f in $formats; do
  src="$(source_of "$f")"
  [ -e "$src.complete" ] && continue
  echo "== writing the $shape $f checkpoint to $src"
  rm -rf "$src"
  case "$f" in
    bf16) "$python" "$here/make-synthetic-checkpoint.py" "$src" --shape "$shape" --dtype bf16 ;;
    *) "$python" "$here/make-synthetic-quantized.py" "$src" --format "$f" --shape "$shape" ;;
  esac
  touch "$src.complete"
done

runs="$work/runs-$shape.txt"
: > "$runs"
echo "== $shape, $reps reps, qeff $qeff; $(nproc) cores"
for rep in $(seq "$reps"); do
  for f in $formats; do
    src="$(source_of "$f")"
    out="$work/out-$f"
    rm -rf "$out"
    load0=$(cut -d' ' -f1 /proc/loadavg)
    /usr/bin/time -v -o "$work/time.txt" "$qeff" compile "$src" -o "$out" > /dev/null
    load1=$(cut -d' ' -f1 /proc/loadavg)
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0;
      for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$work/time.txt")
    user=$(awk -F': ' '/User time/ { print $2 }' "$work/time.txt")
    sys=$(awk -F': ' '/System time/ { print $2 }' "$work/time.txt")
    rss=$(awk -F': ' '/Maximum resident/ { printf "%d", $2 / 1024 }' "$work/time.txt")
    data=$(du -sb "$out/model.onnx.data" | cut -f1)
    rm -rf "$out"
    echo "$f $wall $user $sys $rss $load0 $load1 $data" >> "$runs"
    printf '  rep %d %-5s wall %6.2f s  user %6.2f s  sys %5.2f s  peak RSS %4d MiB  load %s -> %s\n' \
      "$rep" "$f" "$wall" "$user" "$sys" "$rss" "$load0" "$load1"
  done
done
"$python" - "$runs" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
by = {}
for f, wall, user, sys_, rss, l0, l1, data in rows:
    by.setdefault(f, []).append((float(wall), float(user), float(sys_), int(rss), int(data)))
base = statistics.median(r[0] for r in by["bf16"]) if "bf16" in by else None
print("| format | median wall s | vs bf16 | median user s | peak RSS MiB (max) | model.onnx.data |")
print("| --- | --- | --- | --- | --- | --- |")
for f, rs in by.items():
    wall = statistics.median(r[0] for r in rs)
    print("| %s | %.2f | %s | %.2f | %d | %.2f GB |" % (
        f, wall, "%.2fx" % (wall / base) if base else "-",
        statistics.median(r[1] for r in rs), max(r[3] for r in rs), rs[0][4] / 1e9))
PY
