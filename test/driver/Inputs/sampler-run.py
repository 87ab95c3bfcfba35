#!/usr/bin/env python3
"""`qeff run` on an on-device-sampling artifact of LlamaForCausalLM.

  sampler-run.py <qeff> <artifact> <golden_dir>

Greedy on the golden's first row gives its greedy tokens; a seeded sampling
run (temperature, top-k, top-p, penalties) repeats itself with the same
seed and leaves the greedy path.
"""
import json
import subprocess
import sys


def run(qeff, artifact, prompt, *extra):
    cmd = [qeff, "run", artifact, "--token-ids", ",".join(map(str, prompt)),
           "--max-new-tokens", "12", "--json", *extra]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"FAIL: {' '.join(cmd)}\n{out.stderr}")
    return json.loads(out.stdout)["rows"][0]["generated_ids"]


def main():
    qeff, artifact, golden_dir = sys.argv[1:4]
    g = json.load(open(f"{golden_dir}/golden.json"))
    prompt = [t for t, m in zip(g["prompt_ids"][0], g["attention_mask"][0]) if m]
    greedy = run(qeff, artifact, prompt)
    print("greedy equals golden", greedy == g["greedy_tokens"][0])
    sampling = ["--temperature", "0.9", "--top-k", "50", "--top-p", "0.95",
                "--repetition-penalty", "1.2",
                "--seed", "5"]
    a = run(qeff, artifact, prompt, *sampling)
    b = run(qeff, artifact, prompt, *sampling)
    print("same seed equal", a == b, "differs from greedy", a != greedy)


if __name__ == "__main__":
    main()
