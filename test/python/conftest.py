# ===- test/python/conftest.py - shared fixtures ---------------------------=== #
#
# Part of qeff. Paths come from ctest's environment (test/python/CMakeLists.txt).
#
# ===----------------------------------------------------------------------=== #

import json
import os
import shutil
import struct
import subprocess

import numpy as np
import pytest

SOURCE = os.environ["QEFF_SOURCE_DIR"]
QEFF = os.environ["QEFF_EXECUTABLE"]
STORIES = os.path.join(SOURCE, "test", "data", "models", "stories260K-hf")
GOLDEN_DIR = os.path.join(SOURCE, "test", "data", "golden")


@pytest.fixture(scope="session")
def work():
    path = os.environ["QEFF_TEST_WORK"]
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


@pytest.fixture(scope="session")
def stories(work):
    """stories260K compiled once for the session (ctx 256, prefill 32)."""
    import qeff
    return qeff.compile(STORIES, os.path.join(work, "stories"), ctx_len=256,
                        prefill_seq_len=32)


def qeff_run_json(artifact, *args):
    """`qeff run <artifact> --json ...` parsed."""
    out = subprocess.run([QEFF, "run", os.fspath(artifact), "--json", *args],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def goldens():
    """Every golden directory (as test/e2e globs them)."""
    return sorted(d for d in os.listdir(GOLDEN_DIR)
                  if os.path.isfile(os.path.join(GOLDEN_DIR, d, "golden.json")))


def golden_json(name):
    with open(os.path.join(GOLDEN_DIR, name, "golden.json"), encoding="utf-8") as f:
        return json.load(f)


def read_safetensors(path):
    """{name: numpy array} of a safetensors file (the format is a JSON
    header and raw little-endian tensors)."""
    dtypes = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32}
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        begin, end = t["data_offsets"]
        out[name] = np.frombuffer(data[begin:end], dtype=dtypes[t["dtype"]]).reshape(t["shape"])
    return out


def unpadded_prompts(g):
    """The golden's prompts without their left padding."""
    return [[t for t, m in zip(ids, mask) if m] for ids, mask in
            zip(g["prompt_ids"], g["attention_mask"])]
