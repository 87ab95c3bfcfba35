#!/usr/bin/env python3
"""ctest cards/sigint: SIGINT in the middle of `qeff compile --models`.

Cards: a tiny golden (finishes first), a synthetic 74M-parameter Llama
(test/bench/make-synthetic-checkpoint.py --shape small, interrupted while it
compiles), another tiny golden (not started yet; -j 1). After the SIGINT:
exit status 130, the finished card's OUT/<name> is complete, nothing of the
others exists (no OUT/<name>, no hidden staging directory in OUT or in the
cache, no cache entry), summary.json is not written. The same command again
completes every card (the finished one a cache hit).

  sigint.py <qeff> <work_dir>
"""
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from cardlib import GOLDEN, REPO, Checks, run, summary, workdir

qeff, work = sys.argv[1:3]
work = workdir(os.path.abspath(work))
check = Checks()
cache = os.path.join(work, "cache")
env = dict(os.environ, QEFF_CACHE_DIR=cache)

big = os.path.join(work, "synthetic")
subprocess.run(["/usr/bin/python3", os.path.join(REPO, "test", "bench", "make-synthetic-checkpoint.py"),
                big, "--shape", "small", "--seed", "1"], check=True, capture_output=True)
cards = {"defaults": {"ctx_len": 64, "prefill_seq_len": 16},
         "models": [{"name": "first", "model": os.path.join(GOLDEN, "GPT2LMHeadModel")},
                    {"name": "big", "model": big, "outline_layers": "off"},
                    {"name": "last", "model": os.path.join(GOLDEN, "OPTForCausalLM")}]}
cards_file = os.path.join(work, "cards.json")
json.dump(cards, open(cards_file, "w"))
out = os.path.join(work, "out")

proc = subprocess.Popen([qeff, "compile", "--models", cards_file, "-o", out, "-j", "1"], env=env,
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
lines = []
deadline = time.monotonic() + 300
for line in proc.stdout:
    lines.append(line)
    if "] big: compiling" in line:
        proc.send_signal(signal.SIGINT)
        break
    if time.monotonic() > deadline:
        break
rest, err = proc.communicate(timeout=120)
log = "".join(lines) + rest + err
check(proc.returncode == 130, f"SIGINT while 'big' compiles: exit status 130 (got {proc.returncode})", log)
check("SIGINT: stopped 1 running compile(s); 1 of 3 cards had finished" in err, "it says what it stopped", err)
check(os.path.exists(os.path.join(out, "first", "qeff-manifest.json")), "the finished card stays complete")
left = sorted(os.listdir(out))
check(left == [".summaries", "first"], "nothing else in OUT (no OUT/big, no OUT/last, no staging)", str(left))
check(sorted(os.listdir(os.path.join(out, ".summaries"))) == ["first.json"], "only the finished card's summary")
entries = [n for n in os.listdir(cache) if not n.startswith(".")]
hidden = [n for n in os.listdir(cache) if n.startswith(".") and not n.endswith(".lock")]
check(len(entries) == 1 and not hidden, "the cache holds the finished card's entry only, no staging",
      str(os.listdir(cache)))

r = run(qeff, ["compile", "--models", cards_file, "-o", out, "-j", "1"], {"QEFF_CACHE_DIR": cache})
check(r.returncode == 0, "the same command again completes", r.stdout[-2000:] + r.stderr[-2000:])
if r.returncode == 0:
    s = {c["name"]: c for c in summary(out)}
    check(all(c["status"] == "ok" for c in s.values()) and s["first"]["cache_hit"]
          and not s["big"]["cache_hit"], "every card ok; the finished one a cache hit", json.dumps(s))
check.done()
