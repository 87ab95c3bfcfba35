#!/usr/bin/env python3
"""ctest cards/card-index: the Kubernetes Indexed Job's way equals one process.

`qeff compile --models cards.json --card-index i -o OUT2` for every i (as the
Job's pods run it, each its own process, one at a time), then
`qeff models summarize OUT2`, gives the summary.json of one
`qeff compile --models cards.json -o OUT1` (each with a fresh cache), minus the
timings. Also: an index out of range, a merge with a card missing, and a
damaged card summary are errors naming them.

  card-index.py <qeff> <work_dir>
"""
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(__file__))
from cardlib import GOLDEN, STORIES, Checks, run, summary, workdir

qeff, work = sys.argv[1:3]
work = workdir(os.path.abspath(work))
check = Checks()
cards = {"defaults": {"ctx_len": 64, "prefill_seq_len": 16},
         "models": [{"name": "gpt2", "model": os.path.join(GOLDEN, "GPT2LMHeadModel")},
                    {"name": "stories", "model": STORIES, "ctx_len": 128, "full_batch_size": 2},
                    {"name": "gpt2-again", "model": os.path.join(GOLDEN, "GPT2LMHeadModel")},
                    {"name": "broken", "model": "no-such-checkpoint"}]}
cards_file = os.path.join(work, "cards.json")
json.dump(cards, open(cards_file, "w"))
one, two = os.path.join(work, "one"), os.path.join(work, "two")

r = run(qeff, ["compile", "--models", cards_file, "-o", one, "-j", "2"],
        {"QEFF_CACHE_DIR": os.path.join(work, "cache1")})
check(r.returncode == 1, "one process: exit 1 (the card 'broken' fails)", r.stdout + r.stderr)
for i in range(len(cards["models"])):
    r = run(qeff, ["compile", "--models", cards_file, "--card-index", str(i), "-o", two],
            {"QEFF_CACHE_DIR": os.path.join(work, "cache2")})
    want = 1 if cards["models"][i]["name"] == "broken" else 0
    check(r.returncode == want, f"--card-index {i}: exit {want}", r.stdout + r.stderr)
    check(os.path.exists(os.path.join(two, ".summaries", cards["models"][i]["name"] + ".json")),
          f"--card-index {i}: its summary beside the artifacts")
check(not os.path.exists(os.path.join(two, "summary.json")), "a single card writes no summary.json")
r = run(qeff, ["models", "summarize", two])
check(r.returncode == 1 and "4 cards: 3 ok, 1 failed" in r.stdout, "qeff models summarize: exit 1, the table",
      r.stdout + r.stderr)


def timeless(cards):
    return [{k: v for k, v in c.items() if k != "seconds"} for c in cards]


a, b = summary(one), summary(two)
check(timeless(a) == timeless(b), "the merged summary equals the one-process summary.json minus timings",
      json.dumps(timeless(a)) + "\n     " + json.dumps(timeless(b)))
check(all(isinstance(c["seconds"], (int, float)) for c in b), "timings are numbers")
check("no-such-checkpoint" in (b[3]["error"] or ""), "the failed card's error names its checkpoint", json.dumps(b[3]))

r = run(qeff, ["compile", "--models", cards_file, "--card-index", "4", "-o", two])
check(r.returncode == 1 and "--card-index 4 is out of range" in r.stderr and "has 4 cards" in r.stderr,
      "--card-index out of range: an error", r.stderr)
r = run(qeff, ["compile", "--models", cards_file, "--ctx-len", "32", "-o", two])
check(r.returncode == 1 and "--ctx-len" in r.stderr, "a compile option beside --models: an error", r.stderr)

os.remove(os.path.join(two, ".summaries", "stories.json"))
r = run(qeff, ["models", "summarize", two])
check(r.returncode == 1 and "1 of 4 cards have no summary" in r.stderr and "card index 1" in r.stderr,
      "a card without a summary: the merge refuses, naming its index", r.stderr)
open(os.path.join(two, ".summaries", "stories.json"), "w").write('{"card_index": 1, "cards": ')
r = run(qeff, ["models", "summarize", two])
check(r.returncode == 1 and "stories.json: not valid JSON" in r.stderr, "a damaged summary: an error naming it",
      r.stderr)
check.done()
