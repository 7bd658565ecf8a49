"""The shared test files, read by our CLI and compared exactly with ROOT 6.40's RNTupleReader (the same oracle as
for the generated files: root_helpers.cxx, with classes that have no dictionary emulated from the on-disk field
tree). Every entry of each RNTuple (the first rootgen.TESTDATA_WINDOW of the two 100-million-entry ones, which
test_testdata_uproot.py compares whole). The RNTuples ROOT 6.40 itself cannot read are listed in
expected_failures.py: strict expected failures that must fail exactly as listed; the uproot comparison
(test_testdata_uproot.py) still covers them.
"""

from __future__ import annotations

import pytest
from expected_failures import ROOT_CANNOT_READ, check_root_failure, root_params
from test_root_generated import assert_entries_equal

import rootgen
from conftest import shared_params

PARAMS = shared_params()


@pytest.mark.parametrize("sub,filename,ntuple_name", root_params(PARAMS))
def test_dump_equals_root(generated, testdata, cli, sub, filename, ntuple_name):
    expected = generated.testdata_oracle(sub, filename, ntuple_name)
    check_root_failure((sub, filename, ntuple_name), expected)
    describe = generated.manifest["testdata"][rootgen.testdata_key(sub, filename, ntuple_name)]["describe"]
    n = describe["num_entries"]
    assert len(expected) == (n if n <= rootgen.TESTDATA_FULL_ENTRIES else rootgen.TESTDATA_WINDOW)
    path = testdata / sub / filename
    actual = cli.dump(path, ntuple_name, entries=(0, len(expected)) if len(expected) < n else None)
    assert_entries_equal(expected, actual, f"rntuple dump {sub}/{filename} --ntuple {ntuple_name}")


def test_expected_root_failures_are_exactly_the_listed(generated, testdata):
    """expected_failures.ROOT_CANNOT_READ is complete and current: every shared RNTuple ROOT fails on is listed, and
    every listed one still fails exactly as listed."""
    keys = {(p.values[0], p.values[1], p.values[2]) for p in PARAMS}
    assert set(ROOT_CANNOT_READ) <= keys, f"listed but not in the test data: {set(ROOT_CANNOT_READ) - keys}"
    failing = {}
    for key in sorted(keys):
        res = generated.manifest["testdata"].get(rootgen.testdata_key(*key))
        assert res is not None, f"rootgen.py did not read {key} with ROOT"
        if res.get("error"):
            failing[key] = (res["error"], res.get("plain_error"))
    assert failing == ROOT_CANNOT_READ, (
        "ROOT's failures on the shared test data differ from expected_failures.ROOT_CANNOT_READ:\n"
        f"  failing, not listed or not as listed: { {k: v for k, v in failing.items() if ROOT_CANNOT_READ.get(k) != v} }\n"
        f"  listed, not failing as listed: { {k: v for k, v in ROOT_CANNOT_READ.items() if failing.get(k) != v} }")
