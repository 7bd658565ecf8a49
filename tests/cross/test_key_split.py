"""Files whose pages and envelopes are larger than the maximum key size (4096 bytes here), so that our writer
spreads clusters over several RBlob keys and splits large payloads into chunks with a chunk table, as ROOT does.
ROOT 6.40's RNTupleReader (the oracle of root_helpers.cxx) and uproot 5.7.7 must read them equal to the values the
Rust test built independently of the writer. uproot 5.7.7 does not implement split payloads (its test is a strict
xfail: it starts failing, as a signal, the day uproot reads them or fails another way).

The files and their expected values come from `crates/rntuple/tests/integration/key_split.rs` (RUST_TEST:
target/tmp/key_split_{0,505}.root and key_split_{0,505}.expected.json), which `make test` runs (cargo test) before
this suite; run alone, this file runs that test when they are missing (conftest.rust_outputs)."""

from __future__ import annotations

import awkward as ak
import pytest
import uproot
from root_subprocess import compare_entries, root_oracle

RUST_TEST = "key_split::payloads_above_the_key_size_are_split_and_read_back"


@pytest.fixture(scope="module", params=[0, 505])
def split_file(request, tmp_path_factory, rust_outputs):
    return rust_outputs.with_expected(RUST_TEST, f"key_split_{request.param}", tmp_path_factory.mktemp("key_split"))


def test_root_reads_split_payloads(split_file):
    path, expected = split_file
    oracle = root_oracle(path.parent, [("Events", path)])[("Events", path)].entries
    assert len(oracle) == len(expected) == 20000
    errors = compare_entries(oracle, expected)
    assert not errors, "\n".join(errors)


class UprootCannotFollowChunks(Exception):
    """uproot failed on a split payload exactly as listed in UPROOT_SPLIT_ERRORS (the strict xfail's `raises`)."""


# What uproot 5.7.7 raises on these files, by compression setting: the exception's type name and a piece of its
# message. Anything else (another error, or no error: uproot reads them now) fails the test.
UPROOT_SPLIT_ERRORS = {
    0: ("DeserializationError", "outside expected range"),  # the chunk table read as values
    505: ("DecompressionError", "Data corruption detected"),  # zstd given the chunk table as compressed bytes
}


@pytest.mark.xfail(
    strict=True,
    raises=UprootCannotFollowChunks,
    reason="uproot 5.7.7 keeps the anchor's fMaxKeySize but does not follow chunk tables (a payload larger than "
    "the maximum key size is read as one contiguous range); ROOT reads these files, see above",
)
def test_uproot_reads_split_payloads(split_file):
    path, expected = split_file
    setting = int(path.stem.rsplit("_", 1)[1])
    try:
        with uproot.open(path) as f:
            t = f["Events"]
            arrays = t.arrays(["id", "v", "s", "extra_field_with_a_long_name_59"])
    except Exception as exc:
        kind, text = UPROOT_SPLIT_ERRORS[setting]
        assert type(exc).__name__ == kind and text in str(exc), f"uproot failed another way: {exc!r}"
        raise UprootCannotFollowChunks(f"{kind}: {text}") from exc
    assert ak.to_list(arrays["id"]) == [e["id"] for e in expected]
    assert ak.to_list(arrays["v"]) == [e["v"] for e in expected]
    assert ak.to_list(arrays["s"]) == [e["s"] for e in expected]
    assert ak.to_list(arrays["extra_field_with_a_long_name_59"]) == [e["extra_field_with_a_long_name_59"] for e in expected]
