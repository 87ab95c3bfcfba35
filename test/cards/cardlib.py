"""Shared helpers of the model-card tests (test/cards): run qeff, build card
files from the goldens, compare artifact trees, check with messages."""
import json
import os
import shutil
import subprocess
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
GOLDEN = os.path.join(REPO, "test", "data", "golden")
STORIES = os.path.join(REPO, "test", "data", "models", "stories260K-hf")
STORIES_GGUF = os.path.join(REPO, "test", "data", "models", "stories260K-gguf", "stories260K.gguf")

# The summary.json entry of a card, exactly (issue 13).
SUMMARY_FIELDS = ["name", "status", "error", "artifact_dir", "content_key",
                  "cache_hit", "seconds", "output_bytes"]


class Checks:
    def __init__(self):
        self.passed = self.failed = 0

    def __call__(self, ok, what, detail=""):
        if ok:
            self.passed += 1
            print(f"ok   {what}")
        else:
            self.failed += 1
            print(f"FAIL {what}" + (f"\n     {detail}" if detail else ""))
        sys.stdout.flush()
        return ok

    def done(self):
        print(f"{self.passed} passed, {self.failed} failed")
        sys.exit(1 if self.failed else 0)


def workdir(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def run(qeff, args, env=None, timeout=600):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([qeff, *args], capture_output=True, text=True,
                          env=e, timeout=timeout)


def goldens():
    """The dev goldens (test/data/golden/index.json), by directory."""
    index = json.load(open(os.path.join(GOLDEN, "index.json")))
    return [m["dir"] for m in index["models"]]


def golden_rows(name):
    g = json.load(open(os.path.join(GOLDEN, name, "golden.json")))
    prompts = [[t for t, m in zip(ids, mask) if m == 1]
               for ids, mask in zip(g["prompt_ids"], g["attention_mask"])]
    return prompts, g["greedy_tokens"], g["N"]


def card_flags(card, defaults):
    """The `qeff compile` flags of a card's options (defaults overridden)."""
    opts = dict(defaults)
    if "batch_size" in card:
        opts.pop("full_batch_size", None)
    if "full_batch_size" in card:
        opts.pop("batch_size", None)
    opts.update({k: v for k, v in card.items() if k not in ("name", "model")})
    flags = []
    for key, value in sorted(opts.items()):
        flag = "--" + key.replace("_", "-")
        if value is True:
            flags.append(flag if key != "calibrate" else flag)
        elif value is False:
            continue
        elif isinstance(value, list):
            flags.append(flag + "=" + ",".join(value))
        else:
            flags.append(f"{flag}={value}")
    return flags


def tree(root):
    """{relative path: bytes} of every file under root."""
    files = {}
    for dirpath, _, names in os.walk(root):
        for n in names:
            p = os.path.join(dirpath, n)
            files[os.path.relpath(p, root)] = open(p, "rb").read()
    return files


def summary(out):
    return json.load(open(os.path.join(out, "summary.json")))["cards"]
