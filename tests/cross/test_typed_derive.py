"""A file written through the typed Rust path (`#[derive(Record)]` structs: primitives, strings, vectors,
arrays, pairs, tuples, optionals, nested structs as untyped records and untyped collections), read by ROOT
6.40's RNTupleReader (the oracle of root_helpers.cxx) and by uproot 5.7.7, equal to the values the Rust test
built independently of the writer.

The file and its expected values come from `crates/rntuple/tests/integration/typed_fill.rs`
(RUST_TEST: target/tmp/typed_derive.root and typed_derive.expected.json), which `make test` runs (cargo test)
before this suite; run alone, this file runs that test when they are missing (conftest.rust_outputs)."""

from __future__ import annotations

import awkward as ak
import pytest
import uproot
from root_subprocess import compare_entries, root_oracle
from test_our_writer_types import _loose

RUST_TEST = "typed_fill::derived_structs_round_trip_sequential_and_parallel"


@pytest.fixture(scope="module")
def typed(tmp_path_factory, rust_outputs):
    return rust_outputs.with_expected(RUST_TEST, "typed_derive", tmp_path_factory.mktemp("typed"))


def test_root_reads_derived_structs(typed):
    path, expected = typed
    oracle = root_oracle(path.parent, [("Events", path)])[("Events", path)].entries
    assert len(oracle) == len(expected) == 2000
    errors = compare_entries(oracle, expected)
    assert not errors, "\n".join(errors)


def test_uproot_reads_derived_structs(typed):
    path, expected = typed
    with uproot.open(path) as f:
        t = f["Events"]
        for name in expected[0]:
            theirs = ak.to_list(t.arrays([name])[name])
            mine = [e[name] for e in expected]
            assert _loose(theirs) == _loose(mine), f"field {name}"
