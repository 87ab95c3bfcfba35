# ===- test/python/test_errors.py - errors reach Python with their message -=== #
#
# Part of qeff. C++ errors raise qeff.Error (a RuntimeError) with the C++
# message naming the file, tensor or field; bad arguments raise ValueError or
# TypeError naming the keyword; nothing crashes or hangs.
#
# ===----------------------------------------------------------------------=== #

import json
import os
import shutil

import numpy as np
import pytest

import qeff
from conftest import STORIES


def test_missing_checkpoint(work):
    missing = os.path.join(work, "no-such-model")
    with pytest.raises(qeff.Error, match="no-such-model") as e:
        qeff.compile(missing, os.path.join(work, "out-missing"))
    assert isinstance(e.value, RuntimeError)
    assert not os.path.exists(os.path.join(work, "out-missing"))


def test_malformed_config_names_the_file_and_field(work):
    broken = os.path.join(work, "broken")
    shutil.copytree(STORIES, broken)
    with open(os.path.join(broken, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    config["hidden_size"] = "wide"
    with open(os.path.join(broken, "config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f)
    with pytest.raises(qeff.Error) as e:
        qeff.compile(broken, os.path.join(work, "out-broken"))
    assert "config.json" in str(e.value) and "hidden_size" in str(e.value)


def test_out_of_range_option(work):
    with pytest.raises(qeff.Error, match="--ctx-len 0 is out of range"):
        qeff.compile(STORIES, os.path.join(work, "out-range"), ctx_len=0)


def test_bad_keywords(work):
    with pytest.raises(TypeError, match="no_such_option"):
        qeff.compile(STORIES, os.path.join(work, "x"), no_such_option=1)
    with pytest.raises(ValueError, match="kv_window"):
        qeff.compile(STORIES, os.path.join(work, "x"), kv_window="sometimes")
    with pytest.raises(ValueError, match="emit"):
        qeff.compile(STORIES, os.path.join(work, "x"), emit="binary")
    with pytest.raises(qeff.Error, match="-aic-num-cores"):
        qeff.compile(STORIES, os.path.join(work, "x"), qaic_args=["-aic-num-cores=4"])


def test_session_errors(stories, work):
    with pytest.raises(qeff.Error, match="no-artifact"):
        qeff.Session(os.path.join(work, "no-artifact"))
    with pytest.raises(ValueError, match="device must be"):
        qeff.Session(stories, device="gpu")
    with pytest.raises(qeff.Error, match="bf16"):
        qeff.Session(stories, numerics="bf16")
    with pytest.raises(qeff.Error, match="mx-rounding"):
        qeff.Session(stories, numerics="fp16+mxfp6", mx_rounding="up")
    session = qeff.Session(stories)
    with pytest.raises(qeff.Error, match="nope"):
        session.run({"input_ids": np.zeros((1, 1), np.int64),
                     "position_ids": np.zeros((1, 1), np.int64),
                     "nope": np.zeros((1,), np.float32)})
    with pytest.raises(TypeError, match="input_ids.*float64.*int64"):
        session.run({"input_ids": np.zeros((1, 1)), "position_ids": np.zeros((1, 1), np.int64)})
    with pytest.raises(TypeError, match="feeds must be a dict"):
        session.run([np.zeros((1, 1), np.int64)])
    with pytest.raises(ValueError, match="max_new_tokens"):
        session.generate("Once", max_new_tokens=0)
    with pytest.raises(ValueError, match="top_p|top-p"):
        session.generate("Once", top_p=2.0)
    with pytest.raises(qeff.Error, match="empty"):
        session.generate([[]])
    with pytest.raises(TypeError, match="prompt"):
        session.generate(3.5)
    # The session still works after all of that.
    assert session.generate("Once", max_new_tokens=2).ids


def test_prompt_longer_than_the_context(work):
    small = qeff.compile(STORIES, os.path.join(work, "small"), ctx_len=16, prefill_seq_len=8)
    with pytest.raises(qeff.Error, match="larger --ctx-len"):
        qeff.Session(small).generate(list(range(3, 40)))


def test_text_prompt_without_tokenizer(work):
    golden = os.path.join(os.environ["QEFF_SOURCE_DIR"], "test", "data", "golden",
                          "LlamaForCausalLM")
    artifact = qeff.compile(golden, os.path.join(work, "llama"), ctx_len=32, prefill_seq_len=4)
    session = qeff.Session(artifact)
    with pytest.raises(qeff.Error, match="tokenizer"):
        session.generate("text")
    with pytest.raises(qeff.Error, match="tokenizer"):
        qeff.Tokenizer(golden)


def test_busy_session_refuses_instead_of_deadlocking(stories):
    session = qeff.Session(stories)
    stream = session.generate("Once upon a time", max_new_tokens=100, stream=True)
    next(stream)
    with pytest.raises(qeff.Error, match="busy"):
        session.run({"input_ids": np.zeros((1, 1), np.int64),
                     "position_ids": np.zeros((1, 1), np.int64)})
    with pytest.raises(qeff.Error, match="busy"):
        session.generate("Once", max_new_tokens=2)
    stream.close()
    assert session.generate("Once", max_new_tokens=2).ids


def test_chat_template_missing(stories):
    with pytest.raises(qeff.Error, match="template"):
        qeff.Tokenizer(STORIES).apply_chat_template([{"role": "user", "content": "hi"}])
