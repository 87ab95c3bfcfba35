#!/usr/bin/env python3
"""Graph size against layer count, outlined and not.

  outline-growth.py <qeff> <make-checkpoint.py> <work_dir>

Makes two synthetic Llama checkpoints that differ only in their layer count
(2 and 16), compiles each with --outline-layers=on and =off, and reads the
node counts `qeff compile` reports for model.onnx (main graph nodes, layer
functions and their nodes). Asserts: outlined, each model has exactly one
layer function (one distinct layer kind) of the same size, and the main graph
grows by exactly one node (the call) per added layer; not outlined, it grows
by a whole layer per layer.
"""
import re
import subprocess
import sys


def compile_counts(qeff, ckpt, out, mode):
    cmd = [qeff, "compile", ckpt, "-o", out, "--ctx-len", "32",
           "--prefill-seq-len", "8", f"--outline-layers={mode}"]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"FAIL: {' '.join(cmd)}\n{run.stderr}")
    m = re.search(r"model\.onnx: (\d+) graph nodes(?:, (\d+) layer function\(s\) "
                  r"of (\d+) nodes)?", run.stdout)
    if not m:
        raise SystemExit(f"FAIL: no node counts in:\n{run.stdout}")
    return int(m.group(1)), int(m.group(2) or 0), int(m.group(3) or 0)


def main():
    qeff, make, work = sys.argv[1:4]
    counts = {}
    for layers in (2, 16):
        ckpt = f"{work}/l{layers}"
        subprocess.run([sys.executable, make, ckpt, "--layers", str(layers),
                        "--hidden", "32", "--heads", "4", "--kv-heads", "2",
                        "--intermediate", "64", "--vocab", "64"], check=True)
        for mode in ("on", "off"):
            counts[layers, mode] = compile_counts(qeff, ckpt, f"{work}/o{layers}-{mode}", mode)
            print(f"{layers} layers, outline {mode}: graph nodes {counts[layers, mode][0]}, "
                  f"functions {counts[layers, mode][1]} ({counts[layers, mode][2]} nodes)")
    failed = 0

    def check(what, ok):
        nonlocal failed
        print(("ok: " if ok else "FAIL: ") + what)
        failed += not ok

    (n2, f2, fn2), (n16, f16, fn16) = counts[2, "on"], counts[16, "on"]
    check("one layer function for 2 and for 16 layers", f2 == 1 and f16 == 1)
    check("the function is the same size", fn2 == fn16 and fn2 > 0)
    check("outlined: the graph grows by one call per layer", n16 - n2 == 14)
    (m2, g2, _), (m16, g16, _) = counts[2, "off"], counts[16, "off"]
    check("not outlined: no functions", g2 == 0 and g16 == 0)
    per_layer = (m16 - m2) / 14
    print(f"not outlined: {per_layer} nodes per layer")
    # A layer's nodes: the function's, less its Constant nodes (constants are
    # initializers in the main graph).
    check("not outlined: the graph grows by a layer per layer",
          per_layer == int(per_layer) and fn2 // 2 < per_layer <= fn2)
    print(f"{5 - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
