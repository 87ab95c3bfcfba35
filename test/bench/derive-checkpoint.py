#!/usr/bin/env python3
"""Derives a Llama-style checkpoint from another (test/bench/spec-bench.sh).

  derive-checkpoint.py SRC OUT [--keep-layers N] [--zero-residual-from N]

--keep-layers N: the first N decoder layers only (a draft of the same shape
family: same embeddings, norm and head, so the same vocabulary).
--zero-residual-from N: layers N and later keep their shapes but write zeros
into o_proj and down_proj, so they add nothing to the residual stream: the
model costs as much as SRC per token but computes what its first N layers
compute, i.e. exactly what `--keep-layers N` of it computes (a target whose
draft is always right, the upper bound of speculative decoding's speed-up).

Pure Python (SRC/model.safetensors, one file, as make-checkpoint.py writes
it); tensors are streamed in 64 MiB pieces.
"""
import argparse
import json
import os
import re
import struct

PIECE = 64 << 20


def main():
    p = argparse.ArgumentParser()
    p.add_argument("src")
    p.add_argument("out")
    p.add_argument("--keep-layers", type=int)
    p.add_argument("--zero-residual-from", type=int)
    a = p.parse_args()

    config = json.load(open(os.path.join(a.src, "config.json")))
    layers = config["num_hidden_layers"]
    for flag, value in (("--keep-layers", a.keep_layers),
                        ("--zero-residual-from", a.zero_residual_from)):
        if value is not None and not 1 <= value <= layers:
            p.error(f"{flag} must be in 1..{layers} (the source's layers)")
    src = os.path.join(a.src, "model.safetensors")
    if not os.path.exists(src):
        p.error(f"{src} is missing (sharded sources are not supported)")
    with open(src, "rb") as f:
        (size,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(size))
    base = 8 + size
    meta = header.pop("__metadata__", {"format": "pt"})

    def layer_of(name):
        m = re.match(r"model\.layers\.(\d+)\.", name)
        return int(m.group(1)) if m else None

    keep = [(name, info) for name, info in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0])
            if a.keep_layers is None or layer_of(name) is None or layer_of(name) < a.keep_layers]
    out_header, offset = {}, 0
    for name, info in keep:
        begin, end = info["data_offsets"]
        out_header[name] = {"dtype": info["dtype"], "shape": info["shape"],
                            "data_offsets": [offset, offset + end - begin]}
        offset += end - begin
    out_header["__metadata__"] = meta
    text = json.dumps(out_header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)

    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "model.safetensors")
    with open(src, "rb") as f, open(path + ".tmp", "wb") as g:
        g.write(struct.pack("<Q", len(text)))
        g.write(text)
        for name, info in keep:
            begin, end = info["data_offsets"]
            layer = layer_of(name)
            zero = (a.zero_residual_from is not None and layer is not None and
                    layer >= a.zero_residual_from and
                    (name.endswith("o_proj.weight") or name.endswith("down_proj.weight")))
            f.seek(base + begin)
            n = end - begin
            while n:
                k = min(n, PIECE)
                g.write(bytes(k) if zero else f.read(k))
                if zero:
                    f.seek(k, os.SEEK_CUR)
                n -= k
    os.replace(path + ".tmp", path)
    if a.keep_layers is not None:
        config["num_hidden_layers"] = a.keep_layers
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    for extra in ("generation_config.json", "tokenizer.json", "tokenizer_config.json"):
        if os.path.exists(os.path.join(a.src, extra)):
            with open(os.path.join(a.src, extra), "rb") as s, open(os.path.join(a.out, extra), "wb") as d:
                d.write(s.read())


if __name__ == "__main__":
    main()
