"""Every tool on every hostile file (issue 14), each in its own child process with a wall-time limit and
its peak RSS measured: `rntuple info`, `dump` (the first entry, and the entries of the manifest's
`dump_range`: all of them unless the file is legitimately huge), `check`, `bench read`, `skim` (pages
copied where they can be, and `reskim`: with `--reencode`), `merge` and Python
``rntuple.open(path)[name].arrays()``.

Each run must finish within HOSTILE_TIMEOUT, below HOSTILE_RSS_MB of peak RSS, without a signal and
without a panic; then, per the manifest (written by `cargo run --example hostile_files`): `ok` is exit 0
with the correct answer where the manifest gives one, `error` is exit 1 with a one-line error on stderr,
`either` is one of the two.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from harness import (
    BIN,
    HERE,
    PYTHON,
    Run,
    assert_one_line_error,
    assert_sane,
    manifest,
    run_limited,
)

CHILD = HERE / "arrays_child.py"
TOOLS = ("info", "dump1", "dump", "check", "bench", "skim", "merge", "arrays", "reskim")
WRITERS = ("skim", "merge", "reskim")

# (file, tool) pairs whose failed skim/merge still leaves an output file behind today: strict xfails until
# the atomic outputs of issue 14 (item 4) land; an XPASS then fails the suite so that the mark is removed.
ATOMIC_OUTPUT_PENDING: set = set()
ATOMIC_REASON = "issue 14 item 4 (outputs are atomic): a failed skim/merge must leave no output file behind"


def _entries(files):
    m = manifest()
    if m.get("error"):
        return [pytest.param(None, t, id=f"generator-failed-{t}") for t in TOOLS]
    return [
        pytest.param(e, t, id=f"{e['file']}-{t}")
        for e in m["files"]
        for t in m["tools"]
        if t in files
    ]


def argv_for(tool: str, path, e: dict, out) -> list:
    name, n = e["ntuple"], e["entries"]
    a, b = e.get("dump_range", [0, n])
    cli = [BIN, "--no-progress"]
    sel = ["--ntuple", name]
    if tool == "info":
        return cli + ["info", path]
    if tool == "dump1":
        return cli + ["dump", path, *sel, "--entries", "0:1"]
    if tool == "dump":
        return cli + ["dump", path, *sel] + ([] if [a, b] == [0, n] else ["--entries", f"{a}:{b}"])
    if tool == "check":
        return cli + ["check", path, *sel]
    if tool == "bench":
        return cli + ["bench", "read", path, *sel]
    if tool == "skim":
        return cli + ["skim", path, out, *sel]
    if tool == "reskim":
        return cli + ["skim", path, out, *sel, "--reencode"]
    if tool == "merge":
        return cli + ["merge", out, path, *sel]
    if tool == "arrays":
        rng = ["-", "-"] if "dump_range" not in e else [str(a), str(b)]
        return [PYTHON, CHILD, path, name, *rng, "no-rows" if e.get("rows") is None else "rows"]
    raise ValueError(tool)


def _all_zero(v) -> bool:
    if isinstance(v, dict):
        return all(_all_zero(x) for x in v.values())
    if isinstance(v, list):
        return all(_all_zero(x) for x in v)
    return v == 0 or v is False


def _dump_rows(stdout: bytes, zeros_only: bool):
    """The rows of `dump`'s output (one entry per line); with `zeros_only` only their count and whether every
    value is 0 (the rows themselves can be too many to keep)."""
    if not zeros_only:
        return json.loads(stdout)
    count, zero = 0, True
    for line in stdout.splitlines():
        line = line.strip().rstrip(b",")
        if line in (b"[", b"]", b"[]", b""):
            continue
        count += 1
        zero = zero and _all_zero(json.loads(line))
    return count, zero


def verify_answer(tool: str, r: Run, e: dict, out):
    """Exit 0: the output is the correct answer where the manifest has one."""
    n = e["entries"]
    a, b = e.get("dump_range", [0, n])
    what = f"{e['file']}: {tool}"
    if tool == "info":
        assert str(n).encode() in r.stdout, f"{what}: the entry count {n} is not in the output"
    elif tool == "dump1":
        if e.get("zeros"):
            count, zero = _dump_rows(r.stdout, True)
            assert (count, zero) == (1, True), f"{what}: {count} rows, all zero: {zero}"
        elif e.get("first_row") is not None:
            assert json.loads(r.stdout) == [e["first_row"]], f"{what}: got {r.stdout[:300]!r}"
    elif tool == "dump":
        if e.get("zeros"):
            count, zero = _dump_rows(r.stdout, True)
            assert (count, zero) == (b - a, True), f"{what}: {count} rows (expected {b - a}), all zero: {zero}"
        elif e.get("rows") is not None:
            assert json.loads(r.stdout) == e["rows"], f"{what}: got {r.stdout[:300]!r}"
    elif tool == "check":
        assert b"OK" in r.stdout, f"{what}: {r.stdout[-300:]!r}"
    elif tool == "bench":
        assert json.loads(r.stdout)["entries"] == n, f"{what}: {r.stdout[:300]!r}"
    elif tool in WRITERS:
        assert os.path.exists(out), f"{what}: exit 0 but no output file"
    elif tool == "arrays":
        res = json.loads(r.stdout)
        assert res["n"] == b - a, f"{what}: {res['n']} entries, expected {b - a}"
        if e.get("zeros"):
            assert res["zeros"] is True, f"{what}: not all zero ({res['zeros']})"
        elif e.get("rows") is not None:
            assert res["rows"] == e["rows"], f"{what}: got {str(res['rows'])[:300]}"


@pytest.mark.parametrize("e,tool", _entries(TOOLS))
def test_tool_on_hostile_file(cli, files, tmp_path, e, tool):
    path = files / e["file"]
    out = tmp_path / "out" / "output.root"
    out.parent.mkdir()
    r = run_limited(argv_for(tool, path, e, out))
    what = f"{e['file']} ({e['class']}: {e['description']}): {tool}"
    assert_sane(r, what)
    expect = e["expect"][tool]
    if expect == "error":
        assert_one_line_error(r, what)
        return
    if expect == "either" and r.returncode != 0:
        assert_one_line_error(r, what)
        return
    assert r.returncode == 0, f"{what}: expected exit 0 with the correct answer; {r.describe()}"
    verify_answer(tool, r, e, out)


def _writer_params():
    out = []
    for p in _entries(WRITERS):
        e, tool = p.values
        key = (e["file"] if e else None, tool)
        marks = [pytest.mark.xfail(strict=True, reason=ATOMIC_REASON)] if key in ATOMIC_OUTPUT_PENDING else list(p.marks)
        out.append(pytest.param(e, tool, id=p.id, marks=marks))
    return out


@pytest.mark.parametrize("e,tool", _writer_params())
def test_failed_writer_leaves_no_output(cli, files, tmp_path, e, tool):
    """A skim or merge that fails leaves nothing in the output directory (no output, no temporary file)."""
    out = tmp_path / "out" / "output.root"
    out.parent.mkdir()
    r = run_limited(argv_for(tool, files / e["file"], e, out))
    assert_sane(r, f"{e['file']}: {tool}")
    if r.returncode == 0:
        return  # nothing failed: the output is the answer (checked by test_tool_on_hostile_file)
    left = sorted(p.name for p in out.parent.iterdir())
    assert not left, f"{e['file']}: {tool} failed ({r.describe()}) but left {left} behind"


@pytest.mark.parametrize("tool", TOOLS)
def test_fifo_is_refused(cli, tmp_path, tool):
    """A FIFO (nobody writes to it) is refused by type, not opened and waited on."""
    fifo = tmp_path / "pipe.root"
    os.mkfifo(fifo)
    out = tmp_path / "out" / "output.root"
    out.parent.mkdir()
    e = {"file": "pipe.root", "ntuple": "Events", "entries": 1}
    r = run_limited(argv_for(tool, fifo, e, out), timeout=10)
    what = f"FIFO: {tool}"
    assert_sane(r, what)
    assert_one_line_error(r, what)


def nested(depth: int, outer: str, inner: str = "float") -> str:
    return f"{outer}<" * depth + inner + ">" * depth


@pytest.mark.parametrize("depth,outer", [(40, "std::vector"), (10_000, "std::set")])
def test_import_json_deep_schema(cli, tmp_path, depth, outer):
    """A schema type nested 40 deep is written and read back; 10,000 deep (std::set: a std::vector name that
    deep exceeds the kernel's limit of one argument) is an error or works, in bounded time and memory."""
    out = tmp_path / "deep.root"
    inp = tmp_path / "in.json"
    value = 1.5
    for _ in range(depth if depth <= 40 else 0):
        value = [value]
    inp.write_text(json.dumps([{"v": value}] if depth <= 40 else []))
    schema = json.dumps({"v": nested(depth, outer)})
    r = run_limited([BIN, "import-json", out, "--ntuple", "Events", "--schema", schema, "--input", inp])
    what = f"import-json of a schema {depth} deep"
    assert_sane(r, what)
    if depth > 40:
        if r.returncode != 0:
            assert_one_line_error(r, what)
        return
    assert r.returncode == 0, f"{what}: {r.describe()}"
    d = run_limited([BIN, "dump", out])
    assert_sane(d, f"dump of the {what}")
    assert d.returncode == 0 and json.loads(d.stdout) == [{"v": value}], d.describe()


@pytest.mark.parametrize("depth", [40, 10_000])
def test_normalize_type_deep(tmp_path, depth):
    """Python ``rntuple.normalize_type`` of a name nested 40 / 10,000 deep: a value or an RNTupleError."""
    name = nested(depth, "std::vector")
    src = tmp_path / "name.txt"
    src.write_text(name)
    code = (
        "import sys, rntuple\n"
        "name = open(sys.argv[1]).read()\n"
        "try:\n"
        "    print(rntuple.normalize_type(name) == name)\n"
        "except rntuple.RNTupleError as e:\n"
        "    print(f'{type(e).__name__}: {e}'[:500].replace(chr(10), ' '), file=sys.stderr)\n"
        "    sys.exit(1)\n"
    )
    r = run_limited([PYTHON, "-c", code, src])
    what = f"rntuple.normalize_type of a name {depth} deep"
    assert_sane(r, what)
    if depth <= 40:
        assert r.returncode == 0 and r.stdout.strip() == b"True", r.describe()
    elif r.returncode != 0:
        assert_one_line_error(r, what)


SANE = ("control_ok.root", "control_subdir.root", "typename_deep_40.root")


@pytest.mark.parametrize("name", SANE)
def test_forged_sane_files_read_by_uproot(files, name):
    """The forge's sane files are ROOT files other readers accept (uproot here, ROOT below)."""
    uproot = pytest.importorskip("uproot")
    e = next(x for x in manifest()["files"] if x["file"] == name)
    with uproot.open(files / name) as f:
        got = f[e["ntuple"]].arrays().tolist()
    assert got == e["rows"]


def test_forged_sane_files_read_by_root(files):
    """ROOT 6.40 reads the forge's sane files (in a child process: ROOT stays out of pytest)."""
    pytest.importorskip("ROOT")
    code = (
        "import sys, json, ROOT\n"
        "out = {}\n"
        "for path, name in zip(sys.argv[1::2], sys.argv[2::2]):\n"
        "    r = ROOT.RNTupleReader.Open(name, path)\n"
        "    x = r.GetView['float']('x')\n"
        "    v = r.GetView['std::vector<double>']('v')\n"
        "    out[path] = [{'x': x(i), 'v': list(v(i))} for i in range(r.GetNEntries())]\n"
        "    del x, v, r  # the views before their reader\n"
        "print(json.dumps(out))\n"
    )
    args = []
    for name in ("control_ok.root", "control_subdir.root"):
        e = next(x for x in manifest()["files"] if x["file"] == name)
        args += [str(files / name), e["ntuple"]]
    p = subprocess.run([PYTHON, "-c", code, *args], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    got = json.loads(p.stdout.strip().splitlines()[-1])
    rows = next(x for x in manifest()["files"] if x["file"] == "control_ok.root")["rows"]
    for path in args[::2]:
        assert got[path] == rows, path
