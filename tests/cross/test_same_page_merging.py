"""Same-page merging (issue 31, point 4): a collection's `std::vector` members of equal lengths have equal offset
pages, which ROOT 6.40 (`RNTupleWriteOptions::EnableSamePageMerging`, on by default) stores once per cluster, the
duplicates' locators pointing at the first copy. Our writers do the same: files written by the sequential writer
(`rntuple import-json`) and by the parallel writer (`rntuple.ParallelWriter`), with merging on and off, read by
ROOT 6.40 and uproot value for value; ROOT's view of the descriptor shows the sharing, and for the same data our
file lists and stores exactly the pages ROOT's own writer does.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import uproot
from root_subprocess import run_root

from conftest import need_root

ENTRIES = 20_000
FIELDS = ("Muon_pt", "Muon_eta", "Muon_phi")
SCHEMA = {"nMuon": "std::uint32_t", **{f: "std::vector<float>" for f in FIELDS}}


def _entries() -> list[dict]:
    rng = np.random.default_rng(31)
    counts = rng.poisson(2.0, ENTRIES)
    out = []
    for n in counts:
        n = int(n)
        out.append({"nMuon": n, **{f: [float(np.float32(x)) for x in rng.uniform(-5, 100, n)] for f in FIELDS}})
    return out


# ROOT's view of a file: every entry, and per cluster the page locators (offset, size) of every column.
ROOT_DESCRIBE = r"""
path = sys.argv[1]
r = ROOT.RNTupleReader.Open("Events", path)
n = r.GetNEntries()
views = {f: r.GetView["std::vector<float>"](f) for f in ("Muon_pt", "Muon_eta", "Muon_phi")}
nmu = r.GetView["std::uint32_t"]("nMuon")
rows = [{"nMuon": int(nmu(i)), **{f: [float(x) for x in v(i)] for f, v in views.items()}} for i in range(n)]
desc = r.GetDescriptor()
clusters = []
for c in desc.GetClusterIterable():
    pages = []
    for cr in c.GetColumnRangeIterable():
        for pi in c.GetPageRange(cr.GetPhysicalColumnId()).GetPageInfos():
            loc = pi.GetLocator()
            pages.append([int(loc.GetPosition["std::uint64_t"]()), int(loc.GetNBytesOnStorage())])
    clusters.append(pages)
done({"rows": rows, "clusters": clusters})
"""

# ROOT's own writer, default options (same-page merging on), the same entries (counts and flat values).
ROOT_WRITE_CODE = r"""
#include <ROOT/RNTupleModel.hxx>
#include <ROOT/RNTupleWriter.hxx>
void spm_write(const char *path, const std::uint32_t *counts, std::size_t n, const float *pt, const float *eta,
               const float *phi) {
   auto model = ROOT::RNTupleModel::Create();
   auto nmu = model->MakeField<std::uint32_t>("nMuon");
   auto vpt = model->MakeField<std::vector<float>>("Muon_pt");
   auto veta = model->MakeField<std::vector<float>>("Muon_eta");
   auto vphi = model->MakeField<std::vector<float>>("Muon_phi");
   auto w = ROOT::RNTupleWriter::Recreate(std::move(model), "Events", path);
   std::size_t off = 0;
   for (std::size_t i = 0; i < n; ++i) {
      *nmu = counts[i];
      vpt->assign(pt + off, pt + off + counts[i]);
      veta->assign(eta + off, eta + off + counts[i]);
      vphi->assign(phi + off, phi + off + counts[i]);
      off += counts[i];
      w->Fill();
   }
}
"""

ROOT_WRITE = r"""
import numpy as np
d = np.load(sys.argv[1])
counts = np.ascontiguousarray(d["nMuon"], dtype=np.uint32)
flat = [np.ascontiguousarray(d[f], dtype=np.float32) for f in ("Muon_pt", "Muon_eta", "Muon_phi")]
ROOT.spm_write(sys.argv[2], counts, len(counts), *flat)
done({"written": sys.argv[2]})
"""


def _describe(path) -> dict:
    return run_root(ROOT_DESCRIBE, path)


def _sharing(d: dict) -> tuple[int, int, int]:
    """Pages listed, pages stored (distinct offsets per cluster), bytes stored."""
    listed = stored = nbytes = 0
    for pages in d["clusters"]:
        seen = {}
        for off, size in pages:
            listed += 1
            if off in seen:
                assert seen[off] == size, "pages at one offset have one size"
                continue
            seen[off] = size
            stored += 1
            nbytes += size
    return listed, stored, nbytes


def _uproot_rows(path) -> list[dict]:
    with uproot.open(path) as f:
        a = f["Events"].arrays()
    return [{"nMuon": int(a["nMuon"][i]), **{k: [float(x) for x in a[k][i]] for k in FIELDS}} for i in range(len(a))]


@pytest.fixture(scope="module")
def files(cli, tmp_path_factory):
    need_root()
    out = tmp_path_factory.mktemp("same_pages")
    entries = _entries()
    src = out / "entries.json"
    src.write_text(json.dumps(entries))
    npz = out / "entries.npz"
    np.savez(npz, nMuon=np.array([e["nMuon"] for e in entries], dtype=np.uint32),
             **{f: np.array([x for e in entries for x in e[f]], dtype=np.float32) for f in FIELDS})
    made = {"entries": entries}
    for name, flags in (("on", []), ("off", ["--no-same-page-merging"])):
        path = out / f"ours_{name}.root"
        p = cli.run(*flags, "import-json", path, "--ntuple", "Events", "--schema", json.dumps(SCHEMA), "--input", src)
        assert p.returncode == 0, p.stderr.decode()
        made[name] = path
    made["root"] = out / "root.root"
    run_root(ROOT_WRITE, npz, made["root"], cxx=ROOT_WRITE_CODE)
    return made


def test_root_and_uproot_read_a_merged_file_value_for_value(files):
    d = _describe(files["on"])
    assert d["rows"] == files["entries"], "ROOT's values"
    assert _uproot_rows(files["on"]) == files["entries"], "uproot's values"
    listed, stored, _ = _sharing(d)
    # the offset pages of the three members: two of each three stored once
    assert stored < listed, f"{listed} pages listed, {stored} stored: nothing merged"


def test_with_merging_off_every_page_is_stored(files):
    d_on, d_off = _describe(files["on"]), _describe(files["off"])
    assert d_off["rows"] == files["entries"]
    on, off = _sharing(d_on), _sharing(d_off)
    assert off[0] == off[1], "merging off: every page stored"
    assert on[0] == off[0], "the same pages listed either way"
    assert files["on"].stat().st_size < files["off"].stat().st_size


def test_the_pages_stored_equal_roots_own_writers(files):
    ours, root = _describe(files["on"]), _describe(files["root"])
    assert root["rows"] == files["entries"]
    l_ours, s_ours, b_ours = _sharing(ours)
    l_root, s_root, b_root = _sharing(root)
    assert s_root < l_root, "ROOT 6.40 merges these pages (its default)"
    assert (l_ours, s_ours, b_ours) == (l_root, s_root, b_root), \
        f"ours: {l_ours} pages listed, {s_ours} stored, {b_ours} bytes; ROOT's: {l_root}, {s_root}, {b_root}"


def test_the_parallel_writer_merges_too(files, tmp_path):
    import rntuple

    entries = files["entries"]
    half = len(entries) // 2
    paths = {}
    for on in (True, False):
        path = tmp_path / f"parallel_{on}.root"
        with rntuple.ParallelWriter(str(path), "Events", SCHEMA, same_page_merging=on) as w:
            for part in (entries[:half], entries[half:]):
                with w.fill_context() as ctx:
                    ctx.extend(part)
        paths[on] = path
    d_on, d_off = _describe(paths[True]), _describe(paths[False])
    key = lambda r: json.dumps(r, sort_keys=True)  # noqa: E731  (clusters from contexts come in any order)
    assert sorted(map(key, d_on["rows"])) == sorted(map(key, entries)), "ROOT's values"
    assert sorted(map(key, _uproot_rows(paths[True]))) == sorted(map(key, entries)), "uproot's values"
    on, off = _sharing(d_on), _sharing(d_off)
    assert on[1] < on[0] and off[1] == off[0], f"parallel writer: on {on}, off {off}"


def _shared_pages(cli, path) -> int:
    """`rntuple info`'s count of pages stored once for several locators (0 when it prints none)."""
    p = cli.run("info", path)
    assert p.returncode == 0, p.stderr.decode()
    m = re.search(r"shared pages\s*:\s*(\d+) pages", p.stdout.decode())
    return int(m.group(1)) if m else 0


def test_convert_merges_and_can_be_told_not_to(cli, files, tmp_path):
    """`convert` of Parquet into RNTuple merges identical pages (the Muon_* lists' equal offsets) by default; the CLI's
    `--no-same-page-merging` and Python's `convert(..., same_page_merging=False)` store every page; values equal."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    import rntuple

    entries = files["entries"]
    table = pa.table({"nMuon": pa.array([e["nMuon"] for e in entries], pa.uint32()),
                      **{f: pa.array([e[f] for e in entries], pa.list_(pa.float32())) for f in FIELDS}})
    src = tmp_path / "muons.parquet"
    pq.write_table(table, src)
    made = {}
    for name, flags in (("on", []), ("off", ["--no-same-page-merging"])):
        made[name] = tmp_path / f"convert_{name}.root"
        p = cli.run(*flags, "convert", src, made[name], "--no-progress")
        assert p.returncode == 0, p.stderr.decode()
    made["py_off"] = tmp_path / "convert_py_off.root"
    rntuple.convert(src, made["py_off"], same_page_merging=False, progress=False)
    shared = {k: _shared_pages(cli, v) for k, v in made.items()}
    assert shared["on"] > 0 and shared["off"] == 0 and shared["py_off"] == 0, shared
    for path in made.values():
        assert _uproot_rows(path) == entries, path


def test_skims_merge_the_pages_they_copy(cli, files, tmp_path):
    """A skim copying whole clusters (pages as stored) of a file written without merging stores equal pages once,
    with one thread and with several (the parallel writer's copied clusters); values equal."""
    assert _shared_pages(cli, files["off"]) == 0
    key = lambda r: json.dumps(r, sort_keys=True)  # noqa: E731  (parts may come in any order with threads)
    for threads, inputs in (("1", [files["off"]]), ("2", [files["off"], files["off"]])):
        out = tmp_path / f"skim_{threads}.root"
        p = cli.run("skim", *inputs, out, "--ntuple", "Events", "--threads", threads)
        assert p.returncode == 0, p.stderr.decode()
        said = json.loads(p.stdout.decode().strip().splitlines()[-1])
        assert said["method"] == "copied pages" and said.get("threads", 1) == int(threads), said
        assert _shared_pages(cli, out) > 0, f"threads {threads}: {said}"
        assert sorted(map(key, _uproot_rows(out))) == sorted(map(key, files["entries"] * len(inputs)))
