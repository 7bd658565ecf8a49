"""Adding RNTuples to existing ROOT files (`update_existing_file=True`, ROOT's UPDATE mode, as
`RNTupleWriter::Append`): a file ROOT 6.40 wrote with a histogram, a TTree, a subdirectory and an RNTuple gets two
more RNTuples from us (sequential and parallel writer); ROOT reads every object as before and our RNTuples with
RNTupleReader, uproot reads them all, and so do we."""

from __future__ import annotations

import threading

import awkward as ak
import numpy as np
import uproot
from root_subprocess import run_root

import rntuple

MAKE_CODE = r"""
void make_analysis_file(const char *path) {
   TFile f(path, "RECREATE");
   TH1F h("h", "a histogram", 10, 0, 10);
   for (int i = 0; i < 100; ++i) h.Fill(i % 10, 0.5 * i);
   h.Write();
   TTree t("t", "a tree");
   double x;
   t.Branch("x", &x, "x/D");
   for (int i = 0; i < 50; ++i) { x = i * 1.5; t.Fill(); }
   t.Write();
   auto d = f.mkdir("sub");
   d->cd();
   TH1D h2("h2", "inner", 5, 0, 1);
   h2.Write();
   f.cd();
   {
      auto model = ROOT::RNTupleModel::Create();
      auto pt = model->MakeField<float>("pt");
      auto w = ROOT::RNTupleWriter::Append(std::move(model), "Root", f);
      for (int i = 0; i < 300; ++i) { *pt = i * 0.25f; w->Fill(); }
   }
   f.Close();
}
"""

MAKE = r"""
ROOT.make_analysis_file(sys.argv[1])
done({"written": sys.argv[1]})
"""

READ_CODE = r"""
#include <sstream>
std::string read_analysis_file(const char *path, bool ours) {
   std::ostringstream o;
   o.precision(17);
   auto f = std::unique_ptr<TFile>(TFile::Open(path));
   o << "{\"zombie\": " << (f->IsZombie() ? "true" : "false") << ", \"keys\": [";
   bool first = true;
   for (auto k : *f->GetListOfKeys()) { o << (first ? "" : ", ") << "\"" << k->GetName() << "\""; first = false; }
   auto h = f->Get<TH1F>("h");
   o << "], \"h\": [";
   for (int i = 1; i <= 10; ++i) o << (i > 1 ? ", " : "") << h->GetBinContent(i);
   o << "], \"t\": " << f->Get<TTree>("t")->GetEntries() << ", \"h2_bins\": " << f->Get<TH1D>("sub/h2")->GetNbinsX();
   {
      auto r = ROOT::RNTupleReader::Open("Root", path);
      auto v = r->GetView<float>("pt");
      o << ", \"Root\": [";
      for (auto i : r->GetEntryRange()) o << (i ? ", " : "") << v(i);
      o << "]";
   }
   if (ours) {
      auto r = ROOT::RNTupleReader::Open("Events", path);
      auto a = r->GetView<std::int32_t>("a");
      auto v = r->GetView<std::vector<float>>("v");
      o << ", \"Events\": [";
      for (auto i : r->GetEntryRange()) {
         o << (i ? ", " : "") << "[" << a(i) << ", [";
         const auto &x = v(i);
         for (size_t k = 0; k < x.size(); ++k) o << (k ? ", " : "") << x[k];
         o << "]]";
      }
      auto p = ROOT::RNTupleReader::Open("Parallel", path);
      auto id = p->GetView<std::uint64_t>("id");
      o << "], \"Parallel\": [";
      for (auto i : p->GetEntryRange()) o << (i ? ", " : "") << id(i);
      o << "]";
   }
   o << "}";
   return o.str();
}
"""

READ = r"""
done(json.loads(str(ROOT.read_analysis_file(sys.argv[1], sys.argv[2] == "ours"))))
"""


def test_rntuples_added_to_a_root_file(tmp_path):
    path = tmp_path / "analysis.root"
    run_root(MAKE, path, cxx=MAKE_CODE, timeout=300)
    before = run_root(READ, path, "root", cxx=READ_CODE, timeout=300)
    events = ak.Array({"a": np.arange(2000, dtype=np.int32), "v": [[float(i)] * (i % 3) for i in range(2000)]})
    rntuple.write(path, "Events", events, update_existing_file=True, approx_zipped_cluster_size=4000)
    with rntuple.ParallelWriter(path, "Parallel", {"id": "std::uint64_t"}, update_existing_file=True) as w:
        def work(k):
            with w.fill_context() as ctx:
                ctx.extend({"id": np.arange(k * 500, (k + 1) * 500, dtype=np.uint64)})

        ths = [threading.Thread(target=work, args=(k,)) for k in range(3)]
        for t in ths:
            t.start()
        for t in ths:
            t.join()
    out = run_root(READ, path, "ours", cxx=READ_CODE, timeout=300)
    assert out["zombie"] is False
    assert out["keys"] == before["keys"] + ["Events", "Parallel"]
    for k in ("h", "t", "h2_bins", "Root"):
        assert out[k] == before[k], k
    assert out["Root"] == [i * 0.25 for i in range(300)]
    assert out["Events"] == [[i, [float(i)] * (i % 3)] for i in range(2000)]
    assert sorted(out["Parallel"]) == list(range(1500))
    with uproot.open(path) as f:
        assert f["h"].values().tolist() == before["h"]
        assert f["t"].num_entries == 50
        assert f["Events"].arrays()["a"].tolist() == list(range(2000))
        assert f["Root"].arrays()["pt"].tolist() == before["Root"]
    got = rntuple.open(path)
    assert got.ntuple_names() == ["Root", "Events", "Parallel"]
    assert ak.array_equal(got["Events"].arrays(), events)
    # A name already in the file is refused and the file stays as it was.
    data = path.read_bytes()
    try:
        rntuple.write(path, "Root", {"x": np.ones(2)}, update_existing_file=True)
        raise AssertionError("expected a refusal")
    except rntuple.RNTupleError as e:
        assert "already holds an RNTuple 'Root'" in str(e)
    assert path.read_bytes() == data
