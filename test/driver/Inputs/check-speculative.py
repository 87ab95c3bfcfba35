#!/usr/bin/env python3
"""Checks `qeff run --json` output of speculative decoding against a golden.

  check-speculative.py <run.json> <golden.json> all|some

Every row's generated ids must be the golden's greedy tokens (rows after the
golden's repeat them in order); `all`: every proposed token was accepted,
`some`: some were rejected. Prints the decode steps.
"""
import json
import sys


def main():
    run = json.load(open(sys.argv[1]))
    golden = json.load(open(sys.argv[2]))
    want = golden["greedy_tokens"]
    for i, row in enumerate(run["rows"]):
        expected = want[i % len(want)]
        if row["generated_ids"] != expected:
            raise SystemExit(f"row {i}: got {row['generated_ids']}, golden {expected}")
    print("greedy tokens: golden")
    m = run["metrics"]
    proposed, accepted = m["spec_proposed_tokens"], m["spec_accepted_tokens"]
    if proposed <= 0:
        raise SystemExit(f"nothing was proposed: {m}")
    if sys.argv[3] == "all":
        if accepted != proposed:
            raise SystemExit(f"{accepted} of {proposed} accepted: {m}")
        print("accepted every proposed token")
    else:
        if accepted >= proposed:
            raise SystemExit(f"{accepted} of {proposed} accepted: {m}")
        print("rejected some proposed tokens")
    print(f"decode steps: {m['decode_steps']}")


if __name__ == "__main__":
    main()
