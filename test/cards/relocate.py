#!/usr/bin/env python3
"""ctest artifacts/relocatable (issue 15, item 3): an artifact directory moved
elsewhere still runs, and nothing in it names its old location.

  - `qeff compile` the bundled model (and a golden with fp32 scopes and
    --num-devices 2, whose qaic-compile.sh names node_precision.yaml and
    mdp.json); `qeff run` once;
  - move the directory (rename into another directory) and copy it (as to an
    AI 100 host): `qeff run` on both gives the same text;
  - no file of the moved directory contains the old absolute path; the
    manifest's qaic_compile arguments are relative;
  - qaic-compile.sh, run from another working directory with a fake
    qaic-compile named by QAIC_COMPILE, passes paths that exist (relative to
    the artifacts).

  relocate.py <qeff> <work_dir>
"""
import json
import os
import shutil
import stat
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from cardlib import GOLDEN, STORIES, Checks, run, workdir

qeff, work = sys.argv[1:3]
work = workdir(os.path.abspath(work))
check = Checks()

fake = os.path.join(work, "bin", "qaic-compile")
os.makedirs(os.path.dirname(fake))
open(fake, "w").write('#!/bin/sh\npwd > argv.txt\nfor a in "$@"; do echo "$a"; done >> argv.txt\n')
os.chmod(fake, 0o755)

for name, model, flags, prompt in [
        ("stories", STORIES, ["--ctx-len", "128"], ["--prompt", "Once upon a time", "--max-new-tokens", "24"]),
        ("llama", os.path.join(GOLDEN, "LlamaForCausalLM-fp16_overflow"),
         ["--ctx-len", "32", "--prefill-seq-len", "4", "--fp32-scopes=model.layers.0.mlp", "--num-devices", "2"],
         ["--token-ids", "29,116,179,239,230,210,206,103,129,171", "--max-new-tokens", "12"])]:
    old = os.path.join(work, "built", name)
    r = run(qeff, ["compile", model, "-o", old, *flags])
    if not check(r.returncode == 0, f"{name}: qeff compile", r.stderr):
        continue
    before = run(qeff, ["run", old, *prompt, "--temperature", "0"]) if name == "stories" else \
        run(qeff, ["run", old, *prompt, "--json"])
    moved = os.path.join(work, "elsewhere", "deeper", name)
    os.makedirs(os.path.dirname(moved), exist_ok=True)
    os.rename(old, moved)
    copied = os.path.join(work, "host", name)
    shutil.copytree(moved, copied)
    def output(res):  # the text, or the generated ids (the JSON has timings)
        if res.returncode != 0 or name == "stories":
            return res.stdout
        return [row["generated_ids"] for row in json.loads(res.stdout)["rows"]]
    for where, d in [("moved", moved), ("copied", copied)]:
        after = run(qeff, ["run", d, *prompt, "--temperature", "0"]) if name == "stories" else \
            run(qeff, ["run", d, *prompt, "--json"])
        check(after.returncode == 0 and output(after) == output(before) and output(before),
              f"{name}: qeff run on the {where} artifacts gives the same output", after.stderr[-1000:])
    named = []
    for dirpath, _, files in os.walk(moved):
        for f in files:
            data = open(os.path.join(dirpath, f), "rb").read()
            if old.encode() in data or work.encode() in data:
                named.append(f)
    check(not named, f"{name}: no file names the old location ({old})", str(named))
    manifest = json.load(open(os.path.join(moved, "qeff-manifest.json")))
    args = manifest["qaic_compile"]
    paths = [a.split("=", 1)[1] for a in args if "=" in a and a.split("=", 1)[0] in
             ("-m", "-network-specialization-config", "-custom-IO-list-file", "-node-precision-info",
              "-mdp-load-partition-config", "-aic-binary-dir")]
    check(paths and not any(os.path.isabs(p) for p in paths), f"{name}: the manifest's qaic_compile paths are relative",
          str(paths))
    script = open(os.path.join(copied, "qaic-compile.sh")).read()
    check("/" + os.path.basename(work) not in script and
          'compiler="${QAIC_COMPILE:-$sdk/exec/qaic-compile}"' in script,
          f"{name}: qaic-compile.sh has no absolute path", script)
    r = subprocess.run(["sh", os.path.join(copied, "qaic-compile.sh")], cwd=work, capture_output=True, text=True,
                       env=dict(os.environ, QAIC_COMPILE=fake,
                                QEFF_QAIC_SDK_DIR=os.path.join(work, "no-sdk")))
    argv = open(os.path.join(copied, "argv.txt")).read().split("\n") if r.returncode == 0 else []
    check(argv and argv[0] == copied, f"{name}: qaic-compile.sh runs in the artifact directory", r.stderr + str(argv))
    missing = [p for p in paths if p != "qpc" and not os.path.exists(os.path.join(copied, p))]
    want = {"-node-precision-info=node_precision.yaml", "-mdp-load-partition-config=mdp.json"} if name == "llama" else set()
    check(not missing and want <= set(argv), f"{name}: its paths exist relative to the artifacts {sorted(want)}",
          f"missing {missing}; argv {argv}")
check.done()
