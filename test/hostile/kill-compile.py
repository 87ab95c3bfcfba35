#!/usr/bin/python3
"""`kill -9` of `qeff compile` / `qeff infer` at several points.

Each point waits for a state of the staging directory (a file staged, the
weights written, the manifest staged = the commit is next), kills the process
with SIGKILL and checks that nothing is under the output name (or, when the
kill landed after the publishing rename, a complete output) and that no
compile-cache entry exists that `qeff infer` would reuse. The next compile
must succeed and remove the dead process's staging directory. A recompile
leaves no file of the earlier compile it did not write.

  kill-compile.py QEFF GOLDEN_CHECKPOINT WORKDIR
"""
import glob
import os
import shutil
import signal
import subprocess
import sys
import time

COMPILE = ["--ctx-len", "32", "--prefill-seq-len", "8"]
COMPLETE = ["model.onnx", "model.onnx.data", "specializations.json", "custom_io.yaml",
            "qeff-manifest.json", "config.json"]
failures = []


def check(ok, what):
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)


def staging_of(parent, name):
    return glob.glob(os.path.join(parent, "." + name + ".qeff-staging-*"))


def wait_for(proc, predicate, limit=300):
    start = time.time()
    while time.time() - start < limit:
        if predicate():
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.002)
    return False


def consistent(out):
    """Nothing under the output name, or a complete output."""
    if not os.path.exists(out):
        return True
    return all(os.path.exists(os.path.join(out, f)) for f in COMPLETE)


def kill_at(qeff, ckpt, work, label, predicate_of):
    out = os.path.join(work, label)
    proc = subprocess.Popen([qeff, "compile", ckpt, "-o", out] + COMPILE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    reached = wait_for(proc, lambda: predicate_of(work, label))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    if label == "commit" and not reached and proc.returncode == 0:
        # The staged manifest lives only between its fsync and the rename
        # that publishes the directory: on an idle machine the compile can
        # pass it between two polls. Then the output must be complete.
        print(f"   {label}: the compile committed between two polls")
        check(consistent(out) and os.path.exists(out),
              f"{label}: a compile that passed the kill point left a complete output")
        return out
    check(reached, f"{label}: the compile reached the kill point")
    if label != "commit":
        check(not os.path.exists(out), f"{label}: nothing under the output name after kill -9")
    else:
        check(consistent(out), f"{label}: output absent or complete after kill -9 at the commit")
    return out


def staged(work, label, name):
    return any(os.path.exists(os.path.join(s, name)) for s in staging_of(work, label))


def staged_weights(work, label):
    for s in staging_of(work, label):
        p = os.path.join(s, "model.onnx.data")
        if os.path.exists(p) and os.path.getsize(p) > 0:
            return True
    return False


def main(qeff, ckpt, work):
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    points = {
        "staging": lambda w, l: bool(staging_of(w, l)),
        "weights": staged_weights,
        "commit": lambda w, l: staged(w, l, "qeff-manifest.json"),
    }
    for label, predicate in points.items():
        out = kill_at(qeff, ckpt, work, label, predicate)
        left = staging_of(work, label)
        print(f"   {label}: {len(left)} staging dir(s) left by the killed compile")
        r = subprocess.run([qeff, "compile", ckpt, "-o", out] + COMPILE,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        check(r.returncode == 0, f"{label}: the next compile succeeds {r.stderr.strip()}")
        check(consistent(out) and os.path.exists(out), f"{label}: the next compile's output is complete")
        check(not staging_of(work, label), f"{label}: the next compile removed the stale staging")

    # qeff infer through the cache: a killed compile leaves no entry to reuse.
    cache = os.path.join(work, "cache")
    env = dict(os.environ, QEFF_CACHE_DIR=cache)
    infer = [qeff, "infer", ckpt, "--token-ids", "1,2,3", "--max-new-tokens", "2"]
    proc = subprocess.Popen(infer, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    reached = wait_for(proc, lambda: bool(glob.glob(os.path.join(cache, ".*.qeff-staging-*",
                                                                 "model.onnx.data"))))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    check(reached, "infer: the cached compile reached the weights")
    entries = [e for e in os.listdir(cache) if not e.startswith(".")] if os.path.isdir(cache) else []
    check(not entries, f"infer: no cache entry after kill -9 ({entries})")
    r = subprocess.run(infer, env=env, capture_output=True, text=True)
    check(r.returncode == 0, f"infer: the next infer succeeds {r.stderr.strip()[-200:]}")
    check(not glob.glob(os.path.join(cache, ".*.qeff-staging-*")),
          "infer: the next infer removed the stale staging")

    # A recompile leaves no file of the earlier compile that it did not write.
    out = os.path.join(work, "recompile")
    subprocess.run([qeff, "compile", ckpt, "-o", out, "--fp32-scopes=model.layers.0.mlp"]
                   + COMPILE, check=True, stdout=subprocess.DEVNULL)
    os.makedirs(os.path.join(out, "qpc"))
    open(os.path.join(out, "qpc", "programqpc.bin"), "w").write("stale")
    check(os.path.exists(os.path.join(out, "node_precision.yaml")),
          "recompile: the first compile wrote node_precision.yaml")
    subprocess.run([qeff, "compile", ckpt, "-o", out] + COMPILE, check=True,
                   stdout=subprocess.DEVNULL)
    check(not os.path.exists(os.path.join(out, "node_precision.yaml")),
          "recompile: no stale node_precision.yaml")
    check(not os.path.exists(os.path.join(out, "qpc")), "recompile: no stale qpc/")
    check(not glob.glob(os.path.join(work, ".recompile.qeff-*")),
          "recompile: no staging or retired directory left")

    # A directory with foreign files is never replaced.
    foreign = os.path.join(work, "foreign")
    os.makedirs(foreign)
    open(os.path.join(foreign, "notes.txt"), "w").write("mine")
    r = subprocess.run([qeff, "compile", ckpt, "-o", foreign] + COMPILE,
                       capture_output=True, text=True)
    check(r.returncode == 1 and "notes.txt" in r.stderr and
          os.path.exists(os.path.join(foreign, "notes.txt")),
          "foreign: a directory of other files is refused and left alone")

    # A failed compile leaves nothing under the output name.
    bad = os.path.join(work, "failed")
    r = subprocess.run([qeff, "compile", ckpt, "-o", bad, "--ctx-len", "8",
                        "--prefill-seq-len", "16"], capture_output=True, text=True)
    check(r.returncode == 1 and not os.path.exists(bad) and not staging_of(work, "failed"),
          "failed: a failed compile leaves neither output nor staging")

    print(f"kill-compile: {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
