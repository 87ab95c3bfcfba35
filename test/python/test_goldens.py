# ===- test/python/test_goldens.py - greedy tokens on every golden ---------=== #
#
# Part of qeff. Each golden (the real HF code's greedy tokens), compiled by
# qeff.compile as test/e2e compiles it (ctx 32 or what the prompts need,
# prefill chunks of 4, the golden's batch): Session.generate's tokens equal
# the golden's and `qeff run --json`'s, token for token.
#
# ===----------------------------------------------------------------------=== #

import os

import pytest

import qeff
from conftest import GOLDEN_DIR, golden_json, goldens, qeff_run_json, unpadded_prompts


@pytest.mark.parametrize("name", goldens())
def test_golden(name, work):
    g = golden_json(name)
    prompts = unpadded_prompts(g)
    # The context holds the longest prompt and its N tokens (32 unless a
    # golden's prompts are longer).
    ctx_len = max(32, max(map(len, prompts)) + g["N"])
    artifact = qeff.compile(os.path.join(GOLDEN_DIR, name), os.path.join(work, name),
                            ctx_len=ctx_len, prefill_seq_len=4, batch_size=g["batch"])
    rows = qeff.Session(artifact).generate(prompts, max_new_tokens=g["N"])
    args = []
    for p in prompts:
        args += ["--token-ids", ",".join(map(str, p))]
    cli = qeff_run_json(artifact, *args, "--max-new-tokens", str(g["N"]))["rows"]
    for row, want, c in zip(rows, g["greedy_tokens"], cli):
        assert row.ids == want, f"{name}: qeff.Session vs the golden"
        assert row.ids == c["generated_ids"], f"{name}: qeff.Session vs qeff run"
        assert row.text is None  # the goldens have no tokenizer
