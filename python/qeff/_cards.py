# ===- qeff/_cards.py - compile_cards: many models at once -----------------=== #
#
# Part of qeff. `qeff compile --models` from Python. A batch of cards runs
# each card in a process of its own (docs/model-cards.md: one card's crash or
# memory cannot take the others down), so this runs the qeff executable that
# belongs to this module rather than the batch inside the interpreter.
#
# ===----------------------------------------------------------------------=== #

import json
import logging
import os
import signal
import subprocess
import time
from typing import Any, Dict, Optional, Union

from ._qeff import Error

logger = logging.getLogger("qeff")


def qeff_executable() -> str:
    """The qeff command-line tool of this build or install ($QEFF_EXECUTABLE
    overrides it)."""
    if os.environ.get("QEFF_EXECUTABLE"):
        return os.environ["QEFF_EXECUTABLE"]
    from . import _config
    exe = os.path.normpath(os.path.join(os.path.dirname(__file__), _config.QEFF_EXECUTABLE))
    if not os.access(exe, os.X_OK):
        raise Error(f"the qeff executable {exe} is missing (set QEFF_EXECUTABLE)")
    return exe


def compile_cards(path: Union[str, os.PathLike], out: Union[str, os.PathLike], *,
                  jobs: int = 0, cache_dir: Optional[Union[str, os.PathLike]] = None,
                  check: bool = True) -> Dict[str, Any]:
    """Compiles every card of the model-card file `path` into out/<name>
    (through the content-addressed compile cache), `jobs` at a time (0: what
    the cores and the memory allow). Returns out/summary.json ({"cards":
    [{"name", "status", "error", "artifact_dir", ...}]}); with check=True a
    failed card raises qeff.Error naming it. The progress lines go to the
    `qeff` logger at INFO. Ctrl-C stops every card cleanly (finished cards
    stay) and raises KeyboardInterrupt."""
    if not isinstance(jobs, int) or jobs < 0:
        raise ValueError(f"jobs must be an int >= 0, got {jobs!r}")
    path, out = os.fspath(path), os.fspath(out)
    cmd = [qeff_executable(), "compile", "--models", path, "-o", out]
    if jobs:
        cmd += ["-j", str(jobs)]
    if cache_dir is not None:
        cmd += ["--cache-dir", os.fspath(cache_dir)]
    started = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, errors="replace")
    output = []
    try:
        for line in proc.stdout:
            line = line.rstrip("\n")
            output.append(line)
            logger.info("compile_cards: %s", line)
        proc.wait()
    except KeyboardInterrupt:
        # The batch stops its cards on SIGINT and removes what they left.
        proc.send_signal(signal.SIGINT)
        proc.wait()
        raise
    finally:
        proc.stdout.close()
    summary_path = os.path.join(out, "summary.json")
    # A summary.json of an earlier run is not this run's.
    if not os.path.isfile(summary_path) or os.path.getmtime(summary_path) < started - 1:
        raise Error(f"qeff compile --models {path} failed (exit {proc.returncode}):\n"
                    + "\n".join(output[-20:]))
    with open(summary_path, encoding="utf-8") as f:
        summary = json.load(f)
    failed = [c for c in summary.get("cards", []) if c.get("status") != "ok"]
    if check and (failed or proc.returncode != 0):
        lines = [f"{c['name']}: {c.get('error')}" for c in failed]
        raise Error(f"qeff compile --models {path}: {len(failed)} card(s) failed"
                    + (":\n" + "\n".join(lines) if lines else
                       f" (exit {proc.returncode})"))
    return summary
