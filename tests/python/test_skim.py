"""`rntuple.skim`: fields and entry ranges into a new file, pages copied for whole clusters, re-encoded otherwise."""

from __future__ import annotations

import awkward as ak
import numpy as np
import pytest

import rntuple


def _data(n: int) -> ak.Array:
    ids = np.arange(n, dtype=np.uint64)
    v = ak.unflatten(np.random.default_rng(7).random(n * 3, dtype=np.float32), np.full(n, 3))
    label = [f"e{i}" for i in range(n)]
    return ak.Array({"id": ids, "v": v, "label": label})


@pytest.fixture()
def source(tmp_path):
    p = tmp_path / "in.root"
    data = _data(5000)
    with rntuple.Writer(p, "Events", rntuple.infer_schema(data), max_unzipped_page_size=4096,
                        approx_zipped_cluster_size=10_000) as w:
        for i in range(0, 5000, 250):
            w.extend(data[i:i + 250])
    return p


def _clusters(path):
    import uproot

    with uproot.open(path) as f:
        return [(c.num_first_entry, c.num_first_entry + c.num_entries) for c in f["Events"].cluster_summaries]


def test_fields_of_whole_clusters_are_copied(source, tmp_path):
    cl = _clusters(source)
    assert len(cl) >= 4
    a, b = cl[1][0], cl[3][1]
    out = tmp_path / "copy.root"
    s = rntuple.skim(source, out, fields=["label", "id"], entry_start=a, entry_stop=b)
    assert s["method"] == "copied pages" and s["why_not_copied"] is None
    assert s["fields"] == ["id", "label"]  # the input's schema order
    assert (s["entries"], s["clusters"], s["entry_start"], s["entry_stop"]) == (b - a, 3, a, b)
    assert s["file_bytes"] == out.stat().st_size
    with rntuple.open(out) as f:
        t = f["Events"]
        assert t.schema == {"id": "std::uint64_t", "label": "std::string"}
        got = t.arrays()
    assert ak.array_equal(got, _data(5000)[a:b][["id", "label"]])


def test_a_range_that_cuts_clusters_is_reencoded(source, tmp_path):
    out = tmp_path / "cut.root"
    s = rntuple.skim(source, out, fields="v", ntuple="Events", entry_start=1234, entry_stop=3210, compression=0)
    assert s["method"] == "re-encoded" and "cut a cluster" in s["why_not_copied"]
    assert s["entries"] == 3210 - 1234 and s["pages_copied"] == 0
    with rntuple.open(out) as f:
        got = f["Events"].arrays()
    assert ak.array_equal(got, _data(5000)[1234:3210][["v"]])
    # Only entry_stop: from the start.
    s = rntuple.skim(source, out, entry_stop=10)
    assert (s["entry_start"], s["entry_stop"], s["entries"]) == (0, 10, 10)


def test_bad_requests_raise(source, tmp_path):
    with pytest.raises(rntuple.RNTupleError, match="no top-level field 'nope'"):
        rntuple.skim(source, tmp_path / "x.root", fields=["nope"])
    with pytest.raises(rntuple.RNTupleError, match="also the input"):
        rntuple.skim(source, source)
    with pytest.raises(ValueError, match="entry_start must be a non-negative integer"):
        rntuple.skim(source, tmp_path / "x.root", entry_start=-1)
    with pytest.raises(rntuple.RNTupleError, match="reversed"):
        rntuple.skim(source, tmp_path / "x.root", entry_start=20, entry_stop=10)
    with rntuple.open(source) as f:
        assert f["Events"].num_entries == 5000


def test_skims_read_by_root_and_uproot(source, tmp_path):
    """Python skims (fields of whole clusters copied; a range re-encoded with lz4; whole clusters re-encoded with
    lzma by `reencode=True`): ROOT 6.40 and uproot read every kept entry and field as written, and the re-encoded
    pages carry the new compression settings (uproot's page list)."""
    import uproot

    from conftest import root_dump_many, same

    data = ak.to_list(_data(5000))
    cl = _clusters(source)
    a, b = cl[1][0], cl[-2][1]
    outs = {
        "copied": (tmp_path / "copied.root", dict(fields=["id", "label"], entry_start=a, entry_stop=b), "copied pages",
                   505),
        "range": (tmp_path / "range.root", dict(fields="v", entry_start=1234, entry_stop=3210, compression=404),
                  "re-encoded", 404),
        "reencode": (tmp_path / "reencode.root", dict(entry_start=a, entry_stop=b, compression=207, reencode=True),
                     "re-encoded", 207),
    }
    for out, kw, method, _ in outs.values():
        stats = rntuple.skim(source, out, ntuple="Events", **kw)
        assert stats["method"] == method, stats
    oracles = root_dump_many([(out, "Events") for out, *_ in outs.values()])
    for (name, (out, kw, _, setting)), oracle in zip(outs.items(), oracles):
        keep = kw.get("fields") or ["id", "v", "label"]
        keep = [keep] if isinstance(keep, str) else keep
        want = [{k: e[k] for k in keep} for e in data[kw["entry_start"]:kw["entry_stop"]]]
        errors = []
        for i, (o, e) in enumerate(zip(oracle, want)):
            same(o, e, f"{name} entry[{i}]", errors)
        assert len(oracle) == len(want) and not errors, "\n".join(errors)
        with uproot.open(out) as f:
            nt = f["Events"]
            assert ak.to_list(nt.arrays()) == want, name
            settings = {c.compression_settings for cluster in nt.page_link_list for c in cluster}
        assert settings == {setting}, (name, settings)
