"""`rntuple check`: every RNTuple of the shared test files (written by ROOT 6.34-6.40, RNTupleImporter, uproot)
reads whole, field by field and cluster by cluster; the JSON report agrees with uproot on entries and clusters; a
damaged page makes it exit non-zero naming the field and cluster (the precise cases are in
crates/rntuple/tests/integration/check.rs)."""

from __future__ import annotations

import json

import pytest
import uproot

from conftest import shared_params


@pytest.mark.parametrize("sub,filename,name", shared_params())
def test_shared_files_check_clean(cli, testdata, sub, filename, name):
    path = testdata / sub / filename
    p = cli.run("check", path, "--ntuple", name, "--json")
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    rep = json.loads(p.stdout)
    assert rep["ok"] is True
    (nt,) = rep["ntuples"]
    with uproot.open(path) as f:
        t = f[name]
        assert nt["entries"] == t.num_entries
        assert nt["clusters"] == len(t.cluster_summaries)
    assert nt["problems"] == []
    if nt["entries"] and nt["fields"] > len(nt["skipped_fields"]):
        assert nt["pages"] > 0 and nt["stored_bytes"] > 0


def test_damaged_page_exits_non_zero(cli, tmp_path):
    src = tmp_path / "many_clusters.root"
    p = cli.run("bench", "write", "--threads", "2", "--entries", "20000", "--compression", "505", "--page-size", "16384",
                "--cluster-size", "65536", "--output", src)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    good = cli.run("check", src, "--json")
    assert good.returncode == 0, good.stderr.decode()
    with uproot.open(src) as f:
        t = f["Events"]
        n_clusters = len(t.cluster_summaries)
        assert n_clusters >= 4
        # the first page of the last cluster's last column (particles' values)
        page = t.page_link_list[-1][-1].pages[0]
        offset, size = page.locator.offset, page.locator.num_bytes
    data = bytearray(src.read_bytes())
    data[offset + size // 2] ^= 0x5A
    bad = tmp_path / "damaged.root"
    bad.write_bytes(bytes(data))
    p = cli.run("check", bad, "--json")
    assert p.returncode != 0
    rep = json.loads(p.stdout)
    assert rep["ok"] is False
    (nt,) = rep["ntuples"]
    assert [(pr["field"], pr["cluster"]) for pr in nt["problems"]] == [("particles", n_clusters - 1)], nt["problems"]
    assert "checksum" in nt["problems"][0]["error"] and str(offset) in nt["problems"][0]["error"]
    assert b"problem(s) found" in p.stderr
    text = cli.run("check", bad)
    assert text.returncode != 0
    assert f"cluster {n_clusters - 1} ".encode() in text.stdout and b"field 'particles'" in text.stdout
