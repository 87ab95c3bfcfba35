#!/usr/bin/env bash
# A GGUF file against its Hugging Face twin (the same weights as a checkpoint
# directory): both compiled with the same options and run greedily on the host
# device from the same token-id prompts; the generated ids must be equal and
# the logits every token was chosen from within 1e-4 (the GGUF's F16 weights
# widen exactly; only the un-permuted Q/K rows change the summation order).
#   run-gguf-twin.sh <qeff> <model.gguf> <hf_dir> <work_dir> <max_new_tokens> <ids>...
set -euo pipefail
qeff="$1" gguf="$2" hf="$3" work="$4" steps="$5"
shift 5
rm -rf "$work"
mkdir -p "$work"
prompts=()
for ids in "$@"; do prompts+=(--token-ids "$ids"); done
for side in gguf hf; do
  src="$gguf"
  [ "$side" = hf ] && src="$hf"
  "$qeff" compile "$src" -o "$work/$side" --ctx-len 256 --prefill-seq-len 16 \
    --batch-size "$#" > /dev/null
  "$qeff" run "$work/$side" "${prompts[@]}" --max-new-tokens "$steps" \
    --json --save-logits "$work/$side.logits.safetensors" > "$work/$side.json"
done
exec python3 - "$work" <<'PY'
import json, struct, sys
work = sys.argv[1]
def ids(side):
    return [row['generated_ids'] for row in json.load(open('%s/%s.json' % (work, side)))['rows']]
def logits(side):
    d = open('%s/%s.logits.safetensors' % (work, side), 'rb').read()
    n = struct.unpack('<Q', d[:8])[0]
    e = json.loads(d[8:8 + n])['step_logits']
    b, end = e['data_offsets']
    raw = d[8 + n + b:8 + n + end]
    return struct.unpack('<%df' % (len(raw) // 4), raw)
a, b = ids('gguf'), ids('hf')
la, lb = logits('gguf'), logits('hf')
worst = max(abs(x - y) for x, y in zip(la, lb)) if la else 0.0
ok = a == b and len(la) == len(lb) and worst <= 1e-4
print('GGUF vs HF twin: %d rows, %d tokens each, tokens %s, max |logit diff| %.3g' %
      (len(a), len(a[0]) if a else 0, 'equal' if a == b else 'DIFFER', worst))
if a != b:
    for r, (x, y) in enumerate(zip(a, b)):
        d = next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), None)
        print('row %d: first difference at token %s: %s vs %s' % (r, d, x[d:d+4] if d is not None else '', y[d:d+4] if d is not None else ''))
print('%d passed, %d failed' % ((1, 0) if ok else (0, 1)))
sys.exit(0 if ok else 1)
PY
