"""The one harness of the I/O benchmark family: bench/io_bench.py and its parts (_io_streams.py, _io_xrootd.py,
_io_s3write.py, _io_report.py; _io_root.py is the ROOT worker). The datasets, the readers (the CLI's ``bench read``,
the Python readers), the client of the helper process (nginx + latency proxies), the ROOT worker's launcher, the
measurement records (``Bench``: repetitions of one reader, or readers alternated side by side) and the number
format of the tables. io_bench.py imports its parts and this module; the parts import this module (and
_io_report.py), never io_bench.py, so that the family's imports form no circle."""

from __future__ import annotations

import gc
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
import _harness as H  # noqa: E402  (flags, workers, timing, machine, tables)

SCRIPT = HERE / "io_bench.py"  # what the helper process (--serve) and the workers (--worker-root, --worker-read) run
REPO = H.REPO
DATA = H.DATA
IODATA = DATA / "io"
BINARY = H.default_bin()  # --bin: io_bench.py's main sets it (read when called, as C.BINARY)
NTUPLE = "Events"
META_REQUESTS = 8  # allowed for metadata in the request-count check: requests <= 2 * clusters + META_REQUESTS
SUM_RTOL = 1e-9

FEW = {"synthetic": ["eventId"], "nanoaod": ["nMuon", "Muon_pt", "Muon_eta", "Jet_pt", "MET_pt"]}
PAGE_BY_PAGE = {"ours CLI ra=0", "uproot", "uproot fsspec", "uproot XRootDSource"}
READERS_ORDER = ["ours CLI", "ours CLI ra=0", "ours py", "ours py fsspec", "uproot", "uproot fsspec", "uproot XRootDSource",
                 "ROOT"]
PARTS = ("local", "streams", "http", "xrootd", "s3", "s3-write")


log = H.log


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


# ----------------------------------------------------------------------------------------------
# data
# ----------------------------------------------------------------------------------------------


def make_synthetic(entries: int, cluster: int, page: int) -> Path:
    path = IODATA / f"synthetic_{entries}_c{cluster}_p{page}.root"
    if not path.exists():
        tmp = path.with_name(path.name + ".tmp")
        cmd = [str(BINARY), "bench", "write", "--mode", "sequential", "--threads", "1", "--entries", str(entries),
               "--cluster-size", str(cluster), "--page-size", str(page), "--output", str(tmp), "--no-progress"]
        subprocess.run(cmd, check=True, capture_output=True, text=True)
        os.replace(tmp, path)
    return path


def make_nanoaod(entries: int, cluster: int) -> Path:
    path = IODATA / f"nanoaod_{entries}_c{cluster}.root"
    if not path.exists():
        sys.path.insert(0, str(HERE))
        import nanoaod_like

        import rntuple

        flat, colls = nanoaod_like.generate(entries, nanoaod_like.DEFAULT_SEED)
        data = nanoaod_like.to_awkward_dict(flat, colls)
        tmp = path.with_name(path.name + ".tmp")
        rntuple.write(str(tmp), NTUPLE, data, compression=505, approx_zipped_cluster_size=cluster)
        os.replace(tmp, path)
    return path


evict = H.evict
warm = H.warm_page_cache


# ----------------------------------------------------------------------------------------------
# helper process (io_bench.py --serve: nginx + latency proxies + their counters): its client
# ----------------------------------------------------------------------------------------------


class Servers:
    def __init__(self, root: Path, lats: list[int], xlats: list[int] | None = None):
        self.proc = subprocess.Popen([sys.executable, str(SCRIPT), "--serve", str(root),
                                      ",".join(str(x) for x in lats),
                                      ",".join(str(x) for x in xlats) if xlats else "-"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the server helper (nginx + proxies) did not start")
        info = json.loads(line)
        self.nginx = info["nginx"]
        self.proxies = {int(k): v for k, v in info["proxies"].items()}
        self.xrootd = {int(k): v for k, v in info.get("xrootd", {}).items()}  # ms -> root://127.0.0.1:PORT/
        self.xrootd_error = info.get("xrootd_error")

    def _cmd(self, cmd: str, ms: int) -> dict:
        self.proc.stdin.write(f"{cmd} {ms}\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def reset(self, ms: int) -> None:
        self._cmd("reset", ms)

    def stats(self, ms: int) -> dict:
        return self._cmd("stats", ms)

    def xreset(self, ms: int) -> None:
        self._cmd("xreset", ms)

    def xstats(self, ms: int) -> dict:
        return self._cmd("xstats", ms)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# ----------------------------------------------------------------------------------------------
# readers: each returns {"seconds", "entries", checksums..., optional "requests"/"bytes"}
# ----------------------------------------------------------------------------------------------


def bench_read(src: str, fields=None, extra=(), env=None, binary=None) -> tuple[H.Child, dict]:
    """One ``rntuple bench read SRC`` (``--fields``, the `extra` flags; `binary`: default BINARY): the finished
    child and the JSON it printed last; RuntimeError when it failed."""
    cmd = [str(binary or BINARY), "bench", "read", str(src), "--ntuple", NTUPLE, "--no-progress", *extra]
    if fields:
        cmd += ["--fields", ",".join(fields)]
    p = H.run_child(cmd, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[1:])}: exit {p.returncode}: {p.stderr.strip()[-400:]}")
    return p, H.last_json(p.stdout, "seconds")


def cli_read(src: str, fields, read_ahead: int | None = None, env=None) -> dict:
    p, o = bench_read(src, fields, [] if read_ahead is None else ["--read-ahead", str(read_ahead)], env)
    wall = p.wall
    # Local files: the process also decompresses the pages again after the read (its decompress_seconds figures),
    # so the read's own time is used; URLs: the process wall time (open and metadata requests included).
    secs = wall if "://" in src else float(o["seconds"])
    r = {"seconds": secs, "wall_seconds": wall, "read_seconds": float(o["seconds"]), "entries": int(o["entries"]),
         "own_requests": o.get("requests"), "own_bytes": o.get("bytes_read"), "clusters": o.get("clusters"),
         "stored_bytes": o.get("stored_bytes"), "read_ahead_peak_bytes": o.get("read_ahead_peak_bytes")}
    if "checksum" in o and (not fields or "eventId" in fields):
        r["eventId_sum"] = int(o["checksum"])
    if "Muon_pt_sum" in o:
        r["Muon_pt_sum"] = float(o["Muon_pt_sum"])
        r["Muon_pt_items"] = int(o["Muon_pt_items"])
    return r


def _sums(arr, fields) -> dict:
    import awkward as ak
    import numpy as np

    r = {"entries": len(arr)}
    names = arr.fields
    if "eventId" in names:
        r["eventId_sum"] = int(np.asarray(arr["eventId"]).sum(dtype=np.uint64))
    if "Muon_pt" in names:
        flat = ak.to_numpy(ak.flatten(arr["Muon_pt"]))
        r["Muon_pt_sum"] = float(flat.sum(dtype=np.float64))
        r["Muon_pt_items"] = int(len(flat))
    return r


def py_read(kind: str, src: str, fields) -> dict:
    """kind: ours | ours-fsspec | uproot | uproot-fsspec | uproot-xrootd (uproot.source.xrootd.XRootDSource)."""
    t0 = time.perf_counter()
    stats = None
    if kind == "ours":
        import rntuple

        with rntuple.open(src) as f:
            arr = f[NTUPLE].arrays(fields)
            stats = f.io_stats() if "://" in src else None
    elif kind == "ours-fsspec":
        import fsspec

        import rntuple

        with fsspec.open(src, "rb") as fo, rntuple.open(fo) as f:
            arr = f[NTUPLE].arrays(fields)
            stats = f.io_stats()
    else:
        import uproot

        kw = {"handler": uproot.source.fsspec.FSSpecSource} if kind == "uproot-fsspec" else {}
        if kind == "uproot-xrootd":
            kw = {"handler": uproot.source.xrootd.XRootDSource}
        with uproot.open(src, **kw) as f:
            arr = f[NTUPLE].arrays(fields)
    seconds = time.perf_counter() - t0
    r = {"seconds": seconds, **_sums(arr, fields)}
    if stats:
        r["own_requests"], r["own_bytes"] = stats.get("requests"), stats.get("bytes")
    del arr
    gc.collect()
    return r


# ----------------------------------------------------------------------------------------------
# ROOT worker (own process; cling JIT): bench/_io_root.py
# ----------------------------------------------------------------------------------------------

def run_root(dataset: str, path: Path, reps: int, url: str | None) -> dict:
    spec = json.dumps({"dataset": dataset, "path": str(path), "reps": reps, "url": url})
    p, result = H.run_marked(SCRIPT, ["--worker-root", spec], timeout=1800)
    if result is not None:
        return result
    tail = "\n".join((p.stdout + p.stderr).strip().splitlines()[-15:])
    raise RuntimeError(f"ROOT worker failed (exit {p.returncode}):\n{tail}")



# ----------------------------------------------------------------------------------------------
# measurement
# ----------------------------------------------------------------------------------------------


class Bench:
    def __init__(self, args):
        self.args = args
        self.records: list[dict] = []

    def measure(self, ds: str, fs: str, target: str, lat, reader: str, fn, before=None, after=None, reps=None,
                warmup=False) -> dict:
        reps = reps or self.args.reps
        rec = {"dataset": ds, "fieldset": fs, "target": target, "latency_ms": lat, "reader": reader,
               "load": loadavg(), "runs": []}
        try:
            if warmup:
                fn()
            for _ in range(reps):
                if before:
                    before()
                r = fn()
                if after:
                    r.update(after())
                rec["runs"].append(r)
                if r["seconds"] > self.args.slow:
                    break
        except Exception as exc:  # noqa: BLE001 - recorded, the rest goes on
            rec["error"] = f"{type(exc).__name__}: {exc}"[:500]
        self.finish(rec)
        self.records.append(rec)
        self.print_record(rec)
        return rec

    @staticmethod
    def finish(rec: dict) -> None:
        runs = rec["runs"]
        if not runs:
            return
        secs = [r["seconds"] for r in runs]
        med = statistics.median(secs)
        rep = min(runs, key=lambda r: abs(r["seconds"] - med))
        rec["n"] = len(runs)
        rec["seconds"] = med
        rec["seconds_all"] = secs
        for k in ("entries", "eventId_sum", "Muon_pt_sum", "Muon_pt_items", "requests", "bytes", "own_requests",
                  "own_bytes", "clusters", "stored_bytes", "read_ahead_peak_bytes"):
            if k in rep and rep[k] is not None:
                rec[k] = rep[k]

    def alternate(self, recs: dict, run, repeat_slow: bool = False) -> None:
        """Readers side by side: --reps rounds, each calling ``run(name, rep) -> result`` once for every record of
        `recs` (name -> record), in an order rotated from round to round (H.rotate), so that a slow phase of the
        machine hits them alike. A reader that raised (the error recorded) is not called again, nor (unless
        `repeat_slow`) one whose last run took longer than --slow. The caller finishes the records."""
        for rep in range(self.args.reps):
            for name in H.rotate(list(recs), rep):
                rec = recs[name]
                if "error" in rec or (not repeat_slow and rec["runs"] and rec["runs"][-1]["seconds"] > self.args.slow):
                    continue  # a failed or slow reader is not repeated
                try:
                    r = run(name, rep)
                except Exception as exc:  # noqa: BLE001 - recorded, the rest goes on
                    rec["error"] = f"{type(exc).__name__}: {exc}"[:500]
                    continue
                rec["runs"].append(r)
                rec["load"] = loadavg()

    def skip(self, ds, fs, target, lat, reader, why) -> None:
        rec = {"dataset": ds, "fieldset": fs, "target": target, "latency_ms": lat, "reader": reader,
               "load": loadavg(), "runs": [], "skipped": why}
        self.records.append(rec)
        log(f"    {reader:16s} skipped: {why}")

    @staticmethod
    def print_record(rec: dict) -> None:
        if "error" in rec and not rec["runs"]:
            log(f"    {rec['reader']:16s} ERROR {rec['error']}")
            return
        req = rec.get("requests", rec.get("own_requests"))
        log(f"    {rec['reader']:16s} {rec['seconds']:8.3f} s  (n={rec['n']}: "
            f"{', '.join(f'{s:.3f}' for s in rec['seconds_all'])})  requests={req}  load={rec['load'][0]}"
            + (f"  ERROR {rec['error']}" if "error" in rec else ""))

    def find(self, **kw) -> dict | None:
        for r in self.records:
            if all(r.get(k) == v for k, v in kw.items()) and "seconds" in r:
                return r
        return None


def fmt_s(x):
    return "-" if x is None else (f"{x:.3f}" if x < 10 else f"{x:.1f}")


def machine() -> dict:
    """The harness's machine description, with this script's older key names (cpu, run_at, loadavg_start)."""
    m = H.machine_info()
    return {**m, "cpu": m["cpu_model"], "run_at": m["date"], "loadavg_start": loadavg()}
