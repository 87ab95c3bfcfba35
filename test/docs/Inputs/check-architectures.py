#!/usr/bin/env python3
"""The supported classes agree: importer registry, docs and goldens.

  check-architectures.py <import error> <docs/architectures.md> <golden_root>

<import error> is qeff-translate's message for an unsupported class, which
lists the registry's classes ("supported classes: A, B, ..."). Every one of
them must have a row in the class table of docs/architectures.md
("| `Class` (`model_type`) | ..."), and the table no other; and every one must
be checked against the real Hugging Face code: at least one golden of the
index (test/tools/golden_index.py) with that architecture. So adding a class
means its importer, its row and its golden, and this test names what is
missing.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tools"))
import golden_index  # noqa: E402


def main():
    error_file, doc, root = sys.argv[1:4]
    match = re.search(r"supported classes: (.*)$", open(error_file).read(), re.M)
    if not match:
        print("FAIL: the import error lists no supported classes")
        return 1
    registry = [c.strip() for c in match[1].split(",")]
    text = open(doc).read()
    # The rows of the "## Classes" section: "| `Class` (`model_type`) | ...".
    section = text.split("\n## Classes\n", 1)[-1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \(`\w+`\) \|", section, re.M)
    goldens = {model["architecture"] for _, model, _ in golden_index.goldens(root)}
    problems = []
    if registry != sorted(registry):
        problems.append("the error lists the classes unsorted")
    for c in registry:
        if c not in rows:
            problems.append(f"{c}: registered, but docs/architectures.md has no row")
        if c not in goldens:
            problems.append(f"{c}: registered, but no golden checks it")
    for c in rows:
        if c not in registry:
            problems.append(f"{c}: a row of docs/architectures.md, but not registered")
    if len(rows) != len(set(rows)):
        problems.append("docs/architectures.md has a class twice")
    for p in problems:
        print(f"FAIL: {p}")
    print(f"{len(registry)} classes registered, {len(rows)} rows, "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
