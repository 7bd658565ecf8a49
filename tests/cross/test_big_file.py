"""A file above 4 GiB, written by us and read back by ROOT 6.40 and by us. Slow (several GB of disk and a few
minutes): runs only with RNTUPLE_BIG_TESTS=1 (`RNTUPLE_BIG_TESTS=1 make pytest`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(os.environ.get("RNTUPLE_BIG_TESTS") != "1", reason="set RNTUPLE_BIG_TESTS=1 to run")

# ~36 bytes per entry uncompressed: 130 M entries make about 4.7 GB.
ENTRIES = 130_000_000

ROOT_TAIL = r"""
import json, sys, os, warnings
warnings.filterwarnings("ignore")
import ROOT
ROOT.gErrorIgnoreLevel = ROOT.kError
path, n = sys.argv[1], int(sys.argv[2])
r = ROOT.RNTupleReader.Open("Events", path)
ids = r.GetView["std::uint64_t"]("eventId")
parts = r.GetView["std::vector<float>"]("particles")
idx = [0, 1, n // 2, n - 2, n - 1]
out = {"entries": int(r.GetNEntries()), "rows": [[int(ids(i)), [float(x) for x in parts(i)]] for i in idx]}
json.dump(out, sys.stdout)
sys.stdout.flush()
os._exit(0)
"""


def test_file_above_4_gib(cli, tmp_path):
    path = tmp_path / "big.root"
    p = cli.run("bench", "write", "--mode", "sequential", "--entries", str(ENTRIES), "--compression", "0", "--output", str(path), timeout=3600)
    assert p.returncode == 0, p.stderr.decode()
    size = path.stat().st_size
    assert size > 4 * 1024**3, size
    # Our reader: every eventId, in order.
    r = cli.run("bench", "read", str(path), "--ntuple", "Events", "--fields", "eventId", timeout=3600)
    assert r.returncode == 0, r.stderr.decode()
    rep = json.loads(r.stdout)
    assert rep["entries"] == ENTRIES and rep["checksum"] == ENTRIES * (ENTRIES - 1) // 2
    # ROOT reads entries at the start, the middle and the end, equal to ours.
    q = subprocess.run([sys.executable, "-c", ROOT_TAIL, str(path), str(ENTRIES)], capture_output=True, timeout=3600)
    assert q.returncode == 0, q.stderr.decode()[-3000:]
    root = json.loads(q.stdout)
    assert root["entries"] == ENTRIES
    for i, row in zip([0, 1, ENTRIES // 2, ENTRIES - 2, ENTRIES - 1], root["rows"]):
        ours = cli.dump(path, "Events", entries=(i, i + 1))[0]
        assert [ours["eventId"], ours["particles"]] == row
    path.unlink()
