"""The shared test files (scikit-hep-testdata: ROOT 6.34-6.38 output in testdata/rntuple, earlier format-1.0
revisions in testdata/v1-older), read by our CLI and compared with uproot 5.7.7 at test time.

uproot's values and ours are brought to one form by uproot_norm (base classes flattened the way uproot does,
tuples as lists, unique_ptr as 0/1-element lists, empty structs as [], NaN/inf as strings, float32 compared as
float32). Large RNTuples are limited to their first MAX_ENTRIES entries.
"""

from __future__ import annotations

import warnings

import awkward as ak
import pytest
import uproot

import uproot_norm
from conftest import shared_params, skip_or_fail
from rootgen import compare

MAX_ENTRIES = 300
SUBDIRS = ("rntuple", "v1-older")


PARAMS = shared_params()


def test_testdata_present(testdata):
    for sub in SUBDIRS:
        files = list((testdata / sub).glob("*.root"))
        if not files:
            skip_or_fail(f"no .root files in {testdata / sub}")
    assert len(PARAMS) >= 40, f"expected the ~45 RNTuples of the shared test data, found {len(PARAMS)}"


def _uproot_values(ntuple, tree, stop):
    """{field name: list of values} from uproot, reading all fields at once, or one by one if that fails."""
    names = [f.name for f in tree]
    try:
        arrays = ntuple.arrays(names, entry_stop=stop)
        return {n: ak.to_list(arrays[n]) for n in names}, {}
    except Exception:
        out, failed = {}, {}
        for n in names:
            try:
                out[n] = ak.to_list(ntuple.arrays([n], entry_stop=stop)[n])
            except Exception as exc:
                failed[n] = f"{type(exc).__name__}: {exc}"
        return out, failed


@pytest.mark.parametrize("sub,filename,ntuple_name", PARAMS)
def test_dump_equals_uproot(testdata, cli, sub, filename, ntuple_name):
    path = testdata / sub / filename
    assert not ntuple_name.startswith("<"), ntuple_name
    ntuple = uproot.open(path)[ntuple_name]
    tree = uproot_norm.field_tree(ntuple)
    n = ntuple.num_entries
    stop = min(n, MAX_ENTRIES)
    expected, uproot_failed = _uproot_values(ntuple, tree, stop)
    actual = cli.dump(path, ntuple_name, entries=(0, stop) if stop < n else None)
    assert len(actual) == stop, f"expected {stop} entries, got {len(actual)}"
    top = [f.name for f in tree]
    errors = []
    for i, entry in enumerate(actual):
        if not isinstance(entry, dict):
            errors.append(f"entry[{i}]: not an object: {entry!r:.200}")
            continue
        if list(entry) != top:
            errors.append(f"entry[{i}]: keys {list(entry)[:20]}... differ from the schema order {top[:20]}...")
            break
        for field in tree:
            if field.name not in expected:
                continue
            e = uproot_norm.expected_from_uproot(expected[field.name][i], field)
            a = uproot_norm.ours_to_uproot(entry[field.name], field)
            compare(e, a, f"entry[{i}].{field.name}", errors, limit=40)
        if len(errors) >= 40:
            break
    assert not errors, f"{filename}:{ntuple_name} vs uproot, {len(errors)}+ differences:\n  " + "\n  ".join(errors)
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
    if p.returncode != 0:  # legacy or broken anchors: refused in both forms, with the reason in the JSON
        obj = json.loads(p.stdout)
        assert obj["ntuples"] and "error" in obj["ntuples"][0], p.stdout
        return
    obj = json.loads(p.stdout)
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
