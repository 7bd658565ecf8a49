"""Outputs that are never half-written (issue 14, item 4): a merge or skim whose output is one of its inputs
(a hard link, a symbolic link) is refused and the input stays byte-identical; a skim of a damaged input leaves
no output file; a failed `rntuple.write` leaves an existing file byte-identical; no temporary file is left
behind after an error; checkpoints keep a file readable while it is written."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import rntuple
from conftest import skip_or_fail

REPO = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("RNTUPLE_BIN", REPO / "target" / "release" / "rntuple"))


def cli(*args) -> subprocess.CompletedProcess:
    if not BIN.is_file():
        skip_or_fail(f"the rntuple binary {BIN} does not exist (cargo build --release)")
    return subprocess.run([str(BIN), "--no-progress", *map(str, args)], capture_output=True, timeout=120)


def leftovers(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir() if ".tmp-" in p.name)


@pytest.fixture
def source(tmp_path) -> Path:
    """A file of 3 clusters written by our writer (page checksums on)."""
    p = tmp_path / "in.root"
    with rntuple.Writer(p, "Events", {"x": "std::uint64_t", "v": "std::vector<float>"}, compression=0) as w:
        for k in range(3):
            n = 1000
            w.extend({"x": np.arange(k * n, (k + 1) * n, dtype=np.uint64),
                      "v": [[float(i)] * (i % 4) for i in range(n)]})
            w.checkpoint()  # also ends the cluster
    assert len(rntuple.open(p)["Events"].cluster_boundaries) >= 3
    return p


def damage_a_page(path: Path) -> None:
    """Flips bytes in the middle of a page of column x in the second cluster; fixes nothing."""
    data = bytearray(path.read_bytes())
    # The x values of the second cluster (uncompressed uint64 1000..1999): plain little-endian (ROOT's encoding
    # without compression), or split (the low bytes first: 0xe8, 0xe9, ...).
    at = data.find(np.arange(1000, 1004, dtype="<u8").tobytes())
    if at < 0:
        at = data.find(bytes(range(0xE8, 0xF8)))
    assert at > 0, "the page of the second cluster was not found"
    for i in range(at, at + 8):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["hard", "symbolic"])
def test_merge_and_skim_refuse_an_input_as_output(source, tmp_path, how):
    before = source.read_bytes()
    out = tmp_path / f"{how}.root"
    (os.link if how == "hard" else os.symlink)(source, out)
    r = cli("merge", out, source, source)
    assert r.returncode == 1 and b"also an input" in r.stderr and str(source).encode() in r.stderr, r.stderr
    r = cli("skim", source, out, "--fields", "x")
    assert r.returncode == 1 and b"also the input" in r.stderr, r.stderr
    with pytest.raises(rntuple.RNTupleError, match="also an input"):
        rntuple.merge(out, [source])
    with pytest.raises(rntuple.RNTupleError, match="also the input"):
        rntuple.skim(source, out, fields=["x"])
    assert source.read_bytes() == before
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("reencode", [False, True], ids=["copy", "reencode"])
def test_skim_of_a_damaged_input_leaves_no_output(source, tmp_path, reencode):
    damage_a_page(source)
    out = tmp_path / "skim.root"
    args = ["skim", source, out] + (["--reencode"] if reencode else [])
    r = cli(*args)
    assert r.returncode != 0, r.stdout
    assert b"checksum" in r.stderr, r.stderr
    assert not out.exists()
    # An existing output stays as it was.
    out.write_bytes(b"previous")
    assert cli(*args).returncode != 0
    assert out.read_bytes() == b"previous"
    with pytest.raises(rntuple.RNTupleError):
        rntuple.skim(source, out, reencode=reencode)
    assert out.read_bytes() == b"previous"
    r = cli("merge", tmp_path / "merged.root", source)
    assert r.returncode != 0 and not (tmp_path / "merged.root").exists()
    assert leftovers(tmp_path) == []


def test_failed_write_leaves_an_existing_file_untouched(tmp_path):
    p = tmp_path / "keep.root"
    rntuple.write(p, "Events", {"x": np.arange(5.0)})
    before = p.read_bytes()
    with pytest.raises((rntuple.RNTupleError, TypeError, ValueError)):
        rntuple.write(p, "Events", {"x": np.arange(5.0)}, schema={"x": "std::string"})
    assert p.read_bytes() == before
    with pytest.raises((rntuple.RNTupleError, TypeError, ValueError)):
        rntuple.write(p, "Events", [{"x": 1.0}, {"x": "not a number"}], schema={"x": "double"})
    assert p.read_bytes() == before
    # Writer.abort discards, and a committed write replaces the file only at its commit.
    w = rntuple.Writer(p, "Events", {"y": "float"})
    w.extend({"y": np.ones(3, np.float32)})
    assert p.read_bytes() == before and len(leftovers(tmp_path)) == 1
    w.abort()
    assert p.read_bytes() == before and leftovers(tmp_path) == []
    rntuple.write(p, "Events", {"y": np.ones(3, np.float32)})
    assert rntuple.open(p)["Events"].arrays().y.tolist() == [1.0, 1.0, 1.0]
    assert leftovers(tmp_path) == []


def test_import_json_error_leaves_no_output(tmp_path):
    out = tmp_path / "j.root"
    r = subprocess.run([str(BIN), "import-json", out, "--ntuple", "T", "--schema", '{"x":"double"}'],
                       input=b'[{"x": 1}, {"x": "bad"}]', capture_output=True, timeout=60) if BIN.is_file() else None
    if r is None:
        skip_or_fail(f"the rntuple binary {BIN} does not exist (cargo build --release)")
    assert r.returncode == 1 and b"entry 1" in r.stderr, r.stderr
    assert not out.exists() and leftovers(tmp_path) == []


def test_checkpoints_make_the_file_readable_while_it_is_written(tmp_path):
    p = tmp_path / "ck.root"
    p.write_bytes(b"an older file")
    w = rntuple.Writer(p, "Events", {"x": "std::int64_t"}, checkpoint_clusters=1)
    # The first checkpoint (no entries) is made at the creation, at the final path.
    assert len(rntuple.open(p)["Events"].arrays()) == 0
    for k in range(3):
        w.extend({"x": np.arange(k * 10, k * 10 + 10, dtype=np.int64)})
        w.checkpoint()
        assert rntuple.open(p)["Events"].arrays().x.tolist() == list(range(k * 10 + 10))
    w.extend({"x": np.arange(30, 35, dtype=np.int64)})
    # Aborted: the file keeps its last checkpoint.
    w.abort()
    assert rntuple.open(p)["Events"].arrays().x.tolist() == list(range(30))
    assert leftovers(tmp_path) == []
    pw = rntuple.ParallelWriter(tmp_path / "pck.root", "Events", {"x": "std::int64_t"}, checkpoint_clusters=1)
    with pw.fill_context() as ctx:
        ctx.extend({"x": np.arange(7, dtype=np.int64)})
        ctx.flush_cluster()
        pw.checkpoint()
        assert rntuple.open(tmp_path / "pck.root")["Events"].arrays().x.tolist() == list(range(7))
    pw.commit()
