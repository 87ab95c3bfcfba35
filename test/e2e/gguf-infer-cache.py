#!/usr/bin/env python3
"""ctest e2e/gguf-infer-cache: `qeff infer model.gguf` compiles into the
artifact cache under a key that hashes the GGUF file itself (issue 28):

  - the first run compiles and generates llama2.c's published story (run.c,
    temperature 0, 200 tokens from BOS: the text of the HF twin's expected/);
  - the same file again is a cache hit (same key);
  - one byte of one weight changed (the file's last byte, inside the last
    tensor's data) is a miss under a new key: the metadata alone does not
    make the key (in this file the last bytes are an F32 norm weight, no
    padding);
  - a GGUF file is accepted where a checkpoint directory is (also by
    `qeff eval`, which scores a text with the file's tokenizer as the
    artifacts compiled from it do), and a path that is neither is refused
    naming it.

  gguf-infer-cache.py <qeff> <model.gguf> <expected.txt> <work_dir>
"""
import json
import os
import re
import shutil
import subprocess
import sys

qeff, source, expected_file, work = sys.argv[1:5]
expected = open(expected_file).read()
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
model = os.path.join(work, "model.gguf")
shutil.copyfile(source, model)
cache = os.path.join(work, "cache")
passed = failed = 0


def check(ok, what, detail=""):
    global passed, failed
    print(("ok   " if ok else "FAIL ") + what)
    passed += bool(ok)
    if not ok:
        failed += 1
        if detail:
            print("     " + detail.replace("\n", "\n     "))


def infer(path):
    r = subprocess.run([qeff, "infer", path, "--prompt", "", "--max-new-tokens", "200",
                        "--temperature", "0", "--cache-dir", cache, "--ctx-len", "256",
                        "--prefill-seq-len", "32"],
                       capture_output=True, text=True, timeout=600)
    key = re.search(r"(?:into|cached artifacts) (\S*/([0-9a-f]{32}))", r.stderr)
    if key:
        artifacts[key.group(2)] = key.group(1)
    return r, "cached artifacts" in r.stderr, key.group(2) if key else None


artifacts = {}


def perplexity(path):
    r = subprocess.run([qeff, "eval", path, "--text", text_file, "--json", "--cache-dir", cache],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        return None, r.stderr[-800:]
    try:
        return json.loads(r.stdout)["results"][0]["perplexity"], r.stdout[-400:]
    except (ValueError, KeyError, IndexError) as e:
        return None, f"{e}: {r.stdout[-400:]}"


r, hit, key = infer(model)
check(r.returncode == 0 and not hit and key, "first run compiles into the cache", r.stderr[-1500:])
check(r.stdout == expected, "the text is llama2.c's story", r.stdout[:300])
r, hit2, key2 = infer(model)
check(r.returncode == 0 and hit2 and key2 == key, "the same file again: a cache hit, same key",
      r.stderr[-800:])

text_file = os.path.join(work, "text.txt")
open(text_file, "w").write(expected[:400])
from_file, detail = perplexity(model)
from_artifacts, detail2 = perplexity(artifacts.get(key, model))
check(from_file is not None and from_artifacts is not None and from_file > 1 and
      abs(from_file - from_artifacts) <= 1e-4 * from_artifacts,
      "qeff eval model.gguf scores as the artifacts compiled from it do",
      f"{from_file} vs {from_artifacts}\n{detail}\n{detail2}")

with open(model, "r+b") as f:
    f.seek(-1, os.SEEK_END)
    last = f.read(1)
    f.seek(-1, os.SEEK_END)
    f.write(bytes([last[0] ^ 0x01]))
r, hit3, key3 = infer(model)
check(r.returncode == 0 and not hit3 and key3 and key3 != key,
      "one weight byte changed: a miss under a new key", f"key {key} -> {key3}\n" + r.stderr[-800:])

notes = os.path.join(work, "notes.txt")
open(notes, "w").write("not a model\n")
r = subprocess.run([qeff, "infer", notes, "--prompt", "", "--cache-dir", cache],
                   capture_output=True, text=True, timeout=60)
check(r.returncode != 0 and "notes.txt" in r.stderr and "Traceback" not in r.stderr,
      "a file that is not a GGUF is refused, naming it", r.stderr[-600:])

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
