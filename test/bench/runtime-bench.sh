#!/usr/bin/env bash
# Runtime benchmark (run on demand, not in CI): the host device (`qeff run`) against
# ONNX Runtime (onnxruntime-node) on the same device artifact, prefill and decode
# tokens/s, same thread count, in one run.
#
#   test/bench/runtime-bench.sh [--qeff PATH] [--threads "1 2"] [--runs 3]
#                               [--shape 162m|tinyllama-1.1b] [--weights-dtype f32|f16]
#                               [--prompt-len 128] [--new-tokens 64] [--work DIR]
#                               [--layers 12] [--hidden 768] [--heads 12] [--kv-heads 12]
#                               [--intermediate 3072] [--vocab 32000]
#                               [--ctx-len 512] [--prefill-seq-len 128]
#                               [--ort-levels "all disabled"] [--skip-ort]
#                               [--ttft-prompt-len 8] [--with-openblas]
#
# --with-openblas adds the engine host-openblas: the same binary with
# QEFF_HOST_NO_PACK=1 (OpenBLAS for the weight products, f16 weights widened at load,
# as before the packed-weight kernels), for a before/after in one run.
# --shape picks the model dims: 162m (the default below) or tinyllama-1.1b (22 layers,
# hidden 2048, 32 heads, 4 KV heads, intermediate 5632, vocab 32000: 1.1B parameters,
# a 4.4 GB f32 checkpoint); explicit --layers etc. after it override single dims.
# --weights-dtype f16 compiles the artifact with `qeff compile --weights-dtype=f16`
# (2-byte weights in model.onnx.data, a Cast to f32 after each), the f16-artifact mode.
#
# Steps:
#   1. a synthetic Llama-shaped f32 checkpoint (test/tools/make-checkpoint.py
#      --fill tiled; default
#      12 layers, hidden 768, 12 heads, intermediate 3072, vocab 32000: 162M
#      parameters), cached in DIR/ckpt-<shape>
#   2. `qeff compile` once: ctx_len 512, prefill seq_len 128, batch 1 (DIR/art-<shape>)
#   3. for each thread count, `--runs` times each (a fresh process per run, results
#      interleaved so that load drifts hit every engine alike):
#        host      qeff run DIR/art --token-ids <prompt> --max-new-tokens N --json --threads T
#                  --prepack-weights (weights laid out at load, outside the clock, as ORT
#                  prepacks at session creation and as `qeff serve` loads)
#        ort-all   runtime-bench-ort.js ... --opt-level all       (graph optimisations on)
#        ort-off   runtime-bench-ort.js ... --opt-level disabled  (for reference)
#      The prompt is a fixed pseudo-random id sequence of --prompt-len tokens; greedy
#      decoding of --new-tokens tokens (no EOS in the synthetic config, so every run
#      generates exactly N). Both engines time prefill (prompt tokens / time to the
#      first logits) and decode ((N - 1) / time of the remaining steps) the same way;
#      model loading and session creation are outside both clocks.
#   4. for each thread count, --runs times: the wall time of `qeff run --max-new-tokens 1`
#      on a --ttft-prompt-len token prompt, from process start to exit (time from
#      `qeff run` start to the first token, page cache warm after the runs above; the
#      default lazy layout: a short first prompt reads the weights in place), and
#      the peak RSS of every host run (/usr/bin/time).
#   5. a table of medians (tokens/s) and ratios host / ORT, printed and written to
#      DIR/results.md; the raw JSON of every run in DIR/raw/. The greedy tokens of
#      every engine are compared against the host's first run (same model, same
#      prompt: they must agree).
#
# ORT threads: intraOpNumThreads = T, interOpNumThreads = 1, sequential execution. ORT
# writes the *_RetainedState outputs into pre-allocated tensors (runtime-bench-ort.js
# --prealloc 1: two state sets swapped every step), its fastest way to carry the KV
# state from step to step in onnxruntime-node (a few % over fresh output tensors).
# Host threads: --threads T (OpenBLAS and the host device's own parallel loops).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
qeff=""
threads="1 2"
runs=3
prompt_len=128
new_tokens=64
work="${QEFF_BENCH_DIR:-${TMPDIR:-/tmp}/qeff-runtime-bench}"
layers=12 hidden=768 heads=12 kv_heads=12 intermediate=3072 vocab=32000
ctx_len=512 prefill_len=128
ort_levels="all disabled"
skip_ort=0
weights_dtype=f32
with_openblas=0
ttft_prompt_len=8
while [ $# -gt 0 ]; do
  case "$1" in
    --qeff) qeff="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --prompt-len) prompt_len="$2"; shift 2 ;;
    --new-tokens) new_tokens="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --shape)
      case "$2" in
        162m) layers=12 hidden=768 heads=12 kv_heads=12 intermediate=3072 vocab=32000 ;;
        tinyllama-1.1b) layers=22 hidden=2048 heads=32 kv_heads=4 intermediate=5632 vocab=32000 ;;
        *) echo "runtime-bench: unknown --shape $2 (162m, tinyllama-1.1b)" >&2; exit 2 ;;
      esac
      shift 2 ;;
    --weights-dtype) weights_dtype="$2"; shift 2 ;;
    --ttft-prompt-len) ttft_prompt_len="$2"; shift 2 ;;
    --with-openblas) with_openblas=1; shift ;;
    --layers) layers="$2"; shift 2 ;;
    --hidden) hidden="$2"; shift 2 ;;
    --heads) heads="$2"; shift 2 ;;
    --kv-heads) kv_heads="$2"; shift 2 ;;
    --intermediate) intermediate="$2"; shift 2 ;;
    --vocab) vocab="$2"; shift 2 ;;
    --ctx-len) ctx_len="$2"; shift 2 ;;
    --prefill-seq-len) prefill_len="$2"; shift 2 ;;
    --ort-levels) ort_levels="$2"; shift 2 ;;
    --skip-ort) skip_ort=1; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "runtime-bench: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ -z "$qeff" ]; then
  for c in "$repo/build/bin/qeff"; do
    if [ -x "$c" ]; then qeff="$c"; break; fi
  done
fi
[ -x "$qeff" ] || { echo "runtime-bench: no qeff binary (build it or pass --qeff)" >&2; exit 2; }
if [ "$skip_ort" = 0 ] && [ ! -d "$repo/test/oracle/node_modules/onnxruntime-node" ]; then
  echo "runtime-bench: onnxruntime-node is not installed (scripts/setup-oracle.sh), or pass --skip-ort" >&2
  exit 2
fi

shape="l${layers}-h${hidden}-a${heads}-kv${kv_heads}-i${intermediate}-v${vocab}"
ckpt="$work/ckpt-$shape"
case "$weights_dtype" in f32|f16) ;; *) echo "runtime-bench: --weights-dtype f32 or f16" >&2; exit 2 ;; esac
art="$work/art-$shape-c${ctx_len}-p${prefill_len}-w${weights_dtype}"
mkdir -p "$work/raw"
if [ ! -f "$ckpt/config.json" ]; then
  echo "== checkpoint $ckpt" >&2
  python3 "$here/../tools/make-checkpoint.py" "$ckpt" --fill tiled --dtype f32 \
    --max-positions 2048 --layers "$layers" --hidden "$hidden" --heads "$heads" \
    --kv-heads "$kv_heads" --intermediate "$intermediate" --vocab "$vocab"
fi
echo "== qeff compile -> $art" >&2
rm -rf "$art"
"$qeff" compile "$ckpt" -o "$art" --ctx-len "$ctx_len" --prefill-seq-len "$prefill_len" \
  --batch-size 1 --weights-dtype="$weights_dtype" >/dev/null 2>"$work/compile.log" || { cat "$work/compile.log" >&2; exit 1; }
[ -f "$art/model.onnx" ] || { echo "runtime-bench: compile wrote no model.onnx" >&2; exit 1; }

ids=$(python3 -c "print(','.join(str((i * 7919) % ($vocab - 200) + 100) for i in range($prompt_len)))")
short_ids=$(python3 -c "print(','.join(str((i * 7919) % ($vocab - 200) + 100) for i in range($ttft_prompt_len)))")
engines="host"
if [ "$with_openblas" = 1 ]; then engines="$engines host-openblas"; fi
if [ "$skip_ort" = 0 ]; then
  for l in $ort_levels; do engines="$engines ort-$l"; done
fi

# One measurement: prints {"prefill":x,"decode":y,"tokens":[...]} on stdout.
measure() { # engine threads out.json
  local engine="$1" t="$2" out="$3"
  case "$engine" in
    host|host-openblas)
      env $([ "$engine" = host-openblas ] && echo QEFF_HOST_NO_PACK=1) \
        /usr/bin/time -f "%M" -o "$out.rss" \
        "$qeff" run "$art" --token-ids "$ids" --max-new-tokens "$new_tokens" --json \
        --threads "$t" --prepack-weights >"$out.raw" 2>"$out.err"
      python3 - "$out.raw" "$out.rss" >"$out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
rss_kb = int(open(sys.argv[2]).read().split()[-1])
print(json.dumps({"prefill": d["metrics"]["prefill_tokens_per_s"],
                  "decode": d["metrics"]["decode_tokens_per_s"],
                  "tokens": d["rows"][0]["generated_ids"], "rss_mb": rss_kb / 1024}))
EOF
      ;;
    ort-*)
      node "$here/runtime-bench-ort.js" --artifact "$art" --token-ids "$ids" \
        --max-new-tokens "$new_tokens" --threads "$t" --opt-level "${engine#ort-}" --prealloc 1 \
        >"$out.raw" 2>"$out.err"
      python3 - "$out.raw" >"$out" <<'EOF'
import json, sys
d = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
print(json.dumps({"prefill": d["prefill_tokens_per_s"], "decode": d["decode_tokens_per_s"],
                  "tokens": d["generated_ids"], "ort_version": d.get("ort_version")}))
EOF
      ;;
  esac
}

load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
echo "== machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), load before: $load_before" >&2
for t in $threads; do
  for r in $(seq 1 "$runs"); do
    for e in $engines; do
      out="$work/raw/$e-t$t-r$r.json"
      measure "$e" "$t" "$out" || { echo "runtime-bench: $e (threads $t, run $r) failed:" >&2; cat "$out.err" >&2; exit 1; }
      echo "   $e threads=$t run=$r: $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('prefill %.1f tok/s, decode %.2f tok/s' % (d['prefill'], d['decode']))" "$out")" >&2
    done
  done
done
for t in $threads; do
  for r in $(seq 1 "$runs"); do
    out="$work/raw/ttft-t$t-r$r.json"
    t0=$(date +%s.%N)
    "$qeff" run "$art" --token-ids "$short_ids" --max-new-tokens 1 --threads "$t" \
      >/dev/null 2>"$out.err" || { echo "runtime-bench: ttft run failed:" >&2; cat "$out.err" >&2; exit 1; }
    t1=$(date +%s.%N)
    python3 -c "import json,sys; print(json.dumps({'seconds': float(sys.argv[2]) - float(sys.argv[1])}))" \
      "$t0" "$t1" >"$out"
    echo "   ttft threads=$t run=$r: $(python3 -c "import json,sys; print('%.3f s' % json.load(open(sys.argv[1]))['seconds'])" "$out")" >&2
  done
done
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$work" "$threads" "$runs" "$engines" "$load_after" "$prompt_len" "$new_tokens" \
  "$shape" "$weights_dtype" "$ttft_prompt_len" "$load_before" <<'EOF' | tee "$work/results.md"
import json, statistics, sys
work, threads, runs, engines, load, plen, ntok, shape, wdtype, tplen, load0 = sys.argv[1:12]
threads, engines, runs = threads.split(), engines.split(), int(runs)
def load_run(e, t, r):
    return json.load(open(f"{work}/raw/{e}-t{t}-r{r}.json"))
ref = load_run("host", threads[0], 1)["tokens"]
mismatch = []
rows = []
for t in threads:
    med = {}
    for e in engines:
        rs = [load_run(e, t, r) for r in range(1, runs + 1)]
        for r, d in enumerate(rs, 1):
            if d["tokens"] != ref:
                mismatch.append(f"{e} threads={t} run={r}")
        med[e] = (statistics.median(d["prefill"] for d in rs),
                  statistics.median(d["decode"] for d in rs))
    rows.append((t, med))
print(f"shape {shape}, {wdtype} weights; prompt {plen} tokens, {ntok} new tokens, "
      f"median of {runs} runs; tokens/s (higher is better)")
print()
hdr = "| threads | engine | prefill tok/s | decode tok/s | host/engine prefill | host/engine decode |"
print(hdr)
print("|---|---|---:|---:|---:|---:|")
for t, med in rows:
    hp, hd = med["host"]
    for e in engines:
        p, d = med[e]
        name = {"host": "qeff host device", "ort-all": "ORT (opt level all)",
                "ort-disabled": "ORT (opt level disabled)",
                "host-openblas": "qeff host, QEFF_HOST_NO_PACK=1"}.get(e, e)
        rp = "" if e == "host" else f"{hp / p:.2f}x"
        rd = "" if e == "host" else f"{hd / d:.2f}x"
        print(f"| {t} | {name} | {p:.1f} | {d:.2f} | {rp} | {rd} |")
print()
for t in threads:
    rss = statistics.median(load_run("host", t, r)["rss_mb"] for r in range(1, runs + 1))
    if "host-openblas" in engines:
        rss0 = statistics.median(load_run("host-openblas", t, r)["rss_mb"]
                                 for r in range(1, runs + 1))
        print(f"host-openblas, {t} thread(s): peak RSS {rss0:.0f} MB (median)")
    ttft = statistics.median(json.load(open(f"{work}/raw/ttft-t{t}-r{r}.json"))["seconds"]
                             for r in range(1, runs + 1))
    print(f"host, {t} thread(s): peak RSS {rss:.0f} MB (median); `qeff run` start to first "
          f"token ({tplen}-token prompt, process wall time) {ttft:.3f} s (median)")
print()
print(f"load average before the runs: {load0}; after: {load}")
print("greedy tokens: " + ("identical in every run of every engine" if not mismatch
                           else "DIFFER in " + ", ".join(mismatch)))
EOF
