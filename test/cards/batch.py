#!/usr/bin/env python3
"""ctest cards/batch: every dev golden plus the bundled model in one card file,
`qeff compile --models cards.json -o OUT -j 2` (issue 13, first acceptance test):

  - every card succeeds; summary.json has exactly the fields of the issue;
  - two cards resolving to the same cache key are built once;
  - every OUT/<name> is byte-identical to a single `qeff compile` of the card's
    options (run as flags);
  - `qeff infer OUT/<name> --token-ids ...` gives the golden's greedy tokens
    (the bundled model, as a checkpoint directory and as a GGUF file:
    llama2.c's published story);
  - a second run is all cache hits (from summary.json); both wall times are
    printed (recorded, not asserted).

  batch.py <qeff> <work_dir>
"""
import concurrent.futures
import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from cardlib import (GOLDEN, STORIES, STORIES_GGUF, SUMMARY_FIELDS, Checks, card_flags,
                     golden_rows, goldens, run, summary, tree, workdir)

qeff, work = sys.argv[1:3]
work = workdir(os.path.abspath(work))
check = Checks()
env = {"QEFF_CACHE_DIR": os.path.join(work, "cache")}

# Shapes for the goldens (prompts of 11 tokens + 12 generated); a few cards
# exercise other options. Model paths are relative to the card file.
defaults = {"ctx_len": 64, "prefill_seq_len": 16}
extra = {
    "LlamaForCausalLM": {"full_batch_size": 2},
    "MistralForCausalLM": {"batch_size": 2},
    "Qwen2ForCausalLM": {"outline_layers": True},
    "PhiForCausalLM": {"mxfp6": True, "num_cores": 4},
    "LlamaForCausalLM-fp16_overflow": {"calibrate": 2},
}
cards = []
for name in goldens():
    card = {"name": name, "model": os.path.relpath(os.path.join(GOLDEN, name), work)}
    card.update(extra.get(name, {}))
    cards.append(card)
# The same checkpoint and options under a second name: the same cache key.
cards.append({"name": "llama-again", "model": os.path.relpath(os.path.join(GOLDEN, "LlamaForCausalLM"), work),
              "full_batch_size": 2})
cards.append({"name": "stories260k", "model": os.path.relpath(STORIES, work), "ctx_len": 256,
              "prefill_seq_len": 32})
cards.append({"name": "stories260k-gguf", "model": os.path.relpath(STORIES_GGUF, work), "ctx_len": 256,
              "prefill_seq_len": 32})
cards_file = os.path.join(work, "cards.json")
json.dump({"defaults": defaults, "models": cards}, open(cards_file, "w"), indent=1)
out = os.path.join(work, "out")

started = time.monotonic()
r = run(qeff, ["compile", "--models", cards_file, "-o", out, "-j", "2"], env)
first = time.monotonic() - started
if not check(r.returncode == 0, f"qeff compile --models ({len(cards)} cards, -j 2) exits 0",
             r.stdout[-3000:] + r.stderr[-3000:]):
    check.done()
check(" 2 at a time" in r.stdout, "the batch says it runs 2 at a time", r.stdout[:300])
check(re.search(r"\] stories260k: (compiling|hashing)", r.stdout) is not None,
      "stdout is not a terminal: plain progress lines", r.stdout[:500])

s = summary(out)
check([c["name"] for c in s] == [c["name"] for c in cards], "summary.json lists every card in card order")
check(all(list(c.keys()) == SUMMARY_FIELDS for c in s), f"every entry has exactly the fields {SUMMARY_FIELDS}",
      json.dumps(s[0]))
bad = [c for c in s if c["status"] != "ok"]
check(not bad, "every card ok", json.dumps(bad)[:2000])
check(all(c["error"] is None and c["artifact_dir"] == c["name"] and re.fullmatch(r"[0-9a-f]{32}", c["content_key"])
          for c in s), "ok cards: error null, artifact_dir <name>, a 32-digit content key")
by = {c["name"]: c for c in s}
pair = [by["LlamaForCausalLM"], by["llama-again"]]
check(pair[0]["content_key"] == pair[1]["content_key"] and sorted(c["cache_hit"] for c in pair) == [False, True],
      "two cards with the same key: built once (one miss, one hit)", json.dumps(pair))
others = [c for c in s if c["name"] not in ("LlamaForCausalLM", "llama-again")]
check(not any(c["cache_hit"] for c in others), "a first run into a fresh cache: every other card a miss")
sizes_ok = all(c["output_bytes"] == sum(len(b) for b in tree(os.path.join(out, c["name"])).values()) for c in s)
check(sizes_ok, "output_bytes is the size of OUT/<name>")
check(not [n for n in os.listdir(out) if "qeff-staging" in n or "qeff-retired" in n], "no staging directory left in OUT")

# A single `qeff compile` per card, with the card's options as flags.
single = os.path.join(work, "single")


def compile_single(card):
    flags = card_flags(card, defaults)
    model = os.path.normpath(os.path.join(work, card["model"]))
    res = run(qeff, ["compile", model, "-o", os.path.join(single, card["name"]), *flags])
    return card["name"], flags, res


with concurrent.futures.ThreadPoolExecutor(2) as pool:
    for name, flags, res in pool.map(compile_single, cards):
        if res.returncode != 0:
            check(False, f"{name}: qeff compile {' '.join(flags)}", res.stderr[-1500:])
            continue
        a, b = tree(os.path.join(out, name)), tree(os.path.join(single, name))
        diff = sorted(set(a) ^ set(b)) + sorted(k for k in set(a) & set(b) if a[k] != b[k])
        check(not diff, f"{name}: OUT/{name} is byte-identical to qeff compile {' '.join(flags)}",
              f"differ: {diff[:10]}")


# Greedy tokens of every golden from its OUT/<name>.
def infer(card):
    name = card["name"]
    golden = os.path.basename(os.path.normpath(card["model"]))
    if name.startswith("stories260k"):
        res = run(qeff, ["infer", os.path.join(out, name), "--prompt", "", "--max-new-tokens", "200",
                         "--temperature", "0"])
        want = open(os.path.join(STORIES, "expected", "expected_runc_t0_n200.txt")).read()
        return name, res, [res.stdout], [want]
    prompts, greedy, n = golden_rows(golden)
    batched = "full_batch_size" in card or "batch_size" in card
    rows = range(len(prompts)) if batched else [0]
    args = ["infer", os.path.join(out, name), "--max-new-tokens", str(n), "--temperature", "0", "--json"]
    for i in rows:
        args += ["--token-ids", ",".join(map(str, prompts[i]))]
    res = run(qeff, args)
    got = [row["generated_ids"] for row in json.loads(res.stdout)["rows"]] if res.returncode == 0 else None
    return name, res, got, [greedy[i] for i in rows]


with concurrent.futures.ThreadPoolExecutor(2) as pool:
    for name, res, got, want in pool.map(infer, cards):
        check(res.returncode == 0 and got == want,
              f"{name}: qeff infer OUT/{name} gives the golden's greedy tokens ({len(want)} row(s))",
              f"got {got}, want {want}\n{res.stderr[-800:]}")

# Again: every card a cache hit.
started = time.monotonic()
r = run(qeff, ["compile", "--models", cards_file, "-o", out, "-j", "2"], env)
second = time.monotonic() - started
check(r.returncode == 0, "the second run exits 0", r.stderr[-2000:])
s2 = summary(out)
check(all(c["status"] == "ok" and c["cache_hit"] for c in s2), "the second run: every card a cache hit (summary.json)",
      json.dumps([c for c in s2 if not c["cache_hit"]])[:1000])
check([c["content_key"] for c in s2] == [c["content_key"] for c in s], "the same content keys")
print(f"recorded: first run {first:.2f} s, second run (all cache hits) {second:.2f} s "
      f"({100 * second / first:.0f}% of the first; {len(cards)} cards, load average {os.getloadavg()[0]:.1f})")
check.done()
