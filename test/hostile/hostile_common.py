"""What the hostile-input scripts share (hostile-artifacts.py,
hostile-checkpoints.py): the limits a refused input runs under, the check of
a refusal, and the mutations both make."""
import json
import os
import resource

MEMORY_LIMIT = 8 << 30  # address space of the qeff process
# A sanitizer build of qeff (QEFF_SANITIZE / QEFF_FUZZ; CMake sets this) maps
# terabytes of shadow memory at startup, so an address-space limit kills it
# before main. Its memory is bounded by AddressSanitizer instead: resident
# memory past the limit is a fatal ASan error (so the case fails), and a
# single allocation past it fails as under the address-space limit (malloc
# returns null; operator new, which cannot throw under ASan, is fatal).
SANITIZED = os.environ.get("QEFF_SANITIZED") == "1"


def limiter(file_limit=None):
    """A preexec_fn: the memory limit, no core dumps, and at most `file_limit`
    bytes per written file when given."""
    def limit():
        if not SANITIZED:
            resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
        if file_limit:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, file_limit))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return limit


def case_env():
    if not SANITIZED:
        return None
    mb = MEMORY_LIMIT >> 20
    limits = (f"hard_rss_limit_mb={mb}:max_allocation_size_mb={mb}:"
              "allocator_may_return_null=1")
    asan = os.environ.get("ASAN_OPTIONS")
    return dict(os.environ, ASAN_OPTIONS=f"{asan}:{limits}" if asan else limits)


def refusal_error(r, expect):
    """None when the finished process `r` refused its input as it should:
    exit status 1 (never a signal) and every string of `expect` in stderr."""
    if r.returncode < 0:
        return f"killed by signal {-r.returncode}: {r.stderr.strip()[-300:]}"
    if r.returncode != 1:
        return f"exit status {r.returncode}, wanted 1: {r.stderr.strip()[-300:]}"
    missing = [e for e in expect if e not in r.stderr]
    if missing:
        return f"message lacks {missing}: {r.stderr.strip()[-400:]}"
    return None


def edit_json(path, fn):
    with open(path) as f:
        data = json.load(f)
    fn(data)
    with open(path, "w") as f:
        json.dump(data, f, indent=2)


def replace_with_fifo(path):
    if os.path.lexists(path):
        os.remove(path)
    os.mkfifo(path)


def report(name, error):
    """Prints a failed case; returns the exit status of the case."""
    if error:
        print(f"FAIL {name}: {error}")
        return 1
    return 0


def run_all(names, run):
    """Runs run(name) for every case; prints the tally, returns the status."""
    failed = sum(report(name, run(name)) for name in names)
    print(f"{len(names) - failed} passed, {failed} failed")
    return 1 if failed else 0
