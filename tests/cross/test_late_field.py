"""Late model extension written by our sequential writer, read by ROOT 6.40 and uproot entry by entry: nine fields
of different kinds (float, string, vector, array, bitset, optional, variant, pair, map) added after 1000 entries,
exactly at a cluster boundary (after a committed cluster) and in the middle of a cluster, compressed (505) and
not (0). The files and their expected entries (written from the values the test wrote, not read back) come from
crates/rntuple/tests/integration/writer_roundtrip.rs (RUST_TEST), which `make test` runs (cargo test) before this
suite; run alone, this file runs that test when they are missing (conftest.rust_outputs). About 15 s (one ROOT
process)."""

from __future__ import annotations

import awkward as ak
import pytest
import uproot
from root_subprocess import compare_entries, root_oracle
from test_our_writer_types import _loose

RUST_TEST = "writer_roundtrip::late_model_extension_reads_defaults_before"
CASES = ["boundary_505", "boundary_0", "mid_505", "mid_0"]


@pytest.fixture(scope="module")
def late(tmp_path_factory, rust_outputs):
    out = tmp_path_factory.mktemp("late")
    files = {case: rust_outputs.with_expected(RUST_TEST, f"late_field_{case}", out) for case in CASES}
    # std::map<std::int32_t,float> (field m) needs a compiled dictionary in ROOT 6.40 from pip (see
    # root_load.DICTIONARY_TYPES): without one, its collection proxy aborts.
    readings = root_oracle(out, [("T", f) for f, _ in files.values()], describe=True,
                           dictionaries=[("std::map<std::int32_t,float>", "map;cstdint")])
    return {case: (path, expected, readings[("T", path)]) for case, (path, expected) in files.items()}


@pytest.mark.parametrize("case", CASES)
def test_root_reads_late_fields(late, case):
    path, expected, reading = late[case]
    describe = reading.describe
    starts = [c["first_entry"] for c in describe["clusters"]]
    if case.startswith("boundary"):
        assert 1000 in starts, starts
    elif case == "mid_505":  # uncompressed, the 2000-byte clusters are small enough to start at 1000 anyway
        assert 1000 not in starts, starts
    assert [f["name"] for f in describe["fields"]] == list(expected[0])
    oracle = reading.entries
    assert len(oracle) == len(expected) == 1700
    errors = compare_entries(oracle, expected, limit=30)
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize("case", CASES)
def test_uproot_reads_late_fields(late, case):
    path, expected, _ = late[case]
    with uproot.open(path) as f:
        t = f["T"]
        for name in expected[0]:
            theirs = ak.to_list(t.arrays([name])[name])
            mine = [e[name] for e in expected]
            assert _loose(theirs) == _loose(mine), f"field {name}: first difference at entry " \
                f"{next(i for i, (a, b) in enumerate(zip(_loose(theirs), _loose(mine))) if a != b)}"
