#!/usr/bin/env bash
# Prefix-caching benchmark of `qeff serve` on the host device (issue 31; run on demand on
# a quiet machine, never in CI): time to first token of requests that share a long
# prompt prefix, with prefix caching on (the default) and off (--no-enable-prefix-caching),
# runs interleaved, the load average recorded around each.
#
#   test/bench/prefix-bench.sh [--qeff PATH] [--model DIR] [--shape tinyllama-1.1b|162m]
#                              [--runs 3] [--prefix-len 512] [--suffix-len 16]
#                              [--requests 8] [--ctx-len 1024] [--prefill-seq-len 128]
#                              [--fbs 1] [--threads 0] [--work DIR]
#
# Steps:
#   1. the model: --model DIR (compiled artifacts, or a checkpoint, which `qeff serve`
#      compiles through a cache in DIR/cache with --ctx-len, --prefill-seq-len and
#      --full-batch-size --fbs); by default a synthetic Llama-shaped f32 checkpoint
#      (test/tools/make-checkpoint.py --fill tiled, as llama-bench.sh), cached in
#      DIR/ckpt-<shape>: tinyllama-1.1b (22 layers, hidden 2048, 32 heads, 4 KV heads,
#      intermediate 5632, vocab 32000) or 162m.
#   2. --runs rounds; in each, both modes (the order alternating between rounds): start
#      `qeff serve` (127.0.0.1, a free port, --threads T), send one warm-up request
#      (the prefix and a suffix of its own, 1 token), then --requests requests one after
#      the other, each the same --prefix-len-token prefix and a different
#      --suffix-len-token suffix, streamed, max_tokens 1; the time to first token is
#      measured by the client (request sent -> first token chunk); usage's
#      prompt_tokens_details.cached_tokens is recorded; then SIGTERM (exit status 0
#      required). The 1-minute load average is read before and after each mode's run.
#   3. a table of the median TTFT per round and mode and the ratio off / on, printed and
#      written to DIR/results.md; the raw JSON of every run in DIR/raw/.
#
# Prompts are token ids (the synthetic checkpoint has no tokenizer): a fixed pseudo-
# random sequence in [300, vocab).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=lib.sh
. "$here/lib.sh"
qeff="$repo/build/bin/qeff"
model="" shape=tinyllama-1.1b runs=3 prefix_len=512 suffix_len=16 requests=8
ctx_len=1024 prefill_len=128 fbs=1 threads=0
work="${QEFF_BENCH_DIR:-${TMPDIR:-/tmp}/qeff-prefix-bench}"
while [ $# -gt 0 ]; do
  case "$1" in
    --qeff) qeff="$2"; shift 2 ;;
    --model) model="$2"; shift 2 ;;
    --shape) shape="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --prefix-len) prefix_len="$2"; shift 2 ;;
    --suffix-len) suffix_len="$2"; shift 2 ;;
    --requests) requests="$2"; shift 2 ;;
    --ctx-len) ctx_len="$2"; shift 2 ;;
    --prefill-seq-len) prefill_len="$2"; shift 2 ;;
    --fbs) fbs="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    -h|--help) bench_help "$0"; exit 0 ;;
    *) echo "prefix-bench: unknown argument $1" >&2; exit 2 ;;
  esac
done
bench_require_qeff prefix-bench "$qeff"
if [ $((prefix_len + suffix_len + 1)) -gt "$ctx_len" ]; then
  echo "prefix-bench: --prefix-len + --suffix-len + 1 must fit --ctx-len $ctx_len" >&2; exit 2
fi
mkdir -p "$work/raw" "$work/cache"
rm -f "$work"/raw/*.json

if [ -z "$model" ]; then
  bench_shape prefix-bench "$shape" "tinyllama-1.1b 162m"
  model="$work/ckpt-$shape"
  bench_checkpoint "$model" "$ctx_len"
fi
[ -f "$model/config.json" ] || { echo "prefix-bench: $model has no config.json" >&2; exit 2; }
vocab="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["vocab_size"])' "$model/config.json")"
# Compile options only for a checkpoint (artifacts are served as compiled).
compile_flags=()
[ -f "$model/qeff-manifest.json" ] ||
  compile_flags=(--ctx-len "$ctx_len" --prefill-seq-len "$prefill_len" --full-batch-size "$fbs")

trap bench_serve_cleanup EXIT

# One mode's run: writes $work/raw/<mode>-r<round>.json.
measure() { # mode round
  local mode="$1" r="$2" log="$work/serve-$1-r$2.log" flags=() url="" load0 load1
  [ "$mode" = off ] && flags=(--no-enable-prefix-caching)
  # Up to 20 minutes: the first start compiles.
  bench_serve_start prefix-bench "$log" 1200 env QEFF_CACHE_DIR="$work/cache" \
    "$qeff" serve "$model" --host 127.0.0.1 --port 0 --model-name bench \
    --threads "$threads" "${compile_flags[@]}" "${flags[@]}"
  load0=$(cut -d' ' -f1 /proc/loadavg)
  python3 - "$url" "$vocab" "$prefix_len" "$suffix_len" "$requests" >"$work/raw/$mode-r$r.tmp" <<'EOF'
import http.client, json, sys, time, urllib.parse
url, vocab, prefix_len, suffix_len, requests = sys.argv[1], *map(int, sys.argv[2:6])
ids = lambda start, n: [(i * 7919) % (vocab - 300) + 300 for i in range(start, start + n)]
prefix = ids(0, prefix_len)
u = urllib.parse.urlparse(url)
def ttft(suffix_id):
    body = json.dumps({"model": "bench", "prompt": prefix + ids(100000 + suffix_id * suffix_len, suffix_len),
                       "max_tokens": 1, "temperature": 0, "stream": True,
                       "stream_options": {"include_usage": True}})
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
    start = time.perf_counter()
    conn.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
    resp = conn.getresponse()
    if resp.status != 200:
        sys.exit(f"prefix-bench: HTTP {resp.status}: {resp.read()[:500]!r}")
    first, cached = None, 0
    for line in resp:
        line = line.strip()
        if not line.startswith(b"data: ") or line == b"data: [DONE]":
            continue
        chunk = json.loads(line[6:])
        if chunk.get("choices") and first is None:
            first = time.perf_counter() - start
        if chunk.get("usage"):
            cached = (chunk["usage"].get("prompt_tokens_details") or {}).get("cached_tokens", 0)
    conn.close()
    return first, cached
ttft(0)  # warm-up: the prefix enters a row
runs = [ttft(k) for k in range(1, requests + 1)]
print(json.dumps({"ttft_s": [t for t, _ in runs], "cached_tokens": [c for _, c in runs]}))
EOF
  load1=$(cut -d' ' -f1 /proc/loadavg)
  bench_serve_stop prefix-bench "$log"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d.update(mode=sys.argv[2], round=int(sys.argv[3]), load_before=float(sys.argv[4]), load_after=float(sys.argv[5])); print(json.dumps(d))' \
    "$work/raw/$mode-r$r.tmp" "$mode" "$r" "$load0" "$load1" >"$work/raw/$mode-r$r.json"
  rm -f "$work/raw/$mode-r$r.tmp"
}

echo "== machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for r in $(seq 1 "$runs"); do
  order="on off"
  [ $((r % 2)) -eq 0 ] && order="off on"
  for mode in $order; do
    measure "$mode" "$r"
    echo "   round $r, caching $mode: $(python3 -c 'import json,statistics,sys; d=json.load(open(sys.argv[1])); print("median TTFT %.1f ms, cached %s; load %.2f -> %.2f" % (1000 * statistics.median(d["ttft_s"]), d["cached_tokens"], d["load_before"], d["load_after"]))' "$work/raw/$mode-r$r.json")" >&2
  done
done

python3 - "$work" "$runs" "$(basename "$model")" "$prefix_len" "$suffix_len" "$requests" "$fbs" <<'EOF' | tee "$work/results.md"
import json, statistics, sys
work, runs, name, plen, slen, requests, fbs = sys.argv[1:8]
runs = int(runs)
def run(mode, r):
    return json.load(open(f"{work}/raw/{mode}-r{r}.json"))
print(f"model {name}; prefix {plen} tokens + suffix {slen}; {requests} requests per run after a "
      f"warm-up, max_tokens 1, streamed; full_batch_size {fbs} (checkpoints); {runs} interleaved rounds")
print()
print("| round | TTFT on (ms) | TTFT off (ms) | off / on | cached tokens per request (on) | load on | load off |")
print("|---:|---:|---:|---:|---:|---|---|")
ratios = []
for r in range(1, runs + 1):
    on, off = run("on", r), run("off", r)
    a, b = statistics.median(on["ttft_s"]) * 1000, statistics.median(off["ttft_s"]) * 1000
    ratios.append(b / a)
    print(f"| {r} | {a:.1f} | {b:.1f} | {b / a:.2f}x | {statistics.median(on['cached_tokens'])} | "
          f"{on['load_before']:.2f} -> {on['load_after']:.2f} | {off['load_before']:.2f} -> {off['load_after']:.2f} |")
print()
print(f"median off / on: {statistics.median(ratios):.2f}x")
EOF
