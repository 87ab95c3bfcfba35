"""Prints facts of qeff-manifest.json's "mx" for compile-report-mx.test."""
import json
import sys

mx = json.load(open(sys.argv[1]))["mx"]
report, assumptions = mx["report"], mx["assumptions"]
experts = [t for t in report["tensors"] if ".experts." in t["name"]]
print("experts compressed: %d of %d" % (sum(t["compressed"] for t in experts), len(experts)))
total = sum(t["device_bytes"] for t in report["tensors"] if not t["compressed"])
assert total == report["uncompressed_bytes"], (total, report["uncompressed_bytes"])
assert all("reason" in t for t in report["tensors"] if not t["compressed"])
print("uncompressed bytes: %d = the sum of the uncompressed tensors" % total)
print("assumptions: %s blocks of %d along %s, %s KV blocks of %d along %s, rounding %s" % (
    assumptions["weights"]["element"], assumptions["weights"]["block_size"],
    assumptions["weights"]["block_axis"], assumptions["kv_cache"]["element"],
    assumptions["kv_cache"]["block_size"], assumptions["kv_cache"]["block_axis"],
    assumptions["rounding"]))
