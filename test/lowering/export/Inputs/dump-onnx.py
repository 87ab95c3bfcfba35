#!/usr/bin/env python3
"""Prints an ONNX model in a stable, FileCheck-friendly text form and runs the
ONNX checker and strict shape inference on it (read-only). Needs Debian's python3-onnx.

  dump-onnx.py MODEL.onnx
"""
import sys

import onnx
from onnx import helper

DTYPES = {v: k for k, v in onnx.TensorProto.DataType.items()}


def shape_text(value_info):
    t = value_info.type.tensor_type
    dims = []
    for d in t.shape.dim:
        dims.append(d.dim_param if d.HasField("dim_param")
                    else str(d.dim_value) if d.HasField("dim_value") else "?")
    return f"{DTYPES[t.elem_type]}[{','.join(dims)}]"


def attr_text(a):
    v = helper.get_attribute_value(a)
    if a.type == onnx.AttributeProto.TENSOR:
        v = f"tensor<{DTYPES[v.data_type]}{list(v.dims)}>"
    elif isinstance(v, bytes):
        v = v.decode()
    elif isinstance(v, float):
        v = repr(v)
    return f"{a.name}={v}"


def main():
    path = sys.argv[1]
    model = onnx.load(path, load_external_data=False)
    print(f"ir_version {model.ir_version} producer {model.producer_name} "
          f"{model.producer_version}")
    for o in model.opset_import:
        print(f"opset '{o.domain}' {o.version}")
    for p in model.metadata_props:
        print(f"metadata {p.key}={p.value}")
    g = model.graph
    for i in g.input:
        print(f"input {i.name} {shape_text(i)}")
    for o in g.output:
        print(f"output {o.name} {shape_text(o)}")
    for t in g.initializer:
        ext = {e.key: e.value for e in t.external_data}
        where = (f"external {ext['location']} offset={ext['offset']} "
                 f"length={ext['length']}"
                 if t.data_location == onnx.TensorProto.EXTERNAL
                 else f"inline {len(t.raw_data)} bytes")
        print(f"initializer {t.name} {DTYPES[t.data_type]}{list(t.dims)} {where}")
    for n in g.node:
        dom = f" domain={n.domain}" if n.domain else ""
        attrs = " ".join(attr_text(a) for a in n.attribute)
        print(f"node {n.name} {n.op_type}{dom} ({', '.join(repr(x) for x in n.input)})"
              f" -> ({', '.join(n.output)}) {attrs}".rstrip())
    # Not check_model(path, full_check=True): in onnx 1.12 that writes the
    # inferred model back over `path`.
    onnx.checker.check_model(path)
    onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    print("checker: ok")


if __name__ == "__main__":
    main()
