#!/usr/bin/env python3
"""Format comparison of the RNTuple papers: the same data as RNTuple (this project, ROOT 6.40),
TTree (ROOT 6.40), Parquet, Arrow IPC and HDF5; file size, write time, read time of all columns and of 10 columns,
page cache warm and cold.

Run it with the project's venv: ``.venv/bin/python bench/formats_bench.py [--quick] [--json [PATH]]``
(``--quick``: small datasets). The CLI is ``--bin``, $RNTUPLE_BIN or target/release/rntuple.
Files go to bench/data/formats/ (git-ignored) and are deleted at the end unless ``--keep-files``.

Datasets (the same values in every format):

1. ``synthetic``: the model of ``rntuple bench write`` (std::uint64_t eventId, std::vector<float> particles with
   Poisson(5) sizes, values uniform in [0, 100)), written by the CLI (``--mode sequential``, compression 505), read
   back with this project into memory and written from there by every writer. The subset is eventId alone (the
   model has two fields).
2. ``nanoaod``: bench/nanoaod_like.py (CMS Open Data muons resampled, widened to NanoAOD's shape: flat event
   fields, nMuon/nElectron/nJet counts and Muon_*/Electron_*/Jet_* members; see its docstring).
3. ``b2hhh``: the flat 26-column LHCb ntuple of the RNTuple performance paper (B_FlightDistance, B_VertexChi2 and
   H{1,2,3}_{PX,PY,PZ,ProbK,ProbPi,Charge,IPChi2,isMuon}: 20 doubles, 6 ints), generated with numpy.

Formats and writers (each at its usual settings, from the same in-memory numpy arrays; conversions to each tool's
input, e.g. the pyarrow Table, are made before the timed region):

* RNTuple, this project: ``rntuple.write(path, "Events", dict of numpy/awkward arrays)``, defaults (compression 505
  = zstd level 5, ROOT's RNTupleWriteOptions defaults, implicit MT on: a cluster's pages compressed on all cores,
  same-page merging on). After an untimed write, written ``max(reps + 2, 5)`` times with same-page merging on and as
  often with it off, the order alternating, side by side: the sizes and the on/off write-time ratios (best and median
  wall, median CPU) are reported, the best merged write is the one in the table; ROOT's view loop and uproot also
  read our (merged) file.
* RNTuple, ROOT 6.40: ``RNTupleWriter::Recreate`` with a bare model of the same field types, default options
  (compression 505, IMT off), C++ compiled by ACLiC (-O3) filling from the numpy buffers.
* TTree, ROOT 6.40, written as NanoAOD is: one branch per column, collections as C-style leaf arrays with a count
  leaf (``nMuon/i``, ``Muon_pt[nMuon]/F``; the synthetic model gets a ``nparticles/i`` count leaf), compression 505
  (ROOT's default; CMS production NanoAOD has used LZMA (2xx) in some campaigns: not measured here), basket size
  32000 and auto-flush at 30 MB (ROOT's defaults), C++ via ACLiC.
* Parquet (pyarrow ``pq.write_table``): zstd (Arrow's default level, 1) and snappy; default row groups.
* Arrow IPC / Feather v2 (``pyarrow.feather.write_feather``): lz4 (Feather's default) and uncompressed.
* HDF5 (h5py): ``columns`` = one dataset per column; ``compound`` = one compound (row-wise) dataset per table
  (the event-level fields + counts in ``events``, each collection's members in its own table, e.g. ``Muon``).
  Jagged collections are stored flattened (all values of all entries) with the counts in their own
  dataset/field (nMuon; nparticles). Chunks of ~1 MiB, compression gzip level 4 (h5py's default level) and lzf.

Readers (all columns, and a subset of 10 columns present in every format):

* ``ours py``: ``rntuple.open(path)["Events"].arrays(fields)`` (awkward arrays);
* ``ours CLI``: ``rntuple bench read PATH --ntuple Events [--fields ..]`` (the Rust reader into Arrow, without
  Python; its JSON ``seconds``, process start-up not included);
* ``ROOT views``: ``RNTupleReader`` + one type-erased ``GetView<void>`` per field, every entry of every field read
  (deserialized into the field's C++ type, as RDataFrame would), C++ via ACLiC; on ROOT's own RNTuple file;
* ``ROOT GetEntry``: ``TTree::GetEntry`` over all entries with ``SetBranchStatus`` on the chosen branches, C++;
* ``uproot``: ``uproot.open(path)["Events"].arrays(fields)`` for the TTree (awkward arrays);
* ``pyarrow``: ``pq.read_table(path, columns=..)`` / ``feather.read_table(path, columns=.., memory_map=False)``;
* ``h5py``: every dataset needed read whole into numpy (``ds[()]``; compound: ``ds.fields(names)[()]``).

Timing: write = the writer's call from memory to closed file plus an ``os.fsync`` of the file. Read, per (file,
reader, column set): one untimed read, then best of ``--reps`` warm runs (file in the page cache), then
``--cold`` runs each after ``os.fsync`` + ``os.posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)`` of the file (the best
is reported). Python readers run in this process; ROOT in a worker process (bench/_formats_root.py, so ROOT's
start-up is not timed);
the CLI in one process per run. In this Firecracker VM the evicted file is read from the virtual disk, which
the host may itself cache: "cold" here is the guest's page cache cold, not necessarily a spinning disk.

Output: Markdown tables (printed; also bench/data/formats_results.md), raw numbers as JSON
(bench/data/formats_results.json, or the path given to ``--json``), and the plot bench/formats.png.
"""

from __future__ import annotations

import argparse
import gc
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness as H  # noqa: E402  (flags, workers, timing, machine, tables)
import nanoaod_like  # noqa: E402

REPO = H.REPO
DATA = H.DATA
SCRATCH = DATA / "formats"
TREE = "Events"
SEED = 20261124
log = H.log

SIZES = {  # entries per dataset: full, quick
    "synthetic": (2_000_000, 200_000),
    "nanoaod": (300_000, 40_000),
    "b2hhh": (3_000_000, 300_000),
}
SUBSETS = {
    "synthetic": ["eventId"],
    "nanoaod": ["nMuon", "Muon_pt", "Muon_eta", "Muon_phi", "nJet", "Jet_pt", "Jet_eta", "Jet_btagDeepFlavB",
                "MET_pt", "PV_npvs"],
    "b2hhh": ["B_FlightDistance", "B_VertexChi2", "H1_PX", "H1_PY", "H1_PZ", "H1_ProbK", "H2_PX", "H2_PY", "H2_PZ",
              "H2_ProbK"],
}
TYPE_CODES = {  # numpy dtype -> (ROOT leaf code, RNTuple type)
    "float32": ("F", "float"), "float64": ("D", "double"), "int32": ("I", "std::int32_t"),
    "uint32": ("i", "std::uint32_t"), "int64": ("L", "std::int64_t"), "uint64": ("l", "std::uint64_t"),
    "bool": ("O", "bool"), "uint8": ("b", "std::uint8_t"), "int8": ("B", "std::int8_t"),
    "int16": ("S", "std::int16_t"), "uint16": ("s", "std::uint16_t"),
}
PAPER = ("The RNTuple papers (Blomer et al., 'Evolution of the ROOT Tree I/O', CHEP 2019; Lopez-Gomez & Blomer, "
         "'RNTuple performance: status and outlook', ACAT 2021) report RNTuple files 10-20 % smaller than TTree "
         "and RNTuple reading several times faster than TTree and faster than Parquet and HDF5.")


# ----------------------------------------------------------------------------------------------
# datasets: columns = ordered dict name -> numpy array (flat) or (values, count name) (jagged);
# counts = count name -> uint32 array; implicit = count names that are not fields of their own
# ----------------------------------------------------------------------------------------------


class Dataset:
    def __init__(self, name: str, entries: int, flat: dict, jagged: dict, counts: dict, implicit: set, tables: dict):
        self.name = name
        self.entries = entries
        self.flat = flat  # name -> np array (includes explicit counts)
        self.jagged = jagged  # name -> (values, count name)
        self.counts = counts  # count name -> uint32 counts
        self.implicit = implicit  # count names not stored as fields in RNTuple / Parquet / Arrow
        self.tables = tables  # HDF5 compound tables: table name -> list of column names
        self.order = list(flat) + list(jagged)
        self._offsets = {}

    def offsets(self, count: str) -> np.ndarray:
        if count not in self._offsets:
            off = np.zeros(self.entries + 1, np.int64)
            np.cumsum(self.counts[count], out=off[1:])
            self._offsets[count] = off
        return self._offsets[count]

    def uncompressed_bytes(self) -> int:
        n = sum(a.nbytes for a in self.flat.values()) + sum(v.nbytes for v, _ in self.jagged.values())
        return n + sum(self.counts[c].nbytes for c in self.implicit)


def make_synthetic(entries: int, binary: Path, scratch: Path) -> tuple[Dataset, dict]:
    import awkward as ak

    import rntuple

    path = scratch / "synthetic_cli.root"
    cmd = [str(binary), "bench", "write", "--mode", "sequential", "--threads", "1", "--entries", str(entries),
           "--compression", "505", "--output", str(path), "--no-progress"]
    p = subprocess.run(cmd, capture_output=True, text=True, check=True)
    info = json.loads(p.stdout.strip().splitlines()[-1]) if p.stdout.strip().startswith("{") else {}
    with rntuple.open(str(path)) as f:
        a = f[TREE].arrays()
    event_id = ak.to_numpy(a["eventId"]).astype(np.uint64)
    counts = ak.to_numpy(ak.num(a["particles"])).astype(np.uint32)
    values = ak.to_numpy(ak.flatten(a["particles"])).astype(np.float32)
    cli = {"cli_write_seconds": info.get("seconds"), "cli_file_bytes": path.stat().st_size, "cmd": " ".join(cmd[1:])}
    path.unlink()
    ds = Dataset("synthetic", entries, {"eventId": event_id}, {"particles": (values, "nparticles")},
                 {"nparticles": counts}, {"nparticles"}, {"events": ["eventId", "nparticles"], "particles": ["particles"]})
    return ds, cli


def make_nanoaod(entries: int) -> Dataset:
    flat, colls = nanoaod_like.generate(entries, SEED)
    jagged, counts, tables = {}, {}, {"events": list(flat)}
    for coll, (_cnt, members) in colls.items():
        cname = f"n{coll}"
        counts[cname] = flat[cname]
        tables[coll] = list(members)
        for k, v in members.items():
            jagged[k] = (v, cname)
    return Dataset("nanoaod", entries, flat, jagged, counts, set(), tables)


def make_b2hhh(entries: int, seed: int = SEED) -> Dataset:
    """The 26 columns of the LHCb B -> hhh open-data ntuple (B2HHH), from plausible distributions: momenta in
    MeV (forward spectrometer: PZ >> PT), PID probabilities in [0, 1] correlated with the true species, IP chi2
    log-normal, charges +-1 summing to the B's charge, isMuon rare. 20 doubles and 6 ints, as in the original."""
    rng = np.random.default_rng(seed)
    n = int(entries)
    cols = {}
    b_pt = rng.gamma(3.0, 2500.0, n)
    b_eta = rng.uniform(2.0, 5.0, n)
    cols["B_FlightDistance"] = rng.exponential(12.0, n) * (1 + b_pt / 20000.0)
    cols["B_VertexChi2"] = rng.chisquare(3, n) * rng.lognormal(0, 0.3, n)
    b_charge = rng.choice(np.array([-1, 1], np.int32), n)
    for h in (1, 2, 3):
        frac = rng.dirichlet((4, 4, 4), n)[:, h - 1] if h == 1 else rng.uniform(0.15, 0.5, n)
        pt = b_pt * frac + rng.gamma(2.0, 150.0, n)
        eta = b_eta + rng.normal(0, 0.3, n)
        phi = rng.uniform(-np.pi, np.pi, n)
        is_kaon = rng.random(n) < 0.75
        prob_k = np.where(is_kaon, rng.beta(5, 1.2, n), rng.beta(1.2, 5, n))
        prob_pi = np.clip(1.0 - prob_k + rng.normal(0, 0.1, n), 0, 1) * rng.beta(6, 1, n)
        charge = b_charge if h != 2 else -b_charge
        cols[f"H{h}_PX"] = pt * np.cos(phi)
        cols[f"H{h}_PY"] = pt * np.sin(phi)
        cols[f"H{h}_PZ"] = pt * np.sinh(eta)
        cols[f"H{h}_ProbK"] = prob_k
        cols[f"H{h}_ProbPi"] = prob_pi
        cols[f"H{h}_Charge"] = np.asarray(charge, np.int32)
        cols[f"H{h}_IPChi2"] = rng.lognormal(3.5, 1.5, n)
        cols[f"H{h}_isMuon"] = (rng.random(n) < 0.01 + 0.02 * (1 - prob_k)).astype(np.int32)
    cols = {k: (np.ascontiguousarray(v) if v.dtype != np.float64 else np.ascontiguousarray(v, np.float64))
            for k, v in cols.items()}
    return Dataset("b2hhh", n, cols, {}, {}, set(), {"events": list(cols)})


# ----------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------


def wait_quiet(limit: float, threshold: float = 0.7) -> float:
    t0 = time.perf_counter()
    while limit > 0 and time.perf_counter() - t0 < limit:
        load = H.loadavg()
        if load is None or load[0] < threshold:
            break
        time.sleep(5)
    return time.perf_counter() - t0


fsync_path = H.fsync_path
measure_read = H.warm_cold_runs


def timed_write(fn, path: Path) -> dict:
    c0 = time.process_time()
    t0 = time.perf_counter()
    fn()
    fsync_path(path)
    secs = time.perf_counter() - t0
    return {"seconds": secs, "cpu": time.process_time() - c0, "bytes": path.stat().st_size}


def merging_writes(akd: dict, on_path: Path, off_path: Path, reps: int) -> tuple[dict, dict]:
    """Our write with same-page merging on (the default) and off, side by side: one untimed write first (warming
    the allocator and the page cache), then ``max(reps + 2, 5)`` rounds, the order alternating per round. Returns the
    best merged write (the file stays at ``on_path``) and the comparison: wall and CPU time (the process's, the
    compression threads included: less disturbed by other load on the machine) of both."""
    import rntuple

    rntuple.write(str(off_path), TREE, akd, compression=505)
    runs: dict[bool, list[dict]] = {True: [], False: []}
    for rnd in range(max(reps + 2, 5)):
        for on in ((True, False) if rnd % 2 == 0 else (False, True)):
            path = on_path if on else off_path
            runs[on].append(timed_write(lambda path=path, on=on: rntuple.write(
                str(path), TREE, akd, compression=505, same_page_merging=on), path))
            gc.collect()
    off_path.unlink(missing_ok=True)
    best = {on: min(r, key=lambda w: w["seconds"]) for on, r in runs.items()}
    med = {on: float(np.median([w["seconds"] for w in r])) for on, r in runs.items()}
    cpu = {on: float(np.median([w["cpu"] for w in r])) for on, r in runs.items()}
    cmp = {"on_seconds": [w["seconds"] for w in runs[True]], "off_seconds": [w["seconds"] for w in runs[False]],
           "on_cpu": [w["cpu"] for w in runs[True]], "off_cpu": [w["cpu"] for w in runs[False]],
           "on_bytes": best[True]["bytes"], "off_bytes": best[False]["bytes"],
           "best_ratio": best[True]["seconds"] / best[False]["seconds"], "median_ratio": med[True] / med[False],
           "cpu_median_ratio": cpu[True] / cpu[False],
           # per round (on and off written back to back): the median of the rounds' ratios, less moved by the load
           # of other processes, which changes more slowly than a round
           "paired_median_ratio": float(np.median([a["seconds"] / b["seconds"] for a, b in zip(runs[True], runs[False])])),
           "paired_cpu_median_ratio": float(np.median([a["cpu"] / b["cpu"] for a, b in zip(runs[True], runs[False])]))}
    log(f"  same-page merging: {cmp['on_bytes'] / 1e6:.2f} MB on, {cmp['off_bytes'] / 1e6:.2f} MB off; write on/off "
        f"best {cmp['best_ratio']:.3f}, median {cmp['median_ratio']:.3f}, CPU median {cmp['cpu_median_ratio']:.3f}; "
        f"median of the rounds' ratios {cmp['paired_median_ratio']:.3f} (CPU {cmp['paired_cpu_median_ratio']:.3f})")
    return best[True], cmp


def run_worker(spec_path: Path, timeout: float = 3600) -> dict:
    return H.run_worker(__file__, ["--worker", str(spec_path)], timeout, what="ROOT worker")


# ----------------------------------------------------------------------------------------------
# ROOT side: the worker's job (the worker, C++ compiled with ACLiC: bench/_formats_root.py)
# ----------------------------------------------------------------------------------------------


def root_spec(ds: Dataset, for_tree: bool) -> tuple[str, list[tuple[str, np.ndarray, np.ndarray | None]]]:
    """Spec text and (name, data, offsets) per column, in the C++ writer's format."""
    lines, arrays = [], []
    names = list(ds.flat)
    if for_tree:  # a TTree needs its count leaves: implicit ones come first
        names = sorted(ds.implicit) + names
    for name in names:
        a = ds.flat[name] if name in ds.flat else ds.counts[name]
        lines.append(f"F {name} {TYPE_CODES[str(a.dtype)][0]} -")
        arrays.append((name, a, None))
    for name, (vals, cnt) in ds.jagged.items():
        lines.append(f"J {name} {TYPE_CODES[str(vals.dtype)][0]} {cnt}")
        arrays.append((name, vals, ds.offsets(cnt)))
    return "\n".join(lines), arrays


# ----------------------------------------------------------------------------------------------
# Python-side writers and readers
# ----------------------------------------------------------------------------------------------


def arrow_table(ds: Dataset):
    import pyarrow as pa

    cols, names = [], []
    for name in ds.order:
        if name in ds.flat:
            cols.append(pa.array(ds.flat[name]))
        else:
            vals, cnt = ds.jagged[name]
            off = ds.offsets(cnt)
            cols.append(pa.ListArray.from_arrays(pa.array(off.astype(np.int32)), pa.array(vals)))
        names.append(name)
    return pa.Table.from_arrays(cols, names=names)


def awkward_dict(ds: Dataset) -> dict:
    import awkward as ak

    out = {}
    for name in ds.order:
        if name in ds.flat:
            out[name] = ds.flat[name]
        else:
            vals, cnt = ds.jagged[name]
            out[name] = ak.unflatten(vals, ds.counts[cnt].astype(np.int64))
    return out


def h5_chunk(n: int, itemsize: int) -> tuple[int]:
    return (max(1, min(n, (1 << 20) // max(1, itemsize))),)


def write_hdf5_columns(ds: Dataset, path: Path, comp: str) -> None:
    import h5py

    kw = {"compression": "gzip", "compression_opts": 4} if comp == "gzip" else {"compression": "lzf"}
    with h5py.File(path, "w") as f:
        for name in sorted(ds.implicit):
            a = ds.counts[name]
            f.create_dataset(name, data=a, chunks=h5_chunk(len(a), a.itemsize), **kw)
        for name in ds.order:
            a = ds.flat[name] if name in ds.flat else ds.jagged[name][0]
            if len(a) == 0:
                f.create_dataset(name, data=a)
            else:
                f.create_dataset(name, data=a, chunks=h5_chunk(len(a), a.itemsize), **kw)


def compound_arrays(ds: Dataset) -> dict:
    out = {}
    for table, names in ds.tables.items():
        arrays = [ds.flat.get(n) if n in ds.flat else (ds.counts[n] if n in ds.counts else ds.jagged[n][0])
                  for n in names]
        dt = np.dtype([(n, a.dtype) for n, a in zip(names, arrays)])
        rec = np.empty(len(arrays[0]), dtype=dt)
        for n, a in zip(names, arrays):
            rec[n] = a
        out[table] = rec
    return out


def write_hdf5_compound(recs: dict, path: Path, comp: str) -> None:
    import h5py

    kw = {"compression": "gzip", "compression_opts": 4} if comp == "gzip" else {"compression": "lzf"}
    with h5py.File(path, "w") as f:
        for table, rec in recs.items():
            f.create_dataset(table, data=rec, chunks=h5_chunk(len(rec), rec.dtype.itemsize), **kw)


def h5_read_columns(path: Path, names: list[str] | None) -> None:
    import h5py

    with h5py.File(path, "r") as f:
        for name in names if names is not None else list(f):
            f[name][()]


def h5_read_compound(path: Path, ds: Dataset, names: list[str] | None) -> None:
    import h5py

    with h5py.File(path, "r") as f:
        for table, cols in ds.tables.items():
            if names is None:
                f[table][()]
            else:
                want = [c for c in cols if c in names]
                if want:
                    f[table].fields(want)[()]


def ours_cli_read(binary: Path, path: Path, fields: list[str] | None) -> dict:
    cmd = [str(binary), "bench", "read", str(path), "--ntuple", TREE, "--no-progress"]
    if fields:
        cmd += ["--fields", ",".join(fields)]
    p = H.run_child(cmd)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip()[-300:])
    obj = H.last_json(p.stdout, "seconds")
    return {"seconds": float(obj["seconds"]), "cpu": p.cpu}


# ----------------------------------------------------------------------------------------------
# one dataset
# ----------------------------------------------------------------------------------------------


FORMATS = [  # key, label, reader labels
    ("rntuple_ours", "RNTuple (this project, zstd 505)"),
    ("rntuple_root", "RNTuple (ROOT 6.40, zstd 505)"),
    ("ttree_root", "TTree (ROOT 6.40, zstd 505)"),
    ("parquet_zstd", "Parquet (pyarrow, zstd)"),
    ("parquet_snappy", "Parquet (pyarrow, snappy)"),
    ("feather_lz4", "Arrow IPC (feather v2, lz4)"),
    ("feather_none", "Arrow IPC (feather v2, uncompressed)"),
    ("h5_columns_gzip", "HDF5 columns (h5py, gzip 4)"),
    ("h5_columns_lzf", "HDF5 columns (h5py, lzf)"),
    ("h5_compound_gzip", "HDF5 compound (h5py, gzip 4)"),
    ("h5_compound_lzf", "HDF5 compound (h5py, lzf)"),
]


def run_dataset(ds: Dataset, args, binary: Path, scratch: Path) -> dict:
    import pyarrow.feather as feather
    import pyarrow.parquet as pq
    import uproot

    import rntuple

    log(f"\n=== {ds.name}: {ds.entries:,} entries, {len(ds.order)} fields, "
        f"{ds.uncompressed_bytes() / 1e6:,.1f} MB in memory ===")
    res = {"entries": ds.entries, "fields": len(ds.order), "memory_bytes": ds.uncompressed_bytes(),
           "subset": SUBSETS[ds.name], "writes": {}, "reads": {}}
    paths = {
        "rntuple_ours": scratch / f"{ds.name}_ours.root",
        "rntuple_root": scratch / f"{ds.name}_root_rntuple.root",
        "ttree_root": scratch / f"{ds.name}_ttree.root",
        "parquet_zstd": scratch / f"{ds.name}_zstd.parquet",
        "parquet_snappy": scratch / f"{ds.name}_snappy.parquet",
        "feather_lz4": scratch / f"{ds.name}_lz4.arrow",
        "feather_none": scratch / f"{ds.name}_none.arrow",
        "h5_columns_gzip": scratch / f"{ds.name}_columns_gzip.h5",
        "h5_columns_lzf": scratch / f"{ds.name}_columns_lzf.h5",
        "h5_compound_gzip": scratch / f"{ds.name}_compound_gzip.h5",
        "h5_compound_lzf": scratch / f"{ds.name}_compound_lzf.h5",
    }
    subset = SUBSETS[ds.name]

    # ---- writes (Python side) ----
    akd = awkward_dict(ds)
    res["writes"]["rntuple_ours"], res["merging"] = merging_writes(akd, paths["rntuple_ours"], scratch / f"{ds.name}_ours_nomerge.root", args.reps)
    del akd
    table = arrow_table(ds)
    for comp in ("zstd", "snappy"):
        p = paths[f"parquet_{comp}"]
        res["writes"][f"parquet_{comp}"] = timed_write(lambda p=p, comp=comp, table=table: pq.write_table(table, p, compression=comp), p)
    for comp, key in (("lz4", "feather_lz4"), ("uncompressed", "feather_none")):
        p = paths[key]
        res["writes"][key] = timed_write(lambda p=p, comp=comp, table=table: feather.write_feather(table, p, compression=comp), p)
    del table
    for comp in ("gzip", "lzf"):
        p = paths[f"h5_columns_{comp}"]
        res["writes"][f"h5_columns_{comp}"] = timed_write(lambda p=p, comp=comp: write_hdf5_columns(ds, p, comp), p)
    recs = compound_arrays(ds)
    for comp in ("gzip", "lzf"):
        p = paths[f"h5_compound_{comp}"]
        res["writes"][f"h5_compound_{comp}"] = timed_write(lambda p=p, comp=comp, recs=recs: write_hdf5_compound(recs, p, comp), p)
    del recs
    gc.collect()
    for k, w in res["writes"].items():
        log(f"  write {k:18s} {w['seconds']:7.2f} s  {w['bytes'] / 1e6:9.1f} MB")

    # ---- ROOT: writes, then reads, in a worker ----
    npz_path = scratch / f"{ds.name}_columns.npz"
    arrays = {}
    for name in ds.order:
        arrays[name] = ds.flat[name] if name in ds.flat else ds.jagged[name][0]
    for c in ds.implicit:
        arrays[c] = ds.counts[c]
    for c in ds.counts:
        arrays["__off__" + c] = ds.offsets(c)
    np.savez(npz_path, **arrays)
    del arrays
    write_job = {}
    for key, for_tree in (("rntuple_root", False), ("ttree_root", True)):
        spec, cols = root_spec(ds, for_tree)
        write_job[key] = {"path": str(paths[key]), "spec": spec, "columns": [c[0] for c in cols],
                          "counts": {c[0]: ds.jagged[c[0]][1] for c in cols if c[0] in ds.jagged}}
    tree_all = sorted(ds.implicit) + ds.order
    subset_tree = list(subset)
    for name in subset:  # count leaves of the jagged columns read
        if name in ds.jagged and ds.jagged[name][1] not in subset_tree:
            subset_tree.append(ds.jagged[name][1])
    reads = []
    for fs, fields in (("all", None), ("subset", subset)):
        reads.append({"key": f"rntuple_root|ROOT views|{fs}", "kind": "rntuple", "path": str(paths["rntuple_root"]),
                      "fields": ds.order if fields is None else fields})
        reads.append({"key": f"ttree_root|ROOT GetEntry|{fs}", "kind": "ttree", "path": str(paths["ttree_root"]),
                      "fields": tree_all if fields is None else subset_tree, "all": fields is None})
        # ROOT reads our file too (its pages merged as ROOT merges them)
        reads.append({"key": f"rntuple_ours|ROOT views|{fs}", "kind": "rntuple", "path": str(paths["rntuple_ours"]),
                      "fields": ds.order if fields is None else fields})
    job = {"scratch": str(scratch), "npz": str(npz_path), "entries": ds.entries, "write": write_job,
           "reads": reads, "repeat": args.reps, "cold": args.cold}
    job_path = scratch / f"{ds.name}_root_job.json"
    job_path.write_text(json.dumps(job))
    log("  ROOT worker (writes, reads) ...")
    t0 = time.perf_counter()
    rw = run_worker(job_path)
    npz_path.unlink()
    log(f"  ROOT worker done in {time.perf_counter() - t0:.0f} s (ROOT {rw['root_version']})")
    res["root_version"] = rw["root_version"]
    for k, w in rw["writes"].items():
        if "error" in w:
            res["writes"][k] = {"error": w["error"]}
        else:
            res["writes"][k] = {"seconds": w["wall"], "cpu": w["cpu"], "bytes": w["bytes"], "inner_seconds": w["seconds"]}
        log(f"  write {k:18s} {res['writes'][k].get('seconds', float('nan')):7.2f} s  "
            f"{res['writes'][k].get('bytes', 0) / 1e6:9.1f} MB")
    res["reads"].update(rw["reads"])
    root_bytes = res["writes"].get("rntuple_root", {}).get("bytes")
    if root_bytes:
        res["merging"]["root_bytes"] = root_bytes
        res["merging"]["ours_over_root"] = res["merging"]["on_bytes"] / root_bytes
        log(f"  ours / ROOT's RNTuple file: {res['merging']['ours_over_root']:.4f} (merging off: "
            f"{res['merging']['off_bytes'] / root_bytes:.4f})")

    # ---- Python-side and CLI reads ----
    def rn_py(p, fields):
        with rntuple.open(str(p)) as f:
            a = f[TREE].arrays(fields)
        assert len(a) == ds.entries
        del a

    def up(p, fields):
        with uproot.open(str(p)) as f:
            a = f[TREE].arrays(fields)
        assert len(a) == ds.entries
        del a

    def pq_read(p, fields):
        t = pq.read_table(p, columns=fields)
        assert t.num_rows == ds.entries
        del t

    def fe_read(p, fields):
        t = feather.read_table(p, columns=fields, memory_map=False)
        assert t.num_rows == ds.entries
        del t

    readers = [
        ("rntuple_ours", "ours py", lambda p, fields: rn_py(p, fields)),
        ("rntuple_ours", "ours CLI", lambda p, fields: ours_cli_read(binary, p, fields)),
        ("rntuple_ours", "uproot", lambda p, fields: up(p, fields)),
        ("ttree_root", "uproot", lambda p, fields: up(p, fields)),
        ("parquet_zstd", "pyarrow", pq_read),
        ("parquet_snappy", "pyarrow", pq_read),
        ("feather_lz4", "pyarrow", fe_read),
        ("feather_none", "pyarrow", fe_read),
        ("h5_columns_gzip", "h5py", lambda p, fields: h5_read_columns(p, fields)),
        ("h5_columns_lzf", "h5py", lambda p, fields: h5_read_columns(p, fields)),
        ("h5_compound_gzip", "h5py", lambda p, fields: h5_read_compound(p, ds, fields)),
        ("h5_compound_lzf", "h5py", lambda p, fields: h5_read_compound(p, ds, fields)),
    ]
    for key, reader, fn in readers:
        for fs, fields in (("all", None), ("subset", subset)):
            p = paths[key]

            def call(fn=fn, p=p, fields=fields):
                t0 = time.perf_counter()
                r = fn(p, fields)
                if isinstance(r, dict):  # the CLI's own timing
                    return r
                return time.perf_counter() - t0

            res["reads"][f"{key}|{reader}|{fs}"] = measure_read(call, [p], args.reps, args.cold)
            gc.collect()
    for k, r in res["reads"].items():
        if "error" in r:
            log(f"  read {k:45s} ERROR {r['error']}")
        else:
            log(f"  read {k:45s} warm {r['warm']:7.3f} s  cold {r['cold']:7.3f} s")
    if not args.keep_files:
        for p in paths.values():
            p.unlink(missing_ok=True)
    return res


# ----------------------------------------------------------------------------------------------
# report
# ----------------------------------------------------------------------------------------------


fmt = H.fmt_num


def markdown(results: dict) -> str:
    m = results["machine"]
    lines = [f"Machine: {m['cpu_model']}, {m['nproc']} vCPUs (~1.1 cores of throughput when both are busy), "
             f"{m['memory']}, Firecracker VM; kernel {m['kernel']}; ROOT {results.get('root_version', '?')}, "
             f"pyarrow {results['versions']['pyarrow']}, h5py {results['versions']['h5py']} (HDF5 "
             f"{results['versions']['hdf5']}), uproot {results['versions']['uproot']}; commit {m['git']}; "
             f"{m['date']}; mode {'quick' if results['quick'] else 'full'}, best of {results['repeat']} warm, "
             f"{results['cold']} cold.", ""]
    for name, d in results["datasets"].items():
        sub = d["subset"]
        sub_label = "1 column (eventId)" if len(sub) == 1 else f"{len(sub)} columns"
        lines.append(f"**{name}**: {d['entries']:,} entries, {d['fields']} fields, {d['memory_bytes'] / 1e6:,.1f} MB "
                     f"of values in memory; subset = {sub_label}: {', '.join(sub)}. Load average (1, 5, 15 min) "
                     f"before {d.get('loadavg_before')}, after {d.get('loadavg_after')}.")
        lines.append("")
        lines.append(f"| format | reader | size MB | / TTree | write s | all warm s | all cold s | "
                     f"{'subset' if len(sub) == 1 else '10 col'} warm s | {'subset' if len(sub) == 1 else '10 col'} cold s |")
        lines.append("|---|---|---:|---:|---:|---:|---:|---:|---:|")
        tsize = d["writes"].get("ttree_root", {}).get("bytes")
        for key, label in FORMATS:
            w = d["writes"].get(key, {})
            readers = sorted({k.split("|")[1] for k in d["reads"] if k.split("|")[0] == key})
            for i, reader in enumerate(readers):
                ra = d["reads"].get(f"{key}|{reader}|all", {})
                rs = d["reads"].get(f"{key}|{reader}|subset", {})
                size = w.get("bytes")
                first = i == 0
                lines.append(
                    f"| {label if first else '〃'} | {reader} | {fmt(size / 1e6, 1) if size and first else ''} | "
                    f"{fmt(size / tsize, 3) if size and tsize and first else ''} | "
                    f"{fmt(w.get('seconds')) if first else ''} | {fmt(ra.get('warm'), 3)} | {fmt(ra.get('cold'), 3)} | "
                    f"{fmt(rs.get('warm'), 3)} | {fmt(rs.get('cold'), 3)} |")
        lines.append("")
        mg = d.get("merging")
        if mg:
            vs_root = (f"; ROOT's RNTuple file {mg['root_bytes']:,} bytes: ours / ROOT = {mg['ours_over_root']:.4f} "
                       f"(off: {mg['off_bytes'] / mg['root_bytes']:.4f})") if mg.get("root_bytes") else ""
            lines.append(f"Same-page merging (ours, side by side): {mg['on_bytes']:,} bytes on, {mg['off_bytes']:,} off"
                         f"{vs_root}. Write time on / off: best {mg['best_ratio']:.3f}, median {mg['median_ratio']:.3f}, "
                         f"CPU time median {mg.get('cpu_median_ratio', float('nan')):.3f}; median of the rounds' ratios "
                         f"{mg.get('paired_median_ratio', float('nan')):.3f} (CPU "
                         f"{mg.get('paired_cpu_median_ratio', float('nan')):.3f}) (wall on "
                         f"{', '.join(fmt(s) for s in mg['on_seconds'])} s; off "
                         f"{', '.join(fmt(s) for s in mg['off_seconds'])} s).")
            lines.append("")
    return "\n".join(lines)


def plot(results: dict, out: Path) -> str:
    try:
        plt = H.pyplot()
    except RuntimeError as e:
        return f"no plot: matplotlib unavailable ({e})"

    names = list(results["datasets"])
    rows = [("size MB", None), ("read all, warm (s)", "warm"), ("read all, cold (s)", "cold")]
    fig, axes = plt.subplots(len(rows), len(names), figsize=(5.2 * len(names), 10), squeeze=False)
    for j, name in enumerate(names):
        d = results["datasets"][name]
        for i, (title, which) in enumerate(rows):
            ax = axes[i][j]
            labels, vals, colors = [], [], []
            for key, label in FORMATS:
                short = label.split(" (")[0] + " " + label.split("(")[1].rstrip(")").replace("ROOT 6.40, ", "ROOT ")
                if which is None:
                    b = d["writes"].get(key, {}).get("bytes")
                    if b:
                        labels.append(short)
                        vals.append(b / 1e6)
                        colors.append("C0" if "RNTuple" in label else ("C1" if "TTree" in label else "C7"))
                else:
                    for k, r in d["reads"].items():
                        fk, reader, fs = k.split("|")
                        if fk == key and fs == "all" and r.get(which) is not None:
                            labels.append(f"{short} / {reader}")
                            vals.append(r[which])
                            colors.append("C0" if "RNTuple" in label else ("C1" if "TTree" in label else "C7"))
            y = np.arange(len(vals))
            ax.barh(y, vals, color=colors)
            ax.set_yticks(y)
            ax.set_yticklabels(labels, fontsize=6)
            ax.invert_yaxis()
            ax.set_title(f"{name}: {title}", fontsize=9)
            ax.tick_params(axis="x", labelsize=7)
    fig.suptitle("Format comparison (bench/formats_bench.py); blue RNTuple, orange TTree, grey others", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=80)
    plt.close(fig)
    return str(out)


def main() -> None:
    common = H.common_flags(quick="small datasets, one warm and one cold run", reps=None,
                            reps_help="warm runs (best of); default 3, quick 1", bin=True,
                            json=DATA / "formats_results.json", json_optional=True,
                            json_help="write the raw numbers as JSON (a bare --json: bench/data/formats_results.json)",
                            plot=HERE / "formats.png")
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], parents=[common])
    ap.add_argument("--datasets", default="synthetic,nanoaod,b2hhh")
    ap.add_argument("--cold", type=int, default=None, help="cold runs (best of); default 2, quick 1")
    ap.add_argument("--wait-quiet", type=float, default=0, metavar="SECONDS",
                    help="before each dataset, wait up to SECONDS for the 1-minute load average to drop below 0.7")
    ap.add_argument("--keep-files", action="store_true")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        import _formats_root

        _formats_root.worker_root(args.worker)
        return
    if args.reps is None:
        args.reps = 1 if args.quick else 3
    if args.cold is None:
        args.cold = 1 if args.quick else 2
    binary = args.bin
    if not binary.exists():
        sys.exit(f"{binary} not found: run `cargo build --release` (or make build)")
    SCRATCH.mkdir(parents=True, exist_ok=True)
    # a private copy of the binary: a rebuild meanwhile does not change what is measured
    bin_copy = SCRATCH / "rntuple-bin"
    shutil.copy2(binary, bin_copy)

    import h5py
    import pyarrow
    import uproot

    t_start = time.perf_counter()
    results = {"machine": H.machine_info(), "quick": args.quick, "repeat": args.reps, "cold": args.cold,
               "versions": {"pyarrow": pyarrow.__version__, "h5py": h5py.__version__,
                            "hdf5": h5py.version.hdf5_version, "uproot": uproot.__version__,
                            "numpy": np.__version__},
               "datasets": {}}
    m = results["machine"]
    log(f"machine: {m['cpu_model']}, {m['nproc']} vCPUs, {m['memory']}, load {m['loadavg']}, git {m['git']}")
    for name in args.datasets.split(","):
        n = SIZES[name][1 if args.quick else 0]
        waited = wait_quiet(args.wait_quiet)
        load_before = H.loadavg()
        t0 = time.perf_counter()
        extra = {}
        if name == "synthetic":
            ds, extra = make_synthetic(n, bin_copy, SCRATCH)
        elif name == "nanoaod":
            ds = make_nanoaod(n)
        else:
            ds = make_b2hhh(n)
        log(f"generated {name} in {time.perf_counter() - t0:.1f} s")
        r = run_dataset(ds, args, bin_copy, SCRATCH)
        r.update(extra)
        r["loadavg_before"], r["loadavg_after"], r["waited_seconds"] = load_before, H.loadavg(), waited
        results["root_version"] = r.get("root_version")
        results["datasets"][name] = r
        del ds
        gc.collect()
    results["total_seconds"] = time.perf_counter() - t_start
    md = markdown(results)
    log("\n" + md)
    (DATA / "formats_results.md").write_text(md + "\n")
    if args.json:
        H.write_json(args.json, results)
        log(f"raw numbers: {args.json}")
    if not args.no_plot:
        log(f"plot: {plot(results, args.plot)}")
    log(f"total {results['total_seconds']:.0f} s")
    log(PAPER)
    bin_copy.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
