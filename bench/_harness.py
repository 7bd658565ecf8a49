#!/usr/bin/env python3
"""The pieces every benchmark in bench/ shares: one set of flag names, the worker-subprocess protocol, timing,
the machine description recorded in every result, and the table formatters. Standard library only (the
stdlib-only scripts, run with the system python3, import it too).

Flags (`common_flags(...)` returns an argparse parent; a script asks only for the ones it has):

    --reps N          timed repetitions of each measurement   (old spellings, hidden: --repeat, --runs)
    --bin PATH        the rntuple binary; default $RNTUPLE_BIN, else target/release/rntuple
                                                              (old spellings, hidden: --binary, --cli)
    --json PATH       the results file                        (old spelling, hidden: --output)
    --quick           a small, fast smoke run
    --plot [PATH]     where the plot goes; --no-plot: none
    --entries N       entries (per run, per thread or per file: the script says)
    --threads LIST    thread counts

An old spelling still works and prints a note on stderr.

Worker protocol: a script re-runs itself as a child (`run_worker(__file__, ["--worker", ...])`); the child prints
its result as one line `BENCH_RESULT:{json}` (`emit_result`), other output (ROOT's) is ignored; the parent takes
the last such line. A child that is not Python (`rntuple bench ...`) runs through `run_child`, which measures the
wall time and the child's CPU time (user + system, from the resource usage of the children), and its last JSON
line is read with `last_json`.

Run it alone (`python3 bench/_harness.py`) to print the machine description and check the helpers.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DATA = HERE / "data"
RESULT_MARK = "BENCH_RESULT:"


def log(msg: str = "") -> None:
    print(msg, flush=True)


# ----------------------------------------------------------------------------------------------
# flags
# ----------------------------------------------------------------------------------------------


def default_bin() -> Path:
    """$RNTUPLE_BIN, else the release build of this checkout."""
    return Path(os.environ.get("RNTUPLE_BIN") or REPO / "target" / "release" / "rntuple")


class _OldSpelling(argparse.Action):
    """A hidden, deprecated spelling of a flag: stores into the new flag's dest, with a note on stderr."""

    def __init__(self, option_strings, dest, new=None, **kw):
        self.new = new
        super().__init__(option_strings, dest, **kw)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"note: {option_string} is an old spelling of {self.new}", file=sys.stderr)
        setattr(namespace, self.dest, values)


def _old(p: argparse.ArgumentParser, names: tuple[str, ...], dest: str, new: str, **kw) -> None:
    for name in names:
        p.add_argument(name, dest=dest, action=_OldSpelling, new=new, default=argparse.SUPPRESS, help=argparse.SUPPRESS,
                       **kw)


_UNSET = object()


def common_flags(*, reps=_UNSET, reps_help: str = "timed runs per measurement", bin: bool = False,
                 json=_UNSET, json_optional: bool = False, json_help: str | None = None, quick: str | None = None,
                 plot=_UNSET, entries=_UNSET, entries_help: str = "entries", threads=_UNSET,
                 threads_help: str = "thread counts, comma-separated") -> argparse.ArgumentParser:
    """An argparse parent with the flags a script asks for (a keyword left out: no such flag). `reps`,
    `json`, `plot`, `entries`, `threads` give the default (None: the script decides, e.g. from --quick);
    `json_optional`: `--json [PATH]` writes the file only when given (`json` is then the path of a bare
    `--json`); `quick` is the help text of `--quick`."""
    p = argparse.ArgumentParser(add_help=False)
    g = p.add_argument_group("common benchmark flags (bench/_harness.py)")
    if entries is not _UNSET:
        g.add_argument("--entries", type=int, default=entries, metavar="N", help=entries_help)
    if reps is not _UNSET:
        g.add_argument("--reps", type=int, default=reps, metavar="N", help=reps_help)
        _old(p, ("--repeat", "--runs"), "reps", "--reps", type=int)
    if threads is not _UNSET:
        g.add_argument("--threads", default=threads, metavar="LIST", help=threads_help)
    if quick is not None:
        g.add_argument("--quick", action="store_true", help=quick)
    if bin:
        g.add_argument("--bin", type=Path, default=default_bin(), metavar="PATH",
                       help="the rntuple binary (default $RNTUPLE_BIN, else target/release/rntuple)")
        _old(p, ("--binary", "--cli"), "bin", "--bin", type=Path)
    if json is not _UNSET:
        if json_optional:
            g.add_argument("--json", type=Path, nargs="?", const=json, default=None, metavar="PATH",
                           help=json_help or f"write the results as JSON (a bare --json: {_shown(json)})")
        else:
            g.add_argument("--json", type=Path, default=json, metavar="PATH",
                           help=json_help or f"the results file (default {_shown(json)})")
        _old(p, ("--output",), "json", "--json", type=Path)
    if plot is not _UNSET:
        g.add_argument("--plot", type=Path, nargs="?", const=plot, default=plot, metavar="PATH",
                       help=f"where the plot goes (default {_shown(plot)})")
        g.add_argument("--no-plot", action="store_true", help="no plot")
    return p


def _shown(path) -> str:
    if path is None:
        return "chosen by the script"
    p = Path(path)
    return str(p.relative_to(REPO)) if p.is_absolute() and p.is_relative_to(REPO) else str(p)


def csv_ints(text: str) -> list[int]:
    return [int(x) for x in str(text).split(",") if x.strip()]


# ----------------------------------------------------------------------------------------------
# machine
# ----------------------------------------------------------------------------------------------


def loadavg() -> list[float] | None:
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except (OSError, ValueError):
        return None


def git_commit() -> str | None:
    """The short commit of the checkout, "-dirty" when tracked files differ from it."""
    try:
        rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True)
        if rev.returncode == 0:
            return rev.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    except OSError:
        pass
    return None


def vm_hint() -> str | None:
    """What the machine runs in, as far as it says: systemd-detect-virt, the CPU's hypervisor flag, DMI."""
    hints = []
    if shutil.which("systemd-detect-virt"):
        try:
            v = subprocess.run(["systemd-detect-virt"], capture_output=True, text=True, timeout=10).stdout.strip()
            if v and v != "none":
                hints.append(f"{v} (systemd-detect-virt)")
        except (OSError, subprocess.TimeoutExpired):
            pass
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                if "hypervisor" in line.split():
                    hints.append("CPU hypervisor flag")
                break
    except OSError:
        pass
    for f in ("sys_vendor", "product_name"):
        try:
            v = Path(f"/sys/class/dmi/id/{f}").read_text().strip()
            if v:
                hints.append(v)
        except OSError:
            pass
    return "; ".join(hints) or None


def machine_info() -> dict:
    """The machine of a run, recorded in every result: date (UTC), cores, CPU, memory, kernel, VM, git commit."""
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        nproc = int(subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip())
    except (OSError, ValueError):
        nproc = os.cpu_count()
    mem = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "nproc": nproc,
        "cpu_model": cpu,
        "memory": mem,
        "kernel": platform.release(),
        "python": platform.python_version(),
        "loadavg": loadavg(),
        "git": git_commit(),
        "os_cpu_count": os.cpu_count(),
        "vm": vm_hint(),
        "platform": platform.platform(),
    }


def log_machine(machine: dict, idle_warning: bool = True) -> None:
    """The machine and date lines a benchmark prints first."""
    log(f"machine: {machine['cpu_model']}, nproc={machine['nproc']}, memory {machine['memory']}, "
        f"kernel {machine['kernel']}, python {machine['python']}")
    log(f"date:    {machine['date']}   git: {machine['git']}   load average {machine['loadavg']}")
    if idle_warning and machine["loadavg"] and machine["loadavg"][0] > 0.5:
        log("warning: the machine is not idle (load average > 0.5); timings will be noisy")


def write_json(path: Path, report: dict, indent: int = 1) -> None:
    """A results file: the report (with its "machine"; added here if missing) as JSON."""
    if "machine" not in report:
        report = {"machine": machine_info(), **report}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=indent, default=str) + "\n")


def shown_path(path: Path) -> str:
    """A path relative to the repository when it is inside it."""
    p = Path(path)
    return str(p.relative_to(REPO)) if p.resolve().is_relative_to(REPO) and p.is_absolute() else str(p)


# ----------------------------------------------------------------------------------------------
# children: workers (this script again) and the CLI
# ----------------------------------------------------------------------------------------------


def emit_result(obj, mark: str = RESULT_MARK) -> None:
    """Worker -> parent: one marked JSON line on stdout (ROOT may print other things)."""
    sys.stdout.write(mark + json.dumps(obj) + "\n")
    sys.stdout.flush()


def find_result(stdout: str, mark: str = RESULT_MARK) -> dict | None:
    """The last marked JSON line of a worker's stdout."""
    result = None
    for line in stdout.splitlines():
        if line.startswith(mark):
            result = json.loads(line[len(mark):])
    return result


def run_marked(script, args: list[str], timeout: float | None = None, prefix: list[str] | None = None):
    """Runs `[*prefix, python, script, *args]`; returns (CompletedProcess, its result or None)."""
    cmd = [*(prefix or []), sys.executable, str(Path(script).resolve()), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return proc, find_result(proc.stdout)


def output_tail(proc, lines: int = 30) -> str:
    return "\n".join((proc.stdout + "\n" + proc.stderr).strip().splitlines()[-lines:])


def run_worker(script, args: list[str], timeout: float | None = None, prefix: list[str] | None = None,
               what: str | None = None, need_success: bool = True) -> dict:
    """A worker's result; RuntimeError (with the end of its output) when it printed none, or, with
    `need_success`, exited non-zero."""
    proc, result = run_marked(script, args, timeout, prefix)
    if result is None or (need_success and proc.returncode != 0):
        raise RuntimeError(f"{what or 'worker ' + ' '.join(args[:2])} failed (exit {proc.returncode}):\n{output_tail(proc)}")
    return result


def children_cpu() -> float:
    """User + system seconds of all waited-for children so far."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def tree_cpu(pid: int | None = None) -> float:
    """CPU seconds (user + system) so far of a process (default: this one) and all its descendants alive now,
    with those of the children each has waited for: the CPU time of a process tree, e.g. Dask's worker processes
    or Spark's JVMs and Python workers (a descendant reparented away when its parent exits is lost). Linux /proc."""
    stats = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                text = Path(f"/proc/{d}/stat").read_text()
            except OSError:
                continue
            f = text[text.rindex(")") + 2:].split()  # state, ppid, ..., utime stime cutime cstime at 11..14
            stats[int(d)] = (int(f[1]), sum(int(x) for x in f[11:15]))
    kids: dict = {}
    for p, (parent, _) in stats.items():
        kids.setdefault(parent, []).append(p)
    total, todo = 0, [pid or os.getpid()]
    while todo:
        p = todo.pop()
        total += stats.get(p, (0, 0))[1]
        todo += kids.get(p, [])
    return total / os.sysconf("SC_CLK_TCK")


@dataclass
class Child:
    cmd: list
    returncode: int
    stdout: str
    stderr: str
    wall: float  # seconds from start to exit
    cpu: float  # the child's user + system seconds
    timed_out: bool = False

    def why(self, limit: int = 300) -> str:
        """The last line it printed (stderr first), for an error message."""
        lines = (self.stderr.strip() or self.stdout.strip() or "no output").splitlines()
        return (lines[-1] if lines else "")[:limit]


def run_child(cmd: list, timeout: float | None = None, env: dict | None = None, new_session: bool = False) -> Child:
    """Runs a command, capturing its output; wall time and the child's CPU time (the difference of the
    children's resource usage around it). On a timeout the child (with `new_session` its whole process
    group) is killed and `timed_out` set."""
    import signal

    cpu0 = children_cpu()
    t0 = time.perf_counter()
    p = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         start_new_session=new_session)
    timed_out = False
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        if new_session:
            os.killpg(p.pid, signal.SIGKILL)
        else:
            p.kill()
        out, err = p.communicate()
        timed_out = True
    wall = time.perf_counter() - t0
    return Child(cmd, p.returncode, out, err, wall, children_cpu() - cpu0, timed_out)


def last_json(text: str, key: str | None = None) -> dict | None:
    """The JSON object a command printed last (the whole output, else its last line that is one; with `key`:
    one that has it)."""
    text = text.strip()
    for cand in [text] + [ln.strip() for ln in reversed(text.splitlines()) if ln.strip().startswith("{")]:
        try:
            o = json.loads(cand)
        except ValueError:
            continue
        if isinstance(o, dict) and (key is None or key in o):
            return o
    return None


# ----------------------------------------------------------------------------------------------
# timing
# ----------------------------------------------------------------------------------------------


def timed_runs(fn, reps: int, warmup: int = 1) -> dict:
    """fn() -> dict with 'seconds' (or 'error'). `warmup` untimed calls, then `reps` timed ones; returns the
    best run, all times and the CPU seconds of this process per run."""
    for _ in range(warmup):
        r = fn()
        if "error" in r:
            return {"error": r["error"]}
    runs = []
    for _ in range(reps):
        c0 = time.process_time()
        w0 = time.perf_counter()
        r = fn()
        r["wall_seconds"] = time.perf_counter() - w0
        r["cpu_seconds"] = time.process_time() - c0
        if "error" in r:
            return {"error": r["error"]}
        runs.append(r)
    best = min(runs, key=lambda r: r["seconds"])
    return {
        "best": best,
        "times": [r["seconds"] for r in runs],
        "cpu_times": [r["cpu_seconds"] for r in runs],
    }


def best_of_runs(runs: list[dict]) -> dict:
    """Runs of a child (dicts with 'seconds', 'process_wall', 'cpu_seconds') -> the best and the lists."""
    return {
        "best": min(runs, key=lambda r: float(r["seconds"])),
        "times": [float(r["seconds"]) for r in runs],
        "process_walls": [r["process_wall"] for r in runs],
        "cpu_times": [r["cpu_seconds"] for r in runs],
    }


def best_of(fn, reps: int, slow: float = 20.0) -> tuple[float, list[float]]:
    """Best of `reps` wall times of fn() after one warm-up; a warm-up slower than `slow` seconds is the only run."""
    import gc

    t0 = time.perf_counter()
    out = fn()
    t_warm = time.perf_counter() - t0
    del out
    gc.collect()
    if t_warm > slow:
        return t_warm, [t_warm]
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
        del out
        gc.collect()
    return min(times), times


def warm_cold_runs(fn, paths, repeat: int, cold: int) -> dict:
    """fn() -> seconds (or dict with 'seconds', 'cpu'). One untimed call, best of `repeat` warm, best of `cold`
    cold (the files in `paths` evicted from the page cache before each); {"error"} if fn raises."""

    def once():
        c0 = time.process_time()
        r = fn()
        if not isinstance(r, dict):
            r = {"seconds": r}
        r.setdefault("cpu", time.process_time() - c0)
        return r

    try:
        once()
        warm = [once() for _ in range(repeat)]
        colds = []
        for _ in range(cold):
            for p in paths:
                evict(p)
            colds.append(once())
    except Exception as exc:  # noqa: BLE001 - report and go on with the other readers
        return {"error": f"{type(exc).__name__}: {exc}"[:400]}
    return {"warm": min(r["seconds"] for r in warm), "cold": min(r["seconds"] for r in colds) if colds else None,
            "warm_runs": [r["seconds"] for r in warm], "cold_runs": [r["seconds"] for r in colds],
            "warm_cpu": min(r["cpu"] for r in warm)}


def median(xs):
    """The median of the values that are not None (None if there are none)."""
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def rotate(items: list, rep: int) -> list:
    """Side by side: in repetition `rep` the list starts at another element, so that a slow phase of the
    machine hits the implementations compared with each other alike."""
    k = rep % len(items) if items else 0
    return items[k:] + items[:k]


def alternate(impls: dict, reps: int) -> dict:
    """impl name -> fn(); calls them in turn, `reps` rounds, each starting at another one (a, b, b, a, ...,
    see `rotate`); name -> list of results, in round order."""
    out: dict = {name: [] for name in impls}
    for rep in range(reps):
        for name in rotate(list(impls), rep):
            out[name].append(impls[name]())
    return out


def paired_ratios(after: list[float], before: list[float]) -> list[float]:
    """after[i] / before[i] for each round of `alternate`: the two ran back to back, so a slow phase of the
    machine cancels out of the ratio (a ratio of medians keeps it when it hit one side more often)."""
    return [a / b for a, b in zip(after, before) if a and b]


def measured(label: str, fn, cpu=None):
    """A measurement for `alternate`: fn() -> a dict of details (with its own "seconds" when it times a part
    only). The function returned times it (wall seconds; with `cpu`, a function giving CPU seconds so far, the
    difference as "cpu_seconds") and prints a progress line: label, seconds, CPU, the detail "note" (removed)."""

    def go() -> dict:
        c, t = cpu() if cpu else 0.0, time.perf_counter()
        r = fn() or {}
        r.setdefault("seconds", time.perf_counter() - t)
        if cpu:
            r["cpu_seconds"] = cpu() - c
        cpu_text = f", CPU {r['cpu_seconds']:6.2f} s" if cpu else ""
        log(f"  {label:22s} {r['seconds']:7.2f} s{cpu_text}  {r.pop('note', '')}".rstrip())
        return r

    return go


def summarize(runs: list[dict]) -> dict:
    """Runs (dicts with "seconds", maybe "cpu_seconds") -> median, best, the times, the median CPU, the runs."""
    secs = [r["seconds"] for r in runs]
    return {"median": median(secs), "best": min(secs), "times": secs, "cpu_median": median([r.get("cpu_seconds") for r in runs]),
            "runs": runs}


# ----------------------------------------------------------------------------------------------
# files, page cache
# ----------------------------------------------------------------------------------------------


def warm_page_cache(path: Path) -> None:
    with open(path, "rb") as f:
        while f.read(16 << 20):
            pass


def fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def evict(path: Path) -> None:
    """The file out of the page cache (after an fsync): the next read comes from the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


# ----------------------------------------------------------------------------------------------
# ROOT, matplotlib
# ----------------------------------------------------------------------------------------------


def quiet_import_root():
    import warnings

    warnings.filterwarnings("ignore")  # the pip ROOT wheel warns that it is an alpha distribution
    import ROOT  # noqa: E402

    ROOT.gROOT.SetBatch(True)
    return ROOT


def hadd_path() -> str:
    """The pip ROOT package's hadd (its bin/ is not on PATH), else one on PATH."""
    import importlib.util

    spec = importlib.util.find_spec("ROOT")
    cand = Path(spec.origin).parent / "bin" / "hadd" if spec and spec.origin else None
    return str(cand) if cand and cand.exists() else shutil.which("hadd") or "hadd"


def load_macro(ROOT, name: str) -> str:
    """Compiles bench/<name> with ACLiC (-O3), falls back to cling with optimize(3); says which."""
    src = HERE / name
    build = DATA / "aclic"
    build.mkdir(parents=True, exist_ok=True)
    if shutil.which(os.environ.get("CXX", "c++")) or shutil.which("g++"):
        ROOT.gSystem.SetBuildDir(str(build), True)
        # "k": keep the library (rebuilt only when the source changes), "O": optimized (-O3 -DNDEBUG)
        if ROOT.gSystem.CompileMacro(str(src), "kO") == 1:
            return f"ACLiC ({ROOT.gSystem.GetFlagsOpt().strip()})"
    if not ROOT.gInterpreter.Declare("#pragma cling optimize(3)\n" + src.read_text()):
        raise RuntimeError(f"could neither compile nor declare bench/{name}")
    return "cling JIT (#pragma cling optimize(3)); ACLiC unavailable"


def matplotlib_pin() -> str:
    """The benchmarks' matplotlib, as `make bench-deps` installs it (requirements-bench.txt)."""
    try:
        for line in (REPO / "requirements-bench.txt").read_text().splitlines():
            if line.startswith("matplotlib=="):
                return line.strip()
    except OSError:
        pass
    return "matplotlib"


def pyplot(install: bool = True, announce: bool = False):
    """matplotlib.pyplot with the Agg backend; pip-installs the pinned matplotlib into this interpreter's
    environment when it is missing and `install`. RuntimeError(why) when there is none."""
    try:
        import matplotlib
    except ImportError as exc:
        if not install:
            raise RuntimeError(str(exc)) from exc
        if announce:
            log(f"matplotlib missing: installing {matplotlib_pin()} into {sys.prefix} ...")
        p = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", matplotlib_pin()], capture_output=True,
                           text=True)
        if p.returncode != 0:
            raise RuntimeError(p.stderr.strip()[-200:]) from exc
        import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


# ----------------------------------------------------------------------------------------------
# formatting
# ----------------------------------------------------------------------------------------------


def fmt_rate(x: float | None, unit: float = 1.0, digits: int = 1) -> str:
    if x is None:
        return "-"
    return f"{x / unit:,.{digits}f}"


def fmt_ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}x"


def fmt_num(x, digits: int = 2) -> str:
    return "-" if x is None else f"{x:,.{digits}f}"


def ratio(a: float | None, b: float | None) -> float | None:
    """a / b, None when either is missing or b is 0."""
    return a / b if a is not None and b else None


def text_table(lines: list[list], left=(0,), indent: str = "  ") -> list[str]:
    """Aligned plain-text table: the first row is the header (a dashed line under it); the columns in `left`
    left-aligned, the others right-aligned."""
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(lines[0]))]
    out = []
    for j, line in enumerate(lines):
        out.append(indent + "  ".join(str(c).ljust(widths[i]) if i in left else str(c).rjust(widths[i])
                                      for i, c in enumerate(line)))
        if j == 0:
            out.append(indent + "  ".join("-" * w for w in widths))
    return out


def markdown_table(header: list[str], rows: list[list], align: str | None = None) -> list[str]:
    """A Markdown table: `align` one letter per column, "l" or "r" (default: the first column left, the
    others right)."""
    align = align or "l" + "r" * (len(header) - 1)
    out = ["| " + " | ".join(header) + " |", "|" + "".join("---|" if a == "l" else "---:|" for a in align)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out


class Targets(list):
    """PASS/FAIL/SKIP lines of a benchmark's targets (printed, recorded, never asserted)."""

    def add(self, name: str, value, ok: bool | None, detail: str) -> None:
        status = "SKIP" if ok is None else ("PASS" if ok else "FAIL")
        self.append({"target": name, "status": status, "value": value, "detail": detail})
        log(f"{status}: {name}: {detail}")


# ----------------------------------------------------------------------------------------------
# self-check
# ----------------------------------------------------------------------------------------------


def _self_check() -> int:
    m = machine_info()
    log("== bench/_harness.py self-check ==")
    log_machine(m, idle_warning=False)
    for k, v in m.items():
        log(f"  {k:13s} {v}")
    ap = argparse.ArgumentParser(prog="x", parents=[common_flags(reps=3, bin=True, json=DATA / "x.json", quick="q",
                                                                 plot=HERE / "x.png", entries=10, threads="1,2")])
    o = ap.parse_args(["--repeat", "5", "--binary", "/bin/true", "--output", "o.json", "--no-plot"])
    assert (o.reps, o.bin, o.json, o.no_plot, o.entries, o.threads) == (5, Path("/bin/true"), Path("o.json"), True, 10, "1,2")
    o = ap.parse_args(["--reps", "2", "--plot", "p.png"])
    assert (o.reps, o.plot, o.json, o.no_plot) == (2, Path("p.png"), DATA / "x.json", False)
    o = argparse.ArgumentParser(parents=[common_flags(json=DATA / "y.json", json_optional=True)]).parse_args(["--json"])
    assert o.json == DATA / "y.json"
    child = run_child([sys.executable, "-c", "import json; print('noise'); print(json.dumps({'seconds': 1.5}))"])
    assert child.returncode == 0 and last_json(child.stdout, "seconds") == {"seconds": 1.5}, child
    log(f"  child: wall {child.wall:.3f} s, cpu {child.cpu:.3f} s")
    r = run_worker(__file__, ["--emit"], what="self-check worker")
    assert r == {"ok": True}, r
    t = timed_runs(lambda: {"seconds": 1.0}, 2)
    assert t["times"] == [1.0, 1.0]
    assert rotate([1, 2, 3], 1) == [2, 3, 1] and median([3, None, 1, 2]) == 2
    t0 = tree_cpu()
    run_child([sys.executable, "-c", "sum(range(3_000_000))"])
    assert tree_cpu() > t0, "tree_cpu counts a child's CPU"
    m = summarize([measured("self-check", lambda: {"seconds": 2.0, "note": "(n)"}, cpu=time.process_time)() for _ in range(3)])
    assert (m["median"], m["best"], m["times"]) == (2.0, 2.0, [2.0] * 3) and "note" not in m["runs"][0], m
    assert markdown_table(["a", "b"], [[1, fmt_ratio(2)]]) == ["| a | b |", "|---|---:|", "| 1 | 2.00x |"]
    log("\n".join(text_table([["name", "s"], ["x", "1.0"]])))
    log("self-check: OK")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--emit"]:
        emit_result({"ok": True})
        sys.exit(0)
    sys.exit(_self_check())
