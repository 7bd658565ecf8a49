"""The child programs of the fault tests (test_fault_modes.py over HTTP and S3, test_xrootd_faults.py over root://),
written once."""

# Runs argv[2:] as its child and writes the child's peak RSS (KiB) to argv[1]. A child forked from pytest would
# inherit pytest's RSS as its starting peak (Linux keeps the forked memory's high-water mark across exec); forked
# from this small process, its peak is its own.
MEASURE = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""

# Python's reading child: argv URL, local path, connect timeout, idle timeout, retries; prints one JSON line (the
# error and its type, or whether the values equal the local file's), with the seconds the remote read took.
READ_CHILD = """
import json, sys, time
import awkward as ak
import rntuple
rntuple.set_remote_options(connect_timeout=float(sys.argv[3]), idle_timeout=float(sys.argv[4]), retries=int(sys.argv[5]))
local = rntuple.open(sys.argv[2])
expected = {n: local[n].arrays() for n in local.ntuple_names()}
t = time.monotonic()
try:
    f = rntuple.open(sys.argv[1])
    actual = {n: f[n].arrays() for n in f.ntuple_names()}
    same = list(actual) == list(expected) and all(ak.array_equal(actual[n], expected[n]) for n in expected)
    out = {"error": None, "same": same}
except rntuple.RNTupleError as exc:
    out = {"error": str(exc), "type": type(exc).__name__}
out["seconds"] = time.monotonic() - t
print(json.dumps(out))
"""
