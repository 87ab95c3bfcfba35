#!/usr/bin/env python3
"""Validates a `qeff compile` output directory against its own model.onnx.

  check-artifacts.py <out_dir>

Checks, with Debian's python3-onnx (independent of qeff's C++):
- model.onnx passes onnx.checker (with its external data) and shape inference;
- every symbolic dim of every graph input/output is bound, to a positive
  integer, by every specialization of specializations.json;
- the specializations give distinct input shapes;
- custom_io.yaml lists exactly the past_* inputs and *_RetainedState outputs,
  each once, with a known precision;
- every past_* input has a *_RetainedState output of the same type and shape;
- the manifest's inputs/outputs match the graph's.
Prints one line per check and exits 1 on the first failure.
"""
import json
import os
import re
import sys

import onnx
from onnx import shape_inference


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def dims(value_info):
    return [d.dim_param if d.dim_param else d.dim_value
            for d in value_info.type.tensor_type.shape.dim]


def main():
    out = sys.argv[1]
    model_path = os.path.join(out, "model.onnx")
    onnx.checker.check_model(model_path)
    model = onnx.load(model_path, load_external_data=False)
    shape_inference.infer_shapes(model, strict_mode=True)
    print("ok: model.onnx passes onnx.checker and strict shape inference")

    inputs = {i.name: i for i in model.graph.input}
    outputs = {o.name: o for o in model.graph.output}
    symbols = {d for v in list(inputs.values()) + list(outputs.values())
               for d in dims(v) if isinstance(d, str)}

    specs = json.load(open(os.path.join(out, "specializations.json")))["specializations"]
    if not specs:
        fail("specializations.json lists no specialization")
    seen = {}
    for spec in specs:
        bound = spec["symbols"]
        for s in symbols:
            if s not in bound:
                fail(f"specialization {spec['name']} does not bind '{s}'")
            if not re.fullmatch(r"[1-9][0-9]*", bound[s]):
                fail(f"specialization {spec['name']} binds '{s}' to {bound[s]!r}")
        key = tuple((n, tuple(int(bound[d]) if isinstance(d, str) else d
                              for d in dims(v))) for n, v in sorted(inputs.items()))
        if key in seen:
            fail(f"specializations {seen[key]} and {spec['name']} give the same input shapes")
        seen[key] = spec["name"]
    print(f"ok: {len(specs)} specializations bind {sorted(symbols)} and are distinguishable")

    text = open(os.path.join(out, "custom_io.yaml")).read()
    entries = re.findall(r"- IOName: (\S+)\s+Precision: (\S+)", text)
    names = [n for n, _ in entries]
    expected = sorted([n for n in inputs if n.startswith("past_")] +
                      [n for n in outputs if n.endswith("_RetainedState")])
    if sorted(names) != expected:
        fail(f"custom_io.yaml lists {sorted(names)}, the model has {expected}")
    for name, precision in entries:
        if precision not in ("float16", "mxint8"):
            fail(f"custom_io.yaml gives {name} the unknown precision {precision}")
    print(f"ok: custom_io.yaml lists the {len(names)} retained-state inputs and outputs")

    for name, value in inputs.items():
        if not name.startswith("past_"):
            continue
        retained = outputs.get(name + "_RetainedState")
        if retained is None:
            fail(f"input {name} has no {name}_RetainedState output")
        if retained.type != value.type:
            fail(f"{name} and its _RetainedState output differ in type/shape")
    print("ok: every past_* input has its _RetainedState output of the same type")

    manifest = json.load(open(os.path.join(out, "qeff-manifest.json")))
    if [i["name"] for i in manifest["inputs"]] != [i.name for i in model.graph.input]:
        fail("manifest inputs differ from the graph's")
    if [o["name"] for o in manifest["outputs"]] != [o.name for o in model.graph.output]:
        fail("manifest outputs differ from the graph's")
    for entry in manifest["inputs"]:
        if entry["shape"] != dims(inputs[entry["name"]]):
            fail(f"manifest shape of {entry['name']} is {entry['shape']}, "
                 f"the graph's {dims(inputs[entry['name']])}")
    print("ok: qeff-manifest.json describes the graph's inputs and outputs")


if __name__ == "__main__":
    main()
