"""Test files written by ROOT 6.40, and ROOT's own reading of them (the oracle).

Run as a script (conftest.py does this once per session, in a subprocess so that a crash inside ROOT cannot take
pytest down with it):

    python rootgen.py --out tests/cross/generated [--force]

It loads root_helpers.cxx (compiled once by ACLiC, root_load.py), writes every case of CASES into OUT/<case>.root with ROOT's
RNTupleWriter / RNTupleParallelWriter (each case in a forked child, so that a crash inside ROOT loses one case
only), then reads every RNTuple back with ROOT's RNTupleReader and stores

    OUT/oracle/<case>__<ntuple>.json           every entry, in the JSON form of `rntuple dump` (DESIGN.md)
    OUT/oracle/<case>__<ntuple>.describe.json  ROOT's view of the metadata: fields, columns, clusters, pages
    OUT/oracle/<case>__<ntuple>.sizes/.values  (big-page cases) the float vectors as raw arrays
    OUT/oracle_testdata/<dir>__<file>__<ntuple>.json   ROOT's reading of the shared test files (every entry; the
                                               first TESTDATA_WINDOW of the 100-million-entry ones)
    OUT/manifest.json                          what was made, with timings and per-case errors

The outputs are reused when OUT/manifest.json was made from the same sources (this file, root_helpers.cxx,
xtypes.h) with the same ROOT version; --force or RNTUPLE_CROSS_REGENERATE=1 regenerates.

The module also holds the Python half of the oracle: loading its JSON (`load_oracle`) and comparing a value tree
from `rntuple dump` against it (`compare`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = [HERE / "rootgen.py", HERE / "root_helpers.cxx", HERE / "xtypes.h", HERE / "root_load.py"]

import root_load  # noqa: E402  (sys.path holds this directory: pytest's rootdir, or the oracle scripts' insert)

MiB = 1024 * 1024

# Every case: the generator call (function in namespace xgen, arguments after the output path), the RNTuples the
# file holds, and how the oracle is stored ("json": all entries as JSON; "floatvec": the big vector field as raw
# arrays plus JSON for the other fields).
CASES: dict[str, dict] = {}


def _case(name, func, args=(), ntuples=("",), oracle="json", **extra):
    CASES[name] = dict(func=func, args=list(args), ntuples=list(ntuples), oracle=oracle, **extra)


_case("types", "WriteTypes", ntuples=["types"])
for _c in (0, 101, 207, 404, 505):
    _case(f"comp_{_c}", "WriteCompression", [_c, 5000], ntuples=["comp"], compression=_c)
# 5 M floats = 20 MB in a single page (> 16 MiB: several compression blocks).
_BIG = dict(nEntries=4, perEntry=1_250_000)
_case("bigpage_505", "WriteBigPage", [505, _BIG["nEntries"], _BIG["perEntry"], 0], ntuples=["big"],
      oracle="floatvec", compression=505)
_case("bigpage_404", "WriteBigPage", [404, _BIG["nEntries"], _BIG["perEntry"], 0], ntuples=["big"],
      oracle="floatvec", compression=404)
_case("bigpage_101", "WriteBigPage", [101, _BIG["nEntries"], _BIG["perEntry"], 0], ntuples=["big"],
      oracle="floatvec", compression=101)
# Same page, with ROOT's maximum key size lowered to 128 KiB: the page (~0.5 MB compressed) becomes a chunked blob.
_case("bigpage_505_smallkeys", "WriteBigPage", [505, _BIG["nEntries"], _BIG["perEntry"], 128 * 1024],
      ntuples=["big"], oracle="floatvec", compression=505)
_case("parallel", "WriteParallel", [4, 2500, 25], ntuples=["par"])
_case("cluster_groups", "WriteClusterGroups", [3000, 100, 4], ntuples=["groups"])
_case("two_ntuples", "WriteTwoNTuples", ntuples=["first", "second"])
_case("mixed", "WriteMixed", ntuples=["events"])
_case("extension", "WriteExtension", ntuples=["ext"])
_case("empty", "WriteEmpty", ntuples=["empty"])


def oracle_stem(outdir: Path, case: str, ntuple: str) -> Path:
    return outdir / "oracle" / f"{case}__{ntuple}"


# ------------------------------------------------------------------------------------------------------------
# Python half of the oracle


class F32:
    """A float (32 bit) value from ROOT: `value` is an np.float32, or one of the strings "nan", "inf", "-inf"."""

    __slots__ = ("value",)

    def __init__(self, value):
        import numpy as np

        self.value = value if isinstance(value, str) else np.float32(value)

    def __repr__(self):
        return f"F32({self.value!r})"


class Unordered:
    """Elements of an unordered container: compared as a multiset."""

    __slots__ = ("items",)

    def __init__(self, items):
        self.items = items

    def __repr__(self):
        return f"Unordered({self.items!r})"


def _hook(obj):
    if len(obj) == 1:
        if "$f32" in obj:
            return F32(obj["$f32"])
        if "$unordered" in obj:
            return Unordered(obj["$unordered"])
    return obj


def load_oracle(path) -> list:
    with open(path, "rb") as f:
        return json.loads(f.read().decode("utf-8"), object_hook=_hook)


SPECIAL_FLOATS = ("nan", "inf", "-inf")


def _is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _same_real(a: float, b: float) -> bool:
    # exact, and the sign of zero matters (-0.0 must read back as -0.0)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def compare(expected, actual, path="$", errors=None, limit=20, check_top_order=False):
    """Compares a value tree from the oracle (or from a normalized uproot value) with one from `rntuple dump`.

    Exact: integers must be JSON integers (not floats, not booleans), booleans JSON booleans, doubles must read
    back to the same double and floats (F32) to the same float, including the sign of zero; NaN/inf must be the
    strings "nan"/"inf"/"-inf". Returns the list of differences (at most `limit`).
    """
    if errors is None:
        errors = []
    if len(errors) >= limit:
        return errors

    def err(msg):
        errors.append(f"{path}: {msg}")

    if isinstance(expected, F32):
        ev = expected.value
        if isinstance(ev, str):
            if actual != ev:
                err(f"expected float {ev!r}, got {actual!r}")
        elif not _is_number(actual):
            err(f"expected float {float(ev)!r}, got {actual!r}")
        else:
            import numpy as np

            # The dump's number must read back to this float: parsed and rounded to float32, it gives the same
            # value (the shortest decimal form of a float, e.g. 0.1, is not its exact value as a double).
            av = np.float32(actual)
            if not _same_real(float(av), float(ev)):
                err(f"expected float {ev!r} (exactly {float(ev)!r}), got {actual!r}")
    elif isinstance(expected, Unordered):
        if not isinstance(actual, list):
            err(f"expected a list (unordered container), got {actual!r}")
        elif len(actual) != len(expected.items):
            err(f"expected {len(expected.items)} elements (unordered), got {len(actual)}: {actual!r}")
        else:
            remaining = list(actual)
            for item in expected.items:
                for k, cand in enumerate(remaining):
                    if not compare(item, cand, path + "[?]", [], 1):
                        del remaining[k]
                        break
                else:
                    err(f"element {item!r} of the unordered container is missing in {actual!r}")
                    break
    elif isinstance(expected, bool):
        if not isinstance(actual, bool) or actual != expected:
            err(f"expected {json.dumps(expected)}, got {actual!r}")
    elif isinstance(expected, int):
        if not isinstance(actual, int) or isinstance(actual, bool) or actual != expected:
            err(f"expected integer {expected!r}, got {actual!r}")
    elif isinstance(expected, float):
        if not _is_number(actual) or not _same_real(float(actual), expected):
            err(f"expected double {expected!r}, got {actual!r}")
        elif isinstance(actual, int) and abs(actual) > 2**53:
            err(f"expected double {expected!r}, got the integer {actual!r}")
    elif isinstance(expected, str):
        if actual != expected:
            err(f"expected {expected!r}, got {actual!r}")
    elif expected is None:
        if actual is not None:
            err(f"expected null, got {actual!r}")
    elif isinstance(expected, (list, tuple)):
        if not isinstance(actual, list):
            err(f"expected a list of {len(expected)}, got {actual!r}")
        elif len(actual) != len(expected):
            err(f"expected {len(expected)} elements, got {len(actual)}: expected {_short(expected)}, got {_short(actual)}")
        else:
            for k, (e, a) in enumerate(zip(expected, actual)):
                compare(e, a, f"{path}[{k}]", errors, limit)
    elif isinstance(expected, dict):
        if not isinstance(actual, dict):
            err(f"expected an object with keys {list(expected)}, got {_short(actual)}")
        elif set(actual) != set(expected):
            err(f"expected keys {list(expected)}, got {list(actual)}")
        else:
            if check_top_order and list(actual) != list(expected):
                err(f"expected keys in schema order {list(expected)}, got {list(actual)}")
            for k in expected:
                compare(expected[k], actual[k], f"{path}.{k}", errors, limit)
    else:
        err(f"unexpected oracle value {expected!r}")
    return errors


def _short(x, n=300):
    s = json.dumps(x, default=repr) if not isinstance(x, str) else repr(x)
    return s if len(s) <= n else s[:n] + "..."


# ------------------------------------------------------------------------------------------------------------
# Generation (script mode)


def sources_hash() -> str:
    """Hash of the generator's sources and of the installed ROOT's version header (without importing ROOT)."""
    import importlib.util

    h = hashlib.sha256()
    for p in SOURCES:
        h.update(p.read_bytes())
    spec = importlib.util.find_spec("ROOT")
    if spec and spec.origin:
        version_header = Path(spec.origin).parent / "include" / "RVersion.h"
        if version_header.exists():
            h.update(version_header.read_bytes())
    return h.hexdigest()


def _load_root(workdir: Path):
    import warnings

    warnings.filterwarnings("ignore", message=".*alpha stage.*")
    import ROOT  # noqa: E402

    ROOT.gROOT.SetBatch(True)
    ROOT.gErrorIgnoreLevel = ROOT.kWarning
    timings = root_load.load(ROOT)
    # The first write and the first read in a process cost seconds (ROOT's one-time initialization of its I/O
    # libraries): pay it here, once, so that the forked children (one per case) do not each pay it again.
    t = time.time()
    warm = workdir / "warmup.root"
    ROOT.xgen.WriteEmpty(str(warm))
    ROOT.xoracle.Describe("empty", str(warm))
    ROOT.xoracle.DumpJson("empty", str(warm), str(workdir / "warmup.json"))
    return ROOT, {**timings, "warmup_s": round(time.time() - t, 2)}


def _in_child(func):
    """Runs func() in a forked child (after cling is set up, forking is cheap) so that a crash inside ROOT loses
    only this one case. Returns func's JSON-able result, or {"error": ...}."""
    import tempfile

    fd, result_path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # child
        code = 0
        try:
            import ROOT

            ROOT.gSystem.ResetSignals()  # a segfault kills the child instead of starting ROOT's gdb stack trace
            result = func()
        except BaseException as exc:  # a C++ exception surfaces here as a Python exception
            result = {"error": f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"}
            code = 1
        with open(result_path, "w") as f:
            json.dump(result, f)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    try:
        with open(result_path) as f:
            text = f.read()
        result = json.loads(text) if text else None
    finally:
        os.unlink(result_path)
    if result is None:
        if os.WIFSIGNALED(status):
            return {"error": f"ROOT crashed (signal {os.WTERMSIG(status)}) while writing or reading this file"}
        return {"error": f"the generator child exited with status {os.WEXITSTATUS(status)} and no result"}
    return result


def _generate_case(ROOT, outdir: Path, name: str, spec: dict) -> dict:
    path = outdir / f"{name}.root"
    if path.exists():
        path.unlink()
    t = time.time()
    getattr(ROOT.xgen, spec["func"])(str(path), *spec["args"])
    res = {"write_s": round(time.time() - t, 2), "describe": {}}
    t = time.time()
    for nt in spec["ntuples"]:
        stem = oracle_stem(outdir, name, nt)
        res["describe"][nt] = json.loads(str(ROOT.xoracle.Describe(nt, str(path))))
        if spec["oracle"] == "floatvec":
            ROOT.xoracle.DumpFloatVectors(nt, str(path), "v", str(stem))
            ROOT.xoracle.DumpJson(nt, str(path), str(stem) + ".json", "n")
        else:
            ROOT.xoracle.DumpJson(nt, str(path), str(stem) + ".json")
    res["oracle_s"] = round(time.time() - t, 2)
    return res


# The shared test files (not written by us): ROOT 6.40 reads them too, so our reader is also compared with ROOT
# there (test_testdata_root.py): every entry of RNTuples up to TESTDATA_FULL_ENTRIES entries; of the larger ones (the
# two 100-million-entry files, whose JSON would take gigabytes) the first TESTDATA_WINDOW entries, the whole
# compared with uproot by exact per-field arrays (test_testdata_uproot.py).
TESTDATA_SUBDIRS = ("rntuple", "v1-older")
TESTDATA_FULL_ENTRIES = 1_000_000
TESTDATA_WINDOW = 20_000


def testdata_dir() -> Path:
    return Path(os.environ.get("RNTUPLE_TESTDATA", str(HERE.parent.parent.parent / "shared" / "testdata"))).resolve()


def testdata_key(sub, filename, ntuple):
    return f"{sub}/{filename}:{ntuple}"


def _testdata_listing(base: Path):
    out = []
    for sub in TESTDATA_SUBDIRS:
        for p in sorted((base / sub).glob("*.root")):
            out.append((sub, p))
    return out


def _testdata_oracle(ROOT, outdir: Path, sub: str, path: Path, ntuple: str) -> dict:
    stem = outdir / "oracle_testdata" / f"{sub}__{path.name}__{ntuple}"
    d = json.loads(str(ROOT.xoracle.Describe(ntuple, str(path))))
    stop = d["num_entries"] if d["num_entries"] <= TESTDATA_FULL_ENTRIES else TESTDATA_WINDOW
    n = ROOT.xoracle.DumpJson(ntuple, str(path), str(stem) + ".json", "", 0, stop)
    return {"json": str(stem.relative_to(outdir)) + ".json", "entries_dumped": int(n), "describe": d}


def _plain_root_error(ROOT, path: Path, ntuple: str) -> dict:
    """Where the oracle (which emulates classes without a dictionary) fails: what plain ROOT 6.40 says, building the
    reader's model without emulation (the error of RNTupleReader::GetModel, or null when it succeeds)."""
    try:
        reader = ROOT.RNTupleReader.Open(ntuple, str(path))
        reader.GetModel()
    except Exception as exc:  # a C++ exception surfaces as a Python exception
        msg = str(exc)
        for line in msg.splitlines():  # PyROOT's text: the signature, then "    RException: <what>", then "At:"
            if "RException:" in line:
                return {"plain_error": line.split("RException:", 1)[1].strip()}
        return {"plain_error": msg.strip().splitlines()[0] if msg.strip() else type(exc).__name__}
    return {"plain_error": None}


def generate(outdir: Path, force=False):
    outdir.mkdir(parents=True, exist_ok=True)
    manifest_path = outdir / "manifest.json"
    base = testdata_dir()
    listing = _testdata_listing(base) if base.is_dir() else []
    h = hashlib.sha256(sources_hash().encode())
    for sub, p in listing:
        h.update(f"{sub}/{p.name}:{p.stat().st_size}".encode())
    digest = h.hexdigest()
    if manifest_path.exists() and not force:
        old = json.loads(manifest_path.read_text())
        if old.get("sources_hash") == digest and all((outdir / c["file"]).exists() for c in old["cases"].values()):
            print(f"rootgen: reusing {outdir} (same sources)")
            return old
    manifest_path.unlink(missing_ok=True)
    (outdir / "oracle").mkdir(exist_ok=True)
    (outdir / "oracle_testdata").mkdir(exist_ok=True)
    ROOT, timings = _load_root(outdir)
    manifest = {
        "sources_hash": None,  # set at the end: a half-written directory is never reused
        "root_version": str(ROOT.gROOT.GetVersion()),
        "timings": timings,
        "cases": {},
        "testdata_dir": str(base),
        "testdata": {},
    }
    t_all = time.time()
    for name, spec in CASES.items():
        res = _in_child(lambda name=name, spec=spec: _generate_case(ROOT, outdir, name, spec))
        entry = {"file": f"{name}.root", "ntuples": spec["ntuples"], "oracle": spec["oracle"],
                 "error": res.get("error"), "describe": res.get("describe", {}),
                 "write_s": res.get("write_s"), "oracle_s": res.get("oracle_s")}
        manifest["cases"][name] = entry
        print(f"rootgen: {name}: {'ok' if not entry['error'] else 'ERROR ' + entry['error'][:300]} "
              f"({entry['write_s']} s write, {entry['oracle_s']} s read)", flush=True)
    timings["cases_s"] = round(time.time() - t_all, 2)
    t_all = time.time()
    for sub, path in listing:
        f = ROOT.TFile.Open(str(path))
        names = [k.GetName() for k in f.GetListOfKeys() if k.GetClassName() == "ROOT::RNTuple"] if f else []
        if f:
            f.Close()
        for nt in names:
            res = _in_child(lambda sub=sub, path=path, nt=nt: _testdata_oracle(ROOT, outdir, sub, path, nt))
            manifest["testdata"][testdata_key(sub, path.name, nt)] = res
            if res.get("error"):
                plain = _in_child(lambda path=path, nt=nt: _plain_root_error(ROOT, path, nt))
                res["plain_error"] = plain.get("plain_error", "the plain-ROOT probe failed: " + str(plain.get("error")))
                print(f"rootgen: testdata {sub}/{path.name}:{nt}: ROOT cannot read it: {res['error'][:200]}; "
                      f"plain ROOT: {res['plain_error']}")
    timings["testdata_s"] = round(time.time() - t_all, 2)
    manifest["sources_hash"] = digest
    manifest_path.write_text(json.dumps(manifest, indent=1))
    return manifest


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=HERE / "generated")
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args(argv)
    force = args.force or os.environ.get("RNTUPLE_CROSS_REGENERATE") == "1"
    generate(args.out.resolve(), force=force)


if __name__ == "__main__":
    sys.exit(main())
