#!/usr/bin/env python3
"""ctest cards/errors: a bad card file is refused before any work, naming the
card and the key; a broken checkpoint fails its own card only.

  - one card with an unknown option key and one with a broken checkpoint:
    exit 1 with the key's error, and nothing ran (no OUT, no cache);
  - with the key fixed: the broken card fails with its message, the others
    succeed, exit status 1, summary.json says which;
  - the other file errors `qeff models check` names (wrong types, duplicate
    names, bad names, values out of range, malformed JSON, ...).

  errors.py <qeff> <work_dir>
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
cache = os.path.join(work, "cache")
env = {"QEFF_CACHE_DIR": cache}

# A checkpoint whose weights are cut short.
broken = os.path.join(work, "broken-llama")
shutil.copytree(os.path.join(GOLDEN, "LlamaForCausalLM"), broken)
weights = os.path.join(broken, "model.safetensors")
os.truncate(weights, os.path.getsize(weights) // 2)

cards = {"defaults": {"ctx_len": 64, "prefill_seq_len": 16},
         "models": [{"name": "gpt2", "model": os.path.join(GOLDEN, "GPT2LMHeadModel")},
                    {"name": "broken", "model": "broken-llama"},
                    {"name": "stories", "model": STORIES, "ctx_len": 128, "ctx_lenn": 256},
                    {"name": "opt", "model": os.path.join(GOLDEN, "OPTForCausalLM")}]}
cards_file = os.path.join(work, "cards.json")
json.dump(cards, open(cards_file, "w"), indent=1)
out = os.path.join(work, "out")

r = run(qeff, ["compile", "--models", cards_file, "-o", out, "-j", "2"], env)
check(r.returncode == 1, "an unknown key: exit status 1", f"{r.returncode}\n{r.stdout}{r.stderr}")
check(f"{cards_file}: models[2] 'stories': unknown key 'ctx_lenn' (did you mean 'ctx_len'?)" in r.stderr,
      "the error names the file, the card and the key", r.stderr)
check(not os.path.exists(out) and not os.path.exists(cache), "nothing ran: no OUT, no cache entry",
      str(os.listdir(work)))

# Fixed: the broken checkpoint fails its card, the others finish.
del cards["models"][2]["ctx_lenn"]
json.dump(cards, open(cards_file, "w"), indent=1)
r = run(qeff, ["compile", "--models", cards_file, "-o", out, "-j", "2"], env)
check(r.returncode == 1, "one broken checkpoint: exit status 1", f"{r.returncode}\n{r.stdout}{r.stderr}")
s = {c["name"]: c for c in summary(out)}
check([c["name"] for c in summary(out)] == ["gpt2", "broken", "stories", "opt"], "summary.json lists all four cards")
check(all(s[n]["status"] == "ok" and os.path.exists(os.path.join(out, n, "qeff-manifest.json"))
          for n in ("gpt2", "stories", "opt")), "the other cards succeed", json.dumps(s))
b = s["broken"]
check(b["status"] == "failed" and "model.safetensors" in (b["error"] or "") and b["artifact_dir"] is None,
      f"summary.json: 'broken' failed, naming the file: {b['error']!r}", json.dumps(b))
check(not os.path.exists(os.path.join(out, "broken")), "no OUT/broken")
check("FAILED" in r.stdout and "broken" in r.stdout, "the table shows the failed card", r.stdout[-1500:])
check(not [n for n in os.listdir(cache) if "qeff-staging" in n], "no staging directory left in the cache")

# `qeff models check`: each problem named, all of them at once.
def models_check(text, name):
    path = os.path.join(work, name)
    open(path, "w").write(text if isinstance(text, str) else json.dumps(text))
    return path, run(qeff, ["models", "check", path])


cases = [
    ({"models": [{"name": "a", "model": "m", "ctx_len": "256"}]}, ["models[0] 'a': key 'ctx_len': must be an integer from 1 to 1048576, got \"256\""]),
    ({"models": [{"name": "a", "model": "m", "mxfp6": 1}]}, ["models[0] 'a': key 'mxfp6': must be true or false, got 1"]),
    ({"models": [{"name": "a", "model": "m"}, {"name": "A", "model": "n"}]}, ["models[1] 'A': key 'name': duplicate name; models[0] 'a' has it already"]),
    ({"models": [{"name": "../x", "model": "m"}]}, ["models[0]: key 'name': '../x' is not a valid card name"]),
    ({"models": [{"model": "m"}]}, ["models[0]: no 'name'"]),
    ({"models": [{"name": "a"}]}, ["models[0] 'a': no 'model'"]),
    ({"models": [{"name": "a", "model": "m", "batch_size": 2, "full_batch_size": 4}]}, ["keys 'batch_size' and 'full_batch_size' exclude each other"]),
    ({"models": [{"name": "a", "model": "m", "ctx-len": 64}]}, ["unknown key 'ctx-len' (options are spelled with underscores: 'ctx_len')"]),
    ({"models": [{"name": "a", "model": "m", "emit": "onnx"}]}, ["key 'emit': not a card option"]),
    ({"models": [{"name": "a", "model": "m", "weights_dtype": "f8"}]}, ["key 'weights_dtype': must be one of \"f32\", \"f16\", \"bf16\", got \"f8\""]),
    ({"models": [{"name": "a", "model": "m", "num_cores": 0}]}, ["key 'num_cores': must be an integer from 1 to 64, got 0"]),
    ({"defaults": {"name": "x", "ctx_len": -1}, "models": [{"name": "a", "model": "m"}]},
     ["defaults: key 'name': belongs in each card", "defaults: key 'ctx_len': must be an integer from 1"]),
    ({"models": []}, ["models: the list is empty"]),
    ({"model": []}, ["unknown top-level key 'model'", "no 'models' list"]),
    ('{"models": [', ["not valid JSON"]),
    ('{"models": [{"name": "a", "model": "m",\n "ctx_len": 1, "ctx_len": 2}]}', ["line 2: key 'ctx_len' appears twice in one object"]),
    ("[" * 100 + "]" * 100, ["JSON nested 100 levels deep"]),
]
for i, (text, wants) in enumerate(cases):
    path, r = models_check(text, f"bad-{i}.json")
    ok = r.returncode == 1 and all(w in r.stderr for w in wants) and "Stack dump" not in r.stderr
    check(ok, f"models check refuses: {wants[0]}", f"{r.returncode}\n{r.stderr}")

path, r = models_check(cards, "good.json")
check(r.returncode == 0 and "4 cards, no errors" in r.stdout, "models check accepts the fixed file", r.stdout + r.stderr)
check.done()
