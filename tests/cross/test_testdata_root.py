"""The shared test files, read by our CLI and compared exactly with ROOT 6.40's RNTupleReader (the same oracle as
for the generated files: root_helpers.cxx, with classes that have no dictionary emulated from the on-disk field
tree). First rootgen.TESTDATA_MAX_ENTRIES entries of each RNTuple. Where ROOT 6.40 itself cannot read a file, the
test is skipped with ROOT's error; the uproot comparison (test_testdata_uproot.py) still covers it.
"""

from __future__ import annotations

import pytest
from test_root_generated import assert_entries_equal

import rootgen
from conftest import shared_params

PARAMS = shared_params()


@pytest.mark.parametrize("sub,filename,ntuple_name", PARAMS)
def test_dump_equals_root(generated, testdata, cli, sub, filename, ntuple_name):
    expected = generated.testdata_oracle(sub, filename, ntuple_name)
    if isinstance(expected, dict):
        pytest.skip(f"ROOT 6.40 cannot read it: {expected['error'][:300]}")
    describe = generated.manifest["testdata"][rootgen.testdata_key(sub, filename, ntuple_name)]["describe"]
    n = describe["num_entries"]
    path = testdata / sub / filename
    actual = cli.dump(path, ntuple_name, entries=(0, len(expected)) if len(expected) < n else None)
    assert_entries_equal(expected, actual, f"rntuple dump {sub}/{filename} --ntuple {ntuple_name}")
