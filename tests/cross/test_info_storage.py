"""`rntuple info`'s storage figures (after ROOT's PrintInfo and RNTupleInspector) against numbers computed here from
what uproot reads of the same files: envelope sizes, per-cluster pages and bytes, per-field sizes summed over
sub-fields, the page-size distribution, the metadata/data ratio; the top-level field sizes also against the Python
package's `storage_stats`; and the text form's new sections."""

from __future__ import annotations

import json

import pytest
import uproot

from conftest import skip_or_fail

FILES = [
    ("rntuple/ntpl001_staff_rntuple_v1-0-1-0.root", "Staff"),
    ("rntuple/Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root", "Events"),
    ("rntuple/test_multiple_cluster_groups_rntuple_v1-0-0-0.root", "ntuple"),
]


def uproot_figures(t) -> dict:
    """The figures, from uproot's anchor, footer, page lists, column and field records."""
    m = t.all_members
    columns = t.column_records
    bits = [c.nbits for c in columns]
    col_bytes = [[0, 0, 0] for _ in columns]
    clusters, pages = [], []
    for k, (summary, cluster) in enumerate(zip(t.cluster_summaries, t.page_link_list)):
        c = {"id": k, "first_entry": summary.num_first_entry, "entries": summary.num_entries, "pages": 0,
             "compressed_bytes": 0, "uncompressed_bytes": 0, "compression": set(), "offsets": []}
        for col, ranges in enumerate(cluster):
            if ranges.suppressed:
                continue
            c["compression"].add(ranges.compression_settings)
            for p in ranges.pages:
                stored, unzipped = p.locator.num_bytes, -(-p.num_elements * bits[col] // 8)
                c["pages"] += 1
                c["compressed_bytes"] += stored
                c["uncompressed_bytes"] += unzipped
                c["offsets"].append((p.locator.offset, stored))
                col_bytes[col][0] += stored
                col_bytes[col][1] += unzipped
                col_bytes[col][2] += 1
                pages.append(stored)
        c["compression"] = sorted(c["compression"])
        clusters.append(c)
    # fields: own columns, then every field's total added to all its ancestors
    fields = t.field_records
    own = [[0, 0, 0] for _ in fields]
    for col, c in enumerate(columns):
        for i in range(3):
            own[c.field_id][i] += col_bytes[col][i]
    total = [list(x) for x in own]
    for f in range(len(fields)):
        child, p = f, fields[f].parent_field_id
        while p != child:
            for i in range(3):
                total[p][i] += own[f][i]
            child, p = p, fields[p].parent_field_id
    shared = 0
    for c in clusters:
        seen = set()
        for off, size in c.pop("offsets"):
            if size > 0 and off in seen:
                shared += size
            seen.add(off)
    groups = t.footer.cluster_group_records
    page_lists = {"compressed_bytes": sum(g.page_list_link.locator.num_bytes for g in groups),
                  "uncompressed_bytes": sum(g.page_list_link.env_uncomp_size for g in groups), "count": len(groups)}
    buckets: dict[int, list] = {}
    for size in pages:
        b = buckets.setdefault(size.bit_length(), [0, 0])
        b[0] += 1
        b[1] += size
    metadata = m["fNBytesHeader"] + m["fNBytesFooter"] + page_lists["compressed_bytes"]
    data = sum(pages) - shared
    return {
        "header": {"compressed_bytes": m["fNBytesHeader"], "uncompressed_bytes": m["fLenHeader"]},
        "footer": {"compressed_bytes": m["fNBytesFooter"], "uncompressed_bytes": m["fLenFooter"]},
        "page_lists": page_lists, "metadata_bytes": metadata, "data_bytes": data, "metadata_ratio": metadata / data,
        "clusters": clusters, "total": total, "own": own, "pages": pages, "buckets": buckets,
    }


@pytest.fixture(scope="module", params=FILES, ids=[f[0].split("/")[-1] for f in FILES])
def case(request, testdata, cli):
    rel, name = request.param
    path = testdata / rel
    if not path.exists():
        skip_or_fail(f"{path} is missing")
    p = cli.run("info", path, "--ntuple", name, "--json")
    assert p.returncode == 0, p.stderr.decode()
    (nt,) = json.loads(p.stdout)["ntuples"]
    return path, name, nt, uproot_figures(uproot.open(path)[name])


def test_envelopes_and_ratio(case):
    _, _, nt, want = case
    for key in ("header", "footer", "page_lists", "metadata_bytes", "data_bytes"):
        assert nt[key] == want[key], key
    assert nt["metadata_ratio"] == pytest.approx(want["metadata_ratio"], rel=1e-12)
    assert nt["pages"] == len(want["pages"])
    assert nt["compression_factor"] == pytest.approx(nt["uncompressed_bytes"] / nt["compressed_bytes"], rel=1e-12)


def test_clusters(case):
    _, _, nt, want = case
    got = nt["cluster_details"]
    assert len(got) == nt["clusters"] == len(want["clusters"])
    for g, w in zip(got, want["clusters"]):
        assert {k: g[k] for k in w} == w
        assert g["compression_factor"] == pytest.approx(w["uncompressed_bytes"] / w["compressed_bytes"], rel=1e-12)
    assert sum(c["compressed_bytes"] for c in got) == nt["compressed_bytes"]


def test_field_sizes_sum_sub_fields(case):
    path, name, nt, want = case
    by_id = {f["id"]: f for f in nt["fields"]}
    assert len(by_id) == len(want["total"])
    for i, (total, own) in enumerate(zip(want["total"], want["own"])):
        f = by_id[i]
        assert [f["compressed_bytes"], f["uncompressed_bytes"], f["pages"]] == total, f["path"]
        assert [f["own_compressed_bytes"], f["own_uncompressed_bytes"], f["own_pages"]] == own, f["path"]
    tops = [f for f in nt["fields"] if f["top_level"]]
    assert sum(f["compressed_bytes"] for f in tops) == nt["compressed_bytes"]
    # the Python package's storage_stats of each top-level field (its own code path over the same descriptor); a
    # projected field stores nothing of its own (its columns are aliases: storage_stats counts its source's)
    import rntuple

    t = rntuple.open(path)[name]
    for f in tops:
        if f["projected"]:
            assert (f["compressed_bytes"], f["pages"]) == (0, 0), f["path"]
            continue
        s = t.storage_stats([f["path"]])
        assert (s["stored_bytes"], s["uncompressed_bytes"], s["pages"]) == (f["compressed_bytes"], f["uncompressed_bytes"], f["pages"])


def test_page_size_distribution(case):
    _, _, nt, want = case
    ps = nt["page_sizes"]
    assert (ps["pages"], ps["bytes"], ps["min"], ps["max"]) == (len(want["pages"]), sum(want["pages"]), min(want["pages"]), max(want["pages"]))
    assert ps["mean"] == pytest.approx(sum(want["pages"]) / len(want["pages"]))
    got = {b["lo"]: b for b in ps["buckets"]}
    for k, (n, size) in want["buckets"].items():
        lo = 0 if k == 0 else 1 << (k - 1)
        assert (got[lo]["pages"], got[lo]["bytes"], got[lo]["hi"]) == (n, size, 1 if k == 0 else 1 << k)
    assert sum(b["pages"] for b in ps["buckets"]) == len(want["pages"])


def test_text_sections(case, cli):
    path, name, nt, want = case
    p = cli.run("info", path, "--ntuple", name)
    text = p.stdout.decode()
    assert p.returncode == 0
    for line in ("  clusters:", "  field sizes (a field's own columns and all its sub-fields'):"):
        assert line in text.splitlines(), line
    ps = nt["page_sizes"]
    assert f"  page sizes (stored): {ps['pages']} pages, smallest " in text
    bars = text.split("  page sizes (stored): ")[1].splitlines()[1:]
    assert [int(b.split(")")[1].split()[0]) for b in bars[:len(ps["buckets"])]] == [b["pages"] for b in ps["buckets"]]
    assert f"factor {nt['compression_factor']:.2f} (uncompressed / stored bytes), {nt['pages']} pages" in text
    rows = text.split("  clusters:\n")[1].split("  field sizes")[0].splitlines()[1:]
    for row, c in zip(rows, nt["cluster_details"]):
        assert row.split()[:6] == [str(c[k]) for k in ("id", "first_entry", "entries", "pages", "compressed_bytes", "uncompressed_bytes")]
    sizes = text.split("  field sizes (a field's own columns and all its sub-fields'):\n")[1].splitlines()[1:]
    tops = [f for f in nt["fields"] if f["top_level"]]
    for row, f in zip(sizes, tops):
        assert row.split()[:3] == [f["path"], str(f["compressed_bytes"]), str(f["uncompressed_bytes"])]
