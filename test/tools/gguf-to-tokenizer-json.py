#!/usr/bin/env python3
"""Builds a Hugging Face tokenizer.json from a llama.cpp vocab GGUF.

Usage: gguf-to-tokenizer-json.py VOCAB.gguf --form gpt-neox > tokenizer.json

Only the byte-level BPE form of the GPT-NeoX tokenizer (EleutherAI
gpt-neox-20b, used by GPT-NeoX, Pythia, MPT, StableLM, OLMo) is written:
an NFC normalizer, a ByteLevel pre-tokenizer (no prefix space, GPT-2 regex),
the BPE model with the GGUF's tokens and merges, the ByteLevel decoder and
post-processor, and the GGUF's control tokens as special added tokens --
the shape of the tokenizer.json HF ships with those models. The GGUF reader
is our own (GGUF v2/v3: header, typed key/value pairs, no tensors needed).
"""
import argparse
import json
import struct
import sys

SCALARS = {0: '<B', 1: '<b', 2: '<H', 3: '<h', 4: '<I', 5: '<i', 6: '<f',
           7: '<?', 10: '<Q', 11: '<q', 12: '<d'}


class Reader:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, fmt):
        value = struct.unpack_from(fmt, self.data, self.pos)[0]
        self.pos += struct.calcsize(fmt)
        return value

    def string(self):
        n = self.take('<Q')
        raw = self.data[self.pos:self.pos + n]
        if len(raw) != n:
            raise ValueError('truncated string')
        self.pos += n
        return raw.decode('utf-8')

    def value(self, kind):
        if kind in SCALARS:
            return self.take(SCALARS[kind])
        if kind == 8:
            return self.string()
        if kind == 9:
            item, count = self.take('<I'), self.take('<Q')
            return [self.value(item) for _ in range(count)]
        raise ValueError('unknown GGUF value type %d' % kind)


def read_metadata(path):
    with open(path, 'rb') as f:
        data = f.read()
    r = Reader(data)
    if data[:4] != b'GGUF':
        raise ValueError('%s: not a GGUF file' % path)
    r.pos = 4
    version = r.take('<I')
    if version not in (2, 3):
        raise ValueError('%s: GGUF version %d' % (path, version))
    r.take('<Q')  # tensor count
    kv_count = r.take('<Q')
    meta = {}
    for _ in range(kv_count):
        key = r.string()
        meta[key] = r.value(r.take('<I'))
    return meta


def gpt_neox(meta):
    if meta.get('tokenizer.ggml.model') != 'gpt2':
        raise ValueError('not a byte-level BPE vocab')
    tokens = meta['tokenizer.ggml.tokens']
    types = meta.get('tokenizer.ggml.token_type', [1] * len(tokens))
    merges = meta['tokenizer.ggml.merges']
    # CONTROL tokens are HF's special added tokens; USER_DEFINED ones its
    # other added tokens (GPT-NeoX: the runs of 2-24 spaces, matched on the
    # normalized text before pre-tokenization), except the [PADn] fillers the
    # GGUF converter appends to round the vocabulary up, which HF never had.
    added, vocab = [], {}
    for i, (token, kind) in enumerate(zip(tokens, types)):
        if kind == 4 and token.startswith('[PAD'):
            continue
        if kind in (3, 4):
            added.append({'id': i, 'content': token, 'single_word': False,
                          'lstrip': False, 'rstrip': False,
                          'normalized': kind == 4, 'special': kind == 3})
        if kind != 4:
            vocab[token] = i
    byte_level = {'type': 'ByteLevel', 'add_prefix_space': False,
                  'trim_offsets': True, 'use_regex': True}
    return {
        'version': '1.0',
        'truncation': None,
        'padding': None,
        'added_tokens': added,
        'normalizer': {'type': 'NFC'},
        'pre_tokenizer': byte_level,
        'post_processor': dict(byte_level),
        'decoder': dict(byte_level),
        'model': {'type': 'BPE', 'dropout': None, 'unk_token': None,
                  'continuing_subword_prefix': None,
                  'end_of_word_suffix': None, 'fuse_unk': False,
                  'byte_fallback': False,
                  'vocab': vocab,
                  'merges': merges},
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('gguf')
    parser.add_argument('--form', choices=['gpt-neox'], required=True)
    args = parser.parse_args()
    out = gpt_neox(read_metadata(args.gguf))
    json.dump(out, sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write('\n')


if __name__ == '__main__':
    main()
