#!/usr/bin/env python3
"""Continuous batching against a golden's greedy tokens.

  golden-continuous.py <qeff> <golden_dir> <cache_dir>

`qeff infer --full-batch-size F --json` with the golden's rows (left padding
removed) followed by the same rows again, for F = 1 (every prompt waits for
a free cache row) and F = 2 (rows decode together while others are
prefilled into freed rows, with prefill chunks shorter than the prompts):
every row's generated ids must equal the golden's greedy tokens exactly.
"""
import json
import subprocess
import sys


def main():
    qeff, golden_dir, cache = sys.argv[1:4]
    g = json.load(open(f"{golden_dir}/golden.json"))
    prompts = [[t for t, m in zip(ids, mask) if m == 1]
               for ids, mask in zip(g["prompt_ids"], g["attention_mask"])]
    want, n = g["greedy_tokens"], g["N"]
    prompts, want = prompts + prompts[::-1], want + want[::-1]
    passed = failed = 0
    for full in (1, 2):
        cmd = [qeff, "infer", golden_dir, "--full-batch-size", str(full),
               "--prefill-seq-len", "4", "--max-new-tokens", str(n),
               "--temperature", "0", "--json", "--cache-dir", cache]
        for p in prompts:
            cmd += ["--token-ids", ",".join(map(str, p))]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"FAIL: {' '.join(cmd)}\n{out.stderr}")
        rows = [r["generated_ids"] for r in json.loads(out.stdout)["rows"]]
        for i, (got, expected) in enumerate(zip(rows, want)):
            if got == expected:
                passed += 1
                print(f"ok: full_batch_size {full}, row {i}")
            else:
                failed += 1
                print(f"FAIL: full_batch_size {full}, row {i}: got {got}, golden {expected}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
