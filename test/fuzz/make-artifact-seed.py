#!/usr/bin/python3
"""Turns a qeff artifact directory into one ArtifactFuzzer input.

ArtifactFuzzer's input is model.onnx, optionally followed by "\\n----\\n" and
a specializations.json (test/fuzz/ArtifactFuzzer.cpp). The harness writes
only model.onnx, so the weights of model.onnx.data are moved into the model
(raw_data), and the artifact's specializations.json is appended.

    make-artifact-seed.py ARTIFACT_DIR OUT_FILE

The seeds in test/fuzz/corpus/ArtifactFuzzer/tiny-llama-* were made so
(python3-onnx), from the 22 688-parameter checkpoint of
`test/bench/make-synthetic-checkpoint.py OUT --shape tiny --dtype f16`:

    qeff compile OUT -o A --ctx-len 16 --prefill-seq-len 4 [--weights-dtype f16]
        [--full-batch-size 2]
    make-artifact-seed.py A test/fuzz/corpus/ArtifactFuzzer/tiny-llama-...
"""

import os
import sys

import onnx
from onnx.external_data_helper import load_external_data_for_model


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    art, out = sys.argv[1], sys.argv[2]
    model = onnx.load(os.path.join(art, "model.onnx"), load_external_data=False)
    load_external_data_for_model(model, art)
    for t in model.graph.initializer:
        t.data_location = onnx.TensorProto.DEFAULT
        del t.external_data[:]
    data = model.SerializeToString()
    if b"\n----\n" in data:
        sys.exit("the serialized model contains the separator; cannot make a seed")
    with open(os.path.join(art, "specializations.json"), "rb") as f:
        specs = f.read()
    tmp = out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data + b"\n----\n" + specs)
    os.replace(tmp, out)
    print(f"{out}: {len(data)} bytes of model, {len(specs)} of specializations")


if __name__ == "__main__":
    main()
