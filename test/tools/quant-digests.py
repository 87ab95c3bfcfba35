#!/usr/bin/env python3
"""SHA-256 digests of the f32 tensors of a .safetensors file (stdlib only).

  quant-digests.py make REFERENCE.safetensors > dequantized.sha256.json
      One entry per tensor: {"shape": [...], "sha256": <of its raw f32 bytes>}.
  quant-digests.py check DUMP.safetensors dequantized.sha256.json
      Every tensor of the digest file must be in DUMP, F32, of the same shape
      and with the same digest (bit-identical values); prints one line per
      mismatch and a summary, exits 1 on any.

test/data/quant keeps the digests of each fixture's reference dequantized
weights instead of the weights themselves (see test/data/quant/SOURCE.md);
DUMP is what `qeff-translate --dump-hf-weights` writes.
"""
import hashlib
import json
import struct
import sys


def read(path):
    with open(path, 'rb') as f:
        data = f.read()
    (n,) = struct.unpack('<Q', data[:8])
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for name, entry in header.items():
        if name == '__metadata__':
            continue
        b, e = entry['data_offsets']
        out[name] = (entry['dtype'], entry['shape'], data[base + b:base + e])
    return out


def main():
    if len(sys.argv) == 3 and sys.argv[1] == 'make':
        tensors = read(sys.argv[2])
        digests = {}
        for name in sorted(tensors):
            dtype, shape, raw = tensors[name]
            if dtype != 'F32':
                sys.exit('%s: tensor %s is %s, not F32' % (sys.argv[2], name, dtype))
            digests[name] = {'shape': shape, 'sha256': hashlib.sha256(raw).hexdigest()}
        json.dump(digests, sys.stdout, indent=1, sort_keys=True)
        sys.stdout.write('\n')
        return
    if len(sys.argv) == 4 and sys.argv[1] == 'check':
        tensors = read(sys.argv[2])
        with open(sys.argv[3]) as f:
            digests = json.load(f)
        bad = 0
        for name, want in sorted(digests.items()):
            got = tensors.get(name)
            if got is None:
                print('MISSING %s' % name)
                bad += 1
            elif got[0] != 'F32' or got[1] != want['shape']:
                print('SHAPE %s: %s %s, expected F32 %s' % (name, got[0], got[1], want['shape']))
                bad += 1
            elif hashlib.sha256(got[2]).hexdigest() != want['sha256']:
                print('VALUES %s: not bit-identical to the reference' % name)
                bad += 1
        print('%d passed, %d failed' % (len(digests) - bad, bad))
        sys.exit(1 if bad else 0)
    sys.exit(__doc__)


if __name__ == '__main__':
    main()
