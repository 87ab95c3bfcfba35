#!/usr/bin/python3
"""Hostile checkpoint directories for `qeff compile` and `qeff-translate`.

A copy of a golden checkpoint is mutated one way per case (config.json or
tokenizer.model as a FIFO or a symlink to /dev/zero, ids that `qeff run`
would refuse, numbers too large for a double) and the command must refuse
it: exit status 1 (never a signal), within the time limit, under a memory
and file-size limit, with a message naming the file and the field, and
without leaving files behind (no output, no staging directory, nothing
written into the checkpoint).

  hostile-checkpoints.py --list
  hostile-checkpoints.py --case NAME QEFF QEFF_TRANSLATE GOLDEN_CHECKPOINT WORKDIR
  hostile-checkpoints.py --all QEFF QEFF_TRANSLATE GOLDEN_CHECKPOINT WORKDIR
"""
import os
import shutil
import subprocess
import sys

from hostile_common import (case_env, edit_json, limiter, refusal_error, replace_with_fifo,
                            report, run_all)

TIMEOUT_S = 60
FILE_LIMIT = 256 << 20  # largest file it may write (a copy of /dev/zero)

CASES = {}


def case(expect, tool="compile", target=None, source=None):
    """Registers a mutation of the checkpoint copy `d`.

    `expect`: substrings of stderr. `tool`: "compile" (qeff compile d -o OUT),
    "translate" (qeff-translate --import-hf d) or "translate-file"
    (qeff-translate --import-hf d/config.json). `target`, when given, maps
    the case directory to the -o of the compile (default: beside it);
    `source` maps it to what is compiled or translated instead of `d` (a
    GGUF file written into it).
    """
    def register(fn):
        CASES[fn.__name__] = (fn, expect, tool, target, source)
        return fn
    return register


def replace_with_devzero(path):
    if os.path.lexists(path):
        os.remove(path)
    os.symlink("/dev/zero", path)


# --- config.json: refused by the reader; the diagnostic printer must not
# reopen it to show a source line (it used to block on the FIFO and read
# /dev/zero without end) --------------------------------------------------

def special_config_cases():
    """config.json as a FIFO and as /dev/zero, for each command."""
    for kind, make, what in (("fifo", replace_with_fifo, "a FIFO"),
                             ("devzero", replace_with_devzero, "a character device")):
        for tool in ("compile", "translate", "translate-file"):
            name = f"config_{kind}_{tool.replace('-', '_')}"
            CASES[name] = (lambda d, make=make: make(os.path.join(d, "config.json")),
                           [f"config.json: not a regular file ({what})"], tool, None, None)


special_config_cases()


# --- files copied into the artifacts ----------------------------------------

@case(["tokenizer.model: not a regular file (a FIFO)"])
def tokenizer_model_fifo(d):
    os.mkfifo(os.path.join(d, "tokenizer.model"))


@case(["tokenizer.model: not a regular file (a character device)"])
def tokenizer_model_devzero(d):
    replace_with_devzero(os.path.join(d, "tokenizer.model"))


@case(["generation_config.json: not a regular file (a FIFO)"])
def generation_config_fifo(d):
    replace_with_fifo(os.path.join(d, "generation_config.json"))


# --- what `qeff run` refuses is refused by compile ---------------------------

@case(["config.json: field 'eos_token_id'", "-1", "not a token id"])
def config_negative_eos(d):
    edit_json(os.path.join(d, "config.json"), lambda c: c.update(eos_token_id=[2, -1]))


@case(["generation_config.json: field 'eos_token_id'", "-5", "not a token id"])
def generation_config_negative_eos(d):
    edit_json(os.path.join(d, "generation_config.json"),
              lambda g: g.update(eos_token_id=-5))


@case(["generation_config.json: field 'eos_token_id'", "must be an integer or a list"])
def generation_config_eos_not_int(d):
    edit_json(os.path.join(d, "generation_config.json"),
              lambda g: g.update(eos_token_id="</s>"))


# --- numbers and output paths --------------------------------------------------

def set_raw(path, field, text):
    """Sets a top-level field to raw JSON text (json.dump cannot write 1e999)."""
    edit_json(path, lambda c: c.update({field: "@RAW@"}))
    with open(path) as f:
        data = f.read()
    with open(path, "w") as f:
        f.write(data.replace('"@RAW@"', text))


@case(["config.json: field 'rope_theta': 1e999 is out of range"])
def config_overflow(d):
    set_raw(os.path.join(d, "config.json"), "rope_theta", "1e999")


@case(["config.json: field 'rope_theta': 1e999 is out of range"], tool="translate")
def config_overflow_translate(d):
    set_raw(os.path.join(d, "config.json"), "rope_theta", "1e999")


@case(["config.json: field 'eos_token_id[1]': -1e400 is out of range"])
def config_overflow_in_list(d):
    set_raw(os.path.join(d, "config.json"), "eos_token_id", "[2, -1e400]")


@case(["is inside the checkpoint directory", "qeff never writes into a checkpoint"],
      target=lambda d: os.path.join(d, "sub"))
def output_inside(d):
    pass


@case(["is inside the checkpoint directory", "it resolves to"],
      target=lambda d: os.path.join(d + "-link", "a", "b"))
def output_inside_symlink(d):
    os.symlink(d, d + "-link")


# --- pre-quantized checkpoints and GGUF files (test/data/quant) ------------------

QUANT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "quant")


def use_fixture(d, fixture):
    """Replaces the checkpoint copy's files by those of a quantized fixture."""
    for name in os.listdir(d):
        os.remove(os.path.join(d, name))
    src = os.path.join(QUANT, fixture)
    for name in ("config.json", "generation_config.json", "model.safetensors"):
        if os.path.exists(os.path.join(src, name)):
            shutil.copy(os.path.join(src, name), d)


def gguf_with(d, edit):
    """d/model.gguf: the Q4_0 fixture's file passed through edit(bytes)."""
    with open(os.path.join(QUANT, "LlamaForCausalLM-gguf-Q4_0", "model.gguf"), "rb") as f:
        data = bytearray(f.read())
    with open(os.path.join(d, "model.gguf"), "wb") as f:
        f.write(edit(data))


def gguf_file(d):
    return os.path.join(d, "model.gguf")


@case(["model.gguf: tensor", "run past the end of the file"], source=gguf_file)
def gguf_truncated(d):
    gguf_with(d, lambda b: b[: len(b) * 3 // 5])


@case(["model.gguf: header claims 1152921504606846976 tensors"], source=gguf_file)
def gguf_absurd_tensor_count(d):
    gguf_with(d, lambda b: b[:8] + (1 << 60).to_bytes(8, "little") + b[16:])


@case(["model.gguf: metadata pair 0: key length runs past the end of the file"],
      source=gguf_file)
def gguf_key_past_end(d):
    gguf_with(d, lambda b: b[:24] + (1 << 40).to_bytes(8, "little") + b[32:])


@case(["model.gguf: metadata pair 0: key length runs past the end of the file"],
      tool="translate", source=gguf_file)
def gguf_key_past_end_translate(d):
    gguf_key_past_end(d)


@case(["model.safetensors: tensor 'model.layers.0.mlp.down_proj.qweight': has 160 inputs",
       "quantization_config.group_size 48 does not divide"])
def awq_group_size_not_dividing(d):
    use_fixture(d, "LlamaForCausalLM-awq-gemm-w4g32")
    edit_json(os.path.join(d, "config.json"),
              lambda c: c["quantization_config"].update(group_size=48))


@case(["config.json: field 'quantization_config.version' is 'gemv'"])
def awq_gemv(d):
    use_fixture(d, "LlamaForCausalLM-awq-gemm-w4g32")
    edit_json(os.path.join(d, "config.json"),
              lambda c: c["quantization_config"].update(version="gemv"))


@case(["model.safetensors: tensor 'model.layers.0.mlp.down_proj.qzeros': has shape [5, 8], "
       "expected [5, 16]"])
def gptq_wrong_qweight_shape(d):
    use_fixture(d, "LlamaForCausalLM-gptq-w4g32")
    # 8-bit packing halves the inputs a qweight row holds: the shapes no
    # longer agree with the scales' group count.
    edit_json(os.path.join(d, "config.json"),
              lambda c: c["quantization_config"].update(bits=8))


@case(["config.json: field 'quantization_config.quant_method' is 'bitsandbytes'"])
def bitsandbytes(d):
    edit_json(os.path.join(d, "config.json"), lambda c: c.update(
        quantization_config={"quant_method": "bitsandbytes", "load_in_4bit": True}))


# --- driver ---------------------------------------------------------------------

def listing(root):
    """Every path below `root` (symlinks not followed), for before/after."""
    found = []
    for top, dirs, files in os.walk(root):
        found += [os.path.relpath(os.path.join(top, n), root) for n in dirs + files]
    return sorted(found)


def run_case(qeff, translate, golden, work, name):
    fn, expect, tool, target, source = CASES[name]
    base = os.path.join(work, name)
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(base)
    d = os.path.join(base, "ckpt")
    shutil.copytree(golden, d, symlinks=True)
    fn(d)
    out = target(d) if target else os.path.join(base, "out")
    before = listing(d)
    src = source(d) if source else d
    if tool == "compile":
        command = [qeff, "compile", src, "-o", out, "--ctx-len", "32", "--prefill-seq-len", "8"]
    else:
        src = src if tool == "translate" else os.path.join(d, "config.json")
        command = [translate, "--import-hf", src, "-o", os.path.join(base, "out.mlir")]
    try:
        r = subprocess.run(command, capture_output=True, text=True, errors="replace",
                           timeout=TIMEOUT_S, preexec_fn=limiter(FILE_LIMIT), env=case_env())
    except subprocess.TimeoutExpired:  # the child was killed
        return f"hung (no exit within {TIMEOUT_S} s)"
    error = refusal_error(r, expect)
    if error:
        return error
    if len(r.stderr) > 4096:
        return f"a message of {len(r.stderr)} bytes: {r.stderr[:200]!r}..."
    after = listing(d)
    if after != before:
        return f"the checkpoint changed: {sorted(set(after) ^ set(before))[:5]}"
    left = [e for e in os.listdir(base) if e not in ("ckpt", "ckpt-link")]
    if left:
        return f"left behind: {left}"
    shutil.rmtree(base, ignore_errors=True)
    print(f"{name}: {r.stderr.strip().splitlines()[0][:300]}")
    return None


def main(argv):
    if argv[1:2] == ["--list"]:
        print(";".join(CASES))
        return 0
    if argv[1] == "--case":
        return report(argv[2], run_case(*argv[3:7], argv[2]))
    if argv[1] == "--all":
        return run_all(list(CASES), lambda name: run_case(*argv[2:6], name))
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
