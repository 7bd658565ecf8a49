"""`rntuple merge --mode union`, `--compression`, `--cluster-size`, attribute sets through merge and skim, and the
refusal of inputs holding other objects: the outputs read in ROOT 6.40's RNTupleReader and in uproot value for value
as the inputs' entries one after the other, defaults (0, empty, false) where an input lacks a field, equal to what
ROOT's own union merge (TFileMerger, rntuple.MergingMode=Union) reads."""

from __future__ import annotations

import json

import numpy as np
import pytest
import uproot
from root_subprocess import ATTRIBUTE_SET_CXX, run_root

ROOT_CODE = ATTRIBUTE_SET_CXX + r"""
#include <ROOT/RNTupleWriter.hxx>
#include <ROOT/RNTupleModel.hxx>
#include <TFile.h>
#include <TFileMerger.h>
#include <TH1F.h>

// An RNTuple and a histogram in one file.
void with_hist(const char *path) {
   auto file = std::unique_ptr<TFile>(TFile::Open(path, "RECREATE"));
   auto model = ROOT::RNTupleModel::Create();
   auto x = model->MakeField<std::int32_t>("x");
   auto writer = ROOT::RNTupleWriter::Append(std::move(model), "Events", *file);
   *x = 7; writer->Fill();
   writer.reset();
   TH1F h("h", "h", 10, 0, 1);
   h.Write();
   file->Close();
}

bool root_union(const char *out, const char *a, const char *b) {
   TFileMerger m(false, false);
   m.SetMergeOptions(TString("rntuple.MergingMode=Union"));
   m.OutputFile(out, "RECREATE");
   m.AddFile(a);
   m.AddFile(b);
   return m.Merge();
}

// JSON of every entry of the union schema (x, v, s, y, flag) and the attribute set "runs" when asked
// ([start, length, run] each).
std::string read_all(const char *path, bool attrs) {
   std::ostringstream os;
   os.precision(17);
   try {
      auto reader = ROOT::RNTupleReader::Open("Events", path);
      auto x = reader->GetView<std::int32_t>("x");
      auto v = reader->GetView<std::vector<float>>("v");
      auto s = reader->GetView<std::string>("s");
      auto y = reader->GetView<double>("y");
      auto flag = reader->GetView<bool>("flag");
      os << "{\"rows\": [";
      for (auto i : reader->GetEntryRange()) {
         os << (i ? ", " : "") << "[" << x(i) << ", [";
         const auto &vv = v(i);
         for (std::size_t k = 0; k < vv.size(); ++k) os << (k ? ", " : "") << vv[k];
         os << "], \"" << s(i) << "\", " << y(i) << ", " << (flag(i) ? "true" : "false") << "]";
      }
      os << "], \"attrs\": " << (attrs ? xattr_entries(*reader, "runs") : "[]") << "}";
   } catch (const std::exception &e) {
      return std::string("{\"error\": \"") + e.what() + "\"}";
   }
   return os.str();
}
"""

ROOT_SCRIPT = r"""
out = {}
for job in json.loads(sys.argv[1]):
    if job[0] == "hist":
        ROOT.with_hist(job[1])
    elif job[0] == "union":
        out[job[1]] = bool(ROOT.root_union(job[1], job[2], job[3]))
    else:
        out[job[1]] = json.loads(str(ROOT.read_all(job[1], job[2])))
done(out)
"""


def _root(jobs) -> dict:
    return run_root(ROOT_SCRIPT, json.dumps(jobs), cxx=ROOT_CODE)


N_A, N_B = 3000, 2000


def _expected():
    """Rows (x, v, s, y, flag) of a.root then b.root, with the defaults of the fields each lacks."""
    rows = [[i, [float(i) * 0.5] * (i % 3), "", 0.0, False] for i in range(N_A)]
    rows += [[1000 + i, [], f"s{i}", i * 0.25, i % 2 == 0] for i in range(N_B)]
    return rows


@pytest.fixture(scope="module")
def files(tmp_path_factory, cli):
    import rntuple

    d = tmp_path_factory.mktemp("merge_modes")
    a, b = d / "a.root", d / "b.root"
    small = {"approx_zipped_cluster_size": 4000}
    with rntuple.Writer(a, "Events", {"x": "std::int32_t", "v": "std::vector<float>"}, **small) as w:
        runs = w.attributes("runs", {"run": "std::int32_t"})
        w.extend([{"x": i, "v": [i * 0.5] * (i % 3)} for i in range(N_A)])
        runs.commit_range(0, 1000, {"run": 1})
        runs.commit_range(1000, N_A, {"run": 2})
    with rntuple.Writer(b, "Events", {"s": "std::string", "x": "std::int32_t", "y": "double", "flag": "bool"},
                        compression=404, **small) as w:
        runs = w.attributes("runs", {"run": "std::int32_t"})
        w.extend([{"s": f"s{i}", "x": 1000 + i, "y": i * 0.25, "flag": i % 2 == 0} for i in range(N_B)])
        runs.commit_range(0, N_B, {"run": 3})
    out = {k: d / f"{k}.root" for k in ("union", "zstd1", "reclustered", "skim", "skim_where", "root_union", "hist")}
    for key, extra in (("union", []), ("zstd1", ["--compression", "501", "--threads", "2"]),
                       ("reclustered", ["--cluster-size", "20000"])):
        p = cli.run("merge", out[key], a, b, "--mode", "union", *extra)
        assert p.returncode == 0, p.stderr.decode()
        out[key + "_report"] = json.loads(p.stdout)
    p = cli.run("skim", out["union"], out["skim"], "--entries", "500:3500")
    assert p.returncode == 0, p.stderr.decode()
    # A selecting skim on two threads: parts of the input interleave in the output.
    p = cli.run("skim", out["union"], out["skim_where"], "--where", "x % 2 == 0", "--threads", "2")
    assert p.returncode == 0, p.stderr.decode()
    _root([["hist", str(out["hist"])], ["union", str(out["root_union"]), str(a), str(b)]])
    keys = ("union", "zstd1", "reclustered", "skim", "skim_where", "root_union")
    reads = _root([["read", str(out[k]), k != "root_union"] for k in keys])
    return out, {k: reads[str(out[k])] for k in keys}, (a, b)


def test_root_reads_union_recompressed_and_reclustered_merges_value_for_value(files):
    out, reads, _ = files
    want = _expected()
    assert reads["root_union"]["rows"] == want  # ROOT's own union merge reads so
    for key in ("union", "zstd1", "reclustered"):
        assert reads[key]["rows"] == want, key
    assert out["union_report"]["zero_pages"] > 0
    assert out["zstd1_report"]["recompressed_pages"] == out["zstd1_report"]["pages"]
    assert out["reclustered_report"]["clusters"] != out["union_report"]["clusters"]


def test_union_is_laid_out_as_roots(files, cli):
    """The fields b.root brings are deferred to a.root's entries in both files (late model extension)."""
    out, _, _ = files

    def deferred(path):
        return sorted(line.split()[1] for line in cli.info(path).splitlines() if f"(deferred@{N_A})" in line)

    assert deferred(out["union"]) == deferred(out["root_union"]) == ["flag", "s", "y"]


def test_uproot_reads_the_merges_value_for_value(files):
    out, _, _ = files
    want = _expected()
    for key in ("union", "zstd1", "reclustered"):
        with uproot.open(out[key]) as f:
            arr = f["Events"].arrays()
        got = [[int(r["x"]), [float(z) for z in r["v"]], str(r["s"]), float(r["y"]), bool(r["flag"])] for r in
               arr.to_list()]
        assert got == want, key
    with uproot.open(out["skim"]) as f:
        x = f["Events"].arrays(["x"])["x"]
    assert np.array_equal(np.asarray(x), np.array([r[0] for r in want[500:3500]]))


def test_attribute_sets_survive_merge_and_skim(files):
    _, reads, _ = files
    want = [[0, 1000, 1], [1000, N_A - 1000, 2], [N_A, N_B, 3]]
    for key in ("union", "zstd1", "reclustered"):
        assert reads[key]["attrs"] == want, key
    # Entries 500..3500: the ranges clipped to them and moved to start at 0.
    assert reads["skim"]["attrs"] == [[0, 500, 1], [500, N_A - 1000, 2], [N_A - 500, 500, 3]]
    assert reads["skim"]["rows"] == _expected()[500:3500]


def test_attribute_sets_follow_the_entries_a_selecting_skim_keeps(files):
    """Each range ROOT reads holds entries of its run only, and the ranges of a run cover every kept entry of it."""
    _, reads, _ = files
    rows, attrs = reads["skim_where"]["rows"], reads["skim_where"]["attrs"]
    want = [r for r in _expected() if r[0] % 2 == 0]
    key = lambda r: (r[2], r[0])  # noqa: E731  (s, x) tells every row apart; two threads: parts in any order
    assert sorted(rows, key=key) == sorted(want, key=key)

    def run_of(row):
        return 3 if row[2] else (1 if row[0] < 1000 else 2)

    covered = {}
    for start, n, run in attrs:
        assert all(run_of(r) == run for r in rows[start:start + n]), (start, n, run)
        covered[run] = covered.get(run, 0) + n
    assert covered == {1: 500, 2: 1000, 3: 1000}


def test_errors_name_file_and_field_or_object(files, cli, tmp_path):
    import rntuple

    out, _, (a, _) = files
    bad = tmp_path / "bad.root"
    with rntuple.Writer(bad, "Events", {"x": "double"}) as w:
        w.extend({"x": np.array([1.5])})
    p = cli.run("merge", tmp_path / "o.root", a, bad, "--mode", "union")
    err = p.stderr.decode()
    assert p.returncode != 0 and "bad.root" in err and "field 'x'" in err and "double" in err, err
    p = cli.run("merge", tmp_path / "o.root", out["hist"])
    err = p.stderr.decode()
    assert p.returncode != 0 and "hist.root" in err and "TH1F 'h'" in err, err
    p = cli.run("merge", tmp_path / "o.root", out["hist"], "--ignore-other-objects")
    assert p.returncode == 0, p.stderr.decode()
    assert cli.dump(tmp_path / "o.root", "Events") == [{"x": 7}]
    with pytest.raises(rntuple.RNTupleError, match="TH1F 'h'"):
        rntuple.merge(tmp_path / "p.root", [out["hist"]])
    assert rntuple.merge(tmp_path / "p.root", [out["hist"]], ignore_other_objects=True)["entries"] == 1
