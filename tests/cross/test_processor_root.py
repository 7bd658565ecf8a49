"""Chains and joins (issue 32) against ROOT 6.40's ``ROOT::Experimental::RNTupleProcessor``: files written by
`rntuple` are read by ``RNTupleProcessor::CreateChain`` (three files), ``CreateJoin`` aligned, and ``CreateJoin`` on
(run, event) with a shuffled auxiliary RNTuple missing every seventh key, through a compiled C++ loop (cling), and
by ``rntuple.chain`` / ``rntuple.join``: every value equal (a missing auxiliary value is ``null`` in both). Bad
inputs (an index field missing or not an integer, duplicate auxiliary keys, chained schemas that differ) give our
errors naming file and field; ROOT refuses the missing index field too."""

from __future__ import annotations

import awkward as ak
import numpy as np
import pytest
from root_subprocess import run_root

import rntuple

N = 3000


def _write(path, name, run, event, cluster=None):
    x = event * 0.5 + run
    data = {"run": run.astype(np.uint32), "event": event.astype(np.uint64), "x": x.astype(np.float64), "v": ak.Array([[float(e)] * int(e % 3) for e in event])}
    schema = {"run": "std::uint32_t", "event": "std::uint64_t", "x": "double", "v": "std::vector<double>"}
    with rntuple.Writer(str(path), name, schema) as w:
        step = cluster or len(event)
        for s in range(0, len(event), step):
            w.extend({k: v[s : s + step] for k, v in data.items()})
            w.checkpoint()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("processor")
    run = np.repeat(np.arange(1, 4), N // 3)
    event = np.tile(np.arange(N // 3), 3) * 3 + 1
    _write(d / "p.root", "Events", run, event, cluster=700)
    keep = np.arange(N) % 7 != 3
    order = np.random.default_rng(32).permutation(np.flatnonzero(keep))
    _write(d / "aux.root", "Aux", run[order], event[order], cluster=500)
    _write(d / "aligned.root", "Aux", run, event, cluster=900)
    for k in range(3):
        e = np.arange(100) + 1000 * k
        _write(d / f"c{k}.root", "Events", np.full(100, k), e, cluster=40)
    return d


ROOT_CODE = r"""
#include <ROOT/RNTupleProcessor.hxx>
#include <sstream>
#include <iomanip>
std::string rntuple_dump(ROOT::Experimental::RNTupleProcessor &proc, const std::string &prefix) {
   auto event = proc.RequestField<std::uint64_t>("event");
   auto x = proc.RequestField<double>(prefix + "x");
   auto v = proc.RequestField<std::vector<double>>(prefix + "v");
   std::ostringstream out;
   out << std::setprecision(17) << "[";
   bool first = true;
   for (auto i : proc) {
      (void)i;
      out << (first ? "" : ",") << "[" << *event << ",";
      first = false;
      if (x.HasValue()) out << *x; else out << "null";
      out << ",";
      if (v.HasValue()) { out << "["; for (std::size_t k = 0; k < v->size(); ++k) out << (k ? "," : "") << (*v)[k]; out << "]"; } else out << "null";
      out << "]";
   }
   out << "]";
   return out.str();
}
std::string rntuple_chain(const std::vector<std::string> &files) {
   std::vector<ROOT::Experimental::RNTupleOpenSpec> specs;
   for (auto &f : files) specs.emplace_back("Events", f);
   auto proc = ROOT::Experimental::RNTupleProcessor::CreateChain(specs);
   return rntuple_dump(*proc, "");
}
std::string rntuple_join(const std::string &p, const std::string &a, const std::vector<std::string> &on) {
   try {
      auto proc = ROOT::Experimental::RNTupleProcessor::CreateJoin({"Events", p}, {"Aux", a}, on);
      return rntuple_dump(*proc, "Aux.");
   } catch (const std::exception &e) {
      return std::string("ERROR ") + e.what();
   }
}
"""

ROOT_SCRIPT = r"""
d = sys.argv[1]
out = {}
out["chain"] = json.loads(str(ROOT.rntuple_chain(ROOT.std.vector["std::string"]([f"{d}/c{k}.root" for k in range(3)]))))
out["aligned"] = json.loads(str(ROOT.rntuple_join(f"{d}/p.root", f"{d}/aligned.root", ROOT.std.vector["std::string"]())))
out["on"] = json.loads(str(ROOT.rntuple_join(f"{d}/p.root", f"{d}/aux.root", ROOT.std.vector["std::string"](["run", "event"]))))
out["missing_field"] = str(ROOT.rntuple_join(f"{d}/p.root", f"{d}/aux.root", ROOT.std.vector["std::string"](["run", "lumi"])))
done(out)
"""


@pytest.fixture(scope="module")
def root_results(inputs):
    return run_root(ROOT_SCRIPT, inputs, cxx=ROOT_CODE, timeout=300)


def _ours(dataset, prefix):
    a = dataset.arrays(["event", prefix + "x", prefix + "v"])
    return [list(r) for r in zip(a["event"].tolist(), a[prefix + "x"].tolist(), a[prefix + "v"].tolist())]


def test_chain_equals_root(inputs, root_results):
    ours = _ours(rntuple.chain([str(inputs / f"c{k}.root") for k in range(3)]), "")
    assert len(ours) == 300
    assert ours == root_results["chain"]


def test_aligned_join_equals_root(inputs, root_results):
    ours = _ours(rntuple.join(str(inputs / "p.root"), str(inputs / "aligned.root")), "Aux.")
    assert len(ours) == N
    assert ours == root_results["aligned"]


def test_join_on_run_event_equals_root(inputs, root_results):
    j = rntuple.join(str(inputs / "p.root"), str(inputs / "aux.root"), on=["run", "event"])
    ours = _ours(j, "Aux.")
    assert sum(r[1] is None for r in ours) == N - np.count_nonzero(np.arange(N) % 7 != 3)
    assert ours == root_results["on"]
    inner = rntuple.join(str(inputs / "p.root"), str(inputs / "aux.root"), on=["run", "event"], how="inner")
    assert _ours(inner, "Aux.") == [r for r in root_results["on"] if r[1] is not None]


def test_bad_inputs(inputs, root_results, tmp_path):
    assert root_results["missing_field"].startswith("ERROR"), root_results["missing_field"]
    with pytest.raises(rntuple.NotFoundError, match=r"index field 'lumi'.*p\.root"):
        rntuple.join(str(inputs / "p.root"), str(inputs / "aux.root"), on=["run", "lumi"])
    with pytest.raises(rntuple.RNTupleError, match=r"index field 'x'.*not an integer"):
        rntuple.join(str(inputs / "p.root"), str(inputs / "aux.root"), on=["x"])
    with pytest.raises(rntuple.RNTupleError, match=r"duplicate key \(run=\d\).*aux\.root.*index fields run"):
        rntuple.join(str(inputs / "p.root"), str(inputs / "aux.root"), on=["run"])
    rntuple.write(str(tmp_path / "other.root"), "Events", {"run": np.zeros(2, np.uint32), "event": np.zeros(2, np.uint64), "x": np.zeros(2, np.float32)})
    with pytest.raises(rntuple.RNTupleError, match=r"other\.root.*'x'|'x'.*other\.root"):
        rntuple.chain([str(inputs / "c0.root"), str(tmp_path / "other.root")])
