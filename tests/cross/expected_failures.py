"""The suite's expected failures, all of them, explicit (issue 19).

Three RNTuples of the shared test data cannot be read by ROOT 6.40, so the ROOT comparisons of them
(test_testdata_root.py, test_oracle_vs_uproot.py) are strict expected failures: each must fail exactly as listed
here, and anything else failing is a failure. Their values are still compared with uproot (test_testdata_uproot.py)
and with the shared expected values (crates/rntuple/tests/integration/expected_values.rs).

For each: how the suite's oracle fails (root_helpers.cxx's DumpJson, which emulates classes without a dictionary
from the on-disk field tree: ROOT 6.40 crashes in it), and what plain ROOT 6.40 says when asked to build the
reader's model without emulation (RNTupleReader::GetModel: "unknown type"). The test
test_testdata_root.py::test_expected_root_failures_are_exactly_the_listed ones asserts that this list is complete
and that every listed RNTuple still fails exactly this way.

The suite's other expected failures: uproot 5.7.7 on our key-split files (test_key_split.py, UPROOT_SPLIT_ERRORS:
strict, with the exception type and message checked). test_suite_policy.py checks that there are no others (every
xfail strict with `raises=`, every skip through conftest.skip_or_fail, which fails under CI=true).
"""

from __future__ import annotations

import pytest

# (test data subdirectory, file, RNTuple) -> (the oracle's error, exactly; plain ROOT 6.40's error, exactly)
ROOT_CANNOT_READ = {
    ("rntuple", "test_emptystruct_invalidvar_rntuple_v1-0-0-0.root", "ntuple"): (
        "ROOT crashed (signal 11) while writing or reading this file",
        "unknown type: EmptyStruct (unchecked RResult access!)",
    ),
    ("v1-older", "test_emptystruct_invalidvar_rntuple_v1.root", "ntuple"): (
        "ROOT crashed (signal 11) while writing or reading this file",
        "unknown type: EmptyStruct (unchecked RResult access!)",
    ),
    ("rntuple", "uproot-physlite-rntuple_v1-0-0-0.root", "EventData"): (
        "ROOT crashed (signal 6) while writing or reading this file",
        "unknown type: xAOD::TrigDecisionAuxInfo_v1 (unchecked RResult access!)",
    ),
}


class RootCannotReadListed(Exception):
    """Raised by a test of a listed RNTuple when ROOT failed on it exactly as listed (the strict xfail's `raises`)."""


def check_root_failure(key: tuple, result) -> None:
    """Called with ROOT's result for a shared RNTuple (the oracle's list of entries, or the manifest's error record).
    Listed RNTuples: raises RootCannotReadListed when ROOT failed exactly as listed, AssertionError otherwise (ROOT
    reads it now, or fails another way). Unlisted: AssertionError when ROOT failed."""
    failed = isinstance(result, dict)
    if key not in ROOT_CANNOT_READ:
        assert not failed, (f"ROOT 6.40 cannot read {key}, which is not in expected_failures.ROOT_CANNOT_READ: "
                            f"{result.get('error', '')[:500]} / plain ROOT: {result.get('plain_error')}")
        return
    oracle_error, plain_error = ROOT_CANNOT_READ[key]
    assert failed, f"ROOT 6.40 now reads {key}: remove it from expected_failures.ROOT_CANNOT_READ"
    assert (result.get("error"), result.get("plain_error")) == (oracle_error, plain_error), (
        f"{key} fails in ROOT, but not as listed: oracle {result.get('error')!r}, plain ROOT "
        f"{result.get('plain_error')!r}; listed {oracle_error!r}, {plain_error!r}")
    raise RootCannotReadListed(f"{key}: {oracle_error}; plain ROOT: {plain_error}")


def root_params(params: list) -> list:
    """The shared-data parameters (pytest.param(sub, file, ntuple)) with the listed ones marked as strict expected
    failures that must raise RootCannotReadListed (so any other error fails)."""
    out = []
    for p in params:
        key = tuple(p.values)
        if key in ROOT_CANNOT_READ:
            mark = pytest.mark.xfail(strict=True, raises=RootCannotReadListed,
                                     reason=f"ROOT 6.40: {ROOT_CANNOT_READ[key][1]} (expected_failures.py)")
            p = pytest.param(*p.values, id=p.id, marks=[mark])
        out.append(p)
    return out
