#!/usr/bin/env python3
"""On-device sampling against a golden's greedy tokens.

  golden-sampler.py <qeff> <golden_dir> <cache_dir>

`qeff infer --on-device-sampling --json` with the golden's rows (left
padding removed), greedy, with the compiled batch and with continuous
batching (--full-batch-size 2): every row's generated ids must equal the
golden's greedy tokens exactly.
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
    passed = failed = 0
    for extra in ([], ["--full-batch-size", "2"]):
        cmd = [qeff, "infer", golden_dir, "--on-device-sampling",
               "--prefill-seq-len", "4", "--max-new-tokens", str(n),
               "--temperature", "0", "--json", "--cache-dir", cache] + extra
        for p in prompts:
            cmd += ["--token-ids", ",".join(map(str, p))]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"FAIL: {' '.join(cmd)}\n{out.stderr}")
        rows = [r["generated_ids"] for r in json.loads(out.stdout)["rows"]]
        for i, (got, expected) in enumerate(zip(rows, want)):
            what = " ".join(extra) or "batch"
            if got == expected:
                passed += 1
                print(f"ok: {what}, row {i}")
            else:
                failed += 1
                print(f"FAIL: {what}, row {i}: got {got}, golden {expected}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
