# ===- test/python/test_run.py - Session.run against C++ and ONNX Runtime --=== #
#
# Part of qeff. The generation loop driven from Python through Session.run
# (prefill chunks with position -1 on padding, then one decode step per
# token, as runtime/generation does): its logits equal the C++ host device's
# (`qeff run --save-logits`) exactly, the golden's HF logits within the
# golden's fp32 tolerance, and ONNX Runtime's on the same feeds (one prefill
# step with explicit zero KV inputs). Feeds are converted only where their
# dtype must change; outputs are read-only and survive the next run.
#
# ===----------------------------------------------------------------------=== #

import json
import os
import subprocess

import numpy as np
import pytest

import qeff
from conftest import (GOLDEN_DIR, QEFF, golden_json, read_safetensors,
                      unpadded_prompts)

NAME = "LlamaForCausalLM"


@pytest.fixture(scope="module")
def golden(work):
    g = golden_json(NAME)
    artifact = qeff.compile(os.path.join(GOLDEN_DIR, NAME), os.path.join(work, NAME),
                            ctx_len=32, prefill_seq_len=4, batch_size=g["batch"])
    return g, artifact


def python_loop(session, prompts, tokens, P):
    """Step logits [rows, N, vocab] of a greedy run through Session.run."""
    B, N = len(prompts), len(tokens[0])
    first = [None] * B
    longest = max(map(len, prompts))
    for c in range((longest + P - 1) // P):
        ids = np.zeros((B, P), dtype=np.int64)
        pos = np.full((B, P), -1, dtype=np.int64)
        for b, p in enumerate(prompts):
            chunk = p[c * P:(c + 1) * P]
            ids[b, :len(chunk)] = chunk
            pos[b, :len(chunk)] = np.arange(c * P, c * P + len(chunk))
        logits = session.run({"input_ids": ids, "position_ids": pos})["logits"]
        for b, p in enumerate(prompts):
            if (len(p) - 1) // P == c:
                first[b] = logits[b, 0].copy()
    steps = [np.stack(first)]
    for k in range(1, N):
        ids = np.array([[t[k - 1]] for t in tokens], dtype=np.int64)
        pos = np.array([[len(p) + k - 1] for p in prompts], dtype=np.int64)
        steps.append(session.run({"input_ids": ids, "position_ids": pos})["logits"][:, 0])
    return np.stack(steps, axis=1)


def test_run_equals_cpp_host_and_golden(golden, work):
    g, artifact = golden
    prompts = unpadded_prompts(g)
    session = qeff.Session(artifact)
    got = python_loop(session, prompts, g["greedy_tokens"], 4)
    assert got.argmax(-1).tolist() == g["greedy_tokens"]

    saved = os.path.join(work, "cpp-logits.safetensors")
    args = [QEFF, "run", artifact.path, "--max-new-tokens", str(g["N"]), "--save-logits", saved]
    for p in prompts:
        args += ["--token-ids", ",".join(map(str, p))]
    subprocess.run(args, check=True, capture_output=True)
    cpp = read_safetensors(saved)["step_logits"]
    np.testing.assert_array_equal(got, cpp)

    hf = read_safetensors(os.path.join(GOLDEN_DIR, NAME, "golden.safetensors"))["step_logits"]
    np.testing.assert_allclose(got, hf, atol=1e-4, rtol=1e-4)


def write_safetensors(path, tensors):
    names = {np.dtype(np.float32): "F32", np.dtype(np.int64): "I64"}
    header, blobs, offset = {}, [], 0
    for name, a in tensors.items():
        a = np.ascontiguousarray(a)
        header[name] = {"dtype": names[a.dtype], "shape": list(a.shape),
                        "data_offsets": [offset, offset + a.nbytes]}
        blobs.append(a.tobytes())
        offset += a.nbytes
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text + b"".join(blobs))


def test_run_equals_onnx_runtime(golden, work):
    node, runner = os.environ.get("QEFF_NODE"), os.environ.get("QEFF_ORACLE_RUN")
    oracle = os.path.join(os.path.dirname(runner or ""), "node_modules", "onnxruntime-node")
    if not node or not runner or not os.path.isdir(oracle):
        pytest.skip("ONNX Runtime oracle not installed (scripts/setup-oracle.sh)")
    g, artifact = golden
    session = qeff.Session(artifact)
    ids = np.array([[5, 17, 99, 3], [7, 8, 0, 0]], dtype=np.int64)
    pos = np.array([[0, 1, 2, 3], [0, 1, -1, -1]], dtype=np.int64)
    feeds = {"input_ids": ids, "position_ids": pos}
    # Explicit zero KV inputs, shaped by the Prefill specialization.
    spec = dict(session.specializations)["Prefill"]
    for name, dtype, dims in session.inputs:
        if name.startswith("past_"):
            shape = [spec[d] if isinstance(d, str) else d for d in dims]
            feeds[name] = np.zeros(shape, dtype=dtype)
    got = session.run(feeds)["logits"]
    inputs, outputs = os.path.join(work, "ort-in.safetensors"), os.path.join(work, "ort-out.safetensors")
    write_safetensors(inputs, feeds)
    subprocess.run([node, runner, "--model", os.path.join(artifact.path, "model.onnx"),
                    "--inputs", inputs, "--outputs", outputs], check=True, capture_output=True)
    want = read_safetensors(outputs)["logits"]
    np.testing.assert_allclose(got, want, atol=1e-4, rtol=1e-4)


def test_feed_conversion_and_output_lifetime(golden):
    g, artifact = golden
    session = qeff.Session(artifact)
    ids = np.array([[5, 17, 99, 3], [7, 8, 0, 0]], dtype=np.int64)
    pos = np.array([[0, 1, 2, 3], [0, 1, -1, -1]], dtype=np.int64)
    first = session.run({"input_ids": ids, "position_ids": pos})["logits"]
    assert first.flags.writeable is False
    kept = first.copy()
    # int32 and Fortran-ordered feeds are converted (same values), a list too.
    session.reset()
    again = session.run({"input_ids": np.asfortranarray(ids.astype(np.int32)),
                         "position_ids": pos.tolist()})["logits"]
    # (Not bit-equal: the host device lays a weight out for its kernels on its
    # second use, and the packed kernel rounds differently.)
    np.testing.assert_allclose(again, kept, atol=1e-4, rtol=1e-4)
    # The earlier output is untouched by the later runs.
    session.run({"input_ids": ids[:, :1] + 1, "position_ids": np.array([[4], [2]])})
    np.testing.assert_array_equal(first, kept)
    # Retained state is readable on the host device, as a read-only copy.
    state = session.read_state("past_key.0")
    assert state.shape[0] == g["batch"] and state.flags.writeable is False
