"""Attribute sets (ROOT 6.38+'s experimental RNTuple attributes; issue 18, item 2), both ways with ROOT 6.40:

  * ROOT writes (at test time, `RNTupleWriter::Append` + `CreateAttributeSet`/`BeginRange`/`CommitRange` through
    cling) a file whose RNTuple `Events` has the attribute set `provenance` (`run`: std::int32_t, `tag`:
    std::string) over three ranges; our reader gives the set's ranges and values, `rntuple info` lists it, and
    uproot still reads the main RNTuple;
  * we write such a file (`rntuple.Writer(...).attributes(...).commit_range(...)`), and ROOT reads the set through
    `RNTupleReader::OpenAttributeSet` (`RNTupleAttrSetReader`: ranges and values), and the main RNTuple; uproot
    reads the main RNTuple; our reader reads everything back.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import uproot
from root_subprocess import ATTRIBUTE_SET_CXX, run_root

ROOT_CODE = ATTRIBUTE_SET_CXX + r"""
#include <ROOT/RNTupleWriter.hxx>
#include <ROOT/RNTupleModel.hxx>
#include <ROOT/RNTupleAttrWriting.hxx>
#include <TFile.h>

void attr_write(const char *path) {
   auto file = std::unique_ptr<TFile>(TFile::Open(path, "RECREATE"));
   auto model = ROOT::RNTupleModel::Create();
   auto px = model->MakeField<float>("px");
   auto writer = ROOT::RNTupleWriter::Append(std::move(model), "Events", *file);
   auto amodel = ROOT::RNTupleModel::Create();
   auto run = amodel->MakeField<std::int32_t>("run");
   auto tag = amodel->MakeField<std::string>("tag");
   auto attrs = writer->CreateAttributeSet(std::move(amodel), "provenance");
   for (int r = 0; r < 3; ++r) {
      auto range = attrs->BeginRange();
      for (int i = 0; i < 5 + r; ++i) { *px = r * 100 + i; writer->Fill(); }
      *run = 100 + r; *tag = "tag" + std::to_string(r);
      attrs->CommitRange(std::move(range));
   }
   writer.reset();
   file->Close();
}

// JSON: {"entries": main entries, "px": [...], "sets": [names], "attrs": [[start, len, run, tag], ...],
// "in_entry_12": the same of the ranges holding main entry 12}
std::string attr_read(const char *path, const char *set) {
   std::ostringstream os;
   try {
      auto reader = ROOT::RNTupleReader::Open("Events", path);
      os << "{\"entries\": " << reader->GetNEntries() << ", \"px\": [";
      auto vpx = reader->GetView<float>("px");
      for (auto i : reader->GetEntryRange()) os << (i ? ", " : "") << vpx(i);
      os << "], \"sets\": [";
      bool first = true;
      for (const auto &s : reader->GetDescriptor().GetAttrSetIterable()) {
         os << (first ? "" : ", ") << "\"" << s.GetName() << "\"";
         first = false;
      }
      os << "], \"attrs\": " << xattr_entries(*reader, set) << ", \"in_entry_12\": " << xattr_entries(*reader, set, 12) << "}";
   } catch (const std::exception &e) {
      return std::string("{\"error\": \"") + e.what() + "\"}";
   }
   return os.str();
}
"""

ROOT_SCRIPT = r"""
action, path = sys.argv[1], sys.argv[2]
if action == "write":
    ROOT.attr_write(path)
    done({"written": path})
done(json.loads(str(ROOT.attr_read(path, "provenance"))))
"""

# (range start, range length, run, tag) of ROOT's file
ROOT_RANGES = [(0, 5, 100, "tag0"), (5, 6, 101, "tag1"), (11, 7, 102, "tag2")]
ROOT_PX = [float(r * 100 + i) for r in range(3) for i in range(5 + r)]


def _root(action: str, path) -> dict:
    return run_root(ROOT_SCRIPT, action, path, cxx=ROOT_CODE)


@pytest.fixture(scope="module")
def root_file(tmp_path_factory):
    d = tmp_path_factory.mktemp("attr_root")
    path = d / "root_attributes.root"
    _root("write", path)
    return path


def test_we_read_the_attribute_set_root_writes(root_file, cli):
    import rntuple

    with rntuple.open(root_file) as f:
        assert f.ntuple_names() == ["Events"]  # the attribute RNTuple's anchor is not listed
        ev = f["Events"]
        assert ev.arrays()["px"].to_list() == ROOT_PX
        sets = ev.attributes
        assert list(sets) == ["provenance"]
        prov = sets["provenance"]
        assert prov.num_entries == 3
        assert prov.entries() == [(s, n, {"run": run, "tag": tag}) for s, n, run, tag in ROOT_RANGES]
        assert prov.entries_for(12) == [(11, 7, {"run": 102, "tag": "tag2"})]
    p = cli.run("info", str(root_file))
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    text = p.stdout.decode()
    assert "format version : 1.0.2.0" in text
    assert "provenance (attribute schema 1.0): 3 entries; fields run: std::int32_t, tag: std::string" in text, text
    p = cli.run("info", "--json", str(root_file))
    sets = json.loads(p.stdout)["ntuples"][0]["attribute_sets"]
    assert sets == [{"name": "provenance", "schema_version": "1.0", "entries": 3,
                     "fields": [["run", "std::int32_t"], ["tag", "std::string"]]}]
    with uproot.open(root_file) as f:
        assert f["Events"].arrays()["px"].to_list() == ROOT_PX


OUR_RANGES = [(0, 4, 7, "first"), (4, 4, 8, "second"), (8, 0, 9, "empty"), (2, 10, 10, "overlapping")]


@pytest.fixture(scope="module")
def our_file(tmp_path_factory):
    import rntuple

    path = tmp_path_factory.mktemp("attr_ours") / "our_attributes.root"
    with rntuple.Writer(path, "Events", {"px": "float"}) as w:
        prov = w.attributes("provenance", {"run": "std::int32_t", "tag": "std::string"})
        w.extend({"px": np.arange(12, dtype=np.float32)})
        for start, n, run, tag in OUR_RANGES:
            prov.commit_range(start, start + n, {"run": run, "tag": tag})
        assert prov.num_entries == len(OUR_RANGES)
    return path


def test_root_reads_the_attribute_set_we_write(our_file):
    res = _root("read", our_file)
    assert res["entries"] == 12
    assert res["px"] == [float(i) for i in range(12)]
    assert res["sets"] == ["provenance"]
    # ROOT's RNTupleAttrSetReader orders the entries by range start.
    assert [tuple(a) for a in res["attrs"]] == sorted(OUR_RANGES)
    # ROOT's own lookup: the ranges holding main entry 12 (none: the last entry is 11) ...
    assert res["in_entry_12"] == []


def test_uproot_and_our_reader_read_our_file(our_file, cli):
    import rntuple

    with uproot.open(our_file) as f:
        assert [k.split(";")[0] for k in f.keys()] == ["Events"]
        assert f["Events"].arrays()["px"].to_list() == [float(i) for i in range(12)]
    with rntuple.open(our_file) as f:
        prov = f["Events"].attributes["provenance"]
        assert prov.entries() == [(s, n, {"run": run, "tag": tag}) for s, n, run, tag in OUR_RANGES]
        assert [e[2]["run"] for e in prov.entries_for(5)] == [8, 10]
    p = cli.run("info", str(our_file))
    text = p.stdout.decode()
    assert "format version : 1.0.2.0" in text, text
    assert "provenance (attribute schema 1.0): 4 entries; fields run: std::int32_t, tag: std::string" in text, text


def test_a_file_without_attribute_sets_keeps_its_format_version(tmp_path, cli):
    import rntuple

    path = tmp_path / "plain.root"
    rntuple.write(path, "Events", {"px": np.arange(3, dtype=np.float32)})
    assert "format version : 1.0.0.1" in cli.run("info", str(path)).stdout.decode()
    with rntuple.open(path) as f:
        assert f["Events"].attributes == {}
