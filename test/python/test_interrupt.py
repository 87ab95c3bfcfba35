# ===- test/python/test_interrupt.py - Ctrl-C stops cleanly ----------------=== #
#
# Part of qeff. A real SIGINT (os.kill) during a compile, a generation and a
# stream: KeyboardInterrupt is raised in the caller, the compile leaves no
# output directory, and the session answers the next call as a fresh one.
#
# ===----------------------------------------------------------------------=== #

import os
import signal
import threading
import time

import pytest

import qeff
from conftest import STORIES


def test_interrupted_compile_leaves_nothing(work):
    out = os.path.join(work, "interrupted")
    stages = []

    def progress(stage, done, total):
        stages.append(stage)
        if stage == "device pipeline" and total == 0:
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        qeff.compile(STORIES, out, ctx_len=64, progress=progress)
    assert "export" not in stages
    assert not os.path.exists(out)
    # No staging directory left beside it (".interrupted.staging-<pid>-...").
    assert not [n for n in os.listdir(work) if n.startswith(".interrupted.")]
    # The next compile into the same place works.
    qeff.compile(STORIES, out, ctx_len=64)
    assert os.path.isfile(os.path.join(out, "model.onnx"))


def test_interrupt_during_export(work):
    out = os.path.join(work, "interrupted-export")

    def progress(stage, done, total):
        if stage == "export" and total and done < total:
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        qeff.compile(STORIES, out, ctx_len=64, progress=progress)
    assert not os.path.exists(out)


def test_callback_exception_cancels_the_compile(work):
    def progress(stage, done, total):
        raise ValueError("stop here")

    with pytest.raises(ValueError, match="stop here"):
        qeff.compile(STORIES, os.path.join(work, "cb"), ctx_len=64, progress=progress)
    assert not os.path.exists(os.path.join(work, "cb"))


def test_interrupted_generation(stories):
    session = qeff.Session(stories, threads=1)
    prompts = ["Once upon a time"] * 400
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            session.generate(prompts, max_new_tokens=200, ignore_eos=True)
    finally:
        timer.cancel()
    elapsed = time.monotonic() - start
    one = time.monotonic()
    fresh = qeff.Session(stories).generate("Once upon a time", max_new_tokens=50)
    one = time.monotonic() - one
    # Stopped early: far less than the 400 generations asked for.
    assert elapsed < 100 * max(one, 0.01), (elapsed, one)
    assert session.generate("Once upon a time", max_new_tokens=50).ids == fresh.ids


def test_interrupted_stream(stories):
    session = qeff.Session(stories)
    stream = session.generate("Once upon a time", max_new_tokens=200, ignore_eos=True,
                              stream=True)
    got = 0
    # The with block closes the stream wherever the interrupt lands (in
    # next() while waiting for a token, or in the loop body).
    with pytest.raises(KeyboardInterrupt), stream:
        for _ in stream:
            got += 1
            if got == 3:
                os.kill(os.getpid(), signal.SIGINT)
    assert 3 <= got < 200
    assert session.generate("Once upon a time", max_new_tokens=5).ids == \
        qeff.Session(stories).generate("Once upon a time", max_new_tokens=5).ids
