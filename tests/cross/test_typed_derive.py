"""A file written through the typed Rust path (`#[derive(Record)]` structs: primitives, strings, vectors,
arrays, pairs, tuples, optionals, nested structs as untyped records and untyped collections), read by ROOT
6.40's RNTupleReader (the oracle of root_helpers.cxx) and by uproot 5.7.7, equal to the values the Rust test
built independently of the writer.

The file and its expected values come from `crates/rntuple/tests/integration/typed_fill.rs`, which `make test` runs
(cargo test) before this suite: target/tmp/typed_derive.root and typed_derive.expected.json."""

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
SRC = HERE.parent.parent / "target" / "tmp" / "typed_derive.root"

ORACLE = r"""
import sys, os
sys.path.insert(0, sys.argv[1])
import rootgen
from pathlib import Path
ROOT, _ = rootgen._load_root(Path(sys.argv[2]))
ROOT.xoracle.DumpJson("Events", sys.argv[3], sys.argv[3] + ".oracle.json")
sys.stdout.flush()
os._exit(0)
"""


@pytest.fixture(scope="module")
def typed(tmp_path_factory):
    if not SRC.exists():
        skip_or_fail(f"{SRC} is missing: run `cargo test --release -p rntuple --test typed_fill` first (make test does)")
    out = tmp_path_factory.mktemp("typed")
    path = out / "typed_derive.root"
    shutil.copy(SRC, path)
    expected = json.loads(SRC.with_suffix(".expected.json").read_text())
    return path, expected


def test_root_reads_derived_structs(typed):
    path, expected = typed
    p = subprocess.run([sys.executable, "-c", ORACLE, str(HERE), str(path.parent), str(path)], capture_output=True, timeout=900)
    assert p.returncode == 0, p.stderr.decode()[-4000:]
    oracle = load_oracle(str(path) + ".oracle.json")
    assert len(oracle) == len(expected) == 2000
    for i, (o, e) in enumerate(zip(oracle, expected)):
        errors = compare(o, e, f"entry[{i}]")
        assert not errors, "\n".join(errors)


def test_uproot_reads_derived_structs(typed):
    path, expected = typed
    with uproot.open(path) as f:
        t = f["Events"]
        for name in expected[0]:
            theirs = ak.to_list(t.arrays([name])[name])
            mine = [e[name] for e in expected]
            assert _loose(theirs) == _loose(mine), f"field {name}"
