#!/usr/bin/env python3
"""Runs a per-golden check on every golden of the index (test/tools/golden_index.py).

  golden-each.py <script> <qeff> <golden_root> <cache_dir> [script options]

For each golden the indexes list, runs `<script> <qeff> <golden_dir>
<cache_dir>/<n> [script options]` (golden-infer.py, golden-continuous.py) and
reads its closing "N passed, M failed" line. Prints "ok: <golden>" or the
script's output for a failing one, then "<goldens> passed, <failed> failed".
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
import golden_index  # noqa: E402


def main():
    script, qeff, root, cache = sys.argv[1:5]
    options = sys.argv[5:]
    passed = failed = 0
    for n, (rel, _, _) in enumerate(golden_index.goldens(root)):
        cmd = [sys.executable, os.path.join(HERE, script), qeff,
               os.path.join(root, rel), os.path.join(cache, str(n)), *options]
        out = subprocess.run(cmd, capture_output=True, text=True)
        summary = re.search(r"^(\d+) passed, (\d+) failed$", out.stdout, re.M)
        if out.returncode == 0 and summary and int(summary[1]) > 0 and \
                summary[2] == "0":
            passed += 1
            print(f"ok: {rel} ({summary[1]} checks)")
        else:
            failed += 1
            print(f"FAIL: {rel}\n{out.stdout}{out.stderr}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
