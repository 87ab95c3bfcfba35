#!/usr/bin/env python3
"""Speculative decoding against a golden's greedy tokens.

  golden-speculative.py <qeff> <golden_dir> <cache_dir> [qeff infer options]

`qeff infer --num-speculative-tokens 1,3 --speculate prompt-lookup --json`
(prefill chunks of 4) with the golden's rows (left padding removed), as one
compiled batch, and with continuous batching over 1 and 2 cache rows (the
rows followed by the same rows again): every row's generated ids must equal
the golden's greedy tokens exactly. Prints the proposed and accepted token
counts (prompt lookup on random prompts proposes little and is often wrong,
which exercises rejection).
"""
import json
import subprocess
import sys


def main():
    qeff, golden_dir, cache = sys.argv[1:4]
    extra = sys.argv[4:]
    g = json.load(open(f"{golden_dir}/golden.json"))
    prompts = [[t for t, m in zip(ids, mask) if m == 1]
               for ids, mask in zip(g["prompt_ids"], g["attention_mask"])]
    want, n = g["greedy_tokens"], g["N"]
    passed = failed = proposed = accepted = 0
    for mode in ("batch", "full 1", "full 2"):
        rows, expected = prompts, want
        cmd = [qeff, "infer", golden_dir, "--num-speculative-tokens", "1,3",
               "--speculate", "prompt-lookup", "--prefill-seq-len", "4",
               "--max-new-tokens", str(n), "--temperature", "0", "--json",
               "--cache-dir", cache] + extra
        if mode != "batch":
            cmd += ["--full-batch-size", mode.split()[1]]
            rows, expected = prompts + prompts[::-1], want + want[::-1]
        for p in rows:
            cmd += ["--token-ids", ",".join(map(str, p))]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"FAIL: {' '.join(cmd)}\n{out.stderr}")
        result = json.loads(out.stdout)
        proposed += result["metrics"]["spec_proposed_tokens"]
        accepted += result["metrics"]["spec_accepted_tokens"]
        got = [r["generated_ids"] for r in result["rows"]]
        ok = [g == e for g, e in zip(got, expected)]
        passed, failed = passed + sum(ok), failed + ok.count(False)
        for i, good in enumerate(ok):
            print(f"ok: {mode}, row {i}" if good else
                  f"FAIL: {mode}, row {i}: got {got[i]}, golden {expected[i]}")
    print(f"speculation: {accepted} of {proposed} proposed tokens accepted")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
