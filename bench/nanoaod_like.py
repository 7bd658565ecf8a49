#!/usr/bin/env python3
"""A NanoAOD-like RNTuple resampled from the bundled CMS Open Data file (for bench/formats_bench.py, bench/io_bench.py).

Source: ``$RNTUPLE_TESTDATA/rntuple/Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root`` (RNTUPLE_TESTDATA
defaults to /work/shared/testdata): 1,000 real events of CMS Run 2012 B/C DoubleMuParked with nMuon, Muon_pt,
Muon_eta, Muon_phi, Muon_mass and Muon_charge only.

How the output is made (everything vectorised with numpy; deterministic for a given ``seed``):

* Whole events are sampled with replacement from the 1,000 (their muons stay together), ``entries`` times.
* The file is widened to NanoAOD's shape: flat event fields (``run``, ``luminosityBlock``, ``event``, ``PV_*``,
  ``MET_*``, ``fixedGridRhoFastjetAll``, ``genWeight``, ``HLT_*``/``Flag_*`` bits) and three collections, each with a
  ``n<Coll>`` count (``std::uint32_t``, as NanoAOD's ``nMuon/i``) and one ``std::vector<T>`` field per member
  (``Muon_pt`` ...: the layout ROOT's RDataFrame Snapshot gives a NanoAOD TTree converted to RNTuple):
    - ``Muon_*`` (24 members): the real pt, eta, phi, mass, charge; the rest derived from them;
    - ``Electron_*`` (19): the muons of a second, independently resampled event, transformed (pt scaled, mass
      0.000511, impact parameters and isolation re-drawn);
    - ``Jet_*`` (19): Poisson(4.5) jets per event whose kinematics are values drawn from the pool of all real muons
      (pt x 2.5 x lognormal + 15 GeV, eta x 1.3 clipped to |eta| < 4.7, phi + noise).
* Derived fields are deterministic transforms of the real values plus noise (e.g. ``Muon_dxy`` ~ N(0, 0.002 + 0.05
  / pt), ``Muon_ptErr`` = pt x (0.01 + 0.0002 pt) x lognormal, isolations exponential, ids from thresholds on
  pt/isolation, counts Poisson), so that the columns are correlated and neither constant nor white noise.
* Float members are rounded to NanoAOD's reduced mantissas (its ``precision`` attribute: 12 bits for eta/phi, 10
  for most, 8 for isolations and energy fractions, 6 for a few; pt and the real muon values at full precision),
  because that is what makes NanoAOD compress as it does.

So the sizes are realistic in kind (NanoAOD-like column types, multiplicities and precision), not a copy of any
real NanoAOD; ~70 columns instead of NanoAOD's ~1,000.

``make(path, entries, seed)`` writes it as the RNTuple "Events" with this project's writer (compression 505);
``generate(entries, seed)`` returns the columns for writing with other tools. CLI:
``python bench/nanoaod_like.py OUT --entries N [--seed S]``.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

SOURCE_NAME = "rntuple/Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root"
DEFAULT_SEED = 20261124
MUON_MASS = np.float32(0.10565837)


def source_path() -> Path:
    return Path(os.environ.get("RNTUPLE_TESTDATA", "/work/shared/testdata")) / SOURCE_NAME


def _load_source():
    import awkward as ak

    import rntuple

    with rntuple.open(str(source_path())) as f:
        a = f["Events"].arrays(["nMuon", "Muon_pt", "Muon_eta", "Muon_phi", "Muon_mass", "Muon_charge"])
    counts = ak.to_numpy(a["nMuon"]).astype(np.int64)
    vals = {k: ak.to_numpy(ak.flatten(a[f"Muon_{k}"])) for k in ("pt", "eta", "phi", "mass", "charge")}
    return counts, vals


def _gather_index(counts_src: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Counts and flat value indices of the source events ``idx`` (whole events, in order)."""
    offsets = np.zeros(len(counts_src) + 1, np.int64)
    np.cumsum(counts_src, out=offsets[1:])
    counts = counts_src[idx]
    total = int(counts.sum())
    out_starts = np.cumsum(counts) - counts
    flat = np.repeat(offsets[idx] - out_starts, counts) + np.arange(total, dtype=np.int64)
    return counts, flat


def reduce_mantissa(x: np.ndarray, bits: int) -> np.ndarray:
    """float32 rounded to ``bits`` mantissa bits (NanoAOD's MiniFloatConverter::reduceMantissaToNbitsRounding)."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    if bits >= 23:
        return x
    shift = 23 - bits
    u = x.view(np.uint32)
    test = np.uint32(0x7F800000)
    finite = (u & test) != test
    rounded = ((u + np.uint32(1 << (shift - 1))) & np.uint32(~((1 << shift) - 1) & 0xFFFFFFFF)).astype(np.uint32)
    return np.where(finite, rounded, u).view(np.float32)


def _f(x, bits: int = 23) -> np.ndarray:
    return reduce_mantissa(np.asarray(x, dtype=np.float32), bits)


def _wrap_phi(phi):
    return ((phi + np.pi) % (2 * np.pi) - np.pi).astype(np.float32)


def generate(entries: int, seed: int = DEFAULT_SEED):
    """Returns ``(flat, collections)``: ``flat`` maps field -> numpy array (length ``entries``), ``collections``
    maps a collection name ("Muon") -> ``(counts uint32, {member field "Muon_pt": flat numpy values})``. The count
    fields ``nMuon`` etc. are also in ``flat`` (in NanoAOD's order: run, luminosityBlock, event, then the rest)."""
    rng = np.random.default_rng(seed)
    n = int(entries)
    src_counts, src = _load_source()

    # ---- Muons: resampled whole events ----
    idx = rng.integers(0, len(src_counts), n)
    mu_counts, mu_flat = _gather_index(src_counts, idx)
    m = int(mu_counts.sum())
    pt = src["pt"][mu_flat].astype(np.float32)
    eta = src["eta"][mu_flat].astype(np.float32)
    phi = src["phi"][mu_flat].astype(np.float32)
    charge = src["charge"][mu_flat].astype(np.int32)
    ptd = pt.astype(np.float64)
    dxy = rng.normal(0, 0.002 + 0.05 / ptd, m)
    dz = rng.normal(0, 0.005 + 0.2 / ptd, m)
    dxy_err = np.abs(0.001 + 0.02 / ptd * rng.lognormal(0, 0.3, m))
    dz_err = np.abs(0.002 + 0.04 / ptd * rng.lognormal(0, 0.3, m))
    ip3d = np.hypot(dxy, dz)
    sip3d = ip3d / np.hypot(dxy_err, dz_err)
    iso04 = rng.exponential(0.08, m) * (1 + 5.0 / ptd) * (rng.random(m) < 0.8) + rng.exponential(0.6, m) * (rng.random(m) < 0.2)
    iso03 = iso04 * rng.uniform(0.6, 1.0, m)
    tkiso = iso03 * rng.uniform(0.3, 0.9, m)
    pt_err = ptd * (0.01 + 0.0002 * ptd) * rng.lognormal(0, 0.2, m)
    n_stations = np.clip(rng.poisson(2.5 + 0.02 * ptd), 0, 4).astype(np.int32)
    n_layers = np.clip(rng.normal(13, 2.5, m).round(), 5, 18).astype(np.int32)
    is_global = (n_stations >= 1) & (rng.random(m) < 0.97)
    is_tracker = rng.random(m) < 0.99
    loose = is_global | is_tracker
    medium = loose & (iso04 < 0.4) & (rng.random(m) < 0.95)
    tight = medium & is_global & (n_stations >= 2) & (np.abs(dxy) < 0.2)
    mu_jet = np.where(rng.random(m) < 0.3, rng.integers(0, 4, m), -1).astype(np.int32)
    muon = {
        "Muon_pt": pt,
        "Muon_eta": eta,
        "Muon_phi": phi,
        "Muon_mass": src["mass"][mu_flat].astype(np.float32),
        "Muon_charge": charge,
        "Muon_pdgId": (-13 * charge).astype(np.int32),
        "Muon_dxy": _f(dxy, 10),
        "Muon_dxyErr": _f(dxy_err, 6),
        "Muon_dz": _f(dz, 10),
        "Muon_dzErr": _f(dz_err, 6),
        "Muon_ip3d": _f(ip3d, 10),
        "Muon_sip3d": _f(sip3d, 10),
        "Muon_pfRelIso03_all": _f(iso03, 6),
        "Muon_pfRelIso04_all": _f(iso04, 6),
        "Muon_tkRelIso": _f(tkiso, 6),
        "Muon_ptErr": _f(pt_err, 6),
        "Muon_jetIdx": mu_jet,
        "Muon_nStations": n_stations,
        "Muon_nTrackerLayers": n_layers,
        "Muon_isGlobal": is_global,
        "Muon_isTracker": is_tracker,
        "Muon_looseId": loose,
        "Muon_mediumId": medium,
        "Muon_tightId": tight,
    }

    # ---- Electrons: the muons of another resampled event, transformed ----
    idx2 = rng.integers(0, len(src_counts), n)
    el_counts, el_flat = _gather_index(src_counts, idx2)
    e = int(el_counts.sum())
    ept = (src["pt"][el_flat].astype(np.float64) * rng.lognormal(0.1, 0.15, e))
    eeta = np.clip(src["eta"][el_flat].astype(np.float64) * 1.05 + rng.normal(0, 0.01, e), -2.5, 2.5)
    ephi = _wrap_phi(src["phi"][el_flat].astype(np.float64) + rng.normal(0, 0.3, e))
    echarge = src["charge"][el_flat].astype(np.int32)
    esip = np.abs(rng.standard_t(4, e)) * 1.2
    eiso = rng.exponential(0.1, e) * (1 + 10.0 / ept)
    r9 = np.clip(rng.beta(8, 1.2, e), 0.2, 1.05)
    sieie = np.abs(np.where(np.abs(eeta) < 1.48, rng.normal(0.0100, 0.0012, e), rng.normal(0.028, 0.003, e)))
    hoe = rng.exponential(0.02, e)
    ecut = np.clip(4 - (eiso > 0.1) - (eiso > 0.2) - (hoe > 0.05) - (sieie > 0.011) * (np.abs(eeta) < 1.48), 0, 4).astype(np.int32)
    electron = {
        "Electron_pt": _f(ept),
        "Electron_eta": _f(eeta, 12),
        "Electron_phi": _f(ephi, 12),
        "Electron_mass": _f(0.000511 * rng.lognormal(0, 0.5, e), 8),
        "Electron_charge": echarge,
        "Electron_pdgId": (-11 * echarge).astype(np.int32),
        "Electron_dxy": _f(rng.normal(0, 0.003 + 0.05 / ept, e), 10),
        "Electron_dz": _f(rng.normal(0, 0.008 + 0.2 / ept, e), 10),
        "Electron_sip3d": _f(esip, 10),
        "Electron_pfRelIso03_all": _f(eiso, 8),
        "Electron_deltaEtaSC": _f(rng.normal(0, 0.01, e), 8),
        "Electron_r9": _f(r9, 10),
        "Electron_sieie": _f(sieie, 10),
        "Electron_hoe": _f(hoe, 8),
        "Electron_eInvMinusPInv": _f(rng.laplace(0, 0.005, e), 10),
        "Electron_cutBased": ecut,
        "Electron_convVeto": rng.random(e) < 0.93,
        "Electron_lostHits": np.minimum(rng.poisson(0.15, e), 3).astype(np.uint8),
        "Electron_jetIdx": np.where(rng.random(e) < 0.4, rng.integers(0, 5, e), -1).astype(np.int32),
    }

    # ---- Jets: Poisson(4.5) per event, kinematics from the pool of real muon values ----
    jet_counts = np.minimum(rng.poisson(4.5, n), 30).astype(np.int64)
    j = int(jet_counts.sum())
    pool = rng.integers(0, len(src["pt"]), j)
    jpt = 15.0 + src["pt"][pool].astype(np.float64) * 2.5 * rng.lognormal(0, 0.3, j)
    # NanoAOD stores jets sorted by pt: sort within each event
    ev = np.repeat(np.arange(n, dtype=np.int64), jet_counts)
    order = np.lexsort((-jpt, ev))
    jpt = jpt[order]
    jeta = np.clip(src["eta"][pool].astype(np.float64) * 1.3 + rng.normal(0, 0.2, j), -4.7, 4.7)
    jphi = _wrap_phi(src["phi"][rng.integers(0, len(src["phi"]), j)].astype(np.float64) + rng.normal(0, 0.5, j))
    jmass = jpt * rng.uniform(0.05, 0.2, j)
    btag = np.where(rng.random(j) < 0.15, rng.beta(5, 1, j), rng.beta(0.4, 6, j))
    ch_h = rng.beta(5, 3, j)
    ne_h = (1 - ch_h) * rng.beta(2, 5, j)
    ch_em = (1 - ch_h - ne_h) * rng.beta(2, 3, j)
    ne_em = np.clip(1 - ch_h - ne_h - ch_em - rng.exponential(0.01, j), 0, 1)
    hflav = np.where(btag > 0.7, 5, np.where(rng.random(j) < 0.1, 4, 0)).astype(np.int32)
    jet = {
        "Jet_pt": _f(jpt, 10),
        "Jet_eta": _f(jeta, 12),
        "Jet_phi": _f(jphi, 12),
        "Jet_mass": _f(jmass, 10),
        "Jet_area": _f(0.5 + rng.normal(0, 0.03, j), 10),
        "Jet_btagDeepFlavB": _f(btag, 10),
        "Jet_btagCSVV2": _f(np.clip(btag + rng.normal(0, 0.1, j), 0, 1), 10),
        "Jet_chHEF": _f(ch_h, 8),
        "Jet_neHEF": _f(ne_h, 8),
        "Jet_chEmEF": _f(ch_em, 8),
        "Jet_neEmEF": _f(ne_em, 8),
        "Jet_muEF": _f(rng.exponential(0.01, j) * (rng.random(j) < 0.2), 8),
        "Jet_jetId": np.where(rng.random(j) < 0.9, 6, 2).astype(np.int32),
        "Jet_puId": np.where(jpt > 50, 7, rng.integers(0, 8, j)).astype(np.int32),
        "Jet_nConstituents": np.clip(rng.poisson(8 + jpt / 5), 1, 255).astype(np.uint8),
        "Jet_hadronFlavour": hflav,
        "Jet_partonFlavour": np.where(rng.random(j) < 0.2, 21, hflav).astype(np.int32),
        "Jet_muonIdx1": np.where(rng.random(j) < 0.05, 0, -1).astype(np.int32),
        "Jet_electronIdx1": np.where(rng.random(j) < 0.05, 0, -1).astype(np.int32),
    }

    # ---- flat event fields ----
    mu_ev = np.repeat(np.arange(n, dtype=np.int64), mu_counts)
    px = np.bincount(mu_ev, weights=ptd * np.cos(phi), minlength=n)
    py = np.bincount(mu_ev, weights=ptd * np.sin(phi), minlength=n)
    ht = np.bincount(ev, weights=jpt, minlength=n)
    met_x = -px * 0.1 + rng.normal(0, 15, n)
    met_y = -py * 0.1 + rng.normal(0, 15, n)
    npv = np.maximum(rng.poisson(22, n), 1).astype(np.int32)
    lead_mu = np.zeros(n)
    np.maximum.at(lead_mu, mu_ev, ptd)
    lumi = (np.arange(n, dtype=np.int64) // 350 + 1).astype(np.uint32)
    flat = {
        "run": np.where(np.arange(n) < n // 2, 194075, 198230).astype(np.uint32),
        "luminosityBlock": lumi,
        "event": (np.uint64(1_000_000) + np.cumsum(rng.integers(1, 2000, n, dtype=np.int64))).astype(np.uint64),
        "nMuon": mu_counts.astype(np.uint32),
        "nElectron": el_counts.astype(np.uint32),
        "nJet": jet_counts.astype(np.uint32),
        "PV_npvs": npv,
        "PV_npvsGood": (npv - rng.binomial(npv, 0.05)).astype(np.int32),
        "PV_x": _f(rng.normal(0.0107, 0.0015, n), 10),
        "PV_y": _f(rng.normal(0.0417, 0.0015, n), 10),
        "PV_z": _f(rng.normal(0.7, 4.5, n), 10),
        "PV_chi2": _f(rng.gamma(3.0, 0.3, n), 8),
        "PV_ndof": _f(np.maximum(rng.normal(60, 25, n), 2).round() + 0.0, 8),
        "MET_pt": _f(np.hypot(met_x, met_y), 10),
        "MET_phi": _f(np.arctan2(met_y, met_x), 12),
        "MET_sumEt": _f(ht + rng.gamma(10, 40, n), 10),
        "MET_significance": _f(rng.gamma(1.5, 2.0, n), 10),
        "fixedGridRhoFastjetAll": _f(np.maximum(0.6 * npv + rng.normal(0, 2.5, n), 0), 10),
        "genWeight": np.ones(n, np.float32),
        "HLT_IsoMu24": (lead_mu > 24) & (rng.random(n) < 0.9),
        "HLT_Mu17_Mu8": (mu_counts >= 2) & (rng.random(n) < 0.85),
        "HLT_Ele27_WPTight_Gsf": (el_counts >= 1) & (rng.random(n) < 0.3),
        "HLT_PFJet450": ht > 600,
        "Flag_goodVertices": rng.random(n) < 0.999,
        "Flag_METFilters": rng.random(n) < 0.995,
    }
    collections = {
        "Muon": (flat["nMuon"], muon),
        "Electron": (flat["nElectron"], electron),
        "Jet": (flat["nJet"], jet),
    }
    return flat, collections


def to_awkward_dict(flat, collections) -> dict:
    """The columns as a dict of numpy (flat) and awkward (jagged, ``var * T``) arrays, in NanoAOD's order."""
    import awkward as ak

    out = dict(flat)
    for counts, members in collections.values():
        for name, values in members.items():
            out[name] = ak.unflatten(values, counts.astype(np.int64))
    return out


def make(path, entries: int, seed: int = DEFAULT_SEED, compression: int = 505) -> dict:
    """Writes ``entries`` NanoAOD-like events as the RNTuple "Events" (this project's writer) into ``path``; returns
    ``{"path", "entries", "bytes", "generate_seconds", "write_seconds", "fields"}``."""
    import rntuple

    t0 = time.perf_counter()
    flat, colls = generate(entries, seed)
    data = to_awkward_dict(flat, colls)
    t1 = time.perf_counter()
    size = rntuple.write(str(path), "Events", data, compression=compression)
    t2 = time.perf_counter()
    return {"path": str(path), "entries": int(entries), "bytes": int(size), "generate_seconds": t1 - t0,
            "write_seconds": t2 - t1, "fields": len(data)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", help="output ROOT file")
    ap.add_argument("--entries", type=int, default=300_000)
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--compression", type=int, default=505)
    args = ap.parse_args()
    info = make(args.out, args.entries, args.seed, args.compression)
    print(info)


if __name__ == "__main__":
    main()
