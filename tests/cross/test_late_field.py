"""Late model extension written by our sequential writer, read by ROOT 6.40 and uproot entry by entry: nine fields
of different kinds (float, string, vector, array, bitset, optional, variant, pair, map) added after 1000 entries,
exactly at a cluster boundary (after a committed cluster) and in the middle of a cluster, compressed (505) and
not (0). The files and their expected entries (written from the values the test wrote, not read back) come from
crates/rntuple/tests/integration/writer_roundtrip.rs::late_model_extension_reads_defaults_before (cargo test, before this
suite in `make test`). About 15 s (one ROOT process)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import awkward as ak
import pytest
import uproot
from test_our_writer_types import _loose

from conftest import skip_or_fail
from rootgen import compare, load_oracle

HERE = Path(__file__).parent
SRC = HERE.parent.parent / "target" / "tmp"
CASES = ["boundary_505", "boundary_0", "mid_505", "mid_0"]

ORACLE = r"""
import sys, os
sys.path.insert(0, sys.argv[1])
import rootgen
from pathlib import Path
ROOT, _ = rootgen._load_root(Path(sys.argv[2]))
# std::map<std::int32_t,float> (field m) needs a compiled dictionary in ROOT 6.40 from pip (see
# root_load.DICTIONARY_TYPES): without one, its collection proxy aborts.
(Path(sys.argv[2]) / "dict").mkdir(parents=True, exist_ok=True)  # ACLiC writes into the current directory
ROOT.gSystem.ChangeDirectory(str(Path(sys.argv[2]) / "dict"))
ROOT.gInterpreter.GenerateDictionary("std::map<std::int32_t,float>", "map;cstdint")
for path in sys.argv[3:]:
    ROOT.xoracle.DumpJson("T", path, path + ".oracle.json")
    with open(path + ".describe.json", "w") as f:
        f.write(str(ROOT.xoracle.Describe("T", path)))
sys.stdout.flush()
os._exit(0)
"""


@pytest.fixture(scope="module")
def late(tmp_path_factory):
    out = tmp_path_factory.mktemp("late")
    files = {}
    for case in CASES:
        src = SRC / f"late_field_{case}.root"
        if not src.exists():
            skip_or_fail(f"{src} is missing: run `cargo test --release -p rntuple --test writer_roundtrip` first "
                         "(make test does)")
        dst = out / src.name
        shutil.copy(src, dst)
        files[case] = (dst, json.loads(src.with_suffix(".expected.json").read_text()))
    p = subprocess.run([sys.executable, "-c", ORACLE, str(HERE), str(out), *[str(f) for f, _ in files.values()]],
                       capture_output=True, timeout=900)
    assert p.returncode == 0, p.stderr.decode()[-4000:]
    return files


@pytest.mark.parametrize("case", CASES)
def test_root_reads_late_fields(late, case):
    path, expected = late[case]
    describe = json.loads(Path(str(path) + ".describe.json").read_text())
    starts = [c["first_entry"] for c in describe["clusters"]]
    if case.startswith("boundary"):
        assert 1000 in starts, starts
    elif case == "mid_505":  # uncompressed, the 2000-byte clusters are small enough to start at 1000 anyway
        assert 1000 not in starts, starts
    assert [f["name"] for f in describe["fields"]] == list(expected[0])
    oracle = load_oracle(str(path) + ".oracle.json")
    assert len(oracle) == len(expected) == 1700
    errors = []
    for i, (o, e) in enumerate(zip(oracle, expected)):
        compare(o, e, f"entry[{i}]", errors, limit=30)
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize("case", CASES)
def test_uproot_reads_late_fields(late, case):
    path, expected = late[case]
    with uproot.open(path) as f:
        t = f["T"]
        for name in expected[0]:
            theirs = ak.to_list(t.arrays([name])[name])
            mine = [e[name] for e in expected]
            assert _loose(theirs) == _loose(mine), f"field {name}: first difference at entry " \
                f"{next(i for i, (a, b) in enumerate(zip(_loose(theirs), _loose(mine))) if a != b)}"
