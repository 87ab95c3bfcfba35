#!/usr/bin/env python3
"""qeff eval on a golden (test/e2e/CMakeLists.txt, docs/numerics.md).

The golden's full_input_ids rows (valid tokens only) are scored by
`qeff eval --numerics fp32,fp16+mxfp6+mxint8-kv --json` on an artifact
compiled for them; the fp32 perplexity must reproduce the one computed here,
in float64, from golden.safetensors' full_logits (HF's no-cache forward over
the same tokens) to 1e-5 relative, and the MX mode must report its top-1
agreement and KL against fp32 and quantize exactly the weights the
manifest's MX report (`qeff compile --report-mx`) says are compressed. Prints one JSON line for docs/numerics.md.

usage: eval-golden.py QEFF GOLDEN_DIR WORK_DIR
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys

import numpy as np


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    kinds = {"F32": np.float32, "I64": np.int64}
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        out[name] = np.frombuffer(data[a:b], dtype=kinds[info["dtype"]]).reshape(info["shape"])
    return out


def main():
    qeff, golden, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    meta = json.load(open(os.path.join(golden, "golden.json")))
    t = read_safetensors(os.path.join(golden, "golden.safetensors"))
    ids, mask, logits = t["full_input_ids"], t["full_attention_mask"], t["full_logits"]
    # dynamic and longrope frequencies depend on the longest position a
    # forward sees, so HF's one forward over the whole row (full_logits)
    # differs from its cached generate, which qeff follows (as its greedy e2e
    # tests check): for these the reference is the cached path's logits, the
    # prompt forward's then each decode step's.
    config = json.load(open(os.path.join(golden, "config.json")))
    scaling = config.get("rope_scaling") or {}
    cached_path = (scaling.get("rope_type") or scaling.get("type")) in ("dynamic", "longrope")
    rows, nll, count = [], 0.0, 0
    for b in range(ids.shape[0]):
        valid = mask[b] == 1
        row, lg = ids[b][valid], logits[b][valid].astype(np.float64)
        if cached_path:
            prompt = t["prefill_logits"][b][t["attention_mask"][b] == 1]
            lg = np.concatenate([prompt[:-1], t["step_logits"][b]]).astype(np.float64)
            assert len(lg) == len(row) - 1, (len(lg), len(row))
            lg = np.concatenate([lg, lg[-1:]])  # the last row is never scored
        lse = np.log(np.exp(lg - lg.max(axis=1, keepdims=True)).sum(axis=1)) + lg.max(axis=1)
        nll += float(np.sum(lse[:-1] - lg[np.arange(len(row) - 1), row[1:]]))
        count += len(row) - 1
        rows.append(",".join(str(int(i)) for i in row))
    want = float(np.exp(nll / count))

    art = os.path.join(work, "artifact")
    # 32 positions, or more for the goldens whose rows are longer (the
    # rope-scaling ones go past their original context).
    ctx_len = max(32, -(-ids.shape[1] // 16) * 16)
    compile_cmd = [qeff, "compile", golden, "-o", art, "--ctx-len", str(ctx_len), "--prefill-seq-len",
                   "4", "--batch-size", str(meta["batch"])]
    # A golden that overflows fp16 runs fp16 modes with its fp32 islands,
    # as a device compile of it would.
    if not meta["fp16"]["finite"]:
        compile_cmd.append("--calibrate=4")
    subprocess.run(compile_cmd, check=True, stdout=subprocess.DEVNULL)
    cmd = [qeff, "eval", art, "--numerics", "fp32,fp16+mxfp6+mxint8-kv", "--json"]
    for r in rows:
        cmd += ["--token-ids", r]
    run = subprocess.run(cmd, check=True, capture_output=True, text=True,
                         env={**os.environ, "QEFF_HOST_MX_LOG": "1"})
    results = json.loads(run.stdout)["results"]
    # The weights the host quantized (QEFF_HOST_MX_LOG) are exactly those
    # `qeff compile --report-mx` says -mxfp6-matmul compresses.
    host = set(re.findall(r"^qeff host: mxfp6 '(.*)' blocks along axis", run.stderr, re.M))
    manifest = json.load(open(os.path.join(art, "qeff-manifest.json")))
    report = {t["name"] for t in manifest["mx"]["report"]["tensors"] if t["compressed"]}
    assert report, "the report compresses nothing"
    assert host == report, (f"host only: {sorted(host - report)}; "
                            f"report only: {sorted(report - host)}")
    assert [r["numerics"] for r in results] == ["fp32", "fp16+mxfp6+mxint8-kv"], results
    fp32, mx = results
    rel = abs(fp32["perplexity"] - want) / want
    assert fp32["tokens"] == count, (fp32["tokens"], count)
    assert rel <= 1e-5, f"fp32 perplexity {fp32['perplexity']} vs golden {want}: {rel:.3g} relative"
    assert fp32["top1_agreement"] is None and fp32["mean_kl"] is None
    assert mx["tokens"] == count
    assert 0.0 <= mx["top1_agreement"] <= 1.0
    assert 0.0 < mx["mean_kl"] <= mx["max_kl"], mx
    assert mx["target_ratio"] == 1.01
    print(json.dumps({"golden": meta["name"], "tokens": count, "golden_ppl": want,
                      "fp32_ppl": fp32["perplexity"], "fp32_rel_diff": rel,
                      "mx_ppl": mx["perplexity"], "mx_ratio": mx["perplexity_ratio"],
                      "top1_agreement": mx["top1_agreement"], "mean_kl": mx["mean_kl"],
                      "max_kl": mx["max_kl"]}))


if __name__ == "__main__":
    main()
