"""Files written by other implementations read back equal through the Python package: uproot 5.7.7's RNTuple
writer (`mkrntuple` + `extend`), and ROOT 6.40's RNTupleWriter (several clusters, every common type)."""

from __future__ import annotations

import warnings

import awkward as ak
import numpy as np
import pytest
import uproot

import rntuple
from conftest import root_dump, run_root, same


def uproot_data(n, seed):
    rng = np.random.default_rng(seed)
    k = np.arange(n)
    counts = rng.poisson(3, n)
    return ak.Array({
        "i32": k.astype(np.int32),
        "u64": (k * 3).astype(np.uint64),
        "f32": rng.normal(size=n).astype(np.float32),
        "f64": rng.normal(size=n),
        "b": k % 2 == 0,
        "vf": ak.unflatten(rng.normal(size=int(counts.sum())).astype(np.float32), counts),
        "vvi": ak.Array([[list(range(j)) for j in range(i % 3)] for i in range(n)]),
        "s": [str(i) * (i % 4) for i in range(n)],
        "rec": ak.zip({"x": k.astype(np.float64), "y": (k % 7).astype(np.int16)}),
        "opt": ak.Array([None if i % 3 == 0 else i for i in range(n)]),
        "reg": np.arange(2 * n, dtype=np.float32).reshape(n, 2),
    })


@pytest.mark.parametrize("compression", [None, "ZSTD5", "ZLIB1", "LZ4"])
def test_uproot_written(tmp_path, compression):
    comp = {None: None, "ZSTD5": uproot.ZSTD(5), "ZLIB1": uproot.ZLIB(1), "LZ4": uproot.LZ4(1)}[compression]
    p = tmp_path / "up.root"
    parts = [uproot_data(1000, 1), uproot_data(2500, 2)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with uproot.recreate(p, compression=comp) as f:
            nt = f.mkrntuple("ntuple", parts[0])
            nt.extend(parts[1])
        theirs = uproot.open(p)["ntuple"].arrays()
    expected = ak.concatenate(parts)
    t = rntuple.open(p)["ntuple"]
    assert t.num_entries == 3500
    ours = t.arrays()
    assert ours.fields == list(expected.fields)
    for f in ours.fields:
        assert ak.array_equal(ours[f], theirs[f], equal_nan=True, dtype_exact=True), f
        assert ours[f].layout.form == theirs[f].layout.form, f
        assert ak.array_equal(ours[f], expected[f], equal_nan=True), f
    # and a window across uproot's two clusters
    w = t.arrays(["vf", "s"], entry_start=990, entry_stop=1010)
    assert ak.array_equal(w.vf, expected.vf[990:1010]) and w.s.tolist() == expected.s[990:1010].tolist()


ROOT_WRITER = r'''
ROOT.gInterpreter.Declare(r"""
#include <ROOT/RNTupleModel.hxx>
#include <ROOT/RNTupleWriter.hxx>
#include <ROOT/RNTupleWriteOptions.hxx>
#include <array>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>
void PyTestWriteRoot(const std::string &path, int n, int compression)
{
   auto model = ROOT::RNTupleModel::Create();
   auto f = model->MakeField<float>("f");
   auto d = model->MakeField<double>("d");
   auto i64 = model->MakeField<std::int64_t>("i64");
   auto u16 = model->MakeField<std::uint16_t>("u16");
   auto b = model->MakeField<bool>("b");
   auto s = model->MakeField<std::string>("s");
   auto vf = model->MakeField<std::vector<float>>("vf");
   auto vvi = model->MakeField<std::vector<std::vector<std::int32_t>>>("vvi");
   auto arr = model->MakeField<std::array<std::int16_t, 3>>("arr");
   auto opt = model->MakeField<std::optional<double>>("opt");
   auto var = model->MakeField<std::variant<std::int32_t, std::string>>("var");
   auto pr = model->MakeField<std::pair<std::int32_t, std::string>>("pr");
   auto m = model->MakeField<std::map<std::string, std::int32_t>>("m");
   ROOT::RNTupleWriteOptions opts;
   opts.SetCompression(compression);
   opts.SetApproxZippedClusterSize(32 * 1024);
   opts.SetMaxUnzippedPageSize(4096);
   auto w = ROOT::RNTupleWriter::Recreate(std::move(model), "Events", path, opts);
   for (int k = 0; k < n; ++k) {
      *f = 0.5f * k;
      *d = k / 3.0;
      *i64 = std::int64_t(k) * 1000000007LL - 5;
      *u16 = std::uint16_t(k * 7);
      *b = (k % 3) == 0;
      *s = std::string(k % 5, 'a' + k % 26);
      vf->assign(k % 4, 1.25f * k);
      vvi->clear();
      for (int j = 0; j < k % 3; ++j)
         vvi->push_back(std::vector<std::int32_t>(j, k));
      *arr = {std::int16_t(k), std::int16_t(-k), std::int16_t(k % 100)};
      if (k % 4 == 0) *opt = std::nullopt; else *opt = k * 0.25;
      if (k % 2) *var = std::int32_t(k); else *var = std::to_string(k);
      *pr = {k, std::to_string(k * 2)};
      m->clear();
      for (int j = 0; j < k % 3; ++j)
         (*m)[std::to_string(j)] = j * k;
      w->Fill();
   }
}
""")
'''


@pytest.fixture(scope="module")
def root_written(tmp_path_factory):
    out = tmp_path_factory.mktemp("rootwritten")
    files = {}
    jobs = []
    for c in (0, 505, 404, 101):
        p = out / f"root_{c}.root"
        files[c] = p
        jobs.append(("call", "PyTestWriteRoot", [str(p), 5000, c]))
    run_root(jobs, extra_code=ROOT_WRITER)
    for p in files.values():
        assert p.exists(), f"ROOT did not write {p}"
    return files


@pytest.mark.parametrize("compression", [0, 505, 404, 101])
def test_root_written_equals_root_reading(root_written, compression):
    p = root_written[compression]
    oracle = root_dump(p, "Events")
    t = rntuple.open(p)["Events"]
    assert t.num_entries == len(oracle) == 5000
    assert len(t.cluster_boundaries) > 3, "the file should have several clusters"
    ours = t.to_rows()
    errors = []
    for i, (o, e) in enumerate(zip(oracle, ours)):
        same(o, e, f"entry[{i}]", errors)
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize("compression", [0, 505])
def test_root_written_arrays_equal_uproot(root_written, compression):
    p = root_written[compression]
    ours = rntuple.open(p)["Events"].arrays()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = uproot.open(p)["Events"].arrays()
    first_cluster = rntuple.open(p)["Events"].cluster_boundaries[1]
    for f in ours.fields:
        a, b = ours[f], theirs[f]
        if f == "var":
            # uproot 5.7.7 does not add the cluster offset to variant indices: first cluster only
            a, b = a[:first_cluster], b[:first_cluster]
        assert ak.array_equal(a, b, equal_nan=True, dtype_exact=True), f
        assert a.layout.form == b.layout.form, f
    # values as written
    k = np.arange(5000)
    assert ours.f.to_numpy().tolist() == (0.5 * k).astype(np.float32).tolist()
    assert ours.i64.to_numpy().tolist() == (k * 1000000007 - 5).tolist()
    assert ak.num(ours.vf).to_numpy().tolist() == (k % 4).tolist()
    assert ours.opt.tolist()[:5] == [None, 0.25, 0.5, 0.75, None]
    assert ours.var.tolist()[:4] == ["0", 1, "2", 3]
    assert ours.var.tolist()[-2:] == ["4998", 4999]
    assert ours.m.tolist()[2] == [("0", 0), ("1", 2)]
