#!/usr/bin/env python3
"""Copies a GGUF file with `tokenizer.chat_template` set (stdlib only).

  gguf-set-chat-template.py IN.gguf OUT.gguf TEMPLATE

The metadata pair is appended (or replaces an existing one); the tensor infos
and data are kept, the data section re-aligned to `general.alignment` (32
unless set). For tests that need a GGUF file carrying a chat template.
"""
import struct
import sys

SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def main(src, dst, template):
    d = open(src, 'rb').read()
    version, n_tensors, n_kv = struct.unpack_from('<IQQ', d, 4)
    pos = 24

    def string_end(p):
        return p + 8 + struct.unpack_from('<Q', d, p)[0]

    def value_end(p, t):
        if t in SIZES:
            return p + SIZES[t]
        if t == 8:
            return string_end(p)
        et, count = struct.unpack_from('<IQ', d, p)
        p += 12
        for _ in range(count):
            p = value_end(p, et)
        return p

    pairs, alignment = [], 32
    for _ in range(n_kv):
        key_end = string_end(pos)
        key = d[pos + 8:key_end].decode()
        t = struct.unpack_from('<I', d, key_end)[0]
        end = value_end(key_end + 4, t)
        if key == 'general.alignment':
            alignment = struct.unpack_from('<I', d, key_end + 4)[0]
        if key != 'tokenizer.chat_template':
            pairs.append(d[pos:end])
        pos = end
    infos_start = pos
    for _ in range(n_tensors):
        pos = string_end(pos)
        dims = struct.unpack_from('<I', d, pos)[0]
        pos += 4 + 8 * dims + 4 + 8
    data_start = (pos + alignment - 1) // alignment * alignment
    key, value = b'tokenizer.chat_template', template.encode()
    pairs.append(struct.pack('<Q', len(key)) + key + struct.pack('<IQ', 8, len(value)) + value)
    head = d[:4] + struct.pack('<IQQ', version, n_tensors, len(pairs)) + b''.join(pairs)
    head += d[infos_start:pos]
    head += b'\0' * ((alignment - len(head) % alignment) % alignment)
    with open(dst, 'wb') as f:
        f.write(head + d[data_start:])


if __name__ == '__main__':
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
