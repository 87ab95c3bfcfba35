#!/usr/bin/env python3
"""Checks that every verifier message of a dialect is exercised by a test.

Usage: verifier-coverage.py <invalid.mlir>... <source.cpp>...

Every string literal in a diagnostic statement (emitOpError / emitError, up to
the end of the statement) that holds at least one word must appear inside an
`expected-error {{...}}` of the given .mlir files. Prints each uncovered
fragment with its source line and exits 1 if there is any.
"""
import re
import sys


def diagnostic_fragments(path):
    text = open(path, encoding="utf-8").read()
    for match in re.finditer(r"emit(?:Op)?Error\s*\(", text):
        end = text.find(";", match.end())
        statement = text[match.start():end]
        line = text.count("\n", 0, match.start()) + 1
        for literal in re.findall(r'"((?:[^"\\]|\\.)*)"', statement):
            fragment = literal.strip()
            if re.search(r"[A-Za-z]{2,}", fragment):
                yield line, fragment


def main():
    invalid = [a for a in sys.argv[1:] if a.endswith(".mlir")]
    sources = [a for a in sys.argv[1:] if not a.endswith(".mlir")]
    expected = " ".join(
        " ".join(re.findall(r"expected-error[^{]*\{\{(.*?)\}\}",
                            open(path, encoding="utf-8").read()))
        for path in invalid)
    missing = []
    total = 0
    for source in sources:
        for line, fragment in diagnostic_fragments(source):
            total += 1
            if fragment not in expected:
                missing.append(f"{source}:{line}: untested message: \"{fragment}\"")
    for m in missing:
        print(m)
    print(f"{total - len(missing)} of {total} verifier message fragments tested")
    return 1 if missing or total == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
