#!/usr/bin/env python3
"""Wide schemas (issue 56, `make bench-wide`): opening and reading every field of a 1,500-field NanoAOD-like RNTuple
from Python, ours against uproot, and where our time goes.

The file (written once with this project's writer, compression 505, cached as bench/data/wide_nanoaod_v1_N.root):
N entries (default 100,000; --quick 10,000) of 1,500 top-level fields laid out as CMS NanoAOD is: 30 collections
(``Jet``, ``Muon``, ...), each a count ``nJet`` (``std::uint32_t``) and 25 members ``Jet_pt``, ``Jet_eta`` ...
(``std::vector<float>``, every fifth ``std::vector<std::int32_t>``) whose sizes are the count (Poisson, mean 0.5 to
4 by collection), then 720 scalars of mixed types (float, std::int32_t, bool, std::uint8_t: ``MET_v*``,
``Trig_count*``, ``HLT_path*``, ``L1_bits*``). Values are random (normal floats, small integers).

Measured, alternated in one run (--reps rounds, each starting with another one; medians), each in a fresh
process, timed inside it after the imports, page cache warm:

* ours open:       ``rntuple.open(path)["Events"]`` (file, anchor, header, footer, page lists, field records);
* ours open+read:  ``rntuple.open(path)["Events"].arrays()`` (every field, an awkward.Array);
* uproot:          ``uproot.open(path)["Events"].arrays()`` of the same file.

Targets (printed as PASS/FAIL, never asserted): open+read at least 20x faster than uproot; open under 0.5 s.

Then a profile of our open+read in one more process: stage timers (cProfile of the Python side: opening, the
RNTuple object with its field records, the native read, i.e. decompression, decoding and Arrow assembly in Rust
with the hand-over to pyarrow, and the conversion of the Arrow batch to awkward), and, where `perf` is on the
PATH (--no-perf: not), a sampled profile of the same read bucketed by symbol: decompression (zstd), decoding
(the project's unsplit/transpose/delta kernels and column decoding), first touch of fresh memory (the kernel's
page faults and the allocator), file reading, Arrow assembly, Python/awkward/numpy.

    .venv/bin/python bench/wide_schema_bench.py [--quick] [--entries N] [--reps R] [--no-perf] [--json PATH]

Prints the machine, a table with the ratios, the profile, PASS/FAIL lines and a Markdown version; writes
bench/data/wide_schema_results.json.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness as H  # noqa: E402  (flags, workers, timing, machine, tables)

log = H.log
GEN_VERSION = 1
N_FIELDS = 1500
COLLECTIONS = ["Jet", "FatJet", "SubJet", "Muon", "Electron", "Tau", "Photon", "GenPart", "GenJet", "GenJetAK8",
               "GenVisTau", "GenDressedLepton", "IsoTrack", "SV", "LHEPart", "TrigObj", "CorrT1METJet", "SoftActivityJet",
               "boostedTau", "LowPtElectron", "FsrPhoton", "PPSLocalTrack", "Proton_multiRP", "Proton_singleRP",
               "OtherPV", "SubGenJetAK8", "GenIsolatedPhoton", "L1Jet", "L1Mu", "L1EG"]
MEMBERS = ["pt", "eta", "phi", "mass", "charge", "area", "btagDeepB", "btagDeepFlavB", "chEmEF", "jetId", "chHEF",
           "neEmEF", "neHEF", "muEF", "puId", "rawFactor", "bRegCorr", "bRegRes", "cRegCorr", "hadronFlavour",
           "qgl", "dz", "dxy", "ip3d", "genJetIdx"]
SCALAR_KINDS = [("float", "MET_v"), ("std::int32_t", "Trig_count"), ("bool", "HLT_path"), ("std::uint8_t", "L1_bits")]
MEAN_SIZES = [0.5, 1.0, 2.0, 3.0, 4.0]
CHUNK = 25_000


def wide_schema() -> dict:
    """field name -> ROOT type: 30 collections of a count and 25 members, then scalars up to 1,500 fields."""
    schema = {}
    for coll in COLLECTIONS:
        schema[f"n{coll}"] = "std::uint32_t"
        for k, m in enumerate(MEMBERS):
            schema[f"{coll}_{m}"] = "std::vector<std::int32_t>" if k % 5 == 4 else "std::vector<float>"
    i = 0
    while len(schema) < N_FIELDS:
        ty, prefix = SCALAR_KINDS[i % len(SCALAR_KINDS)]
        schema[f"{prefix}{i // len(SCALAR_KINDS)}"] = ty
        i += 1
    return schema


def wide_chunk(schema: dict, n: int, rng):
    """A pyarrow.Table of n entries of `schema` (the members of a collection sized by its count)."""
    import numpy as np
    import pyarrow as pa

    cols, offsets = {}, {}
    for name, ty in schema.items():
        if name[1:] in COLLECTIONS and name.startswith("n"):
            sizes = rng.poisson(MEAN_SIZES[COLLECTIONS.index(name[1:]) % len(MEAN_SIZES)], n).astype(np.uint32)
            off = np.zeros(n + 1, np.int32)
            np.cumsum(sizes, out=off[1:])
            offsets[name[1:]] = pa.array(off)
            cols[name] = pa.array(sizes)
        elif ty.startswith("std::vector"):
            off = offsets[name.rsplit("_", 1)[0]]
            total = off[-1].as_py()
            values = (rng.integers(-50, 50, total, dtype=np.int32) if "int32" in ty
                      else rng.normal(20.0, 10.0, total).astype(np.float32))
            cols[name] = pa.ListArray.from_arrays(off, pa.array(values))
        elif ty == "float":
            cols[name] = pa.array(rng.normal(0.0, 1.0, n).astype(np.float32))
        elif ty == "std::int32_t":
            cols[name] = pa.array(rng.integers(0, 100, n, dtype=np.int32))
        elif ty == "bool":
            cols[name] = pa.array(rng.random(n) < 0.3)
        else:
            cols[name] = pa.array(rng.integers(0, 256, n, dtype=np.uint8))
    return pa.table(cols)


def wide_file(entries: int) -> Path:
    """The cached 1,500-field file of `entries` entries (written now if missing)."""
    import numpy as np

    import rntuple

    path = H.DATA / f"wide_nanoaod_v{GEN_VERSION}_{entries}.root"
    if path.exists():
        return path
    H.DATA.mkdir(parents=True, exist_ok=True)
    schema = wide_schema()
    rng = np.random.default_rng(56)
    tmp = path.with_suffix(".tmp.root")
    t = time.perf_counter()
    try:
        with rntuple.Writer(str(tmp), "Events", schema) as w:
            for start in range(0, entries, CHUNK):
                w.extend(wide_chunk(schema, min(CHUNK, entries - start), rng))
        tmp.rename(path)
    finally:
        tmp.unlink(missing_ok=True)
    log(f"wrote {H.shown_path(path)}: {path.stat().st_size / 1e6:,.1f} MB in {time.perf_counter() - t:.1f} s")
    return path


# ----- workers (a fresh process each) -----------------------------------------------------------------------


def checksum(arr) -> float:
    """A few fields summed (a collection's count, a float and an int member, a float and a bool scalar)."""
    import awkward as ak

    return float(sum(float(ak.sum(arr[k])) for k in ("nJet", "Jet_pt", "Jet_charge", "MET_v0", "HLT_path0")))


def worker(kind: str, path: str) -> None:
    import awkward  # noqa: F401  (imported before the clock starts, as both sides need it)

    if kind == "perf":
        # imports done: the parent attaches perf now and says when (a line on stdin)
        import rntuple  # noqa: F401

        print("READY", flush=True)
        sys.stdin.readline()
        kind = "read"

    if kind == "uproot":
        import uproot

        t = time.perf_counter()
        arr = uproot.open(path)["Events"].arrays()
        seconds = time.perf_counter() - t
        H.emit_result({"seconds": seconds, "fields": len(arr.fields), "entries": len(arr), "checksum": checksum(arr)})
        return
    import rntuple

    t = time.perf_counter()
    f = rntuple.open(path)
    ntuple = f["Events"]
    opened = time.perf_counter() - t
    if kind == "open":
        H.emit_result({"seconds": opened, "fields": len(ntuple.schema), "entries": ntuple.num_entries})
        return
    arr = ntuple.arrays()
    seconds = time.perf_counter() - t
    H.emit_result({"seconds": seconds, "open_seconds": opened, "fields": len(arr.fields), "entries": len(arr),
                   "checksum": checksum(arr)})


# Stages of the profile: a label and the cProfile entries (file name part, function name) whose cumulative time
# it is; an entry missing from the profile counts 0.
STAGES = [
    ("rntuple.open (the file's keys; lazy)", [("_reading/file.py", "open")]),
    ('f["Events"]: metadata parse (anchor, header, footer, page lists; Rust)', [("~", "<method 'reader' of 'rntuple._rntuple.NativeFile' objects>")]),
    ('f["Events"]: field records to Python, field tree (per field)', [("_reading/file.py", "__getitem__")]),
    ("native read: decompression, decoding, Arrow assembly (Rust), to pyarrow", [("~", "<method 'read' of 'rntuple._rntuple.NativeReader' objects>")]),
    ("Arrow batch -> awkward layout (per field)", [("_reading/layout.py", "batch_to_layout")]),
]


def worker_profile(path: str) -> None:
    import cProfile
    import pstats

    import awkward  # noqa: F401

    import rntuple

    prof = cProfile.Profile()
    t = time.perf_counter()
    prof.enable()
    f = rntuple.open(path)
    arr = f["Events"].arrays()
    prof.disable()
    total = time.perf_counter() - t
    st = pstats.Stats(prof).stats  # (file, line, name) -> (cc, nc, tottime, cumtime, callers)
    stages = []
    for label, keys in STAGES:
        secs = 0.0
        for file_part, name in keys:
            # the outermost entry of that name (recursive ones count once: cumulative times nest)
            secs += max((v[3] for (fn, _, n), v in st.items() if n == name and file_part in fn), default=0.0)
        stages.append({"stage": label, "seconds": secs})
    # f["Events"] includes the metadata parse: the field records alone are the difference
    stages[2]["seconds"] = max(0.0, stages[2]["seconds"] - stages[1]["seconds"])
    stages.append({"stage": "the rest (plan of the read, Python glue)", "seconds": max(0.0, total - sum(s["seconds"] for s in stages))})
    per_field = sorted(((v[3], f"{Path(fn).name}:{line}({n})", v[1]) for (fn, line, n), v in st.items()
                        if v[1] >= N_FIELDS), reverse=True)[:8]
    H.emit_result({"total": total, "stages": stages, "fields": len(arr.fields),
                   "per_field_calls": [{"function": name, "calls": calls, "seconds": s} for s, name, calls in per_field]})


# ----- perf: where the native read's time goes ----------------------------------------------------------------

# symbol pattern -> bucket, the first match wins
BUCKETS = [
    (r"ZSTD|HUF_|FSE_|zstd|inflate|LZ4|lzma|xxh|XXH|twox_hash", "decompression and checksums (zstd, xxhash)"),
    (r"clear_page|folio_zero|page_fault|handle_mm_fault|do_huge_pmd|mi_|_mi_|mmap|madvise|munmap|memset",
     "first touch of fresh memory (page faults, allocator)"),
    (r"rntuple::primitives|rntuple::read::decode|unsplit|transpose|decode_into|delta|zigzag", "decoding (unsplit, transpose, delta, offsets)"),
    (r"pread|copy_to_iter|copy_page_to_iter|filemap|vfs_read", "reading the file (page cache)"),
    (r"arrow_|OffsetBuffer|BooleanArray|memmove|memcpy", "Arrow assembly and copies"),
    (r"rntuple::read::arrow|rntuple::read|rntuple::", "other native reading (per field, per page)"),
    (r"Py|_Py|numpy|awkward|gc_|visit_|unicode|dict|list_|tuple|long_|frame|blas|lookdict", "Python, numpy, awkward"),
]


def perf_profile(path: Path) -> dict | None:
    """`perf record` of one ours-open+read worker; sample shares by bucket (None without a working perf)."""
    perf = shutil.which("perf")
    if perf is None:
        return None
    with tempfile.TemporaryDirectory() as d:
        data = Path(d) / "perf.data"
        # the worker imports first, then perf attaches to it: the samples are those of open + read alone
        w = subprocess.Popen([sys.executable, __file__, "--worker", "perf", str(path)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
        while (line := w.stdout.readline()) and line.strip() != "READY":
            pass
        rec = subprocess.Popen([perf, "record", "-F", "999", "-o", str(data), "-p", str(w.pid)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)  # perf attached
        w.stdin.write("go\n")
        w.stdin.flush()
        w.communicate(timeout=3600)
        _, err = rec.communicate(timeout=120)
        if not data.exists():
            return {"error": (err.strip().splitlines() or ["perf record failed"])[-1]}
        rep = subprocess.run([perf, "report", "-i", str(data), "--no-children", "--sort", "symbol", "-g", "none",
                              "--stdio"], capture_output=True, text=True)
    shares: dict = {}
    top = []
    for line in rep.stdout.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+\[[.k]\]\s+(.*\S)", line)
        if not m:
            continue
        share, sym = float(m.group(1)), m.group(2)
        bucket = next((b for pat, b in BUCKETS if re.search(pat, sym)), "other")
        shares[bucket] = shares.get(bucket, 0.0) + share
        if len(top) < 12:
            top.append({"symbol": sym[:90], "percent": share, "bucket": bucket})
    return {"buckets": dict(sorted(shares.items(), key=lambda kv: -kv[1])), "top_symbols": top}


# ----- main -------------------------------------------------------------------------------------------------


def run(kind: str, path: Path) -> dict:
    return H.run_worker(__file__, ["--worker", kind, str(path)], timeout=3600, what=f"{kind} worker")


def main() -> int:
    common = H.common_flags(entries=None, entries_help="entries of the wide file (default 100,000; --quick 10,000)",
                            reps=None, reps_help="rounds (default 5; --quick 2); medians are reported",
                            json=H.DATA / "wide_schema_results.json", quick="10,000 entries, 2 rounds")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                 parents=[common])
    ap.add_argument("--no-perf", action="store_true", help="no sampled (perf) profile of the native read")
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    opts = ap.parse_args()
    if opts.worker:
        kind, path = opts.worker
        worker_profile(path) if kind == "profile" else worker(kind, path)
        return 0
    entries = opts.entries or (10_000 if opts.quick else 100_000)
    reps = opts.reps or (2 if opts.quick else 5)
    machine = H.machine_info()
    log("== wide schemas: 1,500 fields, open + read all from Python (issue 56) ==")
    H.log_machine(machine)
    import awkward
    import uproot

    import rntuple

    log(f"versions: rntuple {rntuple.__version__}, uproot {uproot.__version__}, awkward {awkward.__version__}")
    path = wide_file(entries)
    H.warm_page_cache(path)
    with rntuple.open(str(path)) as f:
        t = f["Events"]
        stats = t.storage_stats()
        n_fields, n_entries = len(t.schema), t.num_entries
    log(f"file: {H.shown_path(path)}, {path.stat().st_size / 1e6:,.1f} MB, {n_entries:,} entries, {n_fields} top-level "
        f"fields, {stats.get('clusters')} clusters, {stats.get('pages')} pages")

    impls = {
        "ours open": H.measured("ours open", lambda: run("open", path)),
        "ours open+read": H.measured("ours open+read", lambda: run("read", path)),
        "uproot open+read": H.measured("uproot open+read", lambda: run("uproot", path)),
    }
    runs = H.alternate(impls, reps)
    summary = {k: H.summarize(v) for k, v in runs.items()}
    ours_sum = {r["checksum"] for r in runs["ours open+read"]}
    up_sum = {r["checksum"] for r in runs["uproot open+read"]}
    same = len(ours_sum | up_sum) == 1
    ours, up, opened = (summary[k]["median"] for k in ("ours open+read", "uproot open+read", "ours open"))
    paired = H.paired_ratios([r["seconds"] for r in runs["uproot open+read"]], [r["seconds"] for r in runs["ours open+read"]])
    speedup = H.ratio(up, ours)

    log("")
    rows = [["measurement", "median s", "best s", "runs"]]
    for k, s in summary.items():
        rows.append([k, f"{s['median']:.3f}", f"{s['best']:.3f}", ", ".join(f"{x:.2f}" for x in s["times"])])
    for line in H.text_table(rows):
        log(line)
    log(f"  uproot / ours (medians): {H.fmt_ratio(speedup)}; per round: {', '.join(H.fmt_ratio(x) for x in paired)}; "
        f"checksums {'agree' if same else 'DIFFER: ' + str(sorted(ours_sum | up_sum))}")

    log("")
    log("profile of ours (one more process, cProfile):")
    prof = run("profile", path)
    rows = [["stage", "s", "share"]]
    for s in prof["stages"]:
        rows.append([s["stage"], f"{s['seconds']:.3f}", f"{100 * s['seconds'] / prof['total']:.0f} %"])
    rows.append(["total (open + arrays(), under cProfile)", f"{prof['total']:.3f}", "100 %"])
    for line in H.text_table(rows):
        log(line)
    log("  Python functions called once per field or more (cumulative s, calls):")
    for p in prof["per_field_calls"]:
        log(f"    {p['seconds']:.3f} s  {p['calls']:>6}  {p['function']}")
    perf = None if opts.no_perf else perf_profile(path)
    if perf and "buckets" in perf:
        log("")
        log("sampled profile of ours open+read (perf, share of samples):")
        for b, share in perf["buckets"].items():
            log(f"  {share:5.1f} %  {b}")
        log("  top symbols: " + "; ".join(f"{s['symbol']} {s['percent']:.1f} %" for s in perf["top_symbols"][:6]))
    elif perf:
        log(f"perf profile: {perf['error']}")

    log("")
    targets = H.Targets()
    targets.add("open+read >= 20x faster than uproot", speedup, None if speedup is None else speedup >= 20,
                f"uproot {up:.2f} s / ours {ours:.3f} s = {H.fmt_ratio(speedup)} (target 20x)")
    targets.add("open < 0.5 s", opened, opened < 0.5, f"ours open {opened:.3f} s (target < 0.5 s)")
    targets.add("same values", same, same, "checksums of ours and uproot " + ("agree" if same else "differ"))

    report = {"machine": machine, "entries": n_entries, "fields": n_fields, "file": H.shown_path(path),
              "file_bytes": path.stat().st_size, "storage": stats, "versions": {"rntuple": rntuple.__version__,
              "uproot": uproot.__version__, "awkward": awkward.__version__},
              "summary": {k: {kk: vv for kk, vv in s.items() if kk != "runs"} for k, s in summary.items()},
              "runs": runs, "speedup_vs_uproot": speedup, "paired_speedups": paired, "profile": prof, "perf": perf,
              "targets": list(targets)}
    H.write_json(opts.json, report)
    log(f"results: {H.shown_path(opts.json)}")

    log("")
    log(f"Machine: {machine['cpu_model']}, {machine['nproc']} vCPU, {machine['memory']}; {machine['date']}; "
        f"git {machine['git']}; load average {machine['loadavg']}.")
    log("")
    md = [[k, f"{s['median']:.3f}", f"{s['best']:.3f}"] for k, s in summary.items()]
    md.append(["uproot / ours (open+read)", H.fmt_ratio(speedup), ""])
    for line in H.markdown_table(["1,500 fields, " + f"{n_entries:,} entries", "median s", "best s"], md):
        log(line)
    log("")
    md = [[s["stage"], f"{s['seconds']:.3f}", f"{100 * s['seconds'] / prof['total']:.0f} %"] for s in prof["stages"]]
    for line in H.markdown_table(["stage of ours (cProfile)", "s", "share"], md):
        log(line)
    if perf and "buckets" in perf:
        log("")
        for line in H.markdown_table(["native + Python samples (perf)", "share"],
                                     [[b, f"{share:.1f} %"] for b, share in perf["buckets"].items()]):
            log(line)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
