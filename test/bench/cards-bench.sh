#!/usr/bin/env bash
# Many-models benchmark (run on demand, not in CI): `qeff compile --models` of N
# synthetic Llama-shaped checkpoints (different seeds, so N distinct cache keys)
# at -j 1 and -j 2 (or --jobs "..."), against `cp -r` of the same checkpoints.
#
#   test/bench/cards-bench.sh [--shape tinyllama-1.1b|llama-2-7b|small] [--cards N]
#                             [--jobs "1 2"] [--qeff PATH] [--work DIR]
#
# Defaults: --shape tinyllama-1.1b --cards 8 --jobs "1 2" (issue 13's benchmark:
# 8 x 2.2 GB of checkpoints, 8 x 4.4 GB of output per -j value: ~53 GB of disk).
# `--shape small --cards 4` (74M parameters, 147 MB each) checks the script in a
# minute. For each -j it compiles into a fresh cache and OUT (cold cache: every
# card a miss), then again (every card a hit), and reports wall time, the peak of
# the summed RSS of qeff and its card processes (sampled every 50 ms) and the
# largest single process RSS. The checkpoints are written once into
# DIR/ckpt-<shape>-<seed> and kept. Prints the load average with the figures: on a
# shared machine they are not a measurement of the code alone.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
shape=tinyllama-1.1b
cards=8
jobs="1 2"
qeff=""
work="${QEFF_BENCH_DIR:-${TMPDIR:-/tmp}/qeff-cards-bench}"
while [ $# -gt 0 ]; do
  case "$1" in
    --shape) shape="$2"; shift 2 ;;
    --cards) cards="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --qeff) qeff="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "cards-bench: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ -z "$qeff" ]; then
  for c in "$repo/build-bench/bin/qeff" "$repo/build/bin/qeff"; do
    if [ -x "$c" ]; then qeff="$c"; break; fi
  done
fi
[ -x "$qeff" ] || { echo "cards-bench: no qeff binary (build it or pass --qeff)" >&2; exit 2; }
python=/usr/bin/python3
mkdir -p "$work"

# The checkpoints and the card file.
models=()
for seed in $(seq 1 "$cards"); do
  ckpt="$work/ckpt-$shape-$seed"
  if [ ! -f "$ckpt/config.json" ]; then
    echo "cards-bench: writing $ckpt" >&2
    "$python" "$here/make-synthetic-checkpoint.py" "$ckpt" --shape "$shape" --seed "$seed" 2>/dev/null
  fi
  models+=("$ckpt")
done
"$python" - "$work/cards.json" "${models[@]}" <<'PY'
import json, os, sys
out, models = sys.argv[1], sys.argv[2:]
cards = [{"name": f"synthetic-{i + 1}", "model": m} for i, m in enumerate(models)]
json.dump({"defaults": {"ctx_len": 2048, "prefill_seq_len": 128}, "models": cards}, open(out, "w"), indent=1)
PY

# Runs a command, sampling the summed RSS of its process tree; prints
# "<wall s> <peak summed RSS MB> <peak single RSS MB>".
measure() {
  "$python" - "$@" <<'PY'
import os, subprocess, sys, time
def tree(root):
    kids = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                ppid = int(open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[1])
                kids.setdefault(ppid, []).append(int(p))
            except (OSError, IndexError, ValueError):
                pass
    todo, out = [root], []
    while todo:
        p = todo.pop()
        out.append(p)
        todo += kids.get(p, [])
    return out
def rss(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0
start = time.monotonic()
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
peak_sum = peak_one = 0.0
while proc.poll() is None:
    sizes = [rss(p) for p in tree(proc.pid)]
    peak_sum, peak_one = max(peak_sum, sum(sizes)), max(peak_one, max(sizes, default=0))
    time.sleep(0.05)
wall = time.monotonic() - start
if proc.returncode != 0:
    sys.exit(f"cards-bench: {' '.join(sys.argv[1:])} exited {proc.returncode}")
print(f"{wall:.2f} {peak_sum:.0f} {peak_one:.0f}")
PY
}

bytes_of() { du -sb "$@" | awk '{ s += $1 } END { print s }'; }
results="$work/results-$shape-$cards.txt"
{
  echo "cards-bench: $cards x $shape ($(bytes_of "${models[@]}") checkpoint bytes), $("$qeff" --version | grep -m1 qeff)"
  echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
  printf '%-22s %9s %12s %12s %16s\n' mode "wall s" "sum RSS MB" "max RSS MB" "output bytes"
  rm -rf "$work/cp"
  mkdir -p "$work/cp"
  start=$(date +%s.%N)
  for m in "${models[@]}"; do cp -r "$m" "$work/cp/"; done
  sync -f "$work/cp"
  end=$(date +%s.%N)
  printf '%-22s %9.2f %12s %12s %16s\n' "cp -r (+sync)" "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" - - "$(bytes_of "$work/cp")"
  rm -rf "$work/cp"
  for j in $jobs; do
    rm -rf "$work/out" "$work/cache"
    read -r wall sum one < <(measure env QEFF_CACHE_DIR="$work/cache" "$qeff" compile --models "$work/cards.json" -o "$work/out" -j "$j")
    sync -f "$work/out"
    printf '%-22s %9.2f %12s %12s %16s\n' "-j $j (cold cache)" "$wall" "$sum" "$one" "$(bytes_of "$work/out")"
    read -r wall sum one < <(measure env QEFF_CACHE_DIR="$work/cache" "$qeff" compile --models "$work/cards.json" -o "$work/out" -j "$j")
    printf '%-22s %9.2f %12s %12s %16s\n' "-j $j (all cache hits)" "$wall" "$sum" "$one" "-"
  done
  rm -rf "$work/out" "$work/cache"
  echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$results"
