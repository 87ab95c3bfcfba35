#!/usr/bin/env python3
"""The goldens of test/data/golden, as their index files list them.

  golden_index.py list <golden_root>    one golden directory per line
                                         (relative to <golden_root>)
  golden_index.py check <golden_root>   the indexes and the directories agree

test/data/golden/index.json lists the goldens made with the transformers
version of the main set; each transformers-<version>/index.json lists a set
made with another version, its directories below that folder. Every test that
means "every golden" (test/e2e/CMakeLists.txt, test/driver/infer-all-goldens.test)
reads the goldens from here, so a golden is added in one place: its index.

`check` fails when a directory holds a golden.json that no index lists, an
index entry has no golden.json, an entry's name or architecture differs from
its golden.json, or a file's size or sha256 differs from the index.
"""
import hashlib
import json
import os
import sys


def indexes(root):
    """(subdirectory, parsed index) for the main index and each versioned one."""
    found = [("", os.path.join(root, "index.json"))]
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name, "index.json")
        if name.startswith("transformers-") and os.path.isfile(path):
            found.append((name, path))
    return [(sub, json.load(open(path))) for sub, path in found]


def goldens(root):
    """[(relative dir, index entry, index transformers_version)]."""
    result = []
    for sub, index in indexes(root):
        for model in index["models"]:
            rel = os.path.join(sub, model["dir"]) if sub else model["dir"]
            result.append((rel, model, index.get("transformers_version")))
    return result


def check(root):
    problems = []
    listed = set()
    for rel, model, version in goldens(root):
        listed.add(rel)
        path = os.path.join(root, rel, "golden.json")
        if not os.path.isfile(path):
            problems.append(f"{rel}: listed in an index but has no golden.json")
            continue
        g = json.load(open(path))
        for key in ("name", "architecture"):
            if g.get(key) != model.get(key):
                problems.append(f"{rel}: golden.json {key} {g.get(key)!r}, "
                                f"index {model.get(key)!r}")
        if version and g.get("transformers_version") != version:
            problems.append(f"{rel}: golden.json transformers_version "
                            f"{g.get('transformers_version')!r}, index {version!r}")
        for name, want in model.get("files", {}).items():
            file = os.path.join(root, rel, name)
            if not os.path.isfile(file):
                problems.append(f"{rel}/{name}: missing")
                continue
            data = open(file, "rb").read()
            if len(data) != want["bytes"] or \
                    hashlib.sha256(data).hexdigest() != want["sha256"]:
                problems.append(f"{rel}/{name}: size or sha256 differs from the index")
    for dirpath, _, files in os.walk(root):
        if "golden.json" in files:
            rel = os.path.relpath(dirpath, root)
            if rel not in listed:
                problems.append(f"{rel}: has a golden.json but no index lists it")
    return problems


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("list", "check"):
        raise SystemExit(__doc__)
    root = sys.argv[2]
    if sys.argv[1] == "list":
        for rel, _, _ in goldens(root):
            print(rel)
        return 0
    problems = check(root)
    for p in problems:
        print(f"FAIL: {p}")
    print(f"{len(goldens(root))} goldens in {len(indexes(root))} indexes, "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
