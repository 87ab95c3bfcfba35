#!/usr/bin/env bash
# Serving benchmark (on demand, not in ctest; docs/performance.md): `qeff serve` on a
# checkpoint under closed-loop load from test/bench/serve-bench.js, at several client
# counts, for each --full-batch-size: requests/s, generated tokens/s, p50/p99 time to
# first token, inter-token latency and end-to-end latency.
#
#   test/bench/serve-bench.sh [--qeff PATH] [--model DIR] [--fbs "1 4"]
#                             [--clients "1 4 16"] [--requests 8] [--prompt-len 16]
#                             [--max-tokens 32] [--ctx-len 128] [--threads 0]
#                             [--work DIR]
#
# For each --full-batch-size F: start `qeff serve DIR --port 0 --full-batch-size F
# --ctx-len C` (127.0.0.1, a free port; the checkpoint compiles through a cache in
# DIR/cache, so only the first run of each F compiles), wait for its "listening on"
# line, run serve-bench.js once per client count (each client sends --requests
# streamed completions of --max-tokens tokens, ignore_eos, greedy, back to back),
# then SIGTERM the server and require exit status 0. Prints a table, written with
# the raw JSON lines and the load average before and after to DIR/results.md.
# Defaults: the bundled stories260K model (test/data/models/stories260K-hf).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=lib.sh
. "$here/lib.sh"
qeff="$repo/build/bin/qeff"
model="$repo/test/data/models/stories260K-hf"
fbs_list="1 4"
clients_list="1 4 16"
requests=8 prompt_len=16 max_tokens=32 ctx_len=128 threads=0
work="${QEFF_BENCH_DIR:-${TMPDIR:-/tmp}/qeff-serve-bench}"
while [ $# -gt 0 ]; do
  case "$1" in
    --qeff) qeff="$2"; shift 2 ;;
    --model) model="$2"; shift 2 ;;
    --fbs) fbs_list="$2"; shift 2 ;;
    --clients) clients_list="$2"; shift 2 ;;
    --requests) requests="$2"; shift 2 ;;
    --prompt-len) prompt_len="$2"; shift 2 ;;
    --max-tokens) max_tokens="$2"; shift 2 ;;
    --ctx-len) ctx_len="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    -h|--help) bench_help "$0"; exit 0 ;;
    *) echo "serve-bench: unknown option $1" >&2; exit 2 ;;
  esac
done
bench_require_qeff serve-bench "$qeff"
[ -f "$model/config.json" ] || { echo "serve-bench: $model is not a checkpoint directory" >&2; exit 1; }
command -v node >/dev/null || { echo "serve-bench: node not found (scripts/setup-oracle.sh)" >&2; exit 1; }
vocab="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["vocab_size"])' "$model/config.json")"
name="$(basename "$model")"
mkdir -p "$work/cache" "$work/raw"
rm -f "$work"/raw/*.json

trap bench_serve_cleanup EXIT

load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
for fbs in $fbs_list; do
  log="$work/serve-fbs$fbs.log"
  # Up to 10 minutes: the first run compiles.
  bench_serve_start serve-bench "$log" 600 env QEFF_CACHE_DIR="$work/cache" \
    "$qeff" serve "$model" --host 127.0.0.1 --port 0 --full-batch-size "$fbs" \
    --ctx-len "$ctx_len" --threads "$threads"
  echo "serve-bench: --full-batch-size $fbs at $url" >&2
  for c in $clients_list; do
    node "$here/serve-bench.js" --url "$url" --model "$name" --clients "$c" --requests "$requests" \
      --prompt-len "$prompt_len" --max-tokens "$max_tokens" --vocab "$vocab" \
      | python3 -c 'import json,sys; d=json.load(sys.stdin); d["full_batch_size"]=int(sys.argv[1]); print(json.dumps(d))' "$fbs" \
      >"$work/raw/fbs$fbs-c$c.json"
  done
  bench_serve_stop serve-bench "$log"
done
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$work" "$load_before" "$load_after" "$requests" "$prompt_len" "$max_tokens" "$ctx_len" "$name" <<'EOF'
import glob, json, os, sys
work, before, after, requests, prompt_len, max_tokens, ctx_len, name = sys.argv[1:]
rows = [json.load(open(f)) for f in glob.glob(os.path.join(work, "raw", "*.json"))]
rows.sort(key=lambda r: (r["full_batch_size"], r["clients"]))
out = [f"model {name}, ctx_len {ctx_len}, {requests} requests per client, prompt {prompt_len} tokens, "
       f"{max_tokens} generated (ignore_eos, greedy); load average {before} before, {after} after", "",
       "| full_batch_size | clients | requests/s | tokens/s | TTFT p50 / p99 (ms) | ITL p50 / p99 (ms) | latency p50 / p99 (ms) |",
       "|---:|---:|---:|---:|---:|---:|---:|"]
for r in rows:
    out.append(f"| {r['full_batch_size']} | {r['clients']} | {r['requests_per_s']} | {r['tokens_per_s']} | "
               f"{r['ttft_ms']['p50']} / {r['ttft_ms']['p99']} | {r['itl_ms']['p50']} / {r['itl_ms']['p99']} | "
               f"{r['e2e_ms']['p50']} / {r['e2e_ms']['p99']} |")
fbs = sorted({r["full_batch_size"] for r in rows})
if len(fbs) > 1:
    top = max(r["clients"] for r in rows)
    tput = {r["full_batch_size"]: r["tokens_per_s"] for r in rows if r["clients"] == top}
    base = tput.get(fbs[0])
    out += ["", f"tokens/s at {top} clients: " + ", ".join(
        f"full_batch_size {f}: {tput[f]}" + (f" ({tput[f] / base:.2f}x)" if base else "") for f in fbs if f in tput)]
text = "\n".join(out)
print(text)
with open(os.path.join(work, "results.md"), "w") as f:
    f.write(text + "\n\nraw:\n" + "\n".join(json.dumps(r) for r in rows) + "\n")
EOF
