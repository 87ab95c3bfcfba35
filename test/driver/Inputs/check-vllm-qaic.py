#!/usr/bin/env python3
"""The I/O contract of vLLM's qaic plugin (qualcomm/vllm-qaic) on a qeff
artifact compiled for continuous batching, checked from its qeff-manifest.json.

  check-vllm-qaic.py <artifact_dir> <full_batch_size> <prefill_seq_len> <ctx_len>

What the plugin feeds and reads (vllm_qaic/model_loader/qaic.py, QaicCausalLM;
its session vllm_qaic/model_loader/qaic_session_np.py), with a precompiled QPC
(VLLM_QAIC_QPC_PATH, a directory holding programqpc.bin):
  - prefill: input_ids and position_ids [1, prefill_seq_len] int64 (padding
    -1), batch_index [1, 1] int64; logits read as [1, 1, vocab];
  - decode: input_ids and position_ids [max_num_seqs, 1] int64 (idle lanes
    -1), batch_index [max_num_seqs, 1] int64 (idle lanes -1); logits
    [max_num_seqs, 1, vocab] (3 dimensions: get_logits_ndim);
  - nothing else is fed: the KV cache (past_* inputs, *_RetainedState
    outputs) stays on the card;
  - the QPC's shapes come from the specializations: a prefill one with
    seq_len = prefill_seq_len (--long-prefill-token-threshold) and batch 1,
    a decode one with seq_len 1 and batch max_num_seqs = full_batch_size;
    ctx_len = --max-model-len.
Prints "vllm-qaic contract: ok" or the first violation (exit 1).
"""
import json
import os
import sys


def fail(message):
    print(f"vllm-qaic contract: {message}", file=sys.stderr)
    sys.exit(1)


def main():
    out, full, prefill, ctx = sys.argv[1], *map(int, sys.argv[2:5])
    manifest = json.load(open(os.path.join(out, "qeff-manifest.json")))
    config = json.load(open(os.path.join(out, "config.json")))
    vocab = config.get("vocab_size")
    inputs = {t["name"]: t for t in manifest["inputs"]}
    outputs = {t["name"]: t for t in manifest["outputs"]}

    fed = {"input_ids": ["batch_size", "seq_len"], "position_ids": ["batch_size", "seq_len"],
           "batch_index": ["batch_size", 1]}
    for name, shape in fed.items():
        if name not in inputs:
            fail(f"no {name} input (compile with --full-batch-size)")
        if inputs[name]["dtype"] != "int64":
            fail(f"{name} is {inputs[name]['dtype']}, the plugin feeds int64")
        if inputs[name]["shape"] != shape:
            fail(f"{name} has the shape {inputs[name]['shape']}, expected {shape}")
    for name, t in inputs.items():
        if name in fed:
            continue
        if not name.startswith("past_"):
            fail(f"input {name} is neither fed by the plugin nor retained state")
        shape = t["shape"]
        if len(shape) != 4 or shape[0] != "full_batch_size" or not (
                shape[2] == "ctx_len" or isinstance(shape[2], int)):
            fail(f"{name} has the shape {t['shape']}, expected [full_batch_size, heads, slots, head_dim]")
        if name + "_RetainedState" not in outputs:
            fail(f"{name} has no {name}_RetainedState output")
    for name, t in outputs.items():
        if name == "logits" or name.endswith("_RetainedState"):
            continue
        fail(f"output {name} is neither logits nor retained state")
    logits = outputs.get("logits")
    if not logits:
        fail("no logits output")
    if logits["dtype"] != "float32":
        fail(f"logits are {logits['dtype']}")
    if len(logits["shape"]) != 3 or logits["shape"][:2] != ["batch_size", 1] or logits["shape"][2] != vocab:
        fail(f"logits have the shape {logits['shape']}, expected [batch_size, 1, {vocab}]")

    specs = {s["name"]: {k: int(v) for k, v in s["symbols"].items()} for s in manifest["specializations"]}
    want = {"Prefill": {"batch_size": 1, "seq_len": prefill, "ctx_len": ctx, "full_batch_size": full},
            "Decode": {"batch_size": full, "seq_len": 1, "ctx_len": ctx, "full_batch_size": full}}
    for phase, symbols in want.items():
        if specs.get(phase) != symbols:
            fail(f"the {phase} specialization is {specs.get(phase)}, expected {symbols}")
        # Per phase, what the plugin allocates for logits and feeds.
        bound = lambda shape: [symbols.get(d, d) if isinstance(d, str) else d for d in shape]
        lanes = 1 if phase == "Prefill" else full
        if bound(logits["shape"]) != [lanes, 1, vocab]:
            fail(f"{phase} logits are {bound(logits['shape'])}, the plugin reads [{lanes}, 1, {vocab}]")
        seq = prefill if phase == "Prefill" else 1
        if bound(inputs["input_ids"]["shape"]) != [lanes, seq]:
            fail(f"{phase} input_ids are {bound(inputs['input_ids']['shape'])}, the plugin feeds [{lanes}, {seq}]")
        if bound(inputs["batch_index"]["shape"]) != [lanes, 1]:
            fail(f"{phase} batch_index is {bound(inputs['batch_index']['shape'])}")
        for name, t in inputs.items():
            if name.startswith("past_") and bound(t["shape"])[0] != full:
                fail(f"{phase}: {name} holds {bound(t['shape'])[0]} rows, not {full}")
    if not os.path.isfile(os.path.join(out, "tokenizer.json")) and not os.path.isfile(
            os.path.join(out, "tokenizer.model")):
        fail("no tokenizer next to the artifact (vLLM loads it from the model directory)")
    print("vllm-qaic contract: ok")


if __name__ == "__main__":
    main()
