#!/usr/bin/env bash
# Speculative against plain decode on the host device (issue 31's benchmark; run on
# demand on a quiet machine, never in CI): decode tokens/s of `qeff run` with prompt
# lookup and with a small draft model, against the same target without speculation,
# runs interleaved, the load of each run recorded, medians printed.
#
#   test/bench/spec-bench.sh [--qeff PATH] [--shape tinyllama-1.1b|162m|tiny]
#                            [--runs 5] [--threads 2] [--k 3] [--draft-layers 2]
#                            [--prompt-len 128] [--new-tokens 64] [--ctx-len 512]
#                            [--prefill-seq-len 128] [--work DIR]
#
# Steps:
#   1. a synthetic Llama-shaped f32 checkpoint (test/tools/make-checkpoint.py --fill
#      tiled), cached in DIR/ckpt-<shape>: tinyllama-1.1b (22 layers, hidden 2048, 32
#      heads, 4 KV heads, intermediate 5632, vocab 32000), 162m, or tiny (a smoke
#      check of the script in seconds). From it (test/bench/derive-checkpoint.py):
#      DIR/draft-<shape>, its first --draft-layers layers (the same embeddings, norm
#      and head: a draft of the same shape family and vocabulary), and
#      DIR/exact-<shape>, the target with o_proj and down_proj of every later layer
#      zeroed: as costly per token as the target, but computing exactly what the
#      draft computes, so every drafted token is accepted (the upper bound of the
#      speed-up at this K).
#   2. `qeff compile --batch-size 1 --ctx-len C --prefill-seq-len P` of: the target
#      (plain), the target and the exact target with --num-speculative-tokens K, and
#      the draft.
#   3. --runs rounds; in each, one fresh process per configuration, in this order:
#        plain        qeff run <target>                        (no speculation)
#        lookup       qeff run <target, K> --speculate prompt-lookup
#        draft        qeff run <target, K> --speculate draft=<draft>
#        exact-draft  qeff run <exact, K>  --speculate draft=<draft>
#      each `--token-ids <prompt> --max-new-tokens N --json --threads T
#      --prepack-weights`, in a session of its own (setsid), with the 1-minute load
#      average before and after. The prompt is a block of 16 ids repeated to
#      --prompt-len tokens (prompt lookup finds its n-grams in it); the synthetic config
#      has no EOS, so every run generates N tokens.
#   4. a table of medians (decode tok/s, the speed-up over plain, accepted / proposed
#      tokens) and every run, printed and written to DIR/results.md; raw JSON in
#      DIR/raw/.
#
# Random weights do not continue the prompt's repetition, so prompt lookup's and the
# truncated draft's acceptance on the synthetic target is what it is: the table
# reports it as measured, next to the exact draft's (always accepted).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=lib.sh
. "$here/lib.sh"
qeff="" shape=tinyllama-1.1b runs=5 threads=2 k=3 draft_layers=2
prompt_len=128 new_tokens=64 ctx_len=512 prefill_len=128
work="${QEFF_BENCH_DIR:-${TMPDIR:-/tmp}/qeff-spec-bench}"
while [ $# -gt 0 ]; do
  case "$1" in
    --qeff) qeff="$2"; shift 2 ;;
    --shape) shape="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --k) k="$2"; shift 2 ;;
    --draft-layers) draft_layers="$2"; shift 2 ;;
    --prompt-len) prompt_len="$2"; shift 2 ;;
    --new-tokens) new_tokens="$2"; shift 2 ;;
    --ctx-len) ctx_len="$2"; shift 2 ;;
    --prefill-seq-len) prefill_len="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    -h|--help) bench_help "$0"; exit 0 ;;
    *) echo "spec-bench: unknown argument $1" >&2; exit 2 ;;
  esac
done
bench_shape spec-bench "$shape" "tinyllama-1.1b 162m tiny"
[ "$draft_layers" -ge 1 ] && [ "$draft_layers" -lt "$layers" ] ||
  { echo "spec-bench: --draft-layers must be in 1..$((layers - 1))" >&2; exit 2; }
[ "$((prompt_len + new_tokens + k + 1))" -le "$ctx_len" ] ||
  { echo "spec-bench: --prompt-len + --new-tokens + K + 1 must fit --ctx-len" >&2; exit 2; }
qeff="${qeff:-$repo/build/bin/qeff}"
bench_require_qeff spec-bench "$qeff"

ckpt="$work/ckpt-$shape" draft="$work/draft-$shape-l$draft_layers" exact="$work/exact-$shape-l$draft_layers"
mkdir -p "$work/raw"
bench_checkpoint "$ckpt" 2048
[ -f "$draft/config.json" ] ||
  python3 "$here/derive-checkpoint.py" "$ckpt" "$draft" --keep-layers "$draft_layers"
[ -f "$exact/config.json" ] ||
  python3 "$here/derive-checkpoint.py" "$ckpt" "$exact" --zero-residual-from "$draft_layers"

compile() { # checkpoint out [options]
  local src="$1" out="$2"; shift 2
  if [ ! -f "$out/qeff-manifest.json" ]; then
    echo "== qeff compile -> $out" >&2
    "$qeff" compile "$src" -o "$out" --ctx-len "$ctx_len" --prefill-seq-len "$prefill_len" \
      --batch-size 1 "$@" >/dev/null 2>"$out.log" || { cat "$out.log" >&2; exit 1; }
  fi
}
compile "$ckpt" "$work/art-plain-$shape"
compile "$ckpt" "$work/art-target-$shape-k$k" --num-speculative-tokens "$k"
compile "$exact" "$work/art-exact-$shape-l$draft_layers-k$k" --num-speculative-tokens "$k"
compile "$draft" "$work/art-draft-$shape-l$draft_layers"

ids=$(python3 -c "
block = [(i * 7919) % ($vocab - 300) + 300 for i in range(16)]
print(','.join(str(block[i % 16]) for i in range($prompt_len)))")
configs="plain lookup draft exact-draft"
command_of() { # config
  local common=(--token-ids "$ids" --max-new-tokens "$new_tokens" --json --threads "$threads"
                --prepack-weights)
  case "$1" in
    plain) echo "$qeff" run "$work/art-plain-$shape" ;;
    lookup) echo "$qeff" run "$work/art-target-$shape-k$k" --speculate prompt-lookup ;;
    draft) echo "$qeff" run "$work/art-target-$shape-k$k" --speculate "draft=$work/art-draft-$shape-l$draft_layers" ;;
    exact-draft) echo "$qeff" run "$work/art-exact-$shape-l$draft_layers-k$k" --speculate "draft=$work/art-draft-$shape-l$draft_layers" ;;
  esac
  echo "${common[@]}"
}

measure() { # config out
  local load0 load1
  load0=$(cut -d' ' -f1 /proc/loadavg)
  # shellcheck disable=SC2046 # the command's words (no spaces in the paths we build)
  setsid -w sh -c '{ echo -20 > /proc/self/autogroup; } 2>/dev/null; exec "$@"' sh \
    $(command_of "$1") >"$2.raw" 2>"$2.err"
  load1=$(cut -d' ' -f1 /proc/loadavg)
  python3 - "$2.raw" "$load0" "$load1" >"$2" <<'EOF'
import json, sys
raw, l0, l1 = sys.argv[1:4]
m = json.load(open(raw))["metrics"]
print(json.dumps({"decode": m["decode_tokens_per_s"], "prefill": m["prefill_tokens_per_s"],
                  "proposed": m.get("spec_proposed_tokens", 0), "accepted": m.get("spec_accepted_tokens", 0),
                  "load_before": float(l0), "load_after": float(l1)}))
EOF
}

echo "== machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for r in $(seq 1 "$runs"); do
  for c in $configs; do
    out="$work/raw/$c-r$r.json"
    measure "$c" "$out" || { echo "spec-bench: $c (run $r) failed:" >&2; cat "$out.err" >&2; exit 1; }
    echo "   $c run=$r: $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('decode %.2f tok/s, %d/%d accepted; load %.2f -> %.2f' % (d['decode'], d['accepted'], d['proposed'], d['load_before'], d['load_after']))" "$out")" >&2
  done
done

python3 - "$work" "$runs" "$configs" "$shape" "$k" "$draft_layers" "$prompt_len" "$new_tokens" "$threads" <<'EOF' | tee "$work/results.md"
import json, statistics, sys
work, runs, configs, shape, k, dl, plen, ntok, threads = sys.argv[1:10]
runs, configs = int(runs), configs.split()
def run(c, r):
    return json.load(open(f"{work}/raw/{c}-r{r}.json"))
print(f"shape {shape}, host device, {threads} threads; K = {k}, draft = first {dl} layers; "
      f"prompt {plen} tokens (16 ids repeated), {ntok} new tokens; median of {runs} interleaved runs")
print()
print("| configuration | decode tok/s | vs plain | accepted / proposed |")
print("|---|---:|---:|---:|")
plain = statistics.median(run("plain", r)["decode"] for r in range(1, runs + 1))
for c in configs:
    xs = [run(c, r) for r in range(1, runs + 1)]
    d = statistics.median(x["decode"] for x in xs)
    p, a = sum(x["proposed"] for x in xs), sum(x["accepted"] for x in xs)
    rate = f"{a}/{p} ({100.0 * a / p:.0f}%)" if p else "-"
    print(f"| {c} | {d:.2f} | {d / plain:.2f}x | {rate} |")
print()
print("Every run (decode tok/s; 1-min load before -> after):")
print()
for r in range(1, runs + 1):
    for c in configs:
        x = run(c, r)
        print(f"- r{r} {c}: {x['decode']:.2f}; accepted {x['accepted']}/{x['proposed']}; "
              f"load {x['load_before']:.2f} -> {x['load_after']:.2f}")
EOF
