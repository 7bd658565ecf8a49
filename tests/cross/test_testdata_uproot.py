"""The shared test files (scikit-hep-testdata: ROOT 6.34-6.38 output in testdata/rntuple, earlier format-1.0
revisions in testdata/v1-older), read by our CLI and compared with uproot 5.7.7 at test time.

uproot's values and ours are brought to one form by uproot_norm (base classes flattened the way uproot does,
tuples as lists, unique_ptr as 0/1-element lists, empty structs as [], NaN/inf as strings, float32 compared as
float32). Every entry of every RNTuple: as JSON values up to FULL_ENTRIES entries; the larger ones (the two
100-million-entry files) as exact per-field arrays, ours (the `rntuple` Python package, the same reader) against
uproot's, entry by entry, plus a window of the CLI's JSON.
"""

from __future__ import annotations

import hashlib
import warnings

import awkward as ak
import numpy as np
import pytest
import uproot

import uproot_norm
from conftest import shared_params, skip_or_fail
from rootgen import compare

FULL_ENTRIES = 1_000_000
WINDOW = 3000  # of the larger RNTuples, the first and last WINDOW entries are also compared as JSON
SUBDIRS = ("rntuple", "v1-older")


PARAMS = shared_params()


def test_testdata_present(testdata):
    for sub in SUBDIRS:
        files = list((testdata / sub).glob("*.root"))
        if not files:
            skip_or_fail(f"no .root files in {testdata / sub}")
    assert len(PARAMS) >= 40, f"expected the ~45 RNTuples of the shared test data, found {len(PARAMS)}"


def _uproot_values(ntuple, tree, start, stop):
    """{field name: list of values} from uproot, reading all fields at once, or one by one if that fails."""
    names = [f.name for f in tree]
    try:
        arrays = ntuple.arrays(names, entry_start=start, entry_stop=stop)
        return {n: ak.to_list(arrays[n]) for n in names}, {}
    except Exception:
        out, failed = {}, {}
        for n in names:
            try:
                out[n] = ak.to_list(ntuple.arrays([n], entry_start=start, entry_stop=stop)[n])
            except Exception as exc:
                failed[n] = f"{type(exc).__name__}: {exc}"
        return out, failed


def _compare_with_uproot(cli, path, ntuple, tree, filename, ntuple_name, start, stop):
    """`rntuple dump --entries start:stop` equals uproot's same entries, value by value."""
    expected, uproot_failed = _uproot_values(ntuple, tree, start, stop)
    n = ntuple.num_entries
    actual = cli.dump(path, ntuple_name, entries=(start, stop) if (start, stop) != (0, n) else None)
    assert len(actual) == stop - start, f"expected {stop - start} entries, got {len(actual)}"
    top = [f.name for f in tree]
    errors = []
    for k, entry in enumerate(actual):
        i = start + k
        if not isinstance(entry, dict):
            errors.append(f"entry[{i}]: not an object: {entry!r:.200}")
            continue
        if list(entry) != top:
            errors.append(f"entry[{i}]: keys {list(entry)[:20]}... differ from the schema order {top[:20]}...")
            break
        for field in tree:
            if field.name not in expected:
                continue
            e = uproot_norm.expected_from_uproot(expected[field.name][k], field)
            a = uproot_norm.ours_to_uproot(entry[field.name], field)
            compare(e, a, f"entry[{i}].{field.name}", errors, limit=40)
        if len(errors) >= 40:
            break
    assert not errors, f"{filename}:{ntuple_name} vs uproot, {len(errors)}+ differences:\n  " + "\n  ".join(errors)
    return uproot_failed


def _flat_arrays(array) -> list[np.ndarray]:
    """A field's values in entry order as numpy arrays: the values of a flat field, or the counts per entry and the
    flattened values of a (nested) list field."""
    out = []
    while array.ndim > 1:
        out.append(np.asarray(ak.num(array, axis=1)).astype(np.int64))
        array = ak.flatten(array, axis=1)
    out.append(np.asarray(array))
    return out


def test_large_rntuples_equal_uproot_entry_by_entry(testdata):
    """The RNTuples above FULL_ENTRIES entries, every entry: for each field, uproot's values against ours (the
    `rntuple` Python package) as exact arrays in entry order (equal dtype, equal bytes), and their sha256 agree."""
    import rntuple
    large = []
    for sub, filename, ntuple_name in [p.values for p in PARAMS]:
        path = testdata / sub / filename
        with uproot.open(path) as f:
            ntuple = f[ntuple_name]
            if ntuple.num_entries <= FULL_ENTRIES:
                continue
            large.append(f"{sub}/{filename}")
            n = ntuple.num_entries
            ours_nt = rntuple.open(path)[ntuple_name]
            assert ours_nt.num_entries == n
            for name in ntuple.keys(recursive=False):
                u = _flat_arrays(ntuple.arrays([name])[name])
                o = _flat_arrays(ours_nt.arrays([name])[name])
                assert len(u) == len(o), f"{filename}:{name}: nesting depth {len(o)} (uproot {len(u)})"
                assert len(u[0]) == n
                for level, (a, b) in enumerate(zip(u, o)):
                    assert a.dtype == b.dtype and a.shape == b.shape, f"{filename}:{name}[{level}]: {b.dtype}{b.shape} " \
                                                                      f"vs uproot {a.dtype}{a.shape}"
                    if not np.array_equal(a, b):
                        bad = np.nonzero(a != b)[0][:5].tolist()
                        pytest.fail(f"{filename}:{name}[{level}]: differs from uproot at positions {bad}: ours "
                                    f"{b[bad].tolist()}, uproot {a[bad].tolist()}")
                    assert hashlib.sha256(a.tobytes()).digest() == hashlib.sha256(b.tobytes()).digest()
    assert len(large) == 2, f"expected the two 100-million-entry files, found {large}"


@pytest.mark.parametrize("sub,filename,ntuple_name", PARAMS)
def test_dump_equals_uproot(testdata, cli, sub, filename, ntuple_name):
    """Every entry (up to FULL_ENTRIES; of larger RNTuples the first and last WINDOW, the whole being compared by
    test_large_rntuples_equal_uproot_entry_by_entry)."""
    path = testdata / sub / filename
    assert not ntuple_name.startswith("<"), ntuple_name
    ntuple = uproot.open(path)[ntuple_name]
    tree = uproot_norm.field_tree(ntuple)
    n = ntuple.num_entries
    windows = [(0, n)] if n <= FULL_ENTRIES else [(0, WINDOW), (n - WINDOW, n)]
    uproot_failed = {}
    for start, stop in windows:
        uproot_failed.update(_compare_with_uproot(cli, path, ntuple, tree, filename, ntuple_name, start, stop))
    # fields uproot cannot read are still dumped (their presence is checked above); say so in the report
    if uproot_failed:
        warnings.warn(f"{filename}:{ntuple_name}: not compared, uproot cannot read {uproot_failed}", stacklevel=1)


@pytest.mark.parametrize("sub,filename,ntuple_name", PARAMS)
def test_info_names_ntuple_and_entries(testdata, cli, sub, filename, ntuple_name):
    path = testdata / sub / filename
    ntuple = uproot.open(path)[ntuple_name]
    text = cli.info(path)
    assert ntuple_name in text, f"`rntuple info {filename}` does not name {ntuple_name!r}"
    n = ntuple.num_entries
    assert str(n) in text or f"{n:,}" in text, f"`rntuple info {filename}` does not give {ntuple_name}'s {n} entries"


@pytest.mark.parametrize("sub,filename,ntuple_name", PARAMS)
def test_info_json_agrees_with_uproot(testdata, cli, sub, filename, ntuple_name):
    """`rntuple info --json`: entries, clusters, top-level fields and page counts as uproot sees them, and the
    same byte totals as the text form."""
    import json

    path = testdata / sub / filename
    p = cli.run("info", str(path), "--ntuple", ntuple_name, "--json")
    # every RNTuple of rntuple/ and v1-older/ is readable: a non-zero exit is a failure (legacy/: test_legacy.py)
    assert p.returncode == 0, f"`rntuple info --json` exited with {p.returncode}: {p.stdout[:1000]!r} " \
                              f"{p.stderr.decode(errors='replace')[-2000:]}"
    obj = json.loads(p.stdout)
    assert "error" not in obj["ntuples"][0], obj["ntuples"][0]["error"]
    assert obj["root_version"].count(".") == 1 and "/" in obj["root_version"]
    (nt,) = obj["ntuples"]
    ntuple = uproot.open(path)[ntuple_name]
    assert nt["entries"] == ntuple.num_entries
    assert nt["clusters"] == len(ntuple.cluster_summaries)
    tops = [f["path"] for f in nt["fields"] if f["top_level"]]
    assert sorted(tops) == sorted(ntuple.keys(recursive=False)), (tops, ntuple.keys(recursive=False))
    assert nt["compressed_bytes"] == sum(c["compressed_bytes"] for c in nt["columns"])
    assert len(nt["columns"]) == len(ntuple.column_records)
    text = cli.info(path, ntuple_name)
    for c in nt["columns"]:
        assert f" {c['compressed_bytes']} " in text and c["field"] in text, c


def test_large_file_entry_window(testdata, cli):
    """A window in the middle of the CMS file (several clusters) equals uproot's same window."""
    path = testdata / "rntuple" / "Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root"
    if not path.exists():
        skip_or_fail(f"{path} missing")
    ntuple = uproot.open(path)["Events"]
    tree = uproot_norm.field_tree(ntuple)
    start, stop = 437, 871
    arrays = ntuple.arrays([f.name for f in tree], entry_start=start, entry_stop=stop)
    actual = cli.dump(path, "Events", entries=(start, stop))
    assert len(actual) == stop - start
    errors = []
    for field in tree:
        values = ak.to_list(arrays[field.name])
        for k, (u, o) in enumerate(zip(values, actual)):
            compare(uproot_norm.expected_from_uproot(u, field), uproot_norm.ours_to_uproot(o.get(field.name), field),
                    f"entry[{start + k}].{field.name}", errors, limit=20)
    assert not errors, "\n".join(errors)
