"""uproot's descriptor-level API of an RNTuple (``member``, ``header``, ``footer``, ``column_records``,
``page_link_list``, ``get_field_metadata``, ``read_cluster_pages``, ``_footer_chunk``) and of a file
(``f.file.source.chunk``/``chunks``), compared value by value with uproot's on the shared test files and on
files our writer made (schema extension, reduced-precision floats, projections, attribute sets, several
clusters and pages)."""

from __future__ import annotations

import io
import pathlib
import queue

import numpy as np
import pytest
import uproot
import xxhash

import rntuple
from conftest import need, skip_or_fail, testdata_dir

DATA = testdata_dir() / "rntuple"
ANCHOR = ["fVersionEpoch", "fVersionMajor", "fVersionMinor", "fVersionPatch", "fSeekHeader", "fNBytesHeader", "fLenHeader",
          "fSeekFooter", "fNBytesFooter", "fLenFooter", "fMaxKeySize"]
FIELD = ["field_version", "type_version", "parent_field_id", "struct_role", "flags", "field_name", "type_name", "type_alias",
         "field_desc", "repetition", "source_field_id", "checksum"]
COLUMN = ["type", "nbits", "field_id", "flags", "repr_idx", "first_element_index", "min_value", "max_value"]
METADATA = ["ncol", "dtype_byte", "dtype_str", "dtype", "dtype_toread", "dtype_result", "split", "zigzag", "delta", "isbit", "nbits"]
SHARED = [
    ("ntpl001_staff_rntuple_v1-0-0-0.root", "Staff"),
    ("ntpl001_staff_rntuple_v1-0-1-0.root", "Staff"),
    ("Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root", "Events"),
    ("rntviewer-testfile-uncomp-single-rntuple-v1-0-0-0.root", "Contributors"),
    ("rntviewer-testfile-multiple-rntuples-v1-0-0-0.root", "B"),
    ("test_extension_columns_rntuple_v1-0-0-0.root", "ntuple"),
    ("test_multiple_representations_rntuple_v1-0-0-0.root", "ntuple"),
    ("test_multiple_cluster_groups_rntuple_v1-0-0-0.root", "ntuple"),
    ("test_index_multicluster_rntuple_v1-0-0-0.root", "ntuple"),
    ("test_float_types_rntuple_v1-0-0-0.root", "ntuple"),
    ("test_stl_containers_rntuple_v1-0-0-0.root", "ntuple"),
    ("test_splitint_rntuple_v1-0-1-0.root", "ntuple"),
    ("test_bit_rntuple_v1-0-0-0.root", "ntuple"),
    ("test_class_inheritance_rntuple_v1-0-0-1.root", "rntpl"),
    ("uproot-physlite-rntuple_v1-0-0-0.root", "EventTag"),
]
WRITTEN = ["late_field", "reduced_floats", "attributes"]


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict[str, pathlib.Path]:
    """Files of our writer: a field added after 2000 entries (schema extension, deferred columns) over many
    small pages and clusters; quantized, truncated and half floats with strings, vectors and a projected
    field (alias columns); an attribute set linked from the footer."""
    d = tmp_path_factory.mktemp("descriptors")
    out = {name: d / f"{name}.root" for name in WRITTEN}
    with rntuple.Writer(out["late_field"], "T", {"x": "std::int32_t", "v": "std::vector<std::int64_t>"},
                        max_unzipped_page_size=256, approx_zipped_cluster_size=2000) as w:
        for k in range(20):
            w.extend({"x": np.arange(k * 100, (k + 1) * 100, dtype=np.int32), "v": [list(range(i % 3)) for i in range(100)]})
        w.add_field("y", "float")
        w.extend({"x": np.array([1], dtype=np.int32), "v": [[7]], "y": np.array([2.5], dtype=np.float32)})
    rows = 300
    rng = np.random.default_rng(3)
    schema = {"q": ("float", {"quantize": (-1.0, 1.0, 12)}), "t": ("float", {"truncate": 14}), "h": ("float", {"half": True}),
              "s": "std::string", "jets": "std::vector<float>", "flag": "bool"}
    data = {"q": rng.uniform(-1, 1, rows).astype(np.float32), "t": rng.normal(size=rows).astype(np.float32),
            "h": rng.normal(size=rows).astype(np.float32), "s": [f"s{i}" * (i % 4) for i in range(rows)],
            "jets": [list(rng.normal(size=i % 5).astype(np.float32)) for i in range(rows)], "flag": np.arange(rows) % 3 == 0}
    rntuple.write(out["reduced_floats"], "Events", data, schema=schema, projections={"nJets": "jets"},
                  approx_zipped_cluster_size=3000)
    with rntuple.Writer(out["attributes"], "Events", {"x": "float"}) as w:
        runs = w.attributes("runs", {"run": "std::int32_t"})
        w.extend({"x": np.arange(10, dtype=np.float32)})
        runs.commit_range(0, 10, {"run": 7})
    return out


@pytest.fixture(params=[f"shared:{f}:{n}" for f, n in SHARED] + [f"written:{w}" for w in WRITTEN])
def pair(request, written):
    """The same RNTuple opened by uproot and by rntuple."""
    kind, *rest = request.param.split(":")
    if kind == "shared":
        path, name = DATA / rest[0], rest[1]
        if not path.exists():
            skip_or_fail(f"{path} is missing")
    else:
        path, name = written[rest[0]], "T" if rest[0] == "late_field" else "Events"
    with uproot.open(path) as theirs, rntuple.open(path) as ours:
        yield theirs[name], ours[name]


def same_records(theirs, ours, attrs):
    assert len(ours) == len(theirs)
    for i, (t, o) in enumerate(zip(theirs, ours)):
        for a in attrs:
            want, got = getattr(t, a), getattr(o, a)
            if a == "first_element_index" and got < 0:
                got %= 2**64  # uproot reads the signed index as unsigned
            assert got == want, f"record {i}: {a} is {got!r}, uproot says {want!r}"


def test_anchor_members(pair):
    theirs, ours = pair
    assert {m: ours.member(m) for m in ANCHOR} == {m: theirs.member(m) for m in ANCHOR}
    assert ours.members == {m: theirs.member(m) for m in ANCHOR} and all(ours.has_member(m) for m in ANCHOR)


def test_header_records(pair):
    theirs, ours = pair
    t, o = theirs.header, ours.header
    for a in ["env_header", "feature_flag", "ntuple_name", "ntuple_description", "writer_identifier", "checksum"]:
        assert getattr(o, a) == getattr(t, a), a
    same_records(t.field_records, o.field_records, FIELD)
    same_records(t.column_records, o.column_records, COLUMN)
    same_records(t.alias_column_records, o.alias_column_records, ["physical_id", "field_id"])
    same_records(t.extra_type_infos, o.extra_type_infos, ["content_id", "type_ver", "type_name"])
    assert o.checksum == ours.footer.header_checksum


def test_footer_records(pair):
    theirs, ours = pair
    t, o = theirs.footer, ours.footer
    for a in ["env_header", "feature_flag", "header_checksum", "checksum"]:
        assert getattr(o, a) == getattr(t, a), a
    te, oe = t.extension_links, o.extension_links
    assert oe.size == te.size
    same_records(te.field_records, oe.field_records, FIELD)
    same_records(te.column_records, oe.column_records, COLUMN)
    same_records(te.alias_column_records, oe.alias_column_records, ["physical_id", "field_id"])
    same_records(te.extra_type_info, oe.extra_type_info, ["content_id", "type_ver", "type_name"])
    same_records(t.cluster_group_records, o.cluster_group_records, ["min_entry_num", "entry_span", "num_clusters"])
    for tg, og in zip(t.cluster_group_records, o.cluster_group_records):
        tl, ol = tg.page_list_link, og.page_list_link
        assert (ol.env_uncomp_size, ol.locator.num_bytes, ol.locator.offset, ol.locator.type) == \
            (tl.env_uncomp_size, tl.locator.num_bytes, tl.locator.offset, tl.locator.type)
    assert isinstance(o.linked_attribute_sets, list)
    same_records(t.linked_attribute_sets, o.linked_attribute_sets, ["schema_version_major", "schema_version_minor", "anchor_uncompressed_size"])
    for tl, ol in zip(t.linked_attribute_sets, o.linked_attribute_sets):
        assert (ol.locator.num_bytes, ol.locator.offset) == (tl.locator.num_bytes, tl.locator.offset)
        # uproot's record answers `.name` with its own class name ("LinkedAttributeSetRecord"): the set's name
        # is in its member dict.
        assert ol.name == tl.__dict__["_fields"]["name"]
    same_records(theirs.column_records, ours.column_records, COLUMN + ["idx"])
    same_records(theirs.alias_column_records, ours.alias_column_records, ["physical_id", "field_id"])


def test_envelope_chunks_and_checksums(pair):
    theirs, ours = pair
    theirs.footer  # noqa: B018 - uproot reads its footer chunk with the footer
    for t, o, checksum in [(theirs._footer_chunk, ours._footer_chunk, ours.footer.checksum),
                           (theirs._header_chunk, ours._header_chunk, ours.header.checksum)]:
        assert bytes(o.raw_data) == bytes(t.raw_data) and (o.start, o.stop) == (t.start, t.stop)
        assert xxhash.xxh3_64_intdigest(o.raw_data[:-8]) == checksum


def test_page_lists(pair):
    theirs, ours = pair
    same_records(theirs.cluster_summaries, ours.cluster_summaries, ["num_first_entry", "num_entries"])
    for t, o in zip(theirs.page_list_envelopes, ours.page_list_envelopes, strict=True):
        assert (o.env_header, o.header_checksum, o.checksum) == (t.env_header, t.header_checksum, t.checksum)
    t, o = theirs.page_link_list, ours.page_link_list
    assert [len(columns) for columns in o] == [len(columns) for columns in t]
    for cluster, (tc, oc) in enumerate(zip(t, o)):
        for column, (tp, op) in enumerate(zip(tc, oc)):
            where = f"cluster {cluster} column {column}"
            assert (op.suppressed, op.compression_settings) == (tp.suppressed, tp.compression_settings), where
            # A suppressed column's offset is a marker (ROOT writes INT64_MIN), not kept: None here.
            assert op.element_offset == (None if tp.suppressed else tp.element_offset), where
            assert [(p.num_elements, p.has_checksum, p.locator.num_bytes, p.locator.offset, p.locator.type) for p in op.pages] == \
                [(p.num_elements, p.has_checksum, p.locator.num_bytes, p.locator.offset, p.locator.type) for p in tp.pages], where


def test_field_metadata_and_cluster_pages(pair):
    theirs, ours = pair
    for column in range(len(theirs.column_records)):
        t, o = theirs.get_field_metadata(column), ours.get_field_metadata(column)
        assert {a: getattr(o, a) for a in METADATA} == {a: getattr(t, a) for a in METADATA}
        if t.dtype_str == "switch":
            with pytest.raises(rntuple.UnsupportedError):
                ours.read_cluster_pages(0, column, o)
            continue
        for cluster in range(min(len(theirs.page_link_list), 4)):
            want, got = theirs.read_cluster_pages(cluster, column, t), ours.read_cluster_pages(cluster, column, o)
            assert got.dtype == want.dtype and np.array_equal(got, want, equal_nan=got.dtype.kind == "f"), (cluster, column)


def test_schema_extension_and_deferred_columns(written):
    t = rntuple.open(written["late_field"])["T"]
    assert len(t.column_records) > len(t.header.column_records)
    (y,) = [f for f in t.footer.extension_links.field_records if f.field_name == "y"]
    (col,) = t.footer.extension_links.column_records
    assert (y.type_name, col.first_element_index, col.flags & 1) == ("float", 2000, 1)
    assert len(t.page_link_list[0]) < len(t.page_link_list[-1])
    assert len(t.footer.cluster_group_records) >= 1 and len(t.page_link_list) > 1


def test_suppressed_columns_and_reduced_floats(written):
    ev = rntuple.open(written["reduced_floats"])["Events"]
    q = next(c for c in ev.column_records if c.type == 0x1D)
    assert (q.nbits, q.min_value, q.max_value) == (12, -1.0, 1.0)
    assert ev.get_field_metadata(q.idx).dtype_toread == np.dtype("uint8")
    assert len(ev.alias_column_records) == 1
    t = rntuple.open(need(DATA / "test_multiple_representations_rntuple_v1-0-0-0.root"))["ntuple"]
    assert [c[0].suppressed for c in t.page_link_list] == [False, True, False]
    assert t.page_link_list[1][0].element_offset is None and t.page_link_list[1][0].pages == []


def test_linked_attribute_sets(written):
    f = rntuple.open(written["attributes"])["Events"]
    (link,) = f.footer.linked_attribute_sets
    assert (link.name, link.schema_version_major) == ("runs", 1) and link.anchor_uncompressed_size > 0
    assert rntuple.open(need(DATA / "ntpl001_staff_rntuple_v1-0-0-0.root"))["Staff"].footer.linked_attribute_sets == []


def test_unknown_member():
    t = rntuple.open(need(DATA / "ntpl001_staff_rntuple_v1-0-0-0.root"))["Staff"]
    with pytest.raises(KeyError, match="no member 'fNoSuch'") as e:
        t.member("fNoSuch")
    assert isinstance(e.value, rntuple.KeyInFileError)
    assert t.member("fNoSuch", none_if_missing=True) is None and not t.has_member("fNoSuch")


def test_file_source_chunks():
    path = need(DATA / "ntpl001_staff_rntuple_v1-0-0-0.root")
    with uproot.open(path) as theirs, rntuple.open(path) as ours:
        obj = ours["Staff"]
        ranges = [(obj.member("fSeekHeader"), obj.member("fSeekHeader") + obj.member("fNBytesHeader")),
                  (obj.member("fSeekFooter"), obj.member("fSeekFooter") + obj.member("fNBytesFooter"))]
        one = ours.file.source.chunk(*ranges[0])
        assert bytes(one.raw_data) == bytes(theirs.file.source.chunk(*ranges[0]).raw_data)
        notes = queue.Queue()
        got = ours.file.source.chunks(ranges, notes)
        assert [bytes(c.raw_data) for c in got] == [bytes(c.raw_data) for c in theirs.file.source.chunks(ranges, queue.Queue())]
        assert sorted(notes.get_nowait().start for _ in ranges) == [r[0] for r in ranges]
        start, stop = ranges[1]
        assert bytes(got[1].get(start + 2, start + 6, None, {})) == bytes(got[1].raw_data[2:6])
        assert len(got[1].remainder(stop - 3, None, {})) == 3 and (start, stop) in got[1] and (0, stop) not in got[1]
        with pytest.raises(ValueError):
            got[1].get(start - 1, start + 1, None, {})
        assert ours.file.source.num_bytes == path.stat().st_size and ours.file.file_path == str(path)
        with pytest.raises(rntuple.CorruptFileError):
            ours.file.source.chunk(path.stat().st_size - 2, path.stat().st_size + 2)
    assert ours.closed
    with pytest.raises(ValueError):
        ours.file.source.chunk(0, 4)


def test_damaged_envelopes_and_bad_indices(tmp_path):
    """The envelopes are read again when first asked for: bytes damaged since the file was opened raise
    CorruptFileError (their checksum), never crash; a cluster or column that does not exist is NotFoundError."""
    path = tmp_path / "plain.root"
    rntuple.write(path, "T", {"x": np.arange(50, dtype=np.int32)}, compression=0)
    buf = io.BytesIO(path.read_bytes())
    t = rntuple.open(buf)["T"]
    assert t.member("fNBytesFooter") == t.member("fLenFooter")  # stored as is
    buf.getbuffer()[t.member("fSeekFooter") + 20] ^= 0xFF
    buf.getbuffer()[t.member("fSeekHeader") + 20] ^= 0xFF
    with pytest.raises(rntuple.CorruptFileError, match="checksum"):
        t.footer  # noqa: B018
    with pytest.raises(rntuple.CorruptFileError, match="checksum"):
        t.header  # noqa: B018
    ok = rntuple.open(path)["T"]
    meta = ok.get_field_metadata(0)
    assert ok.read_cluster_pages(0, 0, meta).tolist() == list(range(50))
    with pytest.raises(rntuple.NotFoundError):
        ok.read_cluster_pages(1, 0, meta)
    with pytest.raises(rntuple.NotFoundError):
        ok._native.cluster_column(0, 5)
    with pytest.raises(rntuple.NotFoundError):
        ok._native.page_locations(3)
