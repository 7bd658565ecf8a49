"""A file above 4 GiB (64-bit file header and keys), written by us and read back by ROOT 6.40 and by us, in every
`make test`: uncompressed, 16 MiB pages, written by the sequential writer streaming its pages (about 30 s and
4.7 GB of disk on the 2-vCPU test machine, plus about 20 s of reading; the file is removed afterwards, also when the
test fails)."""

from __future__ import annotations

import json
import shutil
import struct

from root_subprocess import run_root

from conftest import skip_or_fail

# ~36 bytes per entry uncompressed: 130 M entries make about 4.7 GB.
ENTRIES = 130_000_000

ROOT_TAIL = r"""
path, n = sys.argv[1], int(sys.argv[2])
r = ROOT.RNTupleReader.Open("Events", path)
ids = r.GetView["std::uint64_t"]("eventId")
parts = r.GetView["std::vector<float>"]("particles")
idx = [0, 1, n // 2, n - 2, n - 1]
done({"entries": int(r.GetNEntries()), "rows": [[int(ids(i)), [float(x) for x in parts(i)]] for i in idx]})
"""


def test_file_above_4_gib(cli, tmp_path):
    free = shutil.disk_usage(tmp_path).free
    if free < 6 * 1024**3:
        skip_or_fail(f"{tmp_path} has {free / 1024**3:.1f} GiB free; the file above 4 GiB needs 6")
    path = tmp_path / "big.root"
    try:
        _check_big_file(cli, path)
    finally:
        path.unlink(missing_ok=True)


def _check_big_file(cli, path):
    p = cli.run("bench", "write", "--mode", "sequential", "--entries", str(ENTRIES), "--compression", "0",
                "--page-size", str(16 * 1024 * 1024), "--output", str(path), timeout=3600)
    assert p.returncode == 0, p.stderr.decode()
    size = path.stat().st_size
    assert size > 4 * 1024**3, size
    with open(path, "rb") as f:
        head = f.read(64)
    version, begin = struct.unpack(">ii", head[4:12])
    assert head[:4] == b"root" and version > 1000000, f"not a 64-bit ROOT file header: version {version}"
    end, seek_free = struct.unpack(">qq", head[12:28])
    assert end == size and seek_free > 4 * 1024**3, (end, seek_free, size)
    # Our reader: every eventId, in order.
    r = cli.run("bench", "read", str(path), "--ntuple", "Events", "--fields", "eventId", timeout=3600)
    assert r.returncode == 0, r.stderr.decode()
    rep = json.loads(r.stdout)
    assert rep["entries"] == ENTRIES and rep["checksum"] == ENTRIES * (ENTRIES - 1) // 2
    # ROOT reads entries at the start, the middle and the end (pages beyond 4 GiB), equal to ours.
    root = run_root(ROOT_TAIL, path, ENTRIES, timeout=3600)
    assert root["entries"] == ENTRIES
    for i, row in zip([0, 1, ENTRIES // 2, ENTRIES - 2, ENTRIES - 1], root["rows"]):
        ours = cli.dump(path, "Events", entries=(i, i + 1))[0]
        assert [ours["eventId"], ours["particles"]] == row
    assert [row[0] for row in root["rows"]] == [0, 1, ENTRIES // 2, ENTRIES - 2, ENTRIES - 1]
