"""coffea's NanoEvents read through rntuple (``rntuple.coffea``) equal coffea reading the same file with uproot, in
eager and virtual mode; in virtual mode only the fields the analysis touches are read."""

from __future__ import annotations

import warnings

import awkward as ak
import numpy as np
import pytest
from coffea.nanoevents import NanoAODSchema, NanoEventsFactory

import rntuple
import rntuple.coffea as rc

N = 3000


def _nano(seed: int, n: int = N) -> dict:
    """NanoAOD's flat layout: n<Coll> counts and one vector per member, event-level scalars and flags."""
    rng = np.random.default_rng(seed)
    out = {"run": np.full(n, 1, np.uint32), "luminosityBlock": rng.integers(1, 100, n).astype(np.uint32),
           "event": np.arange(n, dtype=np.uint64), "MET_pt": rng.exponential(30, n).astype(np.float32),
           "MET_phi": rng.uniform(-np.pi, np.pi, n).astype(np.float32), "HLT_IsoMu24": rng.random(n) < 0.3}
    for coll, mean in (("Muon", 1.5), ("Jet", 4.0)):
        counts = rng.poisson(mean, n).astype(np.uint32)
        total = int(counts.sum())
        out[f"n{coll}"] = counts
        members = {"pt": rng.exponential(30, total) + 5, "eta": rng.normal(0, 1.5, total), "phi": rng.uniform(-np.pi, np.pi, total),
                   "mass": np.full(total, 0.105 if coll == "Muon" else 5.0)}
        for name, values in members.items():
            out[f"{coll}_{name}"] = ak.unflatten(values.astype(np.float32), counts)
        if coll == "Muon":
            out["Muon_charge"] = ak.unflatten(rng.choice([-1, 1], total).astype(np.int32), counts)
    return out


@pytest.fixture(scope="module")
def nano(tmp_path_factory):
    path = tmp_path_factory.mktemp("coffea") / "nano.root"
    with rntuple.Writer(path, "Events") as w:
        w.extend(_nano(1))
        w.extend(_nano(2, 500))  # two clusters' worth of batches
    return str(path)


def _theirs(path, mode):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return NanoEventsFactory.from_root({path: "Events"}, mode=mode).events()


def _dimuons(events):
    two = events[ak.num(events.Muon) == 2]
    two = two[two.Muon.charge[:, 0] != two.Muon.charge[:, 1]]
    return (two.Muon[:, 0] + two.Muon[:, 1]).mass, ak.sum(two.Jet.pt, axis=1)


@pytest.mark.parametrize("mode", ["eager", "virtual"])
def test_nanoevents_equal_coffea_on_uproot(nano, mode):
    theirs = _theirs(nano, mode)
    ours = rc.nanoevents(nano, "Events", mode=mode)
    assert len(ours) == len(theirs) == N + 500
    assert ours.fields == theirs.fields
    for coll in ("Muon", "Jet"):
        assert ours[coll].fields == theirs[coll].fields
        for member in ours[coll].fields:
            assert ours[coll][member].to_list() == theirs[coll][member].to_list(), (coll, member)
    assert ours.MET.pt.to_list() == theirs.MET.pt.to_list()
    assert ours.HLT.IsoMu24.to_list() == theirs.HLT.IsoMu24.to_list()
    assert ours.event.to_list() == theirs.event.to_list()
    (m1, ht1), (m2, ht2) = _dimuons(ours), _dimuons(theirs)
    assert len(m1) > 100 and np.allclose(ak.to_numpy(m1), ak.to_numpy(m2)) and ak.to_list(ht1) == ak.to_list(ht2)


def test_virtual_mode_reads_only_what_is_touched(nano):
    log = []
    events = rc.nanoevents(nano, "Events", access_log=log)
    assert log == []
    assert ak.sum(events.Muon.pt) > 0
    assert {a.field for a in log} == {"nMuon", "Muon_pt"} or {a.field for a in log} == {"Muon_pt"}
    _dimuons(events)
    touched = {a.field for a in log}
    assert {"Muon_pt", "Muon_eta", "Muon_phi", "Muon_mass", "Muon_charge", "Jet_pt"} <= touched
    assert not touched & {"MET_pt", "Jet_eta", "HLT_IsoMu24", "event"}


def test_array_source_for_from_preloaded(nano):
    keep = ["run", "luminosityBlock", "event", "nMuon", "Muon_*"]
    source = rc.array_source(nano, entry_start=100, entry_stop=400, filter_name=keep, virtual=False)
    assert sorted(source) == sorted(["run", "luminosityBlock", "event", "nMuon", "Muon_pt", "Muon_eta", "Muon_phi", "Muon_mass", "Muon_charge"])
    assert source.metadata["num_rows"] == 300 and source.metadata["object_path"] == "Events"
    events = NanoEventsFactory.from_preloaded(source, schemaclass=NanoAODSchema).events()
    want = rntuple.open(nano)["Events"]["Muon_pt"].array(entry_start=100, entry_stop=400)
    assert events.Muon.pt.to_list() == want.to_list()
    with pytest.raises(ValueError, match="mode is 'virtual' or 'eager'"):
        rc.nanoevents(nano, mode="dask")
