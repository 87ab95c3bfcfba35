#!/usr/bin/env bash
# Export benchmark (run on demand, not in CI): qeff compile on a synthetic
# Llama-shaped checkpoint against plain `cp` of the same files.
#
#   test/bench/export-bench.sh [--shape tinyllama-1.1b|llama-2-7b]... [--dtype bf16|f16]
#                              [--modes "device onnx onnx-f16"] [--qeff PATH]
#                              [--reps N] [--work DIR] [--drop-ckpt]
#
# For each shape it writes (once, cached in DIR/ckpt-<shape>-<dtype>) a
# checkpoint with make-synthetic-checkpoint.py, then runs, each twice:
#   cp        cp -r <ckpt> <dir>                                 (physical reference)
#   device    qeff compile <ckpt> -o <dir>                       (default: device form + artifacts)
#   onnx      qeff compile <ckpt> -o <dir> --emit=onnx           (imported form)
#   onnx-f16  qeff compile <ckpt> -o <dir> --emit=onnx --weights-dtype=f16
# under /usr/bin/time -v (peak RSS); --reps N repeats the whole sequence N
# times (modes interleaved) and the table reports the fastest of the N runs
# of each kind, every run being printed as well. Page-cache state, per run:
#   cold  the checkpoint's pages are evicted first (fsync + posix_fadvise
#         DONTNEED on every checkpoint file: needs no root, drops clean pages
#         of those files only; the hypervisor's own cache, if any, is not ours
#         to drop)
#   warm  right after the cold run: the checkpoint is in the page cache as far
#         as it fits in RAM
# Every run writes a fresh output directory, removed before the next run.
# "time" is the command's wall time; "+fsync" adds the fsync of every output
# file afterwards (the bytes on disk, not just in the page cache): ratios use
# the +fsync figures, because an export that writes 2x the bytes of cp (bf16
# -> f32) can otherwise hide its writes in the dirty page cache.
#
# Prints one line per run and a summary table (also written to
# DIR/results-<shape>.txt). Disk needed: checkpoint + its largest export
# (7B: 13.5 GB + 27 GB). The checkpoint is kept for the next run unless
# --drop-ckpt is given.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
shapes=()
dtype=bf16
modes="device onnx onnx-f16"
qeff=""
work="${QEFF_BENCH_DIR:-${TMPDIR:-/tmp}/qeff-bench}"
drop_ckpt=0
reps=1
while [ $# -gt 0 ]; do
  case "$1" in
    --shape) shapes+=("$2"); shift 2 ;;
    --dtype) dtype="$2"; shift 2 ;;
    --modes) modes="$2"; shift 2 ;;
    --qeff) qeff="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --reps) reps="$2"; shift 2 ;;
    --drop-ckpt) drop_ckpt=1; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "export-bench: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ ${#shapes[@]} -gt 0 ] || shapes=(tinyllama-1.1b)
if [ -z "$qeff" ]; then
  for c in "$repo/build-bench/bin/qeff" "$repo/build/bin/qeff"; do
    if [ -x "$c" ]; then qeff="$c"; break; fi
  done
fi
[ -x "$qeff" ] || { echo "export-bench: no qeff binary (build it or pass --qeff)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "export-bench: /usr/bin/time missing (apt-get install time)" >&2; exit 2; }
python=/usr/bin/python3
mkdir -p "$work"

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
# Evicts the page cache of the given files (clean pages only, so fsync first).
evict() {
  "$python" - "$@" <<'EOF'
import os, sys
for root in sys.argv[1:]:
    paths = [root] if os.path.isfile(root) else [
        os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs]
    for p in paths:
        fd = os.open(p, os.O_RDONLY)
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
EOF
}
cached_mb() { # MB of the files under $1 resident in the page cache
  find "$1" -type f -print0 | xargs -0 fincore -b -n -o RES 2>/dev/null |
    awk '{s += $1} END {printf "%d", s / 1048576}'
}
fsync_tree() { find "$1" -type f -print0 | xargs -0 -r sync -d; }
dir_bytes() { du -sb "$1" | cut -f1; }

for shape in "${shapes[@]}"; do
  ckpt="$work/ckpt-$shape-$dtype"
  if [ ! -f "$ckpt/.complete" ]; then
    rm -rf "$ckpt"
    echo "== writing the synthetic $shape $dtype checkpoint to $ckpt"
    t0=$(now)
    "$python" "$here/make-synthetic-checkpoint.py" "$ckpt" --shape "$shape" --dtype "$dtype"
    fsync_tree "$ckpt"
    echo "   $(elapsed "$t0" "$(now)") s"
    touch "$ckpt/.complete"
  fi
  ckpt_bytes=$(( $(dir_bytes "$ckpt") ))
  params=$("$python" - "$ckpt" <<'EOF'
import json, os, struct, sys
d = sys.argv[1]; n = 0
for f in sorted(os.listdir(d)):
    if f.endswith(".safetensors"):
        with open(os.path.join(d, f), "rb") as fh:
            h = json.loads(fh.read(struct.unpack("<Q", fh.read(8))[0]))
        for k, v in h.items():
            if k != "__metadata__":
                m = 1
                for s in v["shape"]:
                    m *= s
                n += m
print(n)
EOF
)
  out="$work/out-$shape"
  results="$work/results-$shape.txt"
  : > "$results.runs"
  : > "$results.runs.raw"
  echo "== $shape: $params parameters, checkpoint $ckpt_bytes bytes; qeff: $qeff"
  for rep in $(seq "$reps"); do
  for mode in cp $modes; do
    case "$mode" in
      cp) cmd=(cp -r "$ckpt" "$out") ;;
      device) cmd=("$qeff" compile "$ckpt" -o "$out") ;;
      onnx) cmd=("$qeff" compile "$ckpt" -o "$out" --emit=onnx) ;;
      onnx-f16) cmd=("$qeff" compile "$ckpt" -o "$out" --emit=onnx --weights-dtype=f16) ;;
      *) echo "export-bench: unknown mode $mode" >&2; exit 2 ;;
    esac
    for run in cold warm; do
      rm -rf "$out"
      [ "$run" = cold ] && evict "$ckpt"
      before=$(cached_mb "$ckpt")
      log="$work/time-$shape-$mode-$run.txt"
      t0=$(now)
      /usr/bin/time -v -o "$log" "${cmd[@]}" > "$work/stdout-$shape-$mode-$run.txt"
      t1=$(now)
      fsync_tree "$out"
      t2=$(now)
      rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")
      user=$(awk -F': ' '/User time/ {print $2}' "$log")
      sys=$(awk -F': ' '/System time/ {print $2}' "$log")
      out_bytes=$(( $(dir_bytes "$out") ))
      wall=$(elapsed "$t0" "$t1")
      synced=$(elapsed "$t0" "$t2")
      printf '%-9s %-4s ckpt cached %6s MB  wall %7.2f s  +fsync %7.2f s  user %6.2f  sys %6.2f  out %12d B  peak RSS %6d MB\n' \
        "$mode" "$run" "$before" "$wall" "$synced" "$user" "$sys" "$out_bytes" $((rss_kb / 1024)) |
        tee -a "$results.runs"
      echo "$mode $run $wall $synced $out_bytes $rss_kb" >> "$results.runs.raw"
    done
  done
  done
  rm -rf "$out"
  {
    echo "shape $shape ($dtype), $params parameters, checkpoint $ckpt_bytes bytes, best of $reps"
    printf '%-9s %14s %9s %9s %9s %9s %7s %7s %8s\n' mode "output bytes" \
      "cold s" "warm s" "cold+fs" "warm+fs" "ratio" "ratioW" "RSS MB"
    awk -v OFS=' ' '
      { key = $1; if (!(key in seen)) { order[n++] = key; seen[key] = 1 }
        if (!((key, $2) in wall) || $3 < wall[key, $2]) wall[key, $2] = $3
        if (!((key, $2) in sync_) || $4 < sync_[key, $2]) sync_[key, $2] = $4
        bytes[key] = $5
        if ($6 > rss[key]) rss[key] = $6 }
      END {
        for (i = 0; i < n; ++i) {
          k = order[i]
          printf "%-9s %14.0f %9.2f %9.2f %9.2f %9.2f %7.2f %7.2f %8d\n", k, bytes[k],
            wall[k, "cold"], wall[k, "warm"], sync_[k, "cold"], sync_[k, "warm"],
            sync_[k, "cold"] / sync_["cp", "cold"], sync_[k, "warm"] / sync_["cp", "warm"],
            rss[k] / 1024
        }
      }' "$results.runs.raw"
    echo "(ratio = cold+fsync / cp cold+fsync; ratioW = warm+fsync / cp warm+fsync; RSS = max over the runs)"
  } | tee "$results"
  rm -f "$results.runs.raw"
  if [ "$drop_ckpt" = 1 ]; then rm -rf "$ckpt"; fi
done
