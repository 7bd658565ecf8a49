"""`rntuple skim INPUT... OUTPUT --friend FILE[:NTUPLE] --on FIELDS`: a primary RNTuple (two files, a chain) and a
friend holding the same (run, event) keys shuffled with some missing, joined into one output with cuts on both
sides. The friend's fields are written as a record field named after it, each member optional (empty where the
friend has no match): ROOT 6.40 (RNTupleReader::Show), uproot and we read back exactly the entries and values that
a join computed here in Python gives. About 5 s (one ROOT process)."""

from __future__ import annotations

import json
import random
import subprocess

import pytest
import uproot
from root_subprocess import run_root

import rntuple

N = 300  # entries per primary file
# Several small clusters per file, so that a shuffled friend's entries are gathered across clusters.
SMALL = {"max_unzipped_cluster_size": 4000, "max_unzipped_page_size": 1000, "approx_zipped_cluster_size": 2000}


def _primary(k: int) -> list[dict]:
    return [{"run": 1 + k, "event": i, "x": 0.25 * i, "v": list(range(i % 3))} for i in range(N)]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("skim_friend")
    schema = {"run": "std::uint32_t", "event": "std::uint64_t", "x": "float", "v": "std::vector<std::int32_t>"}
    primary = []
    for k in range(2):
        rows = _primary(k)
        rntuple.write(str(d / f"p{k}.root"), "Events", rows, schema=schema, **SMALL)
        primary += rows
    rng = random.Random(7)
    keys = [(r["run"], r["event"]) for r in primary if rng.random() > 0.05]
    rng.shuffle(keys)
    aux = [{"run": r, "event": e, "w": (e % 10) / 10, "tag": f"t{r}-{e}"} for r, e in keys]
    rntuple.write(str(d / "aux.root"), "Aux", aux, schema={"run": "std::uint32_t", "event": "std::uint64_t", "w": "double", "tag": "std::string"}, **SMALL)
    return d, primary, {(a["run"], a["event"]): a for a in aux}


def _skim(cli, d, out, *args):
    return subprocess.run([str(cli.path), "skim", str(d / "p0.root"), str(d / "p1.root"), str(out), *args], capture_output=True,
                          text=True, timeout=300)


def _expected(primary, aux, keep_row, fields):
    out = []
    for r in primary:
        a = aux.get((r["run"], r["event"]))
        if not keep_row(r, a):
            continue
        row = {f: r[f] for f in fields}
        row["Aux"] = {k: a[k] if a else None for k in ("run", "event", "w", "tag")}  # every friend field, its keys too
        out.append(row)
    return out


ROOT_SHOW = r"""
r = ROOT.ROOT.RNTupleReader.Open("Events", sys.argv[1])
rows = []
for i in range(r.GetNEntries()):
    s = ROOT.std.ostringstream()
    r.Show(i, s)
    rows.append(json.loads(str(s.str())))
done(rows)
"""


def test_join_skim_read_by_root_uproot_and_us(files, cli):
    d, primary, aux = files
    out = d / "joined.root"
    p = _skim(cli, d, out, "--friend", f"{d / 'aux.root'}:Aux", "--on", "run,event", "--fields", "event,x,v,Aux", "--where", "x >= 10")
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    want = _expected(primary, aux, lambda r, a: r["x"] >= 10, ["event", "x", "v"])
    assert (report["entries_read"], report["entries"], report["friends"]) == (2 * N, len(want), ["Aux"])
    assert any(row["Aux"]["w"] is None for row in want), "some entries have no friend entry"

    t = rntuple.open(str(out))["Events"]
    assert list(t.schema) == ["event", "x", "v", "Aux"]
    assert t.arrays().tolist() == want
    assert uproot.open(str(out))["Events"].arrays().tolist() == want
    assert run_root(ROOT_SHOW, out) == json.loads(json.dumps(want))


def test_a_cut_on_the_friends_fields(files, cli):
    d, primary, aux = files
    out = d / "cut.root"
    p = _skim(cli, d, out, "--friend", f"{d / 'aux.root'}:Aux", "--on", "run,event", "--where", "Aux.w > 0.65 && run == 2", "--fields", "run,event,Aux.tag")
    assert p.returncode == 0, p.stderr
    want = [{"run": r["run"], "event": r["event"], "Aux": {"tag": a["tag"]}} for r in primary
            for a in [aux.get((r["run"], r["event"]))] if a is not None and a["w"] > 0.65 and r["run"] == 2]
    assert rntuple.open(str(out))["Events"].arrays().tolist() == want
    assert len(want) > 20


def test_errors_name_what_is_wrong(files, cli):
    d, _, _ = files
    p = _skim(cli, d, d / "e1.root", "--friend", str(d / "aux.root"), "--on", "run,nope")
    assert p.returncode != 0 and "nope" in p.stderr
    p = _skim(cli, d, d / "e2.root", "--friend", str(d / "aux.root"), "--on", "run,event", "--filter", "v:v > 0")
    assert p.returncode != 0 and "--filter is not supported with --friend" in p.stderr
    p = _skim(cli, d, d / "e3.root", "--friend", str(d / "aux.root"), "--on", "run,event", "--fields", "x,Aux.nothing")
    assert p.returncode != 0 and "Aux.nothing" in p.stderr


def test_python_skim_with_friends_writes_what_the_cli_writes(files, cli):
    d, primary, aux = files
    cli_out, py_out = d / "cli_friends.root", d / "py_friends.root"
    p = _skim(cli, d, cli_out, "--friend", f"{d / 'aux.root'}:Aux", "--on", "run,event", "--where", "Aux.w > 0.35 && x < 60")
    assert p.returncode == 0, p.stderr
    report = rntuple.skim([str(d / "p0.root"), str(d / "p1.root")], py_out, friends=f"{d / 'aux.root'}:Aux",
                          on=["run", "event"], where="(Aux.w > 0.35) & (x < 60)")  # uproot's spelling of the cut
    want = _expected(primary, aux, lambda r, a: a is not None and a["w"] > 0.35 and r["x"] < 60, ["run", "event", "x", "v"])
    assert (report["entries"], report["friends"], report["method"]) == (len(want), ["Aux"], "joined and re-encoded")
    assert rntuple.open(str(py_out))["Events"].arrays().tolist() == want
    assert rntuple.open(str(cli_out))["Events"].arrays().tolist() == want
    with pytest.raises(ValueError, match="filters is not taken with friends="):
        rntuple.skim(str(d / "p0.root"), d / "bad.root", friends=str(d / "aux.root"), on="event", filters={"v": "v > 0"})
    with pytest.raises(ValueError, match="pass friends="):
        rntuple.skim(str(d / "p0.root"), d / "bad.root", on="event")
