"""RNTuples inside TDirectories, written by ROOT 6.40 at test time (RNTupleWriter::Append into a TDirectory, two
levels deep, beside a top-level one and one with the same name in another directory): `rntuple info` lists them by
path, `rntuple dump --ntuple dir/name` and the Python package read them, all equal to ROOT's reading and to uproot.
And the same layout written by our writer (RNTuples named by their paths): ROOT and uproot read it equal. About 15 s
(two ROOT processes)."""

from __future__ import annotations

import json

import awkward as ak
import pytest
import uproot
from root_subprocess import run_root

# ROOT writes the file, then reads every RNTuple back by path and prints its entries as JSON.
ROOT_CODE = r"""
#include <ROOT/RNTupleModel.hxx>
#include <ROOT/RNTupleWriter.hxx>
#include <ROOT/RNTupleReader.hxx>
#include <TFile.h>
#include <TDirectory.h>
#include <sstream>
#include <iomanip>
namespace xsubdir {
void Fill(TDirectory &dir, const std::string &name, int n, int salt) {
   auto model = ROOT::RNTupleModel::Create();
   auto id = model->MakeField<std::int32_t>("id");
   auto v = model->MakeField<std::vector<float>>("v");
   auto s = model->MakeField<std::string>("s");
   auto w = ROOT::RNTupleWriter::Append(std::move(model), name, dir);
   for (int i = 0; i < n; ++i) {
      *id = salt * 1000 + i;
      v->assign(i % 4, 0.25f * i + salt);
      *s = name + "#" + std::to_string(i);
      w->Fill();
   }
}
void Write(const std::string &path) {
   auto f = std::unique_ptr<TFile>(TFile::Open(path.c_str(), "RECREATE"));
   Fill(*f, "top", 5, 1);
   auto d1 = f->mkdir("d1");
   Fill(*d1, "inner", 7, 2);
   auto d2 = d1->mkdir("d2");
   Fill(*d2, "deep", 9, 3);
   auto other = f->mkdir("other");
   Fill(*other, "inner", 3, 4);
   f->Write();
}
std::string Read(const std::string &name, const std::string &path) {
   auto r = ROOT::RNTupleReader::Open(name, path);
   auto id = r->GetView<std::int32_t>("id");
   auto v = r->GetView<std::vector<float>>("v");
   auto s = r->GetView<std::string>("s");
   std::ostringstream o;
   o << std::setprecision(9) << "[";
   for (auto i : r->GetEntryRange()) {
      o << (i ? "," : "") << "{\"id\": " << id(i) << ", \"v\": [";
      for (std::size_t k = 0; k < v(i).size(); ++k) o << (k ? "," : "") << v(i)[k];
      o << "], \"s\": \"" << s(i) << "\"}";
   }
   o << "]";
   return o.str();
}
}
"""

ROOT_SCRIPT = r"""
path = sys.argv[1]
if os.path.exists(path):  # a file written by us: read it only
    out = {name: json.loads(str(ROOT.xsubdir.Read(name, path))) for name in sys.argv[2:]}
else:
    ROOT.xsubdir.Write(path)
    out = {name: json.loads(str(ROOT.xsubdir.Read(name, path))) for name in sys.argv[2:]}
done(out)
"""

NAMES = ["top", "d1/inner", "d1/d2/deep", "other/inner"]


def expected(name: str) -> list:
    n, salt = {"top": (5, 1), "d1/inner": (7, 2), "d1/d2/deep": (9, 3), "other/inner": (3, 4)}[name]
    leaf = name.split("/")[-1]
    return [{"id": salt * 1000 + i, "v": [0.25 * i + salt] * (i % 4), "s": f"{leaf}#{i}"} for i in range(n)]


@pytest.fixture(scope="module")
def nested(tmp_path_factory):
    path = tmp_path_factory.mktemp("subdir") / "nested.root"
    root = run_root(ROOT_SCRIPT, path, *NAMES, cxx=ROOT_CODE)
    for name in NAMES:  # ROOT wrote what we think it wrote (the values are exact in float32)
        assert root[name] == expected(name), name
    return path


def test_info_lists_rntuples_in_directories(cli, nested):
    p = cli.run("info", nested, "--json")
    assert p.returncode == 0, p.stderr.decode()
    obj = json.loads(p.stdout)
    assert [(nt["name"], nt["entries"]) for nt in obj["ntuples"]] == [(n, len(expected(n))) for n in NAMES]
    text = cli.info(nested)
    for name in NAMES:
        assert f"RNTuple '{name}'" in text, text[:2000]


def test_dump_reads_rntuples_in_directories_by_path(cli, nested):
    for name in NAMES:
        assert cli.dump(nested, name) == expected(name), name
    # a name that is not unique is refused rather than guessed; a wrong path is not found
    p = cli.run("dump", nested, "--ntuple", "inner")
    assert p.returncode != 0
    p = cli.run("dump", nested, "--ntuple", "d2/deep")
    assert p.returncode != 0


def test_python_reads_rntuples_in_directories(nested):
    import rntuple
    with rntuple.open(nested) as f:
        assert f.ntuple_names() == NAMES
        for name in NAMES:
            assert f[name].num_entries == len(expected(name))
            assert ak.to_list(f[name].arrays()) == expected(name), name


def test_uproot_agrees(nested):
    with uproot.open(nested) as f:
        for name in NAMES:
            assert ak.to_list(f[name].arrays()) == expected(name), name


@pytest.fixture(scope="module")
def ours(tmp_path_factory):
    """The same RNTuples written by our FileWriter, each named by its path."""
    import rntuple
    path = tmp_path_factory.mktemp("subdir_ours") / "ours.root"
    schema = {"id": "std::int32_t", "v": "std::vector<float>", "s": "std::string"}
    with rntuple.FileWriter(path) as fw:
        for name in NAMES:
            with fw.writer(name, schema) as w:
                w.extend(ak.Array(expected(name)))
    return path


def test_root_and_uproot_read_rntuples_we_wrote_into_directories(ours):
    root = run_root(ROOT_SCRIPT, ours, *NAMES, cxx=ROOT_CODE)
    with uproot.open(ours) as f:
        assert {k for k, c in f.classnames(cycle=False).items() if c == "TDirectory"} == {"d1", "d1/d2", "other"}
        for name in NAMES:
            assert root[name] == expected(name), name
            assert ak.to_list(f[name].arrays()) == expected(name), name
