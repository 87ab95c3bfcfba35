#!/usr/bin/env bash
# A GPT-OSS MXFP4 fixture (test/data/quant/*-mxfp4) against its
# dequantized-weights twin (test/tools/mxfp4-pack.py twin: transformers'
# dequantizer restated in numpy, F32 experts in the unquantized layout). The
# twin runs greedily on the host device from the source golden's prompts; its
# tokens and step logits become the reference (golden.json's tolerances), and
# the packed fixture is checked against it with run-golden.sh: `host` (host
# device and ONNX Runtime) or `device` (ONNX Runtime).
#   run-mxfp4-twin.sh <qeff> <node> <python3> <fixture> <source_golden> <work> <form> [compile options]
set -euo pipefail
qeff="$1" node="$2" python="$3" fixture="$4" golden="$5" work="$6" form="$7"
shift 7
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rm -rf "$work"
mkdir -p "$work"
"$python" "$here/../tools/mxfp4-pack.py" twin "$fixture" "$work/twin"
"$qeff" compile "$work/twin" -o "$work/twin-out" "$@" > /dev/null
prompts=$("$python" - "$golden/golden.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
print(' '.join('--token-ids ' + ','.join(str(t) for t, m in zip(ids, mask) if m)
               for ids, mask in zip(g['prompt_ids'], g['attention_mask'])))
PY
)
steps=$("$python" -c "import json,sys; print(json.load(open(sys.argv[1]))['N'])" "$golden/golden.json")
# shellcheck disable=SC2086
"$qeff" run "$work/twin-out" $prompts --max-new-tokens "$steps" --json --threads 1 \
  --save-logits "$work/twin.logits.safetensors" > "$work/twin.json"
# The packed fixture beside a golden made from the twin's run.
mkdir -p "$work/fixture"
cp "$fixture/config.json" "$fixture/generation_config.json" "$fixture/model.safetensors" "$work/fixture/"
"$python" - "$golden" "$work" <<'PY'
import json, struct, sys
golden, work = sys.argv[1], sys.argv[2]
def read(path):
    d = open(path, 'rb').read()
    n = struct.unpack('<Q', d[:8])[0]
    h = json.loads(d[8:8 + n])
    return {k: (v, d[8 + n + v['data_offsets'][0]:8 + n + v['data_offsets'][1]])
            for k, v in h.items() if k != '__metadata__'}
src = read(golden + '/golden.safetensors')
step = read(work + '/twin.logits.safetensors')['step_logits']
rows = json.load(open(work + '/twin.json'))['rows']
g = json.load(open(golden + '/golden.json'))
B, N, V = len(rows), g['N'], g['vocab_size']
tensors = {k: src[k] for k in ('input_ids', 'attention_mask', 'position_ids')}
tokens = b''.join(struct.pack('<%dq' % N, *r['generated_ids']) for r in rows)
tensors['greedy_tokens'] = ({'dtype': 'I64', 'shape': [B, N]}, tokens)
tensors['step_logits'] = ({'dtype': 'F32', 'shape': [B, N, V]}, step[1])
# Not read by the device and host forms; the loader expects the tensor.
S = src['input_ids'][0]['shape'][1]
tensors['prefill_logits'] = ({'dtype': 'F32', 'shape': [B, S, V]}, bytes(4 * B * S * V))
header, blobs, off = {}, [], 0
for k, (meta, raw) in tensors.items():
    header[k] = {'dtype': meta['dtype'], 'shape': meta['shape'], 'data_offsets': [off, off + len(raw)]}
    blobs.append(raw)
    off += len(raw)
h = json.dumps(header).encode()
h += b' ' * ((8 - len(h) % 8) % 8)
open(work + '/fixture/golden.safetensors', 'wb').write(struct.pack('<Q', len(h)) + h + b''.join(blobs))
json.dump({'name': g['name'] + '-mxfp4 vs its dequantized twin', 'batch': B, 'N': N,
           'tolerances': g['tolerances']}, open(work + '/fixture/golden.json', 'w'))
print('twin: %d rows, greedy %s' % (B, [r['generated_ids'] for r in rows]))
PY
exec "$here/run-golden.sh" "$qeff" "$node" "$work/fixture" "$work/out" "$form" "$@"
