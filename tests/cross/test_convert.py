"""`rntuple convert` and `rntuple.convert`: a nested Parquet file written by pyarrow becomes an RNTuple that ROOT 6.40
and uproot read as pyarrow's values (one cluster per row group), and converts back to Parquet equal to the original;
a NanoAOD-like TTree written by ROOT 6.40 at test time (nMuon, Muon_pt[nMuon], Muon_eta[nMuon], run, event) becomes
an RNTuple laid out as ROOT's RNTupleImporter does (`_collection0` of records {Muon_pt, Muon_eta}), which ROOT and
uproot read equal to the TTree's branches. Two ROOT processes (writing the TTree, reading the RNTuples)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import awkward as ak
import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest
import uproot
from test_merge import root_read

import rntuple
from conftest import need_root
from rootgen import F32, Unordered

ROW_GROUPS = [40, 7, 53]
TREE_ENTRIES = 300

# ROOT writes a NanoAOD-like TTree: two count leaves (nJet before nMuon in the file, so that the sorted order of
# RNTupleImporter's collections differs from the branch order), scalars run and event.
WRITE_TREE = r"""
import sys, ROOT
ROOT.gROOT.SetBatch(True)
ROOT.gInterpreter.Declare('''
void xconvert_tree(const char *path, int entries) {
   TFile f(path, "RECREATE");
   TTree t("Events", "Events");
   Int_t run; ULong64_t event; UInt_t nMuon; Int_t nJet;
   Float_t pt[8], eta[8]; Double_t jet[8];
   t.Branch("run", &run, "run/I");
   t.Branch("event", &event, "event/l");
   t.Branch("nJet", &nJet, "nJet/I");
   t.Branch("Jet_e", jet, "Jet_e[nJet]/D");
   t.Branch("nMuon", &nMuon, "nMuon/i");
   t.Branch("Muon_pt", pt, "Muon_pt[nMuon]/F");
   t.Branch("Muon_eta", eta, "Muon_eta[nMuon]/F");
   for (int i = 0; i < entries; ++i) {
      run = 1 + i / 100; event = 1000000000000ULL + i; nMuon = i % 4; nJet = (i * 7) % 5;
      for (UInt_t k = 0; k < nMuon; ++k) { pt[k] = 10.0f + i * 0.25f + k; eta[k] = -2.5f + 0.125f * ((i + k) % 40); }
      for (Int_t k = 0; k < nJet; ++k) jet[k] = 30.5 + i + 0.5 * k;
      t.Fill();
   }
   t.Write();
}
''')
ROOT.xconvert_tree(sys.argv[1], int(sys.argv[2]))
"""


def plain(v):
    """ROOT's oracle values as plain Python values (floats as floats, unordered containers as lists)."""
    if isinstance(v, F32):
        return float(v.value)
    if isinstance(v, Unordered):
        return [plain(x) for x in v.items]
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


def nested_table(first: int, n: int) -> pa.Table:
    rows = range(first, first + n)
    return pa.table({
        "id": pa.array([i * 1000 - 3 for i in rows], pa.int64()),
        "x": pa.array([i * 0.5 for i in rows], pa.float32()),
        "small": pa.array([i % 200 for i in rows], pa.uint8()),
        "flag": pa.array([i % 3 == 0 for i in rows]),
        "name": pa.array([f"entry {i}" + "ü" * (i % 3) for i in rows]),
        "opt": pa.array([None if i % 4 == 1 else i * 1.25 for i in rows], pa.float64()),
        "ostr": pa.array([None if i % 5 == 2 else "s" * (i % 4) for i in rows]),
        "pt": pa.array([[i + 0.5 * k for k in range(i % 3)] for i in rows], pa.list_(pa.float32())),
        "muons": pa.array([[{"pt": 1.0 + i + k, "charge": (-1) ** k} for k in range(i % 4)] for i in rows],
                          pa.list_(pa.struct([("pt", pa.float64()), ("charge", pa.int8())]))),
        "ll": pa.array([[[i + j for j in range(k)] for k in range(i % 3)] for i in rows], pa.list_(pa.list_(pa.int32()))),
        "olist": pa.array([None if i % 6 == 3 else list(range(i % 3)) for i in rows], pa.list_(pa.int16())),
    })


def expected_rows() -> list[dict]:
    rows, first = [], 0
    for n in ROW_GROUPS:
        rows += nested_table(first, n).to_pylist()
        first += n
    return rows


def clusters(path: Path, name: str) -> list[int]:
    with uproot.open(path) as f:
        return [c.num_entries for c in f[name].cluster_summaries]


@pytest.fixture(scope="module")
def files(cli, tmp_path_factory):
    """Every conversion of the module, and ROOT's reading of the RNTuples they made."""
    need_root()
    out = tmp_path_factory.mktemp("convert")
    env = dict(os.environ, RNTUPLE_PYTHON=sys.executable)
    # pyarrow's nested Parquet file, three row groups; and the same as Arrow IPC (Feather v2, lz4), three batches.
    src = out / "nested.parquet"
    with pq.ParquetWriter(src, nested_table(0, 1).schema) as w:
        first = 0
        for n in ROW_GROUPS:
            w.write_table(nested_table(first, n))
            first += n
    table = pq.read_table(src)
    feather.write_feather(table.combine_chunks(), out / "nested.feather", chunksize=40)
    r = {"parquet": src, "table": table}
    p = cli.run("convert", src, out / "cli.root", "--ntuple", "Data")
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    r["cli_stats"] = json.loads(p.stdout)
    r["cli"] = out / "cli.root"
    r["py_stats"] = rntuple.convert(src, out / "py.root", progress=False)
    r["py"] = out / "py.root"
    r["ipc_stats"] = rntuple.convert(out / "nested.feather", out / "ipc.root", progress=False)
    r["ipc"] = out / "ipc.root"
    # Back: RNTuple -> Parquet (CLI) and -> Arrow IPC (Python).
    p = cli.run("convert", out / "cli.root", out / "back.parquet")
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    r["back_parquet"] = out / "back.parquet"
    r["back_arrow_stats"] = rntuple.convert(out / "py.root", out / "back.arrow", progress=False)
    r["back_arrow"] = out / "back.arrow"

    # ROOT's TTree, converted by the CLI (no --tree: the file holds no RNTuple) and by rntuple.convert.
    tree = out / "tree.root"
    w = subprocess.run([sys.executable, "-c", WRITE_TREE, str(tree), str(TREE_ENTRIES)], capture_output=True, timeout=300)
    assert w.returncode == 0, w.stderr.decode()[-3000:]
    r["tree"] = tree
    p = subprocess.run([str(cli.path), "convert", str(tree), str(out / "tree_cli.root"), "--no-progress"],
                       capture_output=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr.decode()[-3000:]
    r["tree_cli_stats"] = json.loads(p.stdout)
    r["tree_cli"] = out / "tree_cli.root"
    # No tree=: the file holds no RNTuple, so its only TTree is converted, into the RNTuple named by ntuple=.
    r["tree_py_stats"] = rntuple.convert(tree, out / "tree_py.root", ntuple="Nano", progress=False)
    r["tree_py"] = out / "tree_py.root"
    p = subprocess.run([str(cli.path), "convert", str(out / "tree_cli.root"), str(out / "tree_back.parquet")],
                       capture_output=True, timeout=300)
    assert p.returncode == 0, p.stderr.decode()[-3000:]
    r["tree_back"] = out / "tree_back.parquet"

    pairs = [("Data", r["cli"]), ("Events", r["py"]), ("Events", r["ipc"]), ("Events", r["tree_cli"]),
             ("Nano", r["tree_py"])]
    r["root"] = {str(path): [plain(e) for e in entries] for (_, path), entries in zip(pairs, root_read(pairs, out))}
    return r


def test_parquet_schema_and_clusters(files):
    assert files["cli_stats"]["entries"] == sum(ROW_GROUPS) and files["cli_stats"]["clusters"] == 3
    assert files["py_stats"] == {"entries": sum(ROW_GROUPS), "clusters": 3}
    assert clusters(files["cli"], "Data") == ROW_GROUPS
    assert clusters(files["py"], "Events") == ROW_GROUPS
    assert clusters(files["ipc"], "Events") == [40, 40, 20]  # one cluster per record batch
    with rntuple.open(files["cli"]) as f:
        schema = f["Data"].schema
    assert schema == {
        "id": "std::int64_t", "x": "float", "small": "std::uint8_t", "flag": "bool", "name": "std::string",
        "opt": "std::optional<double>", "ostr": "std::optional<std::string>", "pt": "std::vector<float>",
        "muons": "(untyped collection)", "ll": "std::vector<std::vector<std::int32_t>>",
        "olist": "std::optional<std::vector<std::int16_t>>",
    }


@pytest.mark.parametrize("which", ["cli", "py", "ipc"])
def test_root_reads_parquet_values(files, which):
    assert files["root"][str(files[which])] == expected_rows()


@pytest.mark.parametrize("which,name", [("cli", "Data"), ("py", "Events"), ("ipc", "Events")])
def test_uproot_reads_parquet_values(files, which, name):
    with uproot.open(files[which]) as f:
        got = f[name].arrays()
    assert ak.to_list(got) == expected_rows()


def test_back_to_parquet_and_arrow_equal(files):
    back = pq.read_table(files["back_parquet"])
    assert back.to_pylist() == files["table"].to_pylist()
    assert pq.ParquetFile(files["back_parquet"]).metadata.num_row_groups == 3  # one row group per cluster
    assert feather.read_table(files["back_arrow"]).to_pylist() == files["table"].to_pylist()
    assert files["back_arrow_stats"] == {"entries": sum(ROW_GROUPS), "clusters": 3}


def tree_branches(path: Path) -> dict:
    with uproot.open(path) as f:
        return f["Events"].arrays(library="ak")


def test_tree_layout_as_rntuple_importer(cli, files):
    assert files["tree_cli_stats"]["collections"] == {"nJet": "_collection0", "nMuon": "_collection1"}
    assert files["tree_cli_stats"]["fields"] == ["run", "event", "_collection0", "_collection1"]
    with rntuple.open(files["tree_py"]) as f:
        schema = f["Nano"].schema
    # As the importer: the collections, then projected fields over them (the counted branches and the count leaves).
    assert schema == {"run": "std::int32_t", "event": "std::uint64_t", "_collection0": "(untyped collection)",
                      "_collection1": "(untyped collection)", "Jet_e": "ROOT::VecOps::RVec<double>",
                      "nJet": "ROOT::RNTupleCardinality<std::uint32_t>", "Muon_pt": "ROOT::VecOps::RVec<float>",
                      "Muon_eta": "ROOT::VecOps::RVec<float>", "nMuon": "ROOT::RNTupleCardinality<std::uint32_t>"}
    assert files["tree_py_stats"]["entries"] == TREE_ENTRIES
    info = cli.run("info", files["tree_cli"]).stdout.decode()
    assert "_collection1: (untyped collection)" in info and "Muon_pt: float" in info, info


@pytest.mark.parametrize("which", ["tree_cli", "tree_py"])
def test_root_and_uproot_read_tree_branches(files, which):
    t = tree_branches(files["tree"])
    want = [{"run": int(t.run[i]), "event": int(t.event[i]),
             "_collection0": [{"Jet_e": e} for e in t.Jet_e[i].tolist()],
             "_collection1": [{"Muon_pt": p, "Muon_eta": e} for p, e in zip(t.Muon_pt[i].tolist(), t.Muon_eta[i].tolist())],
             "Jet_e": t.Jet_e[i].tolist(), "nJet": len(t.Jet_e[i]), "Muon_pt": t.Muon_pt[i].tolist(),
             "Muon_eta": t.Muon_eta[i].tolist(), "nMuon": int(t.nMuon[i])}
            for i in range(TREE_ENTRIES)]
    assert files["root"][str(files[which])] == want
    name = "Events" if which == "tree_cli" else "Nano"
    with uproot.open(files[which]) as f:
        got = f[name].arrays()
    assert ak.to_list(got["_collection1"].Muon_pt) == ak.to_list(t.Muon_pt)
    assert ak.to_list(got["_collection1"].Muon_eta) == ak.to_list(t.Muon_eta)
    assert ak.to_list(ak.num(got["_collection1"])) == ak.to_list(t.nMuon)
    assert ak.to_list(got["_collection0"].Jet_e) == ak.to_list(t.Jet_e)
    # The projected fields read as the TTree's branches, by their names.
    assert ak.to_list(got.Muon_pt) == ak.to_list(t.Muon_pt) and ak.to_list(got.Muon_eta) == ak.to_list(t.Muon_eta)
    assert ak.to_list(got.nMuon) == ak.to_list(t.nMuon) and ak.to_list(got.Jet_e) == ak.to_list(t.Jet_e)
    assert ak.to_list(got.run) == ak.to_list(t.run) and ak.to_list(got.event) == ak.to_list(t.event)


def test_tree_back_to_parquet(files):
    t = tree_branches(files["tree"])
    back = pq.read_table(files["tree_back"])
    assert back.column("_collection1").to_pylist()[:5] == [
        [{"Muon_pt": p, "Muon_eta": e} for p, e in zip(t.Muon_pt[i].tolist(), t.Muon_eta[i].tolist())] for i in range(5)]
    assert back.column("event").to_pylist() == ak.to_list(t.event)


def test_errors_are_clear(cli, files, tmp_path):
    p = cli.run("convert", files["cli"], tmp_path / "x.csv")
    assert p.returncode != 0 and "unknown file format (extension 'csv')" in p.stderr.decode()
    # An RNTuple file to .root: not a TTree conversion.
    p = cli.run("convert", files["cli"], tmp_path / "copy.root")
    assert p.returncode != 0 and "holds the RNTuple(s) Data" in p.stderr.decode()
    # Without a Python that has the package, the CLI says what to install.
    env = dict(os.environ, RNTUPLE_PYTHON=str(tmp_path / "no-python"))
    p = subprocess.run([str(cli.path), "convert", str(files["tree"]), str(tmp_path / "t.root")], capture_output=True,
                       timeout=60, env=env)
    assert p.returncode != 0 and "pip install rntuple uproot" in p.stderr.decode()
    # Arrow types without an RNTuple equivalent name the column.
    bad = tmp_path / "dates.parquet"
    pq.write_table(pa.table({"ok": [1, 2], "day": pa.array([1, 2], pa.date32())}), bad)
    with pytest.raises(rntuple.RNTupleError, match=r"column 'day': Arrow type Date32 has no RNTuple equivalent"):
        rntuple.convert(bad, tmp_path / "dates.root")
