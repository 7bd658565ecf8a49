#!/usr/bin/env python3
"""File sizes of NanoAOD-like data with reduced-precision floats: every float field at full precision,
truncated to 16 bits, quantized to 16 bits over a per-field range, and as IEEE half precision, written by this
project (`rntuple skim` with `--truncate`/`--quantize`/`--half`) and by ROOT (PyROOT's `RNTupleImporter` with a
field modifier calling `SetTruncated`/`SetQuantized`/`SetHalfPrecision`), zstd level 5 (compression 505) for both.

    .venv/bin/python bench/precision_sizes.py [--entries 10000] [--keep DIR] [--bin PATH] [--json PATH]

The input: the richest NanoAOD file of the shared test data (cmsopendata2015_ttbar_19980_NANOAOD, 969 top-level
fields, 10 entries) resampled to `--entries` entries: each new entry copies a random source entry (every field,
collections with their lengths), its non-integral float values multiplied by (1 + 0.01 N(0,1)) so that their low
mantissa bits vary as in real data (integral floats, such as -1 sentinels, are kept), `event` numbered 0..n-1. It is
written as a NanoAOD TTree (uproot: `nMuon` counters, `Muon_pt` jagged branches), which ROOT's RNTupleImporter
imports at each setting. Our files are `rntuple skim` of ROOT's full-precision import (re-encoded by us), so both
writers store the same fields (flat fields, untyped collections of records) and values. Only the non-projected
top-level fields are skimmed: re-encoding writes a projected field (`nMuon`, `Muon_pt`) as a field with columns of
its own, a second copy of the data, while ROOT's projections cost only their descriptors; our files therefore lack
the projected fields' few header bytes.

Quantization range of a field: its minimum and maximum over the data, rounded outwards to a multiple of a tenth of
the power of ten below the spread (e.g. [-2.53, 4.71] -> [-2.6, 4.8]); a constant field gets [v, v + 1] (v rounded
down). Fields holding NaN or infinities cannot be quantized (both writers reject values outside the range) and stay
at full precision in the quantized files (the script names them).

Sizes are whole-file sizes in bytes. Each output's float columns are checked to be of the setting's column type
(`rntuple info --json`), and every top-level field of our file equal to ROOT's (values and dtypes, read by this
project's reader), before the sizes are reported.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import awkward as ak
import numpy as np

ROOT_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402  (flags, machine)

SOURCE = "cmsopendata2015_ttbar_19980_NANOAOD_RNTupleImporter_rntuple_v1-0-0-1.root"
SETTINGS = ["full", "truncate16", "quantize16", "half"]
COLUMN_TYPE = {"full": "SplitReal32", "truncate16": "Real32Trunc", "quantize16": "Real32Quant", "half": "Real16"}


def testdata_dir() -> Path:
    d = os.environ.get("RNTUPLE_TESTDATA", "/work/shared/testdata")
    return Path(d) / "rntuple"


def resample(src: Path, n: int, seed: int = 1) -> dict:
    """The branches of a NanoAOD-like TTree: name -> flat numpy array, or name -> awkward array of records
    (a collection: uproot writes `n<name>` and `<name>_<member>`), or a jagged array (single-member collection)."""
    import rntuple

    t = rntuple.open(str(src))["Events"]
    a = t.arrays()
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(a), n)
    # the collections' counters (the projected RNTupleCardinality fields nMuon, ...)
    counters = [f for f in a.fields if "RNTupleCardinality" in t.schema[f]]

    def jitter(v: np.ndarray) -> np.ndarray:
        if v.dtype.kind != "f":
            return v
        out = v.copy()
        m = np.isfinite(v) & (v != np.round(v))
        out[m] = (v[m] * (1.0 + 0.01 * rng.standard_normal(int(m.sum())))).astype(v.dtype)
        return out

    branches: dict = {}
    projected = set()
    for f in a.fields:
        if f.startswith("_collection"):
            coll = a[f][idx]
            members = coll.fields
            # the collection's counter: nX such that every member is X or X_<something>
            names = [c[1:] for c in counters if all(m == c[1:] or m.startswith(c[1:] + "_") for m in members)]
            if not names:
                raise SystemExit(f"no counter for {f} ({members[:3]}...)")
            prefix = max(names, key=len)
            projected.update(members)
            projected.add("n" + prefix)
            counts = ak.to_numpy(ak.num(coll))
            cols = {m: ak.unflatten(jitter(ak.to_numpy(ak.flatten(coll[m]))), counts) for m in members}
            if members == [prefix]:
                branches[prefix] = cols[prefix]
            else:
                branches[prefix] = ak.zip({m[len(prefix) + 1:]: v for m, v in cols.items()})
    for f in a.fields:
        if f.startswith("_collection") or f in projected:
            continue
        v = ak.to_numpy(a[f][idx])
        branches[f] = np.arange(n, dtype=v.dtype) if f == "event" else jitter(v)
    return branches


def nice_range(lo: float, hi: float) -> tuple[float, float]:
    """[lo, hi] rounded outwards to a multiple of a tenth of the power of ten below the spread."""
    if hi <= lo:
        base = math.floor(lo)
        return float(base), float(base + 1)
    step = 10.0 ** (math.floor(math.log10(hi - lo)) - 1)
    a = math.floor(lo / step) * step
    b = math.ceil(hi / step) * step
    a = a - step if a > lo else a
    b = b + step if b < hi else b
    return float(repr_round(a)), float(repr_round(b))


def repr_round(x: float) -> float:
    """x without the floating-point noise of k * step (12 significant digits), still a double."""
    return float(f"{x:.12g}")


def ranges_of(branches: dict) -> tuple[dict, list]:
    """Float field name (as ROOT's importer names it: the branch name) -> quantization range; the names of the
    float fields that hold non-finite values (not quantizable)."""
    out, skipped = {}, []

    def add(name, v):
        v = np.asarray(v)
        if v.dtype.kind != "f":
            return
        if not np.all(np.isfinite(v)):
            skipped.append(name)
            return
        if len(v) == 0:
            out[name] = (0.0, 1.0)
            return
        lo, hi = nice_range(float(v.min()), float(v.max()))
        # the range must hold every value once rounded to float (both writers compare float values)
        while np.float32(lo) > v.min():
            lo -= abs(lo) * 1e-6 + 1e-30
        while np.float32(hi) < v.max():
            hi += abs(hi) * 1e-6 + 1e-30
        out[name] = (lo, hi)

    for b, v in branches.items():
        if isinstance(v, np.ndarray):
            add(b, v)
        elif v.fields:
            for m in v.fields:
                add(f"{b}_{m}", ak.to_numpy(ak.flatten(v[m])))
        else:
            add(b, ak.to_numpy(ak.flatten(v)))
    return out, skipped


ROOT_CODE = r"""
#include <ROOT/RNTupleImporter.hxx>
#include <ROOT/RField.hxx>
#include <ROOT/RNTupleWriteOptions.hxx>
#include <map>
#include <string>
namespace precision_sizes {
// Imports tree `Events` of `src` into `dst` (compression 505). mode 0: full precision, 1: truncated to `bits`,
// 2: quantized to `bits` over ranges[field name] (fields without a range stay at full precision), 3: half.
// Returns the number of float fields changed.
int import_tree(const std::string &src, const std::string &dst, int mode, int bits,
           const std::map<std::string, std::pair<double, double>> &ranges) {
   auto imp = ROOT::Experimental::RNTupleImporter::Create(src, "Events", dst);
   ROOT::RNTupleWriteOptions opts;
   opts.SetCompression(505);
   imp->SetWriteOptions(opts);
   imp->SetIsQuiet(true);
   int changed = 0;
   imp->SetFieldModifier([&](ROOT::RFieldBase &f) {
      auto *x = dynamic_cast<ROOT::RRealField<float> *>(&f);
      if (!x || mode == 0)
         return;
      if (mode == 1) {
         x->SetTruncated(bits);
      } else if (mode == 2) {
         auto it = ranges.find(f.GetFieldName());
         if (it == ranges.end())
            return;
         x->SetQuantized(bits, it->second);
      } else {
         x->SetHalfPrecision();
      }
      ++changed;
   });
   imp->Import();
   return changed;
}
}
"""


def float_columns(cli: str, path: Path) -> dict:
    """Column type -> count over the file's float columns, and the non-projected float field paths."""
    r = subprocess.run([cli, "info", "--json", str(path)], capture_output=True, check=True)
    nt = json.loads(r.stdout)["ntuples"][0]
    fields = [f["path"] for f in nt["fields"] if f["type"] == "float" and not f["projected"]]
    tops = [f["path"] for f in nt["fields"] if f["top_level"] and not f["projected"]]
    counts: dict = {}
    for c in nt["columns"]:
        ty = c.get("type") or c.get("column_type")
        if isinstance(ty, str) and ty.startswith("Real") or ty in ("SplitReal32",):
            counts[ty] = counts.get(ty, 0) + 1
    return {"columns": counts, "fields": fields, "tops": tops}


def main():
    common = H.common_flags(entries=10000, entries_help="entries of the resampled input (default 10000)", bin=True,
                            json=None, json_help="also write the sizes, column types and the machine into this file")
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], parents=[common])
    ap.add_argument("--keep", help="directory to keep the files in (default: a temporary one)")
    args = ap.parse_args()
    args.cli = str(args.bin)
    import ROOT
    import uproot

    src = testdata_dir() / SOURCE
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="precision_sizes_"))
    work.mkdir(parents=True, exist_ok=True)
    branches = resample(src, args.entries)
    ranges, skipped = ranges_of(branches)
    tree = work / "nanoaod_like_tree.root"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with uproot.recreate(tree, compression=uproot.ZSTD(5)) as f:
            t = f.mktree("Events", {k: v.dtype if isinstance(v, np.ndarray) else v.type for k, v in branches.items()})
            t.extend(branches)
    ROOT.gInterpreter.Declare(ROOT_CODE)
    rmap = ROOT.std.map["std::string", "std::pair<double,double>"]()
    for k, (lo, hi) in ranges.items():
        rmap[k] = ROOT.std.pair["double", "double"](lo, hi)
    sizes: dict = {}
    checks: dict = {}
    for mode, s in enumerate(SETTINGS):
        out = work / f"root_{s}.root"
        out.unlink(missing_ok=True)
        ROOT.precision_sizes.import_tree(str(tree), str(out), mode, 16, rmap)
        sizes[("root", s)] = out.stat().st_size
        checks[("root", s)] = float_columns(args.cli, out)
    root_full = work / "root_full.root"
    fields = checks[("root", "full")]["fields"]
    for s in SETTINGS:
        out = work / f"ours_{s}.root"
        out.unlink(missing_ok=True)
        cmd = [args.cli, "skim", str(root_full), str(out), "--no-progress", "--compression", "505", "--reencode",
               "--fields", ",".join(checks[("root", "full")]["tops"])]
        for p in fields:
            name = p.rsplit(".", 1)[-1]
            if s == "truncate16":
                cmd += ["--truncate", f"{p}:16"]
            elif s == "quantize16" and name in ranges:
                lo, hi = ranges[name]
                cmd += ["--quantize", f"{p}:{lo!r}:{hi!r}:16"]
            elif s == "half":
                cmd += ["--half", p]
        r = subprocess.run(cmd, capture_output=True)
        if r.returncode != 0:
            raise SystemExit(f"rntuple skim ({s}) failed: {r.stderr.decode()[:2000]}")
        sizes[("ours", s)] = out.stat().st_size
        checks[("ours", s)] = float_columns(args.cli, out)
    # every float column of each output is of the setting's type (but the unquantizable fields' columns)
    for (who, s), c in checks.items():
        cols = c["columns"]
        want = COLUMN_TYPE[s]
        other = {k: v for k, v in cols.items() if k != want}
        allowed = len(skipped) if s == "quantize16" else 0
        if sum(other.values()) > allowed or cols.get(want, 0) == 0:
            raise SystemExit(f"{who} {s}: float columns {cols}, expected {want}")
    # and both writers stored the same values: every top-level field of ours equal to ROOT's (our reader)
    import rntuple

    for s in SETTINGS:
        o, t = rntuple.open(str(work / f"ours_{s}.root"))["Events"], rntuple.open(str(work / f"root_{s}.root"))["Events"]
        for f in o.schema:
            if not ak.array_equal(o.arrays([f])[f], t.arrays([f])[f], equal_nan=True, dtype_exact=True):
                raise SystemExit(f"{s}: field {f} differs between our file and ROOT's")
    n_float = sum(checks[("root", "full")]["columns"].values())
    print(f"values: each of the {len(o.schema)} top-level fields equal in our and ROOT's file at every setting")
    print(f"input: {SOURCE} resampled to {args.entries} entries; {len(fields)} float fields "
          f"({n_float} float columns); not quantizable (non-finite values): {skipped or 'none'}")
    print(f"ROOT {ROOT.gROOT.GetVersion()}, rntuple skim ({args.cli}), compression 505; "
          f"{platform.machine()} {platform.system()} {platform.release()}")
    print()
    print("| setting | ours (bytes) | ROOT (bytes) | ours / ours full | ROOT / ROOT full | ours / ROOT |")
    print("|---|---:|---:|---:|---:|---:|")
    for s in SETTINGS:
        o, t = sizes[("ours", s)], sizes[("root", s)]
        print(f"| {s} | {o:,} | {t:,} | {o / sizes[('ours', 'full')]:.3f} | {t / sizes[('root', 'full')]:.3f} | {o / t:.3f} |")
    print()
    print("column types:", {f"{w} {s}": c["columns"] for (w, s), c in checks.items()})
    if args.json:
        H.write_json(args.json, {"machine": H.machine_info(), "entries": args.entries, "source": SOURCE,
                                 "sizes": {f"{w} {s}": v for (w, s), v in sizes.items()},
                                 "column_types": {f"{w} {s}": c["columns"] for (w, s), c in checks.items()},
                                 "not_quantizable": skipped})
    if args.keep:
        print(f"files kept in {work}")
    else:
        shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
