# ===- test/python/test_leaks.py - no leaks over 1000 sessions -------------=== #
#
# Part of qeff. 1000 create/run/destroy cycles of a Session (and of its
# outputs and streams): the resident set stays bounded.
#
# ===----------------------------------------------------------------------=== #

import gc

import numpy as np

import qeff


def rss_kib():
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def cycle(artifact, i):
    session = qeff.Session(artifact, threads=1)
    out = session.run({"input_ids": np.full((1, 32), 5, np.int64),
                       "position_ids": np.arange(32, dtype=np.int64)[None]})
    assert out["logits"].shape[-1] == 512
    if i % 10 == 0:
        assert session.generate("Once", max_new_tokens=4).ids
        stream = session.generate("Once", max_new_tokens=50, stream=True)
        next(stream)
        stream.close()


def test_sessions_do_not_leak(stories):
    for i in range(100):
        cycle(stories, i)
    gc.collect()
    base = rss_kib()
    for i in range(900):
        cycle(stories, i)
    gc.collect()
    grown = rss_kib() - base
    # A leaked session holds its KV cache (256 slots) and weights: 900 of
    # them would be far over this.
    assert grown < 20 * 1024, f"RSS grew by {grown} KiB over 900 sessions"
