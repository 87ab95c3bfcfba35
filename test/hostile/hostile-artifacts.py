#!/usr/bin/python3
"""Hostile artifact directories for `qeff run`.

A compiled copy of a golden artifact is mutated one way per case (external
data that points outside the directory, FIFOs, wrapping dims, truncated files,
contradicting specializations and manifests, malformed tokenizer and config
files, absurd flags) and `qeff run` must refuse each: exit status 1 (never a
signal), within the time limit, under a memory limit, with a message naming
the file and the field or tensor.

  hostile-artifacts.py --list
  hostile-artifacts.py --setup QEFF GOLDEN_CHECKPOINT TOKENIZER_JSON WORKDIR
  hostile-artifacts.py --case NAME QEFF WORKDIR
  hostile-artifacts.py --all QEFF GOLDEN_CHECKPOINT TOKENIZER_JSON WORKDIR
"""
import os
import shutil
import subprocess
import sys

from hostile_common import (case_env, edit_json, limiter, refusal_error, replace_with_fifo,
                            report, run_all)

TIMEOUT_S = 120
RUN = ["--token-ids", "1,2,3", "--max-new-tokens", "2", "--threads", "1"]

CASES = {}


def case(expect, args=None):
    """Registers a mutation; `expect` are substrings of qeff's stderr."""
    def register(fn):
        CASES[fn.__name__] = (fn, expect, args or RUN)
        return fn
    return register


def load_model(d):
    import onnx
    m = onnx.ModelProto()
    with open(os.path.join(d, "model.onnx"), "rb") as f:
        m.ParseFromString(f.read())
    return m


def save_model(d, m):
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(m.SerializeToString())


def external(m, index=0):
    """The index-th initializer stored as external data."""
    import onnx
    found = [t for t in m.graph.initializer
             if t.data_location == onnx.TensorProto.EXTERNAL]
    return found[index]


def set_ext(t, key, value):
    for kv in t.external_data:
        if kv.key == key:
            kv.value = value
            return
    kv = t.external_data.add()
    kv.key, kv.value = key, value


def get_ext(t, key):
    for kv in t.external_data:
        if kv.key == key:
            return kv.value
    return None


def mutate_ext(d, key, value, index=0):
    m = load_model(d)
    t = external(m, index)
    set_ext(t, key, value)
    save_model(d, m)
    return t.name


def outside(d):
    """A directory beside the artifact (outside it)."""
    o = os.path.join(os.path.dirname(d), os.path.basename(d) + "-outside")
    os.makedirs(o, exist_ok=True)
    shutil.copy(os.path.join(d, "model.onnx.data"), os.path.join(o, "model.onnx.data"))
    return o


# --- external data --------------------------------------------------------

@case(["absolute path '/etc/passwd'", "initializer"])
def ext_absolute(d):
    mutate_ext(d, "location", "/etc/passwd")


@case(["'..' component", "initializer"])
def ext_dotdot(d):
    o = outside(d)
    mutate_ext(d, "location", "../" + os.path.basename(o) + "/model.onnx.data")


@case(["'..' component", "initializer"])
def ext_dotdot_inside(d):
    os.makedirs(os.path.join(d, "sub"))
    mutate_ext(d, "location", "sub/../model.onnx.data")


@case(["outside the artifact directory", "initializer"])
def ext_symlink_file_out(d):
    o = outside(d)
    os.symlink(os.path.join(o, "model.onnx.data"), os.path.join(d, "link.data"))
    mutate_ext(d, "location", "link.data")


@case(["outside the artifact directory", "initializer"])
def ext_symlink_dir_out(d):
    o = outside(d)
    os.symlink(o, os.path.join(d, "sub"))
    mutate_ext(d, "location", "sub/model.onnx.data")


@case(["outside the artifact directory", "initializer"])
def ext_symlink_devzero(d):
    os.symlink("/dev/zero", os.path.join(d, "zero.data"))
    mutate_ext(d, "location", "zero.data")


@case(["FIFO", "initializer"])
def ext_fifo(d):
    os.mkfifo(os.path.join(d, "fifo.data"))
    mutate_ext(d, "location", "fifo.data")


@case(["No such file", "initializer"])
def ext_missing(d):
    mutate_ext(d, "location", "missing.data")


@case(["without a location", "initializer"])
def ext_empty_location(d):
    mutate_ext(d, "location", "")


@case(["lie outside", "initializer"])
def ext_offset_past_end(d):
    size = os.path.getsize(os.path.join(d, "model.onnx.data"))
    mutate_ext(d, "offset", str(size + 1))


@case(["lie outside", "initializer"])
def ext_range_past_end(d):
    size = os.path.getsize(os.path.join(d, "model.onnx.data"))
    mutate_ext(d, "offset", str(size - 2))


@case(["does not match its shape", "initializer"])
def ext_length_mismatch(d):
    m = load_model(d)
    t = external(m)
    set_ext(t, "length", str(int(get_ext(t, "length") or 0) + 4))
    save_model(d, m)


@case(["'offset'", "not a non-negative integer", "initializer"])
def ext_offset_text(d):
    mutate_ext(d, "offset", "abc")


@case(["'offset'", "not a non-negative integer", "initializer"])
def ext_offset_negative(d):
    mutate_ext(d, "offset", "-8")


@case(["'offset'", "not a non-negative integer", "initializer"])
def ext_offset_overflow(d):
    mutate_ext(d, "offset", "99999999999999999999999999")


@case(["'length'", "not a non-negative integer", "initializer"])
def ext_length_negative(d):
    mutate_ext(d, "length", "-1")


@case(["overlap", "model.onnx.data"])
def ext_overlap(d):
    m = load_model(d)
    a, b = external(m, 0), external(m, 1)
    off_a, len_a = int(get_ext(a, "offset") or 0), int(get_ext(a, "length"))
    len_b = int(get_ext(b, "length"))
    # b starts inside a (partial overlap; identical ranges would be sharing).
    set_ext(b, "offset", str(off_a + min(len_a, len_b) // 2 // 64 * 64 or 64))
    save_model(d, m)


@case(["too many elements", "initializer"])
def dims_wrap(d):
    # 2^62 * 4 elements * 4 bytes wraps to 0 bytes in 64-bit arithmetic.
    m = load_model(d)
    t = external(m)
    del t.dims[:]
    t.dims.extend([1 << 62, 4])
    set_ext(t, "length", "0")
    save_model(d, m)


@case(["negative dim", "initializer"])
def dims_negative(d):
    m = load_model(d)
    t = external(m)
    t.dims[0] = -4
    save_model(d, m)


@case(["lie outside", "initializer"])
def dims_huge(d):
    m = load_model(d)
    t = external(m)
    del t.dims[:]
    t.dims.extend([1 << 40])
    for kv in list(t.external_data):
        if kv.key == "length":
            t.external_data.remove(kv)
    save_model(d, m)


@case(["initializer", "unsupported element type"])
def dtype_unknown(d):
    m = load_model(d)
    external(m).data_type = 99
    save_model(d, m)


# --- model.onnx -----------------------------------------------------------

@case(["model.onnx: empty file (0 bytes)"])
def model_empty(d):
    open(os.path.join(d, "model.onnx"), "wb").close()


@case(["model.onnx", "not a valid ONNX model"])
def model_truncated(d):
    p = os.path.join(d, "model.onnx")
    data = open(p, "rb").read()
    open(p, "wb").write(data[: len(data) // 2])


@case(["model.onnx", "not a valid ONNX model"])
def model_garbage(d):
    open(os.path.join(d, "model.onnx"), "wb").write(b"\xff" * 4096)


@case(["model.onnx: not a regular file (a FIFO)"])
def model_fifo(d):
    replace_with_fifo(os.path.join(d, "model.onnx"))


@case(["model.onnx: not a regular file (a directory)"])
def model_directory(d):
    os.remove(os.path.join(d, "model.onnx"))
    os.mkdir(os.path.join(d, "model.onnx"))


# --- specializations.json ---------------------------------------------------

def set_symbol(d, name, value, index=-1):
    def fn(data):
        data["specializations"][index]["symbols"][name] = value
    edit_json(os.path.join(d, "specializations.json"), fn)


@case(["specializations.json", "symbol 'ctx_len'", "outside 1.."])
def spec_ctx_huge(d):
    set_symbol(d, "ctx_len", str(1 << 62))


@case(["specializations.json", "symbol 'batch_size'", "outside 1.."])
def spec_batch_huge(d):
    set_symbol(d, "batch_size", str(1 << 40))


@case(["specializations.json", "larger than 64 GiB", "model.onnx"])
def spec_state_too_large(d):
    set_symbol(d, "ctx_len", str(1 << 24))
    set_symbol(d, "batch_size", str(1 << 12))


@case(["specializations.json", "symbol 'bogus'", "outside 1.."])
def spec_unknown_symbol_huge(d):
    set_symbol(d, "bogus", str(1 << 62))


@case(["specializations.json", "symbol 'ctx_len'", "negative"])
def spec_negative(d):
    set_symbol(d, "ctx_len", "-32")


@case(["specializations.json", "symbol 'ctx_len'", "non-integer"])
def spec_text(d):
    set_symbol(d, "ctx_len", "32abc")


@case(["specializations.json", "symbol 'ctx_len'", "outside 1.."])
def spec_zero(d):
    set_symbol(d, "ctx_len", "0")


@case(["specializations.json", "invalid JSON"])
def spec_malformed(d):
    open(os.path.join(d, "specializations.json"), "w").write('{"specializations": [')


@case(["specializations.json", "must be a list"])
def spec_not_list(d):
    open(os.path.join(d, "specializations.json"), "w").write('{"specializations": 7}')


@case(["specializations.json: not a regular file (a FIFO)"])
def spec_fifo(d):
    replace_with_fifo(os.path.join(d, "specializations.json"))


@case(["specializations.json: file is too large"])
def spec_too_big(d):
    with open(os.path.join(d, "specializations.json"), "w") as f:
        f.write(" " * (17 << 20) + "{}")


# --- qeff-manifest.json -------------------------------------------------------

def manifest(d):
    return os.path.join(d, "qeff-manifest.json")


@case(["qeff-manifest.json", "inputs[0]", "field 'name'", "model.onnx"])
def manifest_input_renamed(d):
    edit_json(manifest(d), lambda m: m["inputs"][0].update(name="tokens"))


@case(["qeff-manifest.json", "field 'inputs' lists", "model.onnx has"])
def manifest_input_count(d):
    edit_json(manifest(d), lambda m: m["inputs"].pop())


@case(["qeff-manifest.json", "field 'shape' disagrees", "model.onnx"])
def manifest_shape(d):
    edit_json(manifest(d), lambda m: m["inputs"][0].update(shape=[1, 2, 3, 4, 5]))


@case(["qeff-manifest.json", "field 'dtype' disagrees", "model.onnx"])
def manifest_dtype(d):
    edit_json(manifest(d), lambda m: m["outputs"][0].update(dtype="int32"))


@case(["qeff-manifest.json", "field 'specializations' disagrees", "specializations.json"])
def manifest_specs_contradict(d):
    def fn(m):
        m["specializations"][-1]["symbols"]["ctx_len"] = "16"
    edit_json(manifest(d), fn)


@case(["qeff-manifest.json", "invalid JSON"])
def manifest_malformed(d):
    open(manifest(d), "w").write("{\"inputs\": [}")


@case(["qeff-manifest.json: not a regular file (a FIFO)"])
def manifest_fifo(d):
    replace_with_fifo(manifest(d))


# --- tokenizer and config files ----------------------------------------------

@case(["tokenizer.json", "not valid JSON"], ["--prompt", "hi", "--max-new-tokens", "2"])
def tokenizer_malformed(d):
    open(os.path.join(d, "tokenizer.json"), "w").write('{"model": {"type": "BPE", ')


@case(["tokenizer_config.json", "not valid JSON"], ["--prompt", "hi", "--max-new-tokens", "2"])
def tokenizer_config_malformed(d):
    open(os.path.join(d, "tokenizer_config.json"), "w").write('{"bos_token": ')


@case(["tokenizer.json", "nests", "levels deep"], ["--prompt", "hi", "--max-new-tokens", "2"])
def tokenizer_deep(d):
    open(os.path.join(d, "tokenizer.json"), "w").write("[" * 200000 + "]" * 200000)


@case(["tokenizer.json: not a regular file (a FIFO)"],
      ["--prompt", "hi", "--max-new-tokens", "2"])
def tokenizer_fifo(d):
    replace_with_fifo(os.path.join(d, "tokenizer.json"))


@case(["merges.txt: no merges"], ["infer", "--prompt", "hi", "--max-new-tokens", "2"])
def tokenizer_no_merges(d):
    # A checkpoint-like directory (no manifest) whose GPT-2 tokenizer has a
    # vocabulary and an empty merge list.
    for name in ("tokenizer.json", "tokenizer_config.json", "qeff-manifest.json"):
        os.remove(os.path.join(d, name))
    open(os.path.join(d, "vocab.json"), "w").write('{"h": 0, "i": 1, "hi": 2}')
    open(os.path.join(d, "merges.txt"), "w").write("#version: 0.2\n")


@case(["tokenizer.json", "'model.merges'", "character by character"],
      ["--prompt", "hi", "--max-new-tokens", "2"])
def tokenizer_json_no_merges(d):
    # A BPE vocabulary of merged tokens without its merges: every word would
    # be encoded character by character.
    edit_json(os.path.join(d, "tokenizer.json"), lambda t: t["model"].update(merges=[]))


@case(["tokenizer.json", "'post_processor.special_tokens.<s>.ids[0]'", "out of range"],
      ["--prompt", "hi", "--max-new-tokens", "2"])
def tokenizer_special_id_huge(d):
    def fn(t):
        t["post_processor"] = {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}}],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [1 << 62], "tokens": ["<s>"]}}}
    edit_json(os.path.join(d, "tokenizer.json"), fn)


@case(["generation_config.json", "not valid JSON"])
def generation_config_malformed(d):
    open(os.path.join(d, "generation_config.json"), "w").write('{"eos_token_id": [1,')


@case(["generation_config.json", "eos_token_id"])
def generation_config_negative_eos(d):
    edit_json(os.path.join(d, "generation_config.json"),
              lambda g: g.update(eos_token_id=-5))


@case(["config.json", "eos_token_id"])
def config_negative_eos(d):
    edit_json(os.path.join(d, "config.json"), lambda c: c.update(eos_token_id=[2, -1]))


@case(["config.json: not a regular file"])
def config_devzero(d):
    os.remove(os.path.join(d, "config.json"))
    os.symlink("/dev/zero", os.path.join(d, "config.json"))


@case(["node_precision.yaml: not a regular file (a FIFO)"],
      RUN + ["--numerics", "fp16"])
def precision_list_fifo(d):
    os.mkfifo(os.path.join(d, "node_precision.yaml"))


@case(["node_precision.yaml: line 2", "expected '- <node name>'"], RUN + ["--numerics", "fp16"])
def precision_list_malformed(d):
    with open(os.path.join(d, "node_precision.yaml"), "w") as f:
        f.write("FP32NodeInstanceNames:\n  not a list item: [\n")


@case(["node_precision.yaml: line 1", "unknown key 'FP32NodeNames'"],
      RUN + ["--numerics", "fp16"])
def precision_list_unknown_key(d):
    with open(os.path.join(d, "node_precision.yaml"), "w") as f:
        f.write("FP32NodeNames:\n  - /model/norm/Mul_output_0\n")


@case(["node_precision.yaml", "'/model/no_such_node/Mul_output_0'", "neither a node"],
      RUN + ["--numerics", "fp16"])
def precision_list_unknown_node(d):
    with open(os.path.join(d, "node_precision.yaml"), "w") as f:
        f.write("# qeff compile\nFP32NodeInstanceNames:\n  - '/model/no_such_node/Mul_output_0'\n")


# --- flags -------------------------------------------------------------------

@case(["--top-p must be in (0, 1]"], RUN + ["--top-p", "nan"])
def flag_top_p_nan(d):
    pass


@case(["--top-k must be >= 0"], RUN + ["--top-k", "-3"])
def flag_top_k_negative(d):
    pass


@case(["--temperature must be a finite number >= 0"], RUN + ["--temperature", "-1"])
def flag_temperature_negative(d):
    pass


@case(["--threads must be in 0..1024"], RUN[:-2] + ["--threads", "100000"])
def flag_threads_huge(d):
    pass


@case(["--max-new-tokens must be in 1.."], ["--token-ids", "1,2", "--max-new-tokens",
                                             str(1 << 62)])
def flag_max_new_tokens_huge(d):
    pass


# --- driver ----------------------------------------------------------------------

def golden_dir(work):
    return os.path.join(work, "golden")


def setup(qeff, checkpoint, tokenizer, work):
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    out = golden_dir(work)
    subprocess.run([qeff, "compile", checkpoint, "-o", out, "--ctx-len", "32",
                    "--prefill-seq-len", "8"], check=True, stdout=subprocess.DEVNULL)
    shutil.copy(tokenizer, os.path.join(out, "tokenizer.json"))
    open(os.path.join(out, "tokenizer_config.json"), "w").write("{}\n")
    # The unmutated copy runs: the cases fail because of their mutation.
    r = subprocess.run([qeff, "run", out] + RUN, capture_output=True, text=True,
                       timeout=TIMEOUT_S)
    if r.returncode != 0:
        sys.exit("setup: qeff run on the golden artifact failed: " + r.stderr)


def run_case(qeff, work, name):
    fn, expect, args = CASES[name]
    d = os.path.join(work, "case-" + name)
    shutil.rmtree(d, ignore_errors=True)
    shutil.rmtree(d + "-outside", ignore_errors=True)
    shutil.copytree(golden_dir(work), d, symlinks=True)
    fn(d)
    try:
        command = [qeff, args[0], d] + args[1:] if args[0] == "infer" else [qeff, "run", d] + args
        r = subprocess.run(command, capture_output=True, text=True,
                           errors="replace", timeout=TIMEOUT_S, preexec_fn=limiter(),
                           env=case_env())
    except subprocess.TimeoutExpired:
        return f"hung (no exit within {TIMEOUT_S} s)"
    error = refusal_error(r, expect)
    if error:
        return error
    shutil.rmtree(d, ignore_errors=True)
    shutil.rmtree(d + "-outside", ignore_errors=True)
    print(f"{name}: {r.stderr.strip().splitlines()[-1]}")
    return None


def main(argv):
    if argv[1:2] == ["--list"]:
        print(";".join(CASES))
        return 0
    if argv[1] == "--setup":
        setup(*argv[2:6])
        return 0
    if argv[1] == "--case":
        return report(argv[2], run_case(argv[3], argv[4], argv[2]))
    if argv[1] == "--all":
        qeff, checkpoint, tokenizer, work = argv[2:6]
        setup(qeff, checkpoint, tokenizer, work)
        return run_all(list(CASES), lambda name: run_case(qeff, work, name))
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
