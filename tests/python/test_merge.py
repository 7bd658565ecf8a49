"""`rntuple.merge` (page copying) and the writer options added with it (`max_key_size`,
`initial_unzipped_page_size`), through Python."""

from __future__ import annotations

import awkward as ak
import numpy as np
import pytest

import rntuple


def _part(k: int, n: int) -> ak.Array:
    ids = np.arange(k * 1_000_000, k * 1_000_000 + n, dtype=np.uint64)
    return ak.Array({"id": ids, "v": ak.unflatten(np.arange(n * 2, dtype=np.float32), np.full(n, 2))})


def test_merge_reads_as_the_inputs_one_after_the_other(tmp_path):
    paths = []
    for k, n in enumerate([1000, 2500, 700]):
        p = tmp_path / f"in{k}.root"
        rntuple.write(p, "Events", _part(k, n), max_unzipped_page_size=4096, approx_zipped_cluster_size=20_000)
        paths.append(p)
    out = tmp_path / "out.root"
    stats = rntuple.merge(out, paths)  # the RNTuple name is found in the first input
    assert stats["entries"] == 4200
    assert stats["file_bytes"] == out.stat().st_size
    with rntuple.open(out) as f:
        got = f["Events"].arrays()
    want = ak.concatenate([_part(k, n) for k, n in enumerate([1000, 2500, 700])])
    assert ak.array_equal(got, want)
    clusters = 0
    for p in paths:
        clusters += _clusters(p)
    assert stats["clusters"] == clusters == _clusters(out) >= 3


def _clusters(path) -> int:
    import uproot

    with uproot.open(path) as f:
        return len(f["Events"].cluster_summaries)


def test_merge_refuses_other_schemas(tmp_path):
    a, b = tmp_path / "a.root", tmp_path / "b.root"
    rntuple.write(a, "Events", {"x": np.arange(3, dtype=np.float32)})
    rntuple.write(b, "Events", {"x": np.arange(3, dtype=np.float64)})
    with pytest.raises(rntuple.RNTupleError, match="another schema.*field 'x'"):
        rntuple.merge(tmp_path / "c.root", [a, b], "Events")
    with pytest.raises(ValueError, match="no input"):
        rntuple.merge(tmp_path / "c.root", [])


def test_filter_mode_keeps_the_first_inputs_fields(tmp_path):
    a, b = tmp_path / "a.root", tmp_path / "b.root"
    rntuple.write(a, "Events", {"x": np.arange(3, dtype=np.float32), "n": np.arange(3, dtype=np.int16)})
    rntuple.write(b, "Events", ak.Array({"tag": ["p", "q"], "n": np.array([7, 8], dtype=np.int16),
                                         "x": np.array([0.5, 1.5], dtype=np.float32)}))
    with pytest.raises(rntuple.RNTupleError, match="another schema"):
        rntuple.merge(tmp_path / "c.root", [a, b], "Events")
    stats = rntuple.merge(tmp_path / "c.root", [a, b], "Events", mode="filter")
    assert stats["entries"] == 5
    got = rntuple.open(tmp_path / "c.root")["Events"].arrays()
    assert got.fields == ["x", "n"]
    assert got.x.to_list() == [0.0, 1.0, 2.0, 0.5, 1.5] and got.n.to_list() == [0, 1, 2, 7, 8]
    e = tmp_path / "e.root"
    rntuple.write(e, "Events", {"n": np.arange(2, dtype=np.int16)})
    with pytest.raises(rntuple.RNTupleError, match="no field 'x'"):
        rntuple.merge(tmp_path / "d.root", [a, e], "Events", mode="filter")
    with pytest.raises(ValueError, match="'strict', 'filter' or 'union'"):
        rntuple.merge(tmp_path / "d.root", [a, b], "Events", mode="any")


def test_small_keys_and_initial_page_size_options(tmp_path):
    data = _part(0, 20_000)
    p = tmp_path / "small_keys.root"
    rntuple.write(p, "Events", data, compression=0, max_key_size=4096, initial_unzipped_page_size=64,
                  max_unzipped_page_size=32768)
    with rntuple.open(p) as f:
        assert ak.array_equal(f["Events"].arrays(), data)
    opts = rntuple.default_write_options()
    assert opts["max_key_size"] == 1 << 30 and opts["initial_unzipped_page_size"] == 256
    assert opts["write_outside_lock"] is True
    with pytest.raises(ValueError, match="max_key_size"):
        rntuple.write(tmp_path / "bad.root", "Events", data, max_key_size=10)


def test_merge_of_inputs_of_different_compression_read_by_root_and_uproot(tmp_path):
    """Inputs written with zstd, lzma, lz4 and zlib, merged (--compression 404 for the envelopes): ROOT 6.40 and
    uproot read every entry as the inputs' one after the other, and each cluster keeps its input's settings."""
    import uproot

    from conftest import root_dump_many, same

    settings = [505, 207, 404, 101]
    paths, parts = [], []
    for k, c in enumerate(settings):
        p = tmp_path / f"in_{c}.root"
        part = ak.Array({"id": _part(k, 900 + 100 * k)["id"], "v": _part(k, 900 + 100 * k)["v"],
                         "s": [f"{c}:{i}" for i in range(900 + 100 * k)]})
        rntuple.write(p, "Events", part, compression=c, max_unzipped_page_size=4096, approx_zipped_cluster_size=8000)
        paths.append(p)
        parts.append(part)
    out = tmp_path / "mixed.root"
    stats = rntuple.merge(out, paths, "Events")  # pages keep their compression
    want = ak.to_list(ak.concatenate(parts))
    assert stats["entries"] == len(want) == 4200
    (oracle,) = root_dump_many([(out, "Events")])
    errors = []
    for i, (o, e) in enumerate(zip(oracle, want)):
        same(o, e, f"entry[{i}]", errors)
    assert len(oracle) == len(want) and not errors, "\n".join(errors)
    with uproot.open(out) as f:
        nt = f["Events"]
        assert ak.to_list(nt.arrays()) == want
        # per cluster, the compression settings of its columns (uproot's page list): each input's, in order
        got_settings = [{c.compression_settings for c in cluster} for cluster in nt.page_link_list]
    want_settings = []
    for k, c in enumerate(settings):
        with uproot.open(paths[k]) as f:
            n_in = len(f["Events"].cluster_summaries)
        want_settings += [{c}] * n_in
    assert got_settings == want_settings
    # compression= recompresses every page stored otherwise (the 404 input's are copied as they are)
    again = tmp_path / "again.root"
    stats = rntuple.merge(again, paths, "Events", compression=404)
    assert 0 < stats["recompressed_pages"] < stats["pages"]
    with uproot.open(again) as f:
        nt = f["Events"]
        assert ak.to_list(nt.arrays()) == want
        assert {c.compression_settings for cluster in nt.page_link_list for c in cluster} == {404}
