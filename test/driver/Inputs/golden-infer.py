#!/usr/bin/env python3
"""`qeff infer --token-ids ... --json` against a golden's greedy tokens.

  golden-infer.py <qeff> <golden_dir> <cache_dir> [--rows-only] [-- <infer options>]

For every row of the golden (prompt ids without the left padding): one infer
per row alone, then one infer with all rows as one batch; the generated ids
must equal the golden's greedy tokens exactly. Also, a batch of three prompts
of different lengths with prefill chunks shorter than the longest prompt must
give each row the tokens it gets alone. Options after `--` go to every infer
(e.g. `--num-devices 2`).
"""
import json
import subprocess
import sys


EXTRA = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []


def infer(qeff, model, cache, prompts, n, extra=()):
    cmd = [qeff, "infer", model, "--max-new-tokens", str(n), "--temperature", "0",
           "--json", "--cache-dir", cache, *EXTRA, *extra]
    for p in prompts:
        cmd += ["--token-ids", ",".join(map(str, p))]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"FAIL: {' '.join(cmd)}\n{out.stderr}")
    return [row["generated_ids"] for row in json.loads(out.stdout)["rows"]]


def main():
    qeff, golden_dir, cache = sys.argv[1:4]
    own = sys.argv[4:sys.argv.index("--")] if "--" in sys.argv else sys.argv[4:]
    rows_only = "--rows-only" in own
    g = json.load(open(f"{golden_dir}/golden.json"))
    prompts = [[t for t, m in zip(ids, mask) if m == 1]
               for ids, mask in zip(g["prompt_ids"], g["attention_mask"])]
    want, n = g["greedy_tokens"], g["N"]
    passed = failed = 0

    def check(what, got, expected):
        nonlocal passed, failed
        if got == expected:
            passed += 1
            print(f"ok: {what}")
        else:
            failed += 1
            print(f"FAIL: {what}: got {got}, golden {expected}")

    for i, p in enumerate(prompts):
        check(f"row {i} alone", infer(qeff, golden_dir, cache, [p], n)[0], want[i])
    rows = infer(qeff, golden_dir, cache, prompts, n)
    for i in range(len(prompts)):
        check(f"row {i} in a batch of {len(prompts)}", rows[i], want[i])

    if rows_only:
        print(f"{passed} passed, {failed} failed")
        return 1 if failed else 0

    # Three prompts of different lengths, prefill chunks of 4 < longest.
    longest = max(prompts, key=len)
    three = [longest, longest[:5], longest[2:9]]
    alone = [infer(qeff, golden_dir, cache, [p], 8, ["--prefill-seq-len", "4"])[0]
             for p in three]
    together = infer(qeff, golden_dir, cache, three, 8, ["--prefill-seq-len", "4"])
    for i in range(3):
        check(f"prompt of {len(three[i])} tokens in a batch of 3 (prefill 4) "
              "== alone", together[i], alone[i])
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
