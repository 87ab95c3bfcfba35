#!/usr/bin/env bash
# qeff's host device against llama.cpp on the same weights (issue 33's benchmark; run on
# demand on a quiet machine, never in CI): prefill and decode tokens/s at each thread
# count and weight dtype, runs interleaved, the load and the other CPU time of each run
# recorded.
#
#   test/bench/llama-bench.sh [--qeff PATH] [--gguf-export PATH] [--threads "1 2"]
#                             [--runs 5] [--dtypes "f32 f16 bf16"]
#                             [--shape tinyllama-1.1b|162m] [--prompt-len 128]
#                             [--new-tokens 16] [--ctx-len 256] [--prefill-seq-len 128]
#                             [--node-llama-cpp 3.21.1] [--work DIR] [--skip-llama]
#
# Steps:
#   1. a synthetic Llama-shaped f32 checkpoint (test/tools/make-checkpoint.py --fill
#      tiled --dtype f32; each engine rounds it to the dtype the same way), cached in
#      DIR/ckpt-<shape>: tinyllama-1.1b (22 layers, hidden
#      2048, 32 heads, 4 KV heads, intermediate 5632, vocab 32000) or 162m.
#   2. for each dtype D: `qeff compile --weights-dtype=D --ctx-len C --prefill-seq-len P
#      --batch-size 1` (DIR/art-<shape>-D), and the GGUF file of the same checkpoint with
#      D matrices (build/bin/qeff-gguf-export: `ninja -C build qeff-gguf-export`;
#      DIR/<shape>-D.gguf; the q/k rows permuted for llama.cpp's rope as its converter
#      does, norms f32).
#   3. node-llama-cpp, pinned: test/oracle/llama-cpp's (scripts/setup-oracle.sh) when it
#      is that version, else installed once into DIR/llama-node with `npm install
#      --ignore-scripts` (no build: its prebuilt CPU backends; test/bench/
#      llama-bench-node.mjs drives it).
#   4. for each thread count T, --runs rounds; in each round, for each dtype, qeff then
#      llama.cpp (a fresh process each): `qeff run ART --token-ids <prompt>
#      --max-new-tokens N --json --threads T --prepack-weights`, and
#      llama-bench-node.mjs on the GGUF file (the same token ids, greedy, batch P,
#      context C). Each process runs in a session of its own (setsid: its own
#      autogroup; its niceness is raised to -20 when the user may). Recorded per run:
#      prefill and decode tok/s, the 1-minute load average before and after, and the
#      CPU time the rest of the machine used during the run (busy jiffies of
#      /proc/stat minus the run's own user + system time, /usr/bin/time), in CPU-s.
#   5. a table of medians per (threads, dtype, engine), the ratios qeff / llama.cpp, and
#      every run with its load and other-CPU time, printed and written to
#      DIR/results.md; the raw JSON of every run in DIR/raw/.
#
# The prompt is a fixed pseudo-random sequence of ids in [300, vocab); the synthetic
# config has no EOS, so both engines generate exactly N tokens. The placeholder GGUF
# vocabulary has the same size as the checkpoint's. Greedy tokens are not compared
# across engines (llama.cpp sums in another order; random weights give near-ties).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=lib.sh
. "$here/lib.sh"
qeff="" gguf_export=""
threads="1 2" runs=5 dtypes="f32 f16 bf16" prompt_len=128 new_tokens=16
ctx_len=256 prefill_len=128 nlc_version=3.21.1 skip_llama=0
shape=tinyllama-1.1b
work="${QEFF_BENCH_DIR:-${TMPDIR:-/tmp}/qeff-llama-bench}"
while [ $# -gt 0 ]; do
  case "$1" in
    --qeff) qeff="$2"; shift 2 ;;
    --gguf-export) gguf_export="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --dtypes) dtypes="$2"; shift 2 ;;
    --shape) shape="$2"; shift 2 ;;
    --prompt-len) prompt_len="$2"; shift 2 ;;
    --new-tokens) new_tokens="$2"; shift 2 ;;
    --ctx-len) ctx_len="$2"; shift 2 ;;
    --prefill-seq-len) prefill_len="$2"; shift 2 ;;
    --node-llama-cpp) nlc_version="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --skip-llama) skip_llama=1; shift ;;
    -h|--help) bench_help "$0"; exit 0 ;;
    *) echo "llama-bench: unknown argument $1" >&2; exit 2 ;;
  esac
done
bench_shape llama-bench "$shape" "tinyllama-1.1b 162m"
for d in $dtypes; do
  case "$d" in f32|f16|bf16) ;; *) echo "llama-bench: --dtypes takes f32, f16, bf16" >&2; exit 2 ;; esac
done
qeff="${qeff:-$repo/build/bin/qeff}"
gguf_export="${gguf_export:-$repo/build/bin/qeff-gguf-export}"
bench_require_qeff llama-bench "$qeff"
if [ "$skip_llama" = 0 ]; then
  [ -x "$gguf_export" ] || { echo "llama-bench: no $gguf_export (ninja -C build qeff-gguf-export)" >&2; exit 2; }
  command -v node >/dev/null || { echo "llama-bench: node is not installed" >&2; exit 2; }
fi
[ -x /usr/bin/time ] || { echo "llama-bench: /usr/bin/time is needed (Debian package time)" >&2; exit 2; }

ckpt="$work/ckpt-$shape"
mkdir -p "$work/raw"
bench_checkpoint "$ckpt" 2048
eps=$(python3 -c "import json,sys; c=json.load(open(sys.argv[1])); print(c.get('rms_norm_eps', 1e-6))" "$ckpt/config.json")
theta=$(python3 -c "import json,sys; c=json.load(open(sys.argv[1])); print(c.get('rope_theta', 10000.0))" "$ckpt/config.json")
for d in $dtypes; do
  art="$work/art-$shape-$d"
  if [ ! -f "$art/model.onnx" ]; then
    echo "== qeff compile -> $art" >&2
    "$qeff" compile "$ckpt" -o "$art" --ctx-len "$ctx_len" --prefill-seq-len "$prefill_len" \
      --batch-size 1 --weights-dtype="$d" >/dev/null 2>"$work/compile-$d.log" ||
      { cat "$work/compile-$d.log" >&2; exit 1; }
  fi
  if [ "$skip_llama" = 0 ] && [ ! -f "$work/$shape-$d.gguf" ]; then
    echo "== GGUF $work/$shape-$d.gguf" >&2
    "$gguf_export" "$ckpt" "$work/$shape-$d.gguf.tmp" --dtype "$d" --layers "$layers" \
      --hidden "$hidden" --heads "$heads" --kv-heads "$kv_heads" --intermediate "$intermediate" \
      --vocab "$vocab" --ctx "$ctx_len" --eps "$eps" --rope-theta "$theta" >&2
    mv "$work/$shape-$d.gguf.tmp" "$work/$shape-$d.gguf"
  fi
done
# The oracle's pinned install (scripts/setup-oracle.sh) when it is the version asked for.
nlc="$repo/test/oracle/llama-cpp/node_modules/node-llama-cpp"
if ! grep -qs "\"version\": \"$nlc_version\"" "$nlc/package.json"; then
  nlc="$work/llama-node/node_modules/node-llama-cpp"
fi
if [ "$skip_llama" = 0 ] && [ ! -f "$nlc/package.json" ]; then
  echo "== npm install --ignore-scripts node-llama-cpp@$nlc_version -> $work/llama-node" >&2
  mkdir -p "$work/llama-node"
  (cd "$work/llama-node" && [ -f package.json ] || echo '{"private": true}' > package.json
   npm install --no-audit --no-fund --ignore-scripts -E "node-llama-cpp@$nlc_version" >&2)
fi

ids=$(python3 -c "print(','.join(str((i * 7919) % ($vocab - 300) + 300) for i in range($prompt_len)))")
engines="qeff"
[ "$skip_llama" = 0 ] && engines="qeff llama"

busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }
# One run in a session (autogroup) of its own: writes $out (JSON) with the engine's own
# figures plus load_before/after and other_cpu_s.
measure() { # engine dtype threads out
  local engine="$1" d="$2" t="$3" out="$4" hz load0 load1 b0 b1
  hz=$(getconf CLK_TCK)
  load0=$(cut -d' ' -f1 /proc/loadavg)
  b0=$(busy)
  local cmd
  if [ "$engine" = qeff ]; then
    cmd=("$qeff" run "$work/art-$shape-$d" --token-ids "$ids" --max-new-tokens "$new_tokens"
         --json --threads "$t" --prepack-weights)
  else
    cmd=(node "$here/llama-bench-node.mjs" --module "$nlc" --model "$work/$shape-$d.gguf"
         --token-ids "$ids" --max-new-tokens "$new_tokens" --threads "$t" --ctx-len "$ctx_len"
         --batch "$prefill_len")
  fi
  setsid -w /usr/bin/time -f "%U %S %M" -o "$out.time" \
    sh -c '{ echo -20 > /proc/self/autogroup; } 2>/dev/null; exec "$@"' sh "${cmd[@]}" \
    >"$out.raw" 2>"$out.err"
  b1=$(busy)
  load1=$(cut -d' ' -f1 /proc/loadavg)
  python3 - "$engine" "$out.raw" "$out.time" "$load0" "$load1" "$b0" "$b1" "$hz" >"$out" <<'EOF'
import json, sys
engine, raw, tm, l0, l1, b0, b1, hz = sys.argv[1:9]
text = open(raw).read().strip()
d = json.loads(text if engine == "qeff" else text.splitlines()[-1])
user, system, rss = open(tm).read().split()[-3:]
own = float(user) + float(system)
if engine == "qeff":
    r = {"prefill": d["metrics"]["prefill_tokens_per_s"], "decode": d["metrics"]["decode_tokens_per_s"]}
else:
    r = {"prefill": d["prefill_tokens_per_s"], "decode": d["decode_tokens_per_s"],
         "node_llama_cpp": d.get("node_llama_cpp")}
r.update({"load_before": float(l0), "load_after": float(l1), "rss_mb": int(rss) / 1024,
          "other_cpu_s": max(0.0, (float(b1) - float(b0)) / float(hz) - own), "own_cpu_s": own})
print(json.dumps(r))
EOF
}

echo "== machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for t in $threads; do
  for r in $(seq 1 "$runs"); do
    for d in $dtypes; do
      for e in $engines; do
        out="$work/raw/$e-$d-t$t-r$r.json"
        measure "$e" "$d" "$t" "$out" ||
          { echo "llama-bench: $e $d (threads $t, run $r) failed:" >&2; cat "$out.err" >&2; exit 1; }
        echo "   $e $d threads=$t run=$r: $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('prefill %.1f, decode %.2f tok/s; load %.2f -> %.2f, other CPU %.2f s' % (d['prefill'], d['decode'], d['load_before'], d['load_after'], d['other_cpu_s']))" "$out")" >&2
      done
    done
  done
done

python3 - "$work" "$threads" "$runs" "$dtypes" "$engines" "$shape" "$prompt_len" "$new_tokens" <<'EOF' | tee "$work/results.md"
import json, statistics, sys
work, threads, runs, dtypes, engines, shape, plen, ntok = sys.argv[1:9]
threads, dtypes, engines, runs = threads.split(), dtypes.split(), engines.split(), int(runs)
def run(e, d, t, r):
    return json.load(open(f"{work}/raw/{e}-{d}-t{t}-r{r}.json"))
print(f"shape {shape}; prompt {plen} tokens, {ntok} new tokens; median of {runs} interleaved runs")
print()
print("| threads | weights | qeff prefill | llama.cpp prefill | qeff decode | llama.cpp decode | prefill ratio | decode ratio |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for t in threads:
    for d in dtypes:
        med = {e: (statistics.median(run(e, d, t, r)["prefill"] for r in range(1, runs + 1)),
                   statistics.median(run(e, d, t, r)["decode"] for r in range(1, runs + 1)))
               for e in engines}
        q = med["qeff"]
        l = med.get("llama", (float("nan"), float("nan")))
        print(f"| {t} | {d} | {q[0]:.1f} | {l[0]:.1f} | {q[1]:.2f} | {l[1]:.2f} | "
              f"{q[0] / l[0]:.2f}x | {q[1] / l[1]:.2f}x |")
print()
print("Every run (tok/s prefill / decode; 1-min load before -> after; CPU-s used by the rest of the machine):")
print()
for t in threads:
    for r in range(1, runs + 1):
        for d in dtypes:
            for e in engines:
                x = run(e, d, t, r)
                print(f"- t{t} r{r} {d} {e}: {x['prefill']:.1f} / {x['decode']:.2f}; load "
                      f"{x['load_before']:.2f} -> {x['load_after']:.2f}; other CPU {x['other_cpu_s']:.2f} s; "
                      f"RSS {x['rss_mb']:.0f} MB")
EOF
